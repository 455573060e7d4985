#include "router/memds_client.h"

#include <chrono>
#include <utility>

#include "common/check.h"
#include "common/limits.h"
#include "rpc/envelope.h"

namespace tessera::router {
namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

struct MemdsClient::Batch {
  std::vector<PartitionCallback> done;  // one per lookup, in request order
  std::string request;                  // serialized LookupBatchRequest
  size_t first = 0;                     // replica index of the first attempt
  size_t tried = 0;
  Status last;
};

MemdsClient::MemdsClient(boost::asio::io_context& io, rpc::ChannelPool& pool,
                         std::vector<uint32_t> meta_ids, uint32_t timeout_ms,
                         std::chrono::microseconds refresh_linger, metrics::Registry& metrics)
    : pool_(pool),
      meta_ids_(std::move(meta_ids)),
      timeout_ms_(timeout_ms),
      refresh_linger_(refresh_linger),
      batches_(metrics.GetCounter("tessera_router_memds_batches_total",
                                  "meta.lookup_batch calls sent (failovers included)")),
      refresh_timer_(io) {
  TESSERA_CHECK(!meta_ids_.empty());
  suspect_until_ms_.assign(meta_ids_.size(), 0);
  TESSERA_CHECK(timeout_ms_ >= 1 && timeout_ms_ <= limits::kRpcCallTimeoutMsMax);
  TESSERA_CHECK(refresh_linger_.count() >= 0 && refresh_linger_ <= kRefreshLingerMax);
}

void MemdsClient::Lookup(const std::string& table, const std::string& key, LookupPriority priority,
                         PartitionCallback done) {
  std::shared_ptr<Batch> batch;
  {
    std::unique_lock lock(mu_);
    if (WaitingCountLocked() >= limits::kRouterMemdsQueuedLookupsMax) {
      lock.unlock();
      return done(Status::Throttled("too many MemDS lookups waiting"));
    }
    if (priority == LookupPriority::kRefresh && refreshes_.empty()) {
      oldest_refresh_at_ = std::chrono::steady_clock::now();
    }
    Waiting& w = (priority == LookupPriority::kRefresh ? refreshes_ : waiting_).emplace_back();
    w.request.set_table(table);
    w.request.set_key(key);
    w.done = std::move(done);
    batch = TakeBatchLocked();
  }
  if (batch) TryNext(std::move(batch));  // else it leaves with the next batch
}

std::shared_ptr<MemdsClient::Batch> MemdsClient::TakeBatchLocked() {
  if (in_flight_ >= limits::kRouterMemdsBatchesInFlightMax) return nullptr;
  // Refreshes alone wait for the batch in flight and for their linger (see
  // the header); a batch that answers or the timer sends them later.
  if (waiting_.empty()) {
    if (refreshes_.empty() || in_flight_ > 0) return nullptr;
    if (!RefreshesDueLocked()) {
      ArmRefreshTimerLocked();
      return nullptr;
    }
  }
  auto batch = std::make_shared<Batch>();
  pb::LookupBatchRequest request;
  const size_t count = std::min(WaitingCountLocked(), limits::kRouterMemdsBatchLookupsMax);
  batch->done.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    std::deque<Waiting>& from = waiting_.empty() ? refreshes_ : waiting_;
    Waiting& w = from.front();
    *request.add_lookups() = std::move(w.request);
    batch->done.push_back(std::move(w.done));
    from.pop_front();
  }
  batch->request = request.SerializeAsString();
  // The next replica in rotation that did not fail lately (any, if all did).
  const int64_t now = NowMs();
  batch->first = next_replica_++ % meta_ids_.size();
  for (size_t i = 0; i < meta_ids_.size(); ++i) {
    const size_t candidate = (batch->first + i) % meta_ids_.size();
    if (suspect_until_ms_[candidate] <= now) {
      batch->first = candidate;
      break;
    }
  }
  ++in_flight_;
  return batch;
}

bool MemdsClient::RefreshesDueLocked() const {
  return refreshes_.size() >= limits::kRouterMemdsBatchLookupsMax ||
         std::chrono::steady_clock::now() - oldest_refresh_at_ >= refresh_linger_;
}

void MemdsClient::ArmRefreshTimerLocked() {
  if (refresh_timer_armed_) return;
  refresh_timer_armed_ = true;
  refresh_timer_.expires_at(oldest_refresh_at_ + refresh_linger_);
  refresh_timer_.async_wait([this](const boost::system::error_code& error) {
    if (!error) OnRefreshTimer();
  });
}

void MemdsClient::OnRefreshTimer() {
  std::shared_ptr<Batch> batch;
  {
    std::lock_guard lock(mu_);
    refresh_timer_armed_ = false;
    // Re-arms itself when the refreshes queued now are younger than the
    // linger; leaves them to Finish while a batch is in flight.
    batch = TakeBatchLocked();
  }
  if (batch) TryNext(std::move(batch));
}

void MemdsClient::TryNext(std::shared_ptr<Batch> batch) {
  // Bounded by meta_ids_.size(): each pass tries one more replica.
  while (batch->tried < meta_ids_.size()) {
    const size_t replica = (batch->first + batch->tried) % meta_ids_.size();
    const uint32_t meta_id = meta_ids_[replica];
    ++batch->tried;
    Result<std::shared_ptr<rpc::Channel>> channel = pool_.Get(meta_id);
    if (!channel.ok()) {
      batch->last = channel.status();
      continue;
    }
    batches_.Increment();
    const Status accepted = (*channel)->Call(
        "meta.lookup_batch", batch->request, std::chrono::milliseconds(timeout_ms_),
        [this, batch, replica](Result<std::string> response) {
          if (response.ok()) {
            pb::LookupBatchResponse parsed;
            if (parsed.ParseFromString(*response) &&
                parsed.results_size() == static_cast<int>(batch->done.size())) {
              return Finish(batch, std::move(parsed));
            }
            batch->last = Status::Corruption("unparsable meta.lookup_batch response");
          } else {
            batch->last = response.status();
          }
          {
            std::lock_guard lock(mu_);
            suspect_until_ms_[replica] = NowMs() + limits::kRouterMemdsSuspectMs;
          }
          TryNext(batch);
        });
    if (accepted.ok()) return;
    batch->last = accepted;
  }
  Finish(batch, Status::Unavailable("metadata service unavailable: " + batch->last.ToString()));
}

void MemdsClient::Finish(const std::shared_ptr<Batch>& batch, Result<pb::LookupBatchResponse> answer) {
  for (size_t i = 0; i < batch->done.size(); ++i) {
    if (!answer.ok()) {
      batch->done[i](answer.status());
      continue;
    }
    pb::LookupResult& result = *answer->mutable_results(static_cast<int>(i));
    if (result.status_code() != 0) {
      batch->done[i](Status(rpc::StatusCodeFromWire(result.status_code()),
                            std::move(*result.mutable_status_message())));
    } else {
      batch->done[i](std::move(*result.mutable_partition()));
    }
  }
  std::shared_ptr<Batch> next;
  {
    std::lock_guard lock(mu_);
    --in_flight_;
    next = TakeBatchLocked();
  }
  if (next) TryNext(std::move(next));
}

}  // namespace tessera::router
