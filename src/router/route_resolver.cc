#include "router/route_resolver.h"

#include <spdlog/spdlog.h>

#include "common/check.h"

namespace tessera::router {

RouteResolver::RouteResolver(RouteCache& cache, PartitionLookup& lookup, metrics::Registry& metrics,
                             size_t async_lookups_max)
    : cache_(cache),
      lookup_(lookup),
      async_lookups_max_(async_lookups_max),
      hits_(metrics.GetCounter("tessera_router_route_cache_hits_total",
                               "Resolutions answered from the route cache")),
      misses_(metrics.GetCounter("tessera_router_route_cache_misses_total",
                                 "Resolutions that had to wait for a MemDS lookup")),
      memds_requests_(metrics.GetCounter("tessera_router_memds_requests_total",
                                         "Partition lookups sent to MemDS (misses and refreshes)")),
      async_requests_(metrics.GetCounter("tessera_router_memds_async_requests_total",
                                         "Asynchronous refresh lookups sent on cache hits")),
      async_skipped_(metrics.GetCounter(
          "tessera_router_memds_async_skipped_total",
          "Cache hits whose refresh lookup was skipped: too many refreshes in flight")),
      memds_errors_(metrics.GetCounter("tessera_router_memds_errors_total",
                                       "Partition lookups that failed")) {
  TESSERA_CHECK(async_lookups_max_ <= limits::kRouterAsyncLookupsMax);
}

void RouteResolver::Resolve(const std::string& table, const std::string& key,
                            PartitionCallback done) {
  if (std::optional<pb::PartitionDescriptor> cached = cache_.Find(table, key)) {
    hits_.Increment();
    Refresh(table, key);
    done(std::move(*cached));
    return;
  }
  misses_.Increment();
  memds_requests_.Increment();
  lookup_.Lookup(table, key, LookupPriority::kRequestWaits,
                 [this, table, key, done = std::move(done)](Result<pb::PartitionDescriptor> answer) {
    const Status absorbed = Absorb(table, key, answer);
    if (!absorbed.ok()) {
      done(absorbed);
      return;
    }
    done(std::move(answer));
  });
}

void RouteResolver::Refresh(const std::string& table, const std::string& key) {
  size_t inflight = async_inflight_.load();
  do {
    if (inflight >= async_lookups_max_) {
      async_skipped_.Increment();
      return;
    }
  } while (!async_inflight_.compare_exchange_weak(inflight, inflight + 1));
  memds_requests_.Increment();
  async_requests_.Increment();
  lookup_.Lookup(table, key, LookupPriority::kRefresh,
                 [this, table, key](Result<pb::PartitionDescriptor> answer) {
    if (answer.status().code() == StatusCode::kNotFound) cache_.Invalidate(table, key);
    (void)Absorb(table, key, answer);
    async_inflight_.fetch_sub(1);
  });
}

Status RouteResolver::Absorb(const std::string& table, const std::string& key,
                             const Result<pb::PartitionDescriptor>& answer) {
  if (!answer.ok()) {
    memds_errors_.Increment();
    return answer.status();
  }
  const pb::PartitionDescriptor& p = *answer;
  const bool holds = p.table() == table && p.start_key() <= key &&
                     (p.end_key().empty() || key < p.end_key());
  if (!holds || p.group_id() == 0 || p.replicas_size() == 0) {
    memds_errors_.Increment();
    spdlog::warn("router.bad_lookup_answer table={} group={} replicas={}", table, p.group_id(),
                 p.replicas_size());
    return Status::Corruption("MemDS answered a partition that does not hold the key");
  }
  cache_.Update(p);
  return Status::Ok();
}

}  // namespace tessera::router
