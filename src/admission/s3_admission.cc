#include "admission/s3_admission.h"

#include <cmath>
#include <functional>

#include "common/check.h"
#include "common/result.h"

namespace tessera::admission {
namespace {

Status CheckRate(const char* field, double value) {
  if (!std::isfinite(value) || value < 0 || value > limits::kAdmissionRateMaxPerS) {
    return Status::InvalidArgument(std::string("admission: ") + field + " must be in [0, " +
                                   std::to_string(limits::kAdmissionRateMaxPerS) + "]");
  }
  return Status::Ok();
}

}  // namespace

Status ValidateS3AdmissionOptions(const S3AdmissionOptions& options) {
  TESSERA_RETURN_IF_ERROR(CheckRate("bucket rate", options.bucket_rate_per_s));
  TESSERA_RETURN_IF_ERROR(CheckRate("bucket burst", options.bucket_burst));
  TESSERA_RETURN_IF_ERROR(CheckRate("user rate", options.user_rate_per_s));
  TESSERA_RETURN_IF_ERROR(CheckRate("user burst", options.user_burst));
  if (options.tracked_max == 0 || options.tracked_max > limits::kAdmissionTrackedMax) {
    return Status::InvalidArgument("admission: tracked_max must be in [1, " +
                                   std::to_string(limits::kAdmissionTrackedMax) + "]");
  }
  return Status::Ok();
}

double S3Admission::BurstFor(double rate_per_s, double burst) {
  if (burst >= 1) return burst;
  return std::max(rate_per_s, 1.0);  // burst 0 (or < 1): one second's worth
}

S3Admission::S3Admission(S3AdmissionOptions options, metrics::Registry& metrics, ClockFn clock)
    : options_(std::move(options)),
      clock_(clock ? std::move(clock) : ClockFn([] { return Clock::now(); })) {
  const Status valid = ValidateS3AdmissionOptions(options_);
  TESSERA_CHECK(valid.ok());
  auto init = [&metrics](Scope& scope, const char* name, double rate, double burst) {
    scope.name = name;
    scope.rate_per_s = rate;
    scope.burst = BurstFor(rate, burst);
    const metrics::Labels labels = {{"scope", name}};
    scope.admitted = &metrics.GetCounter("tessera_router_admission_admitted_total",
                                         "S3 requests admitted, per budget charged", labels);
    scope.throttled = &metrics.GetCounter(
        "tessera_router_admission_throttled_total",
        "S3 requests refused with SlowDown, by the budget that was empty", labels);
  };
  init(buckets_, "bucket", options_.bucket_rate_per_s, options_.bucket_burst);
  init(users_, "user", options_.user_rate_per_s, options_.user_burst);
}

S3Admission::Shard& S3Admission::ShardOf(Scope& scope, std::string_view name) const {
  return scope.shards[std::hash<std::string_view>{}(name) % scope.shards.size()];
}

TokenBucket& S3Admission::BudgetLocked(Scope& scope, Shard& shard, std::string_view name,
                                       Clock::time_point now) {
  const std::string key(name);
  if (auto it = shard.budgets.find(key); it != shard.budgets.end()) return it->second;
  const size_t shard_max = std::max<size_t>(1, options_.tracked_max / scope.shards.size());
  if (shard.budgets.size() >= shard_max) {
    // Forget idle budgets (full: no history); start over when none is.
    std::erase_if(shard.budgets, [now](auto& entry) { return entry.second.Full(now); });
    if (shard.budgets.size() >= shard_max) shard.budgets.clear();
  }
  double rate = scope.rate_per_s;
  if (auto r = shard.rates.find(key); r != shard.rates.end()) rate = r->second;
  return shard.budgets.try_emplace(key, rate, scope.burst, now).first->second;
}

Status S3Admission::Admit(std::string_view user, std::string_view bucket) {
  const Clock::time_point now = clock_();
  const bool charge_bucket = !bucket.empty() && buckets_.rate_per_s > 0;
  const bool charge_user = !user.empty() && users_.rate_per_s > 0;
  Shard* bucket_shard = charge_bucket ? &ShardOf(buckets_, bucket) : nullptr;
  Shard* user_shard = charge_user ? &ShardOf(users_, user) : nullptr;
  // Two distinct mutexes (different scopes), locked in address order.
  std::unique_lock<std::mutex> first, second;
  Shard* a = bucket_shard;
  Shard* b = user_shard;
  if (a && b && b < a) std::swap(a, b);
  if (a) first = std::unique_lock(a->mu);
  if (b) second = std::unique_lock(b->mu);

  TokenBucket* bucket_budget =
      charge_bucket ? &BudgetLocked(buckets_, *bucket_shard, bucket, now) : nullptr;
  TokenBucket* user_budget = charge_user ? &BudgetLocked(users_, *user_shard, user, now) : nullptr;
  if (bucket_budget && !bucket_budget->Has(now)) {
    buckets_.throttled->Increment();
    return Status::Throttled("request rate of bucket '" + std::string(bucket) +
                             "' above its budget");
  }
  if (user_budget && !user_budget->Has(now)) {
    users_.throttled->Increment();
    return Status::Throttled("request rate of user '" + std::string(user) + "' above its budget");
  }
  if (bucket_budget) {
    TESSERA_CHECK(bucket_budget->TryTake(now));
    buckets_.admitted->Increment();
  }
  if (user_budget) {
    TESSERA_CHECK(user_budget->TryTake(now));
    users_.admitted->Increment();
  }
  return Status::Ok();
}

void S3Admission::SetBucketRate(const std::string& bucket, double rate_per_s) {
  TESSERA_CHECK(std::isfinite(rate_per_s) && rate_per_s >= 0);
  if (buckets_.rate_per_s <= 0) return;  // unlimited scope: nothing to refill
  const Clock::time_point now = clock_();
  Shard& shard = ShardOf(buckets_, bucket);
  std::lock_guard lock(shard.mu);
  const size_t shard_max = std::max<size_t>(1, options_.tracked_max / buckets_.shards.size());
  if (!shard.rates.contains(bucket) && shard.rates.size() >= shard_max) shard.rates.clear();
  shard.rates[bucket] = rate_per_s;
  if (auto it = shard.budgets.find(bucket); it != shard.budgets.end()) {
    it->second.SetRate(rate_per_s, now);
  }
}

void S3Admission::ClearBucketRate(const std::string& bucket) {
  const Clock::time_point now = clock_();
  Shard& shard = ShardOf(buckets_, bucket);
  std::lock_guard lock(shard.mu);
  shard.rates.erase(bucket);
  if (auto it = shard.budgets.find(bucket); it != shard.budgets.end()) {
    it->second.SetRate(buckets_.rate_per_s, now);
  }
}

size_t S3Admission::Tracked(const Scope& scope) const {
  size_t n = 0;
  for (const Shard& shard : scope.shards) {
    std::lock_guard lock(shard.mu);
    n += shard.budgets.size();
  }
  return n;
}

size_t S3Admission::tracked_buckets() const { return Tracked(buckets_); }
size_t S3Admission::tracked_users() const { return Tracked(users_); }

}  // namespace tessera::admission
