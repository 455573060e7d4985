// PartitionBudget: one partition's read or write capacity on a storage
// node: a steady budget refilling at the partition's rate, plus the burst
// credit it saved while idle.
//
// The steady budget is a TokenBucket of rate `rate_per_s` holding at most
// one second's worth (at least one unit). What it would gain while full is
// unused capacity: it goes to the burst credit, which holds at most
// `burst_window_s` seconds' worth (DynamoDB's 300 s). A request takes its
// units from the steady budget when they are there, otherwise from the
// burst credit when the caller allows bursting (the node has spare
// capacity), otherwise it is refused and takes nothing.
//
// Pure: time comes in as a monotonic time point; nothing is read, locked or
// allocated.
//
// Invariants:
//  1. 0 <= burst_credit <= rate_per_s * burst_window_s.
//  2. Credit only grows by capacity the steady budget could not hold:
//     between two calls the steady budget and the credit together gain at
//     most rate_per_s * elapsed.
//  3. A refusal changes nothing but the refill up to `now`.
//
// Thread safety: none; the owner serialises calls.
#pragma once

#include "admission/token_bucket.h"

namespace tessera::admission {

// Where a request's units came from.
enum class BudgetSource : uint8_t { kRefused, kSteady, kBurst };

class PartitionBudget {
 public:
  // rate_per_s >= 0, burst_window_s >= 0, both finite (CHECKed). Starts
  // with a full steady budget and no burst credit.
  PartitionBudget(double rate_per_s, double burst_window_s, Clock::time_point now);

  // Takes `units` (> 0): from the steady budget, else (when
  // `burst_allowed`) from the burst credit. kRefused takes nothing.
  BudgetSource TryTake(Clock::time_point now, double units, bool burst_allowed);
  // Takes up to `units` (>= 0) without refusing (a read's cost beyond the
  // minimum it was admitted with, known once it is served): steady budget
  // first, then burst credit; what is not there is forgiven.
  void TakeUpTo(Clock::time_point now, double units);
  // Gives back units taken from `source` for a request not served.
  void Return(Clock::time_point now, double units, BudgetSource source);

  // A new rate and window from `now` on; tokens and credit stay, capped.
  void SetRate(double rate_per_s, double burst_window_s, Clock::time_point now);

  double rate_per_s() const { return steady_.rate_per_s(); }
  double burst_window_s() const { return burst_window_s_; }
  double burst_credit(Clock::time_point now);
  double steady_available(Clock::time_point now) { return steady_.Available(now); }

 private:
  // Moves what the full steady budget could not hold into the credit.
  void Advance(Clock::time_point now);
  double CreditCap() const { return steady_.rate_per_s() * burst_window_s_; }

  TokenBucket steady_;
  double burst_window_s_;
  double burst_credit_ = 0;
  Clock::time_point last_;
};

// The steady budget's cap for a rate: one second's worth, at least one unit.
double SteadyCapFor(double rate_per_s);

}  // namespace tessera::admission
