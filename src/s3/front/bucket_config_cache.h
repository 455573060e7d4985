// BucketConfigCache: a router's copies of bucket configuration records
// (BucketConfig at B 00 'c', docs/formats/s3-keys.md), so a preflight or
// a request's CORS headers cost no partition read when the bucket was
// read recently.
//
// Contract:
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

#include "tessera/s3.pb.h"

namespace tessera::s3::front {

class BucketConfigCache {
 public:
  using Clock = std::chrono::steady_clock;
  using Config = std::shared_ptr<const pb::BucketConfig>;

  BucketConfigCache(size_t entries_max, std::chrono::milliseconds ttl)
      : entries_max_(entries_max), ttl_(ttl) {}

  std::optional<Config> Find(uint64_t bucket_id, Clock::time_point now) {
    std::lock_guard lock(mu_);
    auto it = entries_.find(bucket_id);
    if (it == entries_.end()) return std::nullopt;
    if (it->second.expiry > now) return it->second.config;
    entries_.erase(it);
    return std::nullopt;
  }
  // Taken before a fetch, handed to Put with its result.
  uint64_t FetchToken() {
    std::lock_guard lock(mu_);
    return invalidations_;
  }
  void Put(uint64_t bucket_id, Config config, uint64_t token, Clock::time_point fetched) {
    std::lock_guard lock(mu_);
    if (ttl_.count() == 0 || entries_max_ == 0 || token != invalidations_) return;
    if (!entries_.contains(bucket_id) && entries_.size() >= entries_max_) {
      std::erase_if(entries_, [fetched](const auto& e) { return e.second.expiry <= fetched; });
      if (entries_.size() >= entries_max_) entries_.clear();
    }
    entries_[bucket_id] = Entry{std::move(config), fetched + ttl_};
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
    Config config;
    Clock::time_point expiry;
  };
  const size_t entries_max_;
  const std::chrono::milliseconds ttl_;
  std::mutex mu_;  // guards entries_ and invalidations_
  std::map<uint64_t, Entry> entries_;
  uint64_t invalidations_ = 0;
};

}  // namespace tessera::s3::front
