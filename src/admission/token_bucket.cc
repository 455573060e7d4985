#include "admission/token_bucket.h"

#include <algorithm>
#include <cmath>

#include "common/check.h"

namespace tessera::admission {

TokenBucket::TokenBucket(double rate_per_s, double burst, Clock::time_point now)
    : rate_per_s_(rate_per_s), burst_(burst), tokens_(burst), last_(now) {
  TESSERA_CHECK(std::isfinite(rate_per_s) && rate_per_s >= 0);
  TESSERA_CHECK(std::isfinite(burst) && burst >= 1);
}

double TokenBucket::Available(Clock::time_point now) const {
  if (now <= last_) return tokens_;  // invariant 2: never backwards
  const double elapsed_s = std::chrono::duration<double>(now - last_).count();
  return std::min(burst_, tokens_ + rate_per_s_ * elapsed_s);
}

void TokenBucket::Refill(Clock::time_point now) {
  tokens_ = Available(now);
  last_ = std::max(last_, now);
}

bool TokenBucket::TryTake(Clock::time_point now, double tokens) {
  TESSERA_CHECK(tokens > 0);
  Refill(now);
  if (tokens_ < tokens) return false;
  tokens_ -= tokens;
  return true;
}

void TokenBucket::Return(Clock::time_point now, double tokens) {
  TESSERA_CHECK(std::isfinite(tokens) && tokens >= 0);
  Refill(now);
  tokens_ = std::min(burst_, tokens_ + tokens);
}

void TokenBucket::SetRate(double rate_per_s, Clock::time_point now) {
  TESSERA_CHECK(std::isfinite(rate_per_s) && rate_per_s >= 0);
  Refill(now);
  rate_per_s_ = rate_per_s;
}

void TokenBucket::SetBurst(double burst, Clock::time_point now) {
  TESSERA_CHECK(std::isfinite(burst) && burst >= 1);
  Refill(now);
  burst_ = burst;
  tokens_ = std::min(tokens_, burst_);
}

}  // namespace tessera::admission
