// MemdsClient: partition lookups against the metadata replicas, each of which
// serves them from memory (MemDS).
//
// Lookups travel in batches: one meta.lookup_batch call carries up to
// limits::kRouterMemdsBatchLookupsMax of them. A lookup leaves at once when
// fewer than limits::kRouterMemdsBatchesInFlightMax batches are in flight;
// otherwise it waits for the next batch, which leaves as soon as one in
// flight answers. The batching is self-clocked (no timer): an idle router
// sends each lookup alone, with no added latency, and a busy one sends a few
// large batches instead of one call per lookup. Refresh lookups (a cache
// hit's, LookupPriority::kRefresh: nobody waits for them) leave on their
// own only when no batch is in flight; otherwise they ride with the next
// batch, behind every lookup a request waits for; and a refresh batch
// leaves only once its oldest refresh has waited `refresh_linger` (or a
// whole batch is queued), so that a router at one client sends one call per
// linger instead of one per request: each call wakes a metadata replica and
// the router again, on the cores the requests need. Under load the
// refreshes of many hits thus share one call. The metadata service serves
// the same number of lookups either way (the MemDS rule of RouteResolver is
// about lookups, not calls); only its per-call overhead shrinks. At most
// limits::kRouterMemdsQueuedLookupsMax lookups wait; beyond that a lookup
// answers Throttled at once.
//
// Each batch starts at the next replica in rotation (spreading load),
// skipping replicas whose call failed in the last
// limits::kRouterMemdsSuspectMs (a paused replica then delays one batch,
// not every batch), and fails over to the others when the whole call fails
// (transport failure, Throttled, Timeout, Unavailable, an unparsable
// answer), trying each replica at most once. Per lookup, NotFound (unknown table) and
// InvalidArgument are authoritative answers.
//
// Metrics: tessera_router_memds_batches_total (meta.lookup_batch calls
// sent, failovers included).
//
// Thread safety: every method may be called from any thread. Callbacks run
// on rpc channel strands, on `io` (refreshes sent by the linger timer) or in
// Lookup itself when it answers at once, never with an internal lock held;
// the pool must outlive every lookup, and `io` must stop before the client
// is destroyed.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "common/metrics.h"
#include "router/route_resolver.h"
#include "rpc/channel_pool.h"

namespace tessera::router {

class MemdsClient : public PartitionLookup {
 public:
  static constexpr std::chrono::microseconds kRefreshLingerMax{100'000};

  // `meta_ids`: the metadata replicas' process ids, addresses set in `pool`.
  // `refresh_linger`: how long a refresh may wait for others to share its
  // call, at most kRefreshLingerMax; zero sends each
  // refresh as soon as no batch is in flight.
  MemdsClient(boost::asio::io_context& io, rpc::ChannelPool& pool, std::vector<uint32_t> meta_ids,
              uint32_t timeout_ms, std::chrono::microseconds refresh_linger,
              metrics::Registry& metrics);

  void Lookup(const std::string& table, const std::string& key, LookupPriority priority,
              PartitionCallback done) override;

 private:
  struct Waiting {
    pb::LookupRequest request;
    PartitionCallback done;
  };
  size_t WaitingCountLocked() const { return waiting_.size() + refreshes_.size(); }
  struct Batch;

  // The next batch to send when the window has room (mu_ held), else null.
  std::shared_ptr<Batch> TakeBatchLocked();
  // Whether queued refreshes may leave without a waited-for lookup (mu_ held).
  bool RefreshesDueLocked() const;
  // Arms the linger timer for the oldest queued refresh unless armed (mu_ held).
  void ArmRefreshTimerLocked();
  void OnRefreshTimer();
  void TryNext(std::shared_ptr<Batch> batch);
  // Answers every lookup of `batch`, then sends the next batch if any.
  void Finish(const std::shared_ptr<Batch>& batch, Result<pb::LookupBatchResponse> answer);

  rpc::ChannelPool& pool_;
  const std::vector<uint32_t> meta_ids_;
  const uint32_t timeout_ms_;
  const std::chrono::microseconds refresh_linger_;
  metrics::Counter& batches_;

  std::mutex mu_;
  // Lookups not sent yet, at most limits::kRouterMemdsQueuedLookupsMax in
  // all: those a request waits for, and refreshes.
  std::deque<Waiting> waiting_;
  std::deque<Waiting> refreshes_;
  size_t in_flight_ = 0;         // batches; at most limits::kRouterMemdsBatchesInFlightMax
  // When the oldest refresh in refreshes_ was queued (meaningless when empty).
  std::chrono::steady_clock::time_point oldest_refresh_at_;
  boost::asio::steady_timer refresh_timer_;
  bool refresh_timer_armed_ = false;  // a wait is pending on refresh_timer_
  uint64_t next_replica_ = 0;
  std::vector<int64_t> suspect_until_ms_;  // per replica: steady clock, ms
};

}  // namespace tessera::router
