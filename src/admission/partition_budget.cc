#include "admission/partition_budget.h"

#include <algorithm>
#include <cmath>

#include "common/check.h"

namespace tessera::admission {

double SteadyCapFor(double rate_per_s) { return std::max(1.0, rate_per_s); }

PartitionBudget::PartitionBudget(double rate_per_s, double burst_window_s, Clock::time_point now)
    : steady_(rate_per_s, SteadyCapFor(rate_per_s), now), burst_window_s_(burst_window_s), last_(now) {
  TESSERA_CHECK(std::isfinite(burst_window_s) && burst_window_s >= 0);
}

void PartitionBudget::Advance(Clock::time_point now) {
  if (now <= last_) return;
  const double elapsed_s = std::chrono::duration<double>(now - last_).count();
  const double gained = steady_.rate_per_s() * elapsed_s;
  const double held = steady_.Available(now) - steady_.Available(last_);
  const double unused = std::max(0.0, gained - held);
  burst_credit_ = std::min(CreditCap(), burst_credit_ + unused);
  last_ = now;
}

BudgetSource PartitionBudget::TryTake(Clock::time_point now, double units, bool burst_allowed) {
  TESSERA_CHECK(units > 0);
  Advance(now);
  if (steady_.TryTake(now, units)) return BudgetSource::kSteady;
  if (burst_allowed && burst_credit_ >= units) {
    burst_credit_ -= units;
    return BudgetSource::kBurst;
  }
  return BudgetSource::kRefused;
}

void PartitionBudget::TakeUpTo(Clock::time_point now, double units) {
  TESSERA_CHECK(units >= 0);
  Advance(now);
  const double steady = std::min(units, steady_.Available(now));
  if (steady > 0) (void)steady_.TryTake(now, steady);
  burst_credit_ = std::max(0.0, burst_credit_ - (units - steady));
}

void PartitionBudget::Return(Clock::time_point now, double units, BudgetSource source) {
  Advance(now);
  if (source == BudgetSource::kSteady) steady_.Return(now, units);
  if (source == BudgetSource::kBurst) burst_credit_ = std::min(CreditCap(), burst_credit_ + units);
}

void PartitionBudget::SetRate(double rate_per_s, double burst_window_s, Clock::time_point now) {
  TESSERA_CHECK(std::isfinite(burst_window_s) && burst_window_s >= 0);
  Advance(now);
  steady_.SetRate(rate_per_s, now);
  steady_.SetBurst(SteadyCapFor(rate_per_s), now);
  burst_window_s_ = burst_window_s;
  burst_credit_ = std::min(CreditCap(), burst_credit_);
}

double PartitionBudget::burst_credit(Clock::time_point now) {
  Advance(now);
  return burst_credit_;
}

}  // namespace tessera::admission
