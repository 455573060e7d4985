// Names the calling thread, so that ps, top -H, perf and gdb tell a
// process's threads apart (/proc/PID/task/TID/comm).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <thread>

namespace tessera {

// Linux keeps the first 15 bytes of `name`; the rest is cut. A failure is
// ignored: the name is a diagnostic, never a reason to stop.
void NameThisThread(std::string_view name);

// A new thread that names itself `name` (as above), then runs `body`.
std::thread StartNamedThread(std::string name, std::function<void()> body);

}  // namespace tessera
