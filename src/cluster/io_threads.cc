#include "cluster/io_threads.h"

#include <algorithm>
#include <string>

#include "common/limits.h"
#include "common/thread_name.h"

namespace tessera::cluster {

unsigned IoThreadsFor(uint32_t configured) {
  if (configured != 0) return std::min<unsigned>(configured, limits::kProcessIoThreadsMax);
  return std::clamp(std::thread::hardware_concurrency() / 2, 1u, limits::kProcessIoThreadsMax);
}

std::vector<std::thread> StartIoThreads(boost::asio::io_context& io, unsigned count) {
  std::vector<std::thread> threads;
  threads.reserve(count);
  for (unsigned i = 0; i < count; ++i) {
    threads.push_back(StartNamedThread("io-" + std::to_string(i), [&io] { io.run(); }));
  }
  return threads;
}

}  // namespace tessera::cluster
