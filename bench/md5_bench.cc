// MD5 throughput on this machine (make bench; figures, not a test): one
// stream with OpenSSL and with Md5, then N streams of 1 MiB hashed side by
// side with each SIMD kernel the CPU has. Aggregate MB/s across streams.
#include <chrono>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "s3/auth/checksum.h"
#include "s3/auth/md5.h"
#include "s3/auth/md5_kernels.h"

namespace {

using tessera::s3::auth::Md5;
namespace md5_internal = tessera::s3::auth::md5_internal;

constexpr size_t kStreamBytes = 1 << 20;

// MB/s of `bytes_per_run` bytes hashed by `run`, best of five 0.2 s rounds.
double Rate(size_t bytes_per_run, const std::function<void()>& run) {
  double best = 0;
  for (int round = 0; round < 5; ++round) {
    const auto start = std::chrono::steady_clock::now();
    size_t runs = 0;
    double seconds = 0;
    do {
      run();
      ++runs;
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    } while (seconds < 0.2);
    best = std::max(best, static_cast<double>(runs * bytes_per_run) / seconds / 1e6);
  }
  return best;
}

const char* Name(md5_internal::Kernel kernel) {
  switch (kernel) {
    case md5_internal::Kernel::kScalar: return "scalar";
    case md5_internal::Kernel::kAvx2: return "avx2";
    case md5_internal::Kernel::kAvx512: return "avx512";
  }
  return "?";
}

}  // namespace

int main() {
  std::mt19937_64 rng(1);
  std::vector<std::string> data(tessera::s3::auth::kMd5LanesMax, std::string(kStreamBytes, '\0'));
  for (std::string& s : data) {
    for (char& c : s) c = static_cast<char>(rng());
  }
  std::printf("# MD5 MB/s (aggregate over streams of %zu KiB), best of 5\n", kStreamBytes >> 10);
  std::printf("openssl   1 stream: %8.0f\n", Rate(kStreamBytes, [&] {
                tessera::s3::auth::ComputeChecksum(tessera::s3::auth::ChecksumAlgorithm::kMd5, data[0]);
              }));
  std::printf("md5       1 stream: %8.0f\n", Rate(kStreamBytes, [&] {
                Md5 md5;
                md5.Update(data[0]);
                md5.Finish();
              }));
  for (auto kernel : {md5_internal::Kernel::kAvx2, md5_internal::Kernel::kAvx512}) {
    if (!md5_internal::Available(kernel)) {
      std::printf("%-6s    not on this CPU\n", Name(kernel));
      continue;
    }
    for (size_t streams = 1; streams <= md5_internal::LanesOf(kernel); streams *= 2) {
      const double rate = Rate(streams * kStreamBytes, [&] {
        uint32_t* states[tessera::s3::auth::kMd5LanesMax];
        const unsigned char* bytes[tessera::s3::auth::kMd5LanesMax];
        uint32_t scratch[tessera::s3::auth::kMd5LanesMax][4] = {};
        for (size_t s = 0; s < streams; ++s) {
          states[s] = scratch[s];
          bytes[s] = reinterpret_cast<const unsigned char*>(data[s].data());
        }
        md5_internal::HashBlocks(kernel, states, bytes, streams, kStreamBytes / 64);
      });
      std::printf("%-6s %2zu streams: %8.0f\n", Name(kernel), streams, rate);
    }
  }
  return 0;
}
