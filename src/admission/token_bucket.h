// TokenBucket: a request budget that refills at `rate_per_s` tokens per
// second up to `burst` tokens, and answers whether a request may take one.
//
// Pure: time comes in as a monotonic time point the caller passes (tests
// pass chosen points; production passes steady_clock::now()); no clock is
// read, nothing is allocated, no lock is taken.
//
// Invariants:
//  1. 0 <= tokens <= burst, at every point in time.
//  2. A point in time earlier than the last one seen counts as the last one
//     (a budget never refills backwards nor twice for the same interval).
//  3. Refill is exact in nanoseconds: between two calls t1 < t2 the budget
//     grows by rate_per_s * (t2 - t1), capped at burst.
//
// The refill rate is a value set from outside at any time (SetRate): today
// from configuration, later from the global admission controller (GAC),
// which assigns each router its share of a bucket's rate.
//
// Thread safety: none; the owner serialises calls (S3Admission holds it
// under a lock).
#pragma once

#include <chrono>

namespace tessera::admission {

using Clock = std::chrono::steady_clock;

class TokenBucket {
 public:
  // Starts full (burst tokens) at `now`. rate_per_s >= 0 (0: never
  // refills), burst >= 1; both finite (CHECKed).
  TokenBucket(double rate_per_s, double burst, Clock::time_point now);

  // Refills to `now`, then takes `tokens` (> 0) if that many are there.
  // Returns whether they were taken; a refusal takes nothing.
  bool TryTake(Clock::time_point now, double tokens = 1);
  // Whether `tokens` are there at `now` (takes nothing).
  bool Has(Clock::time_point now, double tokens = 1) const { return Available(now) >= tokens; }

  // Refills to `now`, then gives back `tokens` (>= 0) taken earlier for a
  // request that was not served after all; capped by burst.
  void Return(Clock::time_point now, double tokens);

  // Refills to `now` at the old rate, then refills at `rate_per_s` from
  // now on (>= 0, finite). The tokens on hand stay (capped by burst).
  void SetRate(double rate_per_s, Clock::time_point now);
  // Sets the cap (>= 1, finite); tokens above it are dropped.
  void SetBurst(double burst, Clock::time_point now);

  // Tokens on hand at `now` (a point before the last one seen counts as
  // that one).
  double Available(Clock::time_point now) const;
  // True when the budget is full at `now`: it carries no history, so an
  // owner may forget it and start a fresh (full) one later.
  bool Full(Clock::time_point now) const { return Available(now) >= burst_; }

  double rate_per_s() const { return rate_per_s_; }
  double burst() const { return burst_; }

 private:
  void Refill(Clock::time_point now);

  double rate_per_s_;
  double burst_;
  double tokens_;
  Clock::time_point last_;
};

}  // namespace tessera::admission
