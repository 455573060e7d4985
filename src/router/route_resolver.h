// RouteResolver: finds the partition of (table, key) for the router.
//
// A cache miss asks the PartitionLookup (MemDS) and caches the answer. A
// cache HIT answers from the cache at once and ALSO issues the same lookup
// asynchronously, refreshing the cache from its answer: the metadata service
// then sees one lookup per resolution whatever the hit rate, so a router
// whose cache goes cold (restart, mass invalidation) cannot multiply the
// load on MemDS. At most async_lookups_max refreshes are in flight; a hit
// beyond that bound skips its refresh and counts it
// (tessera_router_memds_async_skipped_total).
//
// Metrics: tessera_router_route_cache_hits_total, _misses_total,
// tessera_router_memds_requests_total (every lookup sent: misses + refreshes),
// tessera_router_memds_async_requests_total, tessera_router_memds_async_skipped_total,
// tessera_router_memds_errors_total.
//
// Thread safety: every method may be called from any thread. The lookup's
// callbacks capture `this`: the resolver must outlive every lookup it issued
// (destroy it after the io threads are joined).
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <string>

#include "common/limits.h"
#include "common/metrics.h"
#include "common/result.h"
#include "router/route_cache.h"
#include "tessera/cluster_rpc.pb.h"

namespace tessera::router {

using PartitionCallback = std::function<void(Result<pb::PartitionDescriptor>)>;

// Who waits for a lookup: a request (a cache miss), or nobody (the
// refresh a cache hit sends, whose answer only updates the cache).
enum class LookupPriority { kRequestWaits, kRefresh };

// Where partitions are looked up (production: MemdsClient).
class PartitionLookup {
 public:
  virtual ~PartitionLookup() = default;
  // Calls `done` exactly once, possibly before returning: the partition of
  // `table` holding `key`, NotFound for an unknown table, or the failure.
  // A kRefresh lookup may be delayed to travel with others.
  virtual void Lookup(const std::string& table, const std::string& key, LookupPriority priority,
                      PartitionCallback done) = 0;
};

class RouteResolver {
 public:
  RouteResolver(RouteCache& cache, PartitionLookup& lookup, metrics::Registry& metrics,
                size_t async_lookups_max = limits::kRouterAsyncLookupsMax);
  RouteResolver(const RouteResolver&) = delete;
  RouteResolver& operator=(const RouteResolver&) = delete;

  // Calls `done` exactly once, possibly before returning (on a hit).
  void Resolve(const std::string& table, const std::string& key, PartitionCallback done);

  RouteCache& cache() { return cache_; }
  size_t async_inflight() const { return async_inflight_.load(); }

 private:
  void Refresh(const std::string& table, const std::string& key);
  // Caches an answer; an answer that does not hold `key` is an error.
  Status Absorb(const std::string& table, const std::string& key,
                const Result<pb::PartitionDescriptor>& answer);

  RouteCache& cache_;
  PartitionLookup& lookup_;
  const size_t async_lookups_max_;
  std::atomic<size_t> async_inflight_{0};
  metrics::Counter& hits_;
  metrics::Counter& misses_;
  metrics::Counter& memds_requests_;
  metrics::Counter& async_requests_;
  metrics::Counter& async_skipped_;
  metrics::Counter& memds_errors_;
};

}  // namespace tessera::router
