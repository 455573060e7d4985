#include "cluster/io_threads.h"

#include <algorithm>
#include <thread>

#include "common/limits.h"

namespace tessera::cluster {

unsigned IoThreadsFor(uint32_t configured) {
  if (configured != 0) return std::min<unsigned>(configured, limits::kProcessIoThreadsMax);
  return std::clamp(std::thread::hardware_concurrency() / 2, 1u, limits::kProcessIoThreadsMax);
}

}  // namespace tessera::cluster
