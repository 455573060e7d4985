// BucketConfigCache: a router's copies of bucket configuration records
// (BucketConfig at B 00 'c', docs/formats/s3-keys.md), so an access
// decision, a preflight or a request's CORS headers cost no partition read
// when the bucket was read recently; each copy carries the PolicyFacts
// derived from it (policy_facts.h: the parsed policy, its public-ness, the
// public access block), so a request parses no policy.
//
// Contract:
//  - Put derives a record's facts once: a record whose policy and public
//    access block equal those of the entry it replaces (a refetch after
//    the TTL, a change of CORS rules) keeps that entry's facts object;
//    any other record gets new facts. Both are shared immutable: a caller
//    may keep them after the entry is replaced.
//  - Find answers a copy fetched less than `ttl` ago, else nullopt. A copy
//    is therefore at most `ttl` older than the record it came from: the
//    staleness bound of a change made through another router.
//  - Invalidate(b) drops b's copy, and a Put whose fetch began before any
//    Invalidate (its token is older) is ignored: a write through this
//    router is never followed here by the older copy of a read that
//    overtook it.
//  - At most entries_max copies: a Put into a full cache first drops the
//    expired ones, then everything.
//  - ttl 0: nothing is cached.
// Thread safety: every method from any thread; mu_ guards the members.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>

#include "s3/front/policy_facts.h"
#include "tessera/s3.pb.h"

namespace tessera::s3::front {

class BucketConfigCache {
 public:
  using Clock = std::chrono::steady_clock;
  using Config = std::shared_ptr<const pb::BucketConfig>;
  using Facts = std::shared_ptr<const PolicyFacts>;
  // A record and its facts (both never null).
  struct Cached {
    Config record;
    Facts facts;
  };

  BucketConfigCache(size_t entries_max, std::chrono::milliseconds ttl)
      : entries_max_(entries_max), ttl_(ttl) {}

  std::optional<Cached> Find(uint64_t bucket_id, Clock::time_point now) {
    std::lock_guard lock(mu_);
    auto it = entries_.find(bucket_id);
    if (it == entries_.end() || it->second.expiry <= now) return std::nullopt;
    return it->second.cached;  // an expired entry stays until replaced: its facts may serve again
  }
  // Taken before a fetch, handed to Put with its result.
  uint64_t FetchToken() {
    std::lock_guard lock(mu_);
    return invalidations_;
  }
  // `record` (of bucket `bucket`, id `bucket_id`) with its facts; cached
  // unless an Invalidate came after `token` was taken (or ttl is 0).
  Cached Put(uint64_t bucket_id, std::string_view bucket, Config record, uint64_t token,
             Clock::time_point fetched) {
    Cached cached{std::move(record), nullptr};
    {
      std::lock_guard lock(mu_);
      auto it = entries_.find(bucket_id);
      if (it != entries_.end() && SamePolicyInputs(*it->second.cached.record, *cached.record)) {
        cached.facts = it->second.cached.facts;
      }
    }
    // Parsed outside the lock (up to limits::kS3BucketPolicyBytesMax of JSON).
    if (!cached.facts) {
      cached.facts = std::make_shared<const PolicyFacts>(PolicyFactsOf(cached.record.get(), bucket));
    }
    std::lock_guard lock(mu_);
    if (ttl_.count() == 0 || entries_max_ == 0 || token != invalidations_) return cached;
    if (!entries_.contains(bucket_id) && entries_.size() >= entries_max_) {
      std::erase_if(entries_, [fetched](const auto& e) { return e.second.expiry <= fetched; });
      if (entries_.size() >= entries_max_) entries_.clear();
    }
    entries_[bucket_id] = Entry{cached, fetched + ttl_};
    return cached;
  }
  void Invalidate(uint64_t bucket_id) {
    std::lock_guard lock(mu_);
    ++invalidations_;
    entries_.erase(bucket_id);
  }
  size_t size() {
    std::lock_guard lock(mu_);
    return entries_.size();
  }

 private:
  struct Entry {
    Cached cached;
    Clock::time_point expiry;
  };
  const size_t entries_max_;
  const std::chrono::milliseconds ttl_;
  std::mutex mu_;  // guards entries_ and invalidations_
  std::map<uint64_t, Entry> entries_;
  uint64_t invalidations_ = 0;
};

}  // namespace tessera::s3::front
