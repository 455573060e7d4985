// How many threads a router, node or meta process runs its io_context on
// (RouterSettings.io_threads, NodeSettings.io_threads in
// proto/tessera/cluster.proto; meta replicas always take the default).
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <thread>
#include <vector>

namespace tessera::cluster {

// `configured` when nonzero (at most limits::kProcessIoThreadsMax), else half
// the machine's cores, clamped to 1..kProcessIoThreadsMax: one thread per
// core the process may use; on a small machine more threads only add
// cross-thread wake-ups (docs/benchmarks.md, D30 and D35).
unsigned IoThreadsFor(uint32_t configured);

// Starts `count` threads running `io`, named io-0, io-1, ... The caller
// stops `io` and joins them.
std::vector<std::thread> StartIoThreads(boost::asio::io_context& io, unsigned count);

}  // namespace tessera::cluster
