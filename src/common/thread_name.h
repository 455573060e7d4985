// Names the calling thread, so that ps, top -H, perf and gdb tell a
// process's threads apart (/proc/PID/task/TID/comm).
#pragma once

#include <string_view>

namespace tessera {

// Linux keeps the first 15 bytes of `name`; the rest is cut. A failure is
// ignored: the name is a diagnostic, never a reason to stop.
void NameThisThread(std::string_view name);

}  // namespace tessera
