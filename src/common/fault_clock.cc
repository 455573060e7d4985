#include "common/fault_clock.h"

#include <atomic>
#include <chrono>
#include <mutex>

#include "common/check.h"

namespace tessera::fault_clock {
namespace {

std::atomic<int64_t> g_wall_offset_ms{0};

int64_t RealMonotonicUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The skewed monotonic clock: skewed(t) = anchor_skewed + (t - anchor_real)
// * (1e6 + ppm) / 1e6 for real time t. The mutex makes a read and a
// re-anchoring atomic, so no reader sees time step back.
struct Skew {
  std::mutex mu;  // guards the three fields
  int64_t anchor_real_us = 0;
  int64_t anchor_skewed_us = 0;
  int32_t ppm = 0;

  // Requires mu held.
  int64_t At(int64_t real_us) const {
    const int64_t elapsed = real_us - anchor_real_us;
    return anchor_skewed_us + elapsed + elapsed / 1'000'000 * ppm +
           elapsed % 1'000'000 * ppm / 1'000'000;
  }
};

Skew& TheSkew() {
  static Skew skew;
  return skew;
}

}  // namespace

int64_t WallNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
             .count() +
         g_wall_offset_ms.load(std::memory_order_relaxed);
}

uint64_t MonotonicNowUs() {
  Skew& s = TheSkew();
  std::lock_guard lock(s.mu);
  const int64_t real = RealMonotonicUs();
  if (s.ppm == 0 && s.anchor_real_us == s.anchor_skewed_us) return static_cast<uint64_t>(real);
  return static_cast<uint64_t>(s.At(real));
}

void SetWallOffsetMs(int64_t offset_ms) {
  TESSERA_CHECK(offset_ms >= -kOffsetMsMax &&
                offset_ms <= kOffsetMsMax);
  g_wall_offset_ms.store(offset_ms, std::memory_order_relaxed);
}

int64_t WallOffsetMs() { return g_wall_offset_ms.load(std::memory_order_relaxed); }

void SetMonotonicSkewPpm(int32_t skew_ppm) {
  TESSERA_CHECK(skew_ppm >= -kSkewPpmMax &&
                skew_ppm <= kSkewPpmMax);
  Skew& s = TheSkew();
  std::lock_guard lock(s.mu);
  if (skew_ppm == s.ppm) return;
  const int64_t real = RealMonotonicUs();
  s.anchor_skewed_us = s.At(real);
  s.anchor_real_us = real;
  s.ppm = skew_ppm;
}

int32_t MonotonicSkewPpm() {
  Skew& s = TheSkew();
  std::lock_guard lock(s.mu);
  return s.ppm;
}

}  // namespace tessera::fault_clock
