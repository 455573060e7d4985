// S3Admission: the router's S3 admission policy. Every authenticated S3
// request is charged, at dispatch and before any partition or blob work,
// one token from its user's budget and one from its bucket's budget
// (service-level requests such as ListBuckets have no bucket: user only).
// A request finding either budget empty is refused with Throttled, which
// the front answers as 503 SlowDown ("Please reduce your request rate.");
// botocore and the aws CLI back off and retry on it.
//
// Budgets are TokenBuckets (token_bucket.h), one per bucket name and one
// per user, created full on first use. A rate of 0 means unlimited: that
// scope is not tracked at all. The defaults (knobs/knobs.h) are far above what
// one router serves, so they never bite normal use; operators lower them
// with `tessera router --s3-bucket-rate/--s3-bucket-burst/--s3-user-rate/
// --s3-user-burst` or the layout's router_settings.
//
// Scope of a budget: ONE router. N routers admit up to N times the rate.
// The seam for the global admission controller (GAC, a later issue) is
// SetBucketRate: the GAC client will set each bucket's refill rate on each
// router to that router's share; until then every bucket refills at the
// configured default.
//
// Contract:
//  - Admit takes both tokens or none (a request refused by its user's
//    budget does not drain its bucket's, and the reverse).
//  - Memory is bounded: at most tracked_max budgets per scope. When a scope
//    is full, budgets that are full (idle: they carry no history) are
//    forgotten; if none is, the scope starts over (every budget full again:
//    the policy fails open rather than refusing for bookkeeping reasons).
//  - Metrics: tessera_router_admission_admitted_total{scope} and
//    tessera_router_admission_throttled_total{scope}, scope = "bucket" |
//    "user": admitted counts each charged scope of an admitted request;
//    throttled counts the scope whose budget was empty (the bucket's when
//    both were).
//
// Thread safety: every method from any thread. Budgets are split over
// kAdmissionShards shards by a hash of (scope, name); one mutex per shard
// guards its budgets. Admit locks at most two shards, in address order.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "admission/token_bucket.h"
#include "common/limits.h"
#include "common/metrics.h"
#include "common/status.h"
#include "knobs/knobs.h"

namespace tessera::admission {

struct S3AdmissionOptions {
  // Requests per second per bucket (this router) and the burst allowed
  // above it; rate 0: unlimited. Burst 0: max(rate, 1) (one second's worth).
  double bucket_rate_per_s = knobs::kRouterS3BucketRate.default_value;
  double bucket_burst = knobs::kRouterS3BucketBurst.default_value;
  // The same per user (the authenticated access key's owner).
  double user_rate_per_s = knobs::kRouterS3UserRate.default_value;
  double user_burst = knobs::kRouterS3UserBurst.default_value;
  // Budgets kept per scope (bucket, user).
  size_t tracked_max = limits::kAdmissionTrackedMax;
};

// InvalidArgument naming the field when a rate or burst is negative, not
// finite or above limits::kAdmissionRateMaxPerS, or tracked_max is 0 or
// above limits::kAdmissionTrackedMax.
Status ValidateS3AdmissionOptions(const S3AdmissionOptions& options);

class S3Admission {
 public:
  using ClockFn = std::function<Clock::time_point()>;

  // `options` must validate (CHECKed). `clock` defaults to steady_clock.
  S3Admission(S3AdmissionOptions options, metrics::Registry& metrics, ClockFn clock = nullptr);
  S3Admission(const S3Admission&) = delete;
  S3Admission& operator=(const S3Admission&) = delete;

  // Charges one request of `user` on `bucket` (empty: no bucket). OK, or
  // Throttled naming the scope whose budget is empty.
  Status Admit(std::string_view user, std::string_view bucket);

  // GAC seam: from now on `bucket` refills at `rate_per_s` on this router
  // (>= 0 and finite; 0 here means "no refill", not unlimited). Applies to
  // its current budget and to one created later, until ClearBucketRate.
  // Overrides are bounded like budgets (tracked_max; a full table is
  // cleared). A bucket scope configured unlimited stays unlimited.
  void SetBucketRate(const std::string& bucket, double rate_per_s);
  void ClearBucketRate(const std::string& bucket);

  const S3AdmissionOptions& options() const { return options_; }
  // Budgets held now (tests check the bound).
  size_t tracked_buckets() const;
  size_t tracked_users() const;

 private:
  struct Scope;
  struct Shard {
    mutable std::mutex mu;  // guards budgets and rates
    std::unordered_map<std::string, TokenBucket> budgets;
    std::unordered_map<std::string, double> rates;  // GAC overrides (bucket scope)
  };
  struct Scope {
    const char* name;
    double rate_per_s;
    double burst;
    std::array<Shard, limits::kAdmissionShards> shards;
    metrics::Counter* admitted;
    metrics::Counter* throttled;
  };

  static double BurstFor(double rate_per_s, double burst);
  Shard& ShardOf(Scope& scope, std::string_view name) const;
  // The budget of `name` in `shard` (created full; may evict). mu held.
  TokenBucket& BudgetLocked(Scope& scope, Shard& shard, std::string_view name,
                            Clock::time_point now);
  size_t Tracked(const Scope& scope) const;

  const S3AdmissionOptions options_;
  const ClockFn clock_;
  Scope buckets_;
  Scope users_;
};

}  // namespace tessera::admission
