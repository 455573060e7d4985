// How many threads a router, node or meta process runs its io_context on
// (RouterSettings.io_threads, NodeSettings.io_threads in
// proto/tessera/cluster.proto; meta replicas always take the default).
#pragma once

#include <cstdint>

namespace tessera::cluster {

// `configured` when nonzero (at most limits::kProcessIoThreadsMax), else half
// the machine's cores, clamped to 1..kProcessIoThreadsMax: one thread per
// core the process may use; on a small machine more threads only add
// cross-thread wake-ups (docs/benchmarks.md, D30 and D35).
unsigned IoThreadsFor(uint32_t configured);

}  // namespace tessera::cluster
