#include "router/kv_router.h"

#include <spdlog/spdlog.h>

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstring>

#include "admission/capacity_units.h"
#include "common/check.h"
#include "common/limits.h"
#include "common/splitmix64.h"

namespace tessera::router {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kStatusCodes = kStatusCodeCount;
constexpr const char* kOpNames[] = {"get",     "put",     "delete",   "batch",
                                    "scan",    "s3_read", "s3_write", "s3_list"};

// The call ended without any answer from the node (contract 2a): the rpc
// layer timed out after sending, or could not send at all.
bool NoAnswerFromNode(const Status& status) {
  const bool transport = status.send_outcome() == SendOutcome::kNotSent ||
                         status.send_outcome() == SendOutcome::kSentOutcomeUnknown;
  return transport &&
         (status.code() == StatusCode::kTimeout || status.code() == StatusCode::kUnavailable);
}

bool IsNoLeaderSign(StatusCode code) {
  return code == StatusCode::kNotLeader || code == StatusCode::kUnavailable ||
         code == StatusCode::kTimeout || code == StatusCode::kStaleEpoch ||
         code == StatusCode::kNotFound || code == StatusCode::kAborted;
}

// A write's cost, as the node charges it (admission/capacity_units.h).
double BatchUnits(const pb::KvBatch& batch) {
  std::vector<uint64_t> sizes;
  sizes.reserve(batch.writes_size());
  for (const pb::KvWrite& w : batch.writes()) {
    sizes.push_back(w.key().size() + (w.delete_() ? 0 : w.value().size()));
  }
  return admission::BatchWriteUnits(sizes, static_cast<uint64_t>(batch.conditions_size()));
}

admission::ReadConsistency ConsistencyOf(pb::Consistency c) {
  return c == pb::CONSISTENCY_EVENTUAL ? admission::ReadConsistency::kEventual
                                       : admission::ReadConsistency::kStrong;
}

Status ShareSpent(const std::string& table, const char* kind) {
  return Status::ThroughputExceeded("table " + table + ": " + kind +
                                    " capacity exceeded (this router's share)");
}

}  // namespace

Status ValidateKvRouterOptions(const KvRouterOptions& o) {
  if (o.request_deadline_ms < 1 || o.request_deadline_ms > limits::kRouterRequestDeadlineMsMax) {
    return Status::InvalidArgument("request_deadline_ms out of range");
  }
  if (o.rpc_timeout_ms < 1 || o.rpc_timeout_ms > o.request_deadline_ms) {
    return Status::InvalidArgument("rpc_timeout_ms must be 1..request_deadline_ms");
  }
  if (o.backoff_initial_ms < 1 || o.backoff_initial_ms > o.backoff_max_ms ||
      o.backoff_max_ms > limits::kRouterBackoffMsMax) {
    return Status::InvalidArgument("backoff must satisfy 1 <= initial <= max <= kRouterBackoffMsMax");
  }
  if (o.leader_search_backoff_max_ms < 1 || o.leader_search_backoff_max_ms > o.backoff_max_ms) {
    return Status::InvalidArgument("leader_search_backoff_max_ms must be 1..backoff_max_ms");
  }
  if (o.attempts_max < 1 || o.attempts_max > limits::kRouterAttemptsMax) {
    return Status::InvalidArgument("attempts_max out of range");
  }
  if (o.avoid_unresponsive_ms > limits::kRouterRequestDeadlineMsMax) {
    return Status::InvalidArgument("avoid_unresponsive_ms out of range");
  }
  return Status::Ok();
}

bool WriteMayHaveBeenApplied(const Status& status) {
  switch (status.send_outcome()) {
    case SendOutcome::kNotSent:
      return false;
    case SendOutcome::kAnswered:
      // The node's own verdict: these two mean it could not tell either
      // (e.g. a proposal that timed out); every other answer refused.
      return status.code() == StatusCode::kUnavailable || status.code() == StatusCode::kTimeout;
    case SendOutcome::kSentOutcomeUnknown:
    case SendOutcome::kUnstated:
      return true;
  }
  return true;
}

struct KvRouter::OpMetrics {
  std::string name;
  metrics::Histogram* latency = nullptr;
  metrics::Counter* retries = nullptr;
  std::array<metrics::Counter*, kStatusCodes> requests{};

  void Record(Clock::time_point start, StatusCode code) {
    latency->Observe(std::chrono::duration<double>(Clock::now() - start).count());
    requests[static_cast<size_t>(code)]->Increment();
  }
};

// One routed call to a partition's leader, with redirects and retries
// (contract 2-5 of the header). Runs one step at a time: each step is
// started by the previous step's callback, so no two steps overlap and the
// state needs no lock.
class KvRouter::Operation : public std::enable_shared_from_this<Operation> {
 public:
  using Build = std::function<std::string(const pb::PartitionDescriptor&)>;
  using Finish = std::function<void(Result<std::string>, const pb::PartitionDescriptor&)>;

  Operation(KvRouter& router, OpMetrics& metrics, const char* method, std::string table,
            std::string key, bool idempotent, Clock::time_point deadline, Build build,
            Finish finish)
      : router_(router),
        metrics_(metrics),
        method_(method),
        table_(std::move(table)),
        key_(std::move(key)),
        idempotent_(idempotent),
        deadline_(deadline),
        build_(std::move(build)),
        finish_(std::move(finish)),
        backoff_ms_(router.options_.backoff_initial_ms) {}

  void Start() { Attempt(); }

 private:
  void Attempt() {
    if (attempts_ >= router_.options_.attempts_max || Clock::now() >= deadline_) {
      return Complete(GiveUp());
    }
    ++attempts_;
    router_.routes_.Resolve(table_, key_, [self = shared_from_this()](
                                              Result<pb::PartitionDescriptor> route) {
      self->OnRoute(std::move(route));
    });
  }

  void OnRoute(Result<pb::PartitionDescriptor> route) {
    if (!route.ok()) {
      const StatusCode code = route.status().code();
      if (code == StatusCode::kNotFound || code == StatusCode::kInvalidArgument) {
        return Complete(Status(code, "table " + table_ + ": " + route.status().message()));
      }
      route_failed_ = true;
      return RetryAfterBackoff(route.status(), Pace::kLoad);
    }
    route_failed_ = false;
    partition_ = std::move(route).value();
    if (partition_.replicas_size() == 0) {
      route_failed_ = true;
      return RetryAfterBackoff(Status::Unavailable("partition map names no replica"), Pace::kLoad);
    }
    target_ = PickTarget();
    Result<std::shared_ptr<rpc::Channel>> channel = router_.nodes_.Get(target_);
    if (!channel.ok()) {
      NextReplica();
      return RetryAfterBackoff(Status::Unavailable("no address for node " + std::to_string(target_)),
                               Pace::kLeaderSearch);
    }
    const auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now());
    const auto timeout = std::max<std::chrono::milliseconds>(
        std::chrono::milliseconds(1),
        std::min<std::chrono::milliseconds>(remaining, std::chrono::milliseconds(router_.options_.rpc_timeout_ms)));
    const Status accepted = (*channel)->Call(
        method_, build_(partition_), timeout,
        [self = shared_from_this()](Result<std::string> reply) { self->OnReply(std::move(reply)); });
    if (!accepted.ok()) OnReply(accepted);
  }

  void OnReply(Result<std::string> reply) {
    RouteCache& cache = router_.routes_.cache();
    if (reply.ok() || reply.status().send_outcome() == SendOutcome::kAnswered) {
      router_.unresponsive_.Answered(target_);
    } else if (NoAnswerFromNode(reply.status())) {
      router_.unresponsive_.Mark(target_, Clock::now());
      cache.ForgetLeaderHint(table_, key_, partition_.group_id(), target_);
    }
    if (reply.ok()) return Complete(std::move(reply));
    const Status status = reply.status();
    // Contract 4: decided by the typed send outcome, never by the message.
    if (!idempotent_ && WriteMayHaveBeenApplied(status)) {
      return Complete(Status::Timeout("write outcome unknown (" + status.message() + ")"));
    }
    switch (status.code()) {
      case StatusCode::kNotLeader:
        if (status.leader_hint() != 0 && status.leader_hint() != target_ &&
            router_.unresponsive_.Avoided(status.leader_hint(), Clock::now())) {
          // The replica still follows a leader we got no answer from: wait
          // for the election, asking the other replicas (contract 3).
          NextReplica();
          return RetryAfterBackoff(status, Pace::kLeaderSearch);
        }
        if (status.leader_hint() != 0 && status.leader_hint() != target_) {
          redirect_to_ = status.leader_hint();
          cache.SetLeaderHint(table_, key_, partition_.group_id(), redirect_to_);
          metrics_.retries->Increment();
          last_ = status;
          return Attempt();  // a redirect needs no backoff
        }
        cache.Invalidate(table_, key_, partition_.group_id());
        NextReplica();
        return RetryAfterBackoff(status, Pace::kLeaderSearch);
      case StatusCode::kWrongPartition:
        // The group no longer owns the key (it split) and proposed or read
        // nothing: re-resolve and resend, at once the first time; again
        // after a backoff while meta's map does not yet show the split.
        cache.Invalidate(table_, key_, partition_.group_id());
        redirect_to_ = 0;
        skip_cached_hint_ = false;
        if (!wrong_partition_seen_) {
          wrong_partition_seen_ = true;
          metrics_.retries->Increment();
          last_ = status;
          return Attempt();
        }
        return RetryAfterBackoff(status, Pace::kLeaderSearch);
      case StatusCode::kStaleEpoch:
      case StatusCode::kNotFound:
        cache.Invalidate(table_, key_, partition_.group_id());
        NextReplica();
        return RetryAfterBackoff(status, Pace::kLeaderSearch);
      case StatusCode::kThrottled:
      case StatusCode::kAborted:
        return RetryAfterBackoff(status, Pace::kLoad);
      case StatusCode::kThroughputExceeded:
        // The leader's verdict on the table's capacity, not a failure: the
        // client backs off (contract 4); another replica would not admit it.
        return Complete(status);
      case StatusCode::kUnavailable:
      case StatusCode::kTimeout:
        NextReplica();
        // An unreachable node (refused, reset) is looked past quickly; a
        // node that took the whole timeout may be overloaded.
        return RetryAfterBackoff(
            status, status.code() == StatusCode::kUnavailable ? Pace::kLeaderSearch : Pace::kLoad);
      default:
        return Complete(status);
    }
  }

  // Forgets hints that led to a failure and moves to the next replica.
  void NextReplica() {
    redirect_to_ = 0;
    skip_cached_hint_ = true;
    ++replica_cursor_;
  }

  // Contract 2: the redirect, the cached hint, then the replicas from the
  // cursor on, each unless avoided as unresponsive; when every replica is
  // avoided, the one at the cursor.
  uint32_t PickTarget() {
    const Clock::time_point now = Clock::now();
    const auto usable = [&](uint32_t node) { return !router_.unresponsive_.Avoided(node, now); };
    if (redirect_to_ != 0 && usable(redirect_to_)) return redirect_to_;
    if (partition_.leader_hint() != 0 && !skip_cached_hint_ && usable(partition_.leader_hint())) {
      return partition_.leader_hint();
    }
    const size_t n = static_cast<size_t>(partition_.replicas_size());
    TESSERA_CHECK(n > 0);
    for (size_t i = 0; i < n; ++i) {
      const uint32_t node = partition_.replicas(static_cast<int>((replica_cursor_ + i) % n)).node_id();
      if (usable(node)) {
        replica_cursor_ += i;
        return node;
      }
    }
    return partition_.replicas(static_cast<int>(replica_cursor_ % n)).node_id();
  }

  // How far the backoff may grow for a failure (contract 5).
  enum class Pace { kLeaderSearch, kLoad };

  void RetryAfterBackoff(Status why, Pace pace) {
    last_ = std::move(why);
    const uint32_t cap = pace == Pace::kLeaderSearch ? router_.options_.leader_search_backoff_max_ms
                                                     : router_.options_.backoff_max_ms;
    backoff_ms_ = std::min(backoff_ms_, cap);
    const auto wait = std::chrono::milliseconds(std::max<int64_t>(
        1, static_cast<int64_t>(backoff_ms_ * router_.JitterFactor())));
    backoff_ms_ = std::min(backoff_ms_ * 2, cap);
    // Every retry here follows a failure that proved a write did not happen.
    // A write retried into the last sliver of the deadline could only time
    // out and turn that into "outcome unknown", so a write is retried only
    // while a quarter of an RPC timeout remains after the wait.
    const auto reserve =
        std::chrono::milliseconds(idempotent_ ? 0 : router_.options_.rpc_timeout_ms / 4);
    if (Clock::now() + wait + reserve >= deadline_ ||
        attempts_ >= router_.options_.attempts_max) {
      return Complete(GiveUp());
    }
    metrics_.retries->Increment();
    auto timer = std::make_shared<boost::asio::steady_timer>(router_.io_, wait);
    timer->async_wait([self = shared_from_this(), timer](const boost::system::error_code& error) {
      if (error) return self->Complete(Status::Aborted("router shutting down"));
      self->Attempt();
    });
  }

  Status GiveUp() const {
    if (route_failed_) return last_;
    if (last_.code() == StatusCode::kThrottled) return last_;
    if (last_.code() == StatusCode::kWrongPartition) {
      return Status::Unavailable("partition map of table " + table_ + " is changing (split); retry");
    }
    if (IsNoLeaderSign(last_.code())) {
      return Status::Unavailable("partition has no leader / no quorum (table " + table_ +
                                 ", group " + std::to_string(partition_.group_id()) +
                                 ", last error: " + last_.ToString() + ")");
    }
    return last_.ok() ? Status::Timeout("request deadline exceeded") : last_;
  }

  void Complete(Result<std::string> result) {
    TESSERA_CHECK(!completed_);
    completed_ = true;
    finish_(std::move(result), partition_);
  }

  KvRouter& router_;
  OpMetrics& metrics_;
  const char* const method_;
  const std::string table_;
  const std::string key_;
  const bool idempotent_;
  const Clock::time_point deadline_;
  const Build build_;
  const Finish finish_;
  uint32_t backoff_ms_;
  uint32_t attempts_ = 0;
  uint32_t target_ = 0;
  uint32_t redirect_to_ = 0;      // the last NotLeader hint, tried next
  bool skip_cached_hint_ = false;  // the cached hint failed us once
  size_t replica_cursor_ = 0;
  bool route_failed_ = false;      // the last failure was the lookup's
  bool wrong_partition_seen_ = false;  // the one immediate resend is spent
  bool completed_ = false;
  Status last_;
  pb::PartitionDescriptor partition_;
};

// A range scan walking partitions in key order: each step scans from
// `cursor_` within the partition holding it, then moves to the partition's
// resume key or end key, until the page is full, the range ends, or
// kRouterScanPartitionsMax steps were taken (then `next` says where to go on).
class KvRouter::ScanWalk : public std::enable_shared_from_this<ScanWalk> {
 public:
  ScanWalk(KvRouter& router, std::string table, std::string start, std::string end, uint32_t limit,
           pb::Consistency consistency, Callback<ScanPage> done)
      : router_(router),
        metrics_(router.MetricsFor("scan")),
        table_(std::move(table)),
        cursor_(std::move(start)),
        end_(std::move(end)),
        limit_(limit),
        consistency_(consistency),
        done_(std::move(done)),
        start_time_(Clock::now()),
        deadline_(start_time_ + std::chrono::milliseconds(router.options_.request_deadline_ms)) {}

  void Step() {
    if (page_.items.size() >= limit_ || steps_ >= limits::kRouterScanPartitionsMax) {
      page_.next = cursor_;
      return Finish(Status::Ok());
    }
    ++steps_;
    const std::string cursor = cursor_;
    const uint32_t want = limit_ - static_cast<uint32_t>(page_.items.size());
    auto build = [this, cursor, want](const pb::PartitionDescriptor& p) {
      pb::KvScanRequest request;
      request.set_group_id(p.group_id());
      request.set_start_key(cursor);
      request.set_end_key(EndWithin(p));
      request.set_limit(want);
      request.set_consistency(consistency_);
      return request.SerializeAsString();
    };
    auto finish = [self = shared_from_this()](Result<std::string> reply, const pb::PartitionDescriptor& p) {
      self->OnScanned(std::move(reply), p);
    };
    std::make_shared<Operation>(router_, metrics_, "kv.scan", table_, cursor, true, deadline_,
                                std::move(build), std::move(finish))
        ->Start();
  }

 private:
  // The scan's end clipped to partition `p`.
  std::string EndWithin(const pb::PartitionDescriptor& p) const {
    if (end_.empty()) return p.end_key();
    if (p.end_key().empty()) return end_;
    return std::min(end_, p.end_key());
  }

  void OnScanned(Result<std::string> reply, const pb::PartitionDescriptor& p) {
    if (!reply.ok()) return Finish(reply.status());
    pb::KvScanResponse response;
    if (!response.ParseFromString(*reply)) return Finish(Status::Corruption("unparsable kv.scan response"));
    for (pb::KvItem& item : *response.mutable_items()) {
      if (page_.items.size() >= limit_) break;
      page_.items.push_back(std::move(item));
    }
    if (!response.resume_key().empty()) {
      cursor_ = response.resume_key();
    } else if (p.end_key().empty() || (!end_.empty() && end_ <= p.end_key())) {
      return Finish(Status::Ok());  // the range ends in this partition
    } else {
      cursor_ = p.end_key();
    }
    Step();
  }

  void Finish(Status status) {
    metrics_.Record(start_time_, status.code());
    if (!status.ok()) return done_(status);
    done_(std::move(page_));
  }

  KvRouter& router_;
  OpMetrics& metrics_;
  const std::string table_;
  std::string cursor_;
  const std::string end_;
  const uint32_t limit_;
  const pb::Consistency consistency_;
  const Callback<ScanPage> done_;
  const Clock::time_point start_time_;
  const Clock::time_point deadline_;
  uint32_t steps_ = 0;
  ScanPage page_;
};

KvRouter::KvRouter(boost::asio::io_context& io, rpc::ChannelPool& nodes, RouteResolver& routes,
                   metrics::Registry& metrics, KvRouterOptions options)
    : io_(io),
      nodes_(nodes),
      routes_(routes),
      metrics_(metrics),
      options_(options),
      unresponsive_(options.avoid_unresponsive_ms),
      jitter_state_(options.jitter_seed != 0
                        ? options.jitter_seed
                        : static_cast<uint64_t>(Clock::now().time_since_epoch().count())) {
  TESSERA_CHECK(ValidateKvRouterOptions(options_).ok());
  for (const char* op : kOpNames) {
    auto m = std::make_unique<OpMetrics>();
    m->name = op;
    const metrics::Labels labels = {{"op", op}};
    m->latency = &metrics_.GetHistogram("tessera_router_request_latency_seconds",
                                        "KV operations from arrival to answer, all attempts",
                                        metrics::LatencyBucketsSeconds(), labels);
    m->retries = &metrics_.GetCounter("tessera_router_retries_total",
                                      "Attempts after the first: redirects and retries", labels);
    for (size_t code = 0; code < kStatusCodes; ++code) {
      m->requests[code] = &metrics_.GetCounter(
          "tessera_router_requests_total", "KV operations by outcome",
          {{"op", op}, {"code", std::string(StatusCodeName(static_cast<StatusCode>(code)))}});
    }
    op_metrics_.push_back(std::move(m));
  }
}

KvRouter::~KvRouter() = default;

KvRouter::OpMetrics& KvRouter::MetricsFor(const char* op_name) {
  for (auto& m : op_metrics_) {
    if (m->name == op_name) return *m;
  }
  TESSERA_CHECK(false && "unknown op name");
  return *op_metrics_.front();
}

double KvRouter::JitterFactor() {
  return 0.5 + 0.5 * UnitInterval(SplitMix64Next(jitter_state_));
}

void KvRouter::Get(const std::string& table, const std::string& key, pb::Consistency consistency,
                   Callback<pb::KvGetResponse> done) {
  OpMetrics& m = MetricsFor("get");
  const Clock::time_point start = Clock::now();
  const double min_units = admission::ReadUnits(0, ConsistencyOf(consistency));
  if (gac_ != nullptr && !gac_->Admit(table, admission::CapacityKind::kRead, min_units).admitted) {
    m.Record(start, StatusCode::kThroughputExceeded);
    return done(ShareSpent(table, "read"));
  }
  auto build = [key, consistency](const pb::PartitionDescriptor& p) {
    pb::KvGetRequest request;
    request.set_group_id(p.group_id());
    request.set_key(key);
    request.set_consistency(consistency);
    return request.SerializeAsString();
  };
  auto finish = [this, &m, start, table, key_bytes = key.size(), consistency, min_units,
                 done = std::move(done)](Result<std::string> reply, const pb::PartitionDescriptor&) {
    pb::KvGetResponse response;
    if (reply.ok() && !response.ParseFromString(*reply)) {
      reply = Status::Corruption("unparsable kv.get response");
    }
    m.Record(start, reply.status().code());
    if (!reply.ok()) return done(reply.status());
    if (gac_ != nullptr && response.found()) {
      const uint64_t bytes = key_bytes + response.value().size();
      gac_->ChargeMore(table, admission::CapacityKind::kRead,
                       admission::ReadUnits(bytes, ConsistencyOf(consistency)) - min_units);
    }
    done(std::move(response));
  };
  std::make_shared<Operation>(*this, m, "kv.get", table, key, true,
                              start + std::chrono::milliseconds(options_.request_deadline_ms),
                              std::move(build), std::move(finish))
      ->Start();
}

void KvRouter::Write(const std::string& table, const std::string& key, pb::KvBatch batch,
                     const char* op_name, Callback<pb::KvApplyResult> done) {
  OpMetrics& m = MetricsFor(op_name);
  const Clock::time_point start = Clock::now();
  if (gac_ != nullptr &&
      !gac_->Admit(table, admission::CapacityKind::kWrite, BatchUnits(batch)).admitted) {
    m.Record(start, StatusCode::kThroughputExceeded);
    return done(ShareSpent(table, "write"));
  }
  auto build = [batch = std::move(batch)](const pb::PartitionDescriptor& p) {
    pb::KvWriteRequest request;
    request.set_group_id(p.group_id());
    *request.mutable_batch() = batch;
    return request.SerializeAsString();
  };
  auto finish = [&m, start, done = std::move(done)](Result<std::string> reply,
                                                     const pb::PartitionDescriptor&) {
    pb::KvWriteResponse response;
    if (reply.ok() && !response.ParseFromString(*reply)) {
      reply = Status::Corruption("unparsable kv.write response");
    }
    m.Record(start, reply.status().code());
    if (!reply.ok()) return done(reply.status());
    done(std::move(*response.mutable_result()));
  };
  std::make_shared<Operation>(*this, m, "kv.write", table, key, false,
                              start + std::chrono::milliseconds(options_.request_deadline_ms),
                              std::move(build), std::move(finish))
      ->Start();
}

void KvRouter::Call(const std::string& table, const std::string& key, const char* method,
                    bool idempotent, const char* op_name, PartitionRequest build,
                    PartitionReply done) {
  OpMetrics& m = MetricsFor(op_name);
  const Clock::time_point start = Clock::now();
  auto finish = [&m, start, done = std::move(done)](Result<std::string> reply,
                                                     const pb::PartitionDescriptor& p) {
    m.Record(start, reply.status().code());
    done(std::move(reply), p);
  };
  std::make_shared<Operation>(*this, m, method, table, key, idempotent,
                              start + std::chrono::milliseconds(options_.request_deadline_ms),
                              std::move(build), std::move(finish))
      ->Start();
}

void KvRouter::Scan(const std::string& table, const std::string& start_key,
                    const std::string& end_key, uint32_t limit, pb::Consistency consistency,
                    Callback<ScanPage> done) {
  if (limit < 1 || limit > limits::kRouterScanItemsMax) {
    return done(Status::InvalidArgument("scan limit must be 1.." +
                                        std::to_string(limits::kRouterScanItemsMax)));
  }
  if (!end_key.empty() && end_key <= start_key) return done(ScanPage{});
  if (gac_ != nullptr) {
    const double min_units = admission::ReadUnits(0, ConsistencyOf(consistency));
    if (!gac_->Admit(table, admission::CapacityKind::kRead, min_units).admitted) {
      return done(ShareSpent(table, "read"));
    }
    done = [this, table, consistency, min_units, done = std::move(done)](Result<ScanPage> page) {
      if (page.ok()) {
        uint64_t bytes = 0;
        for (const pb::KvItem& item : page->items) bytes += item.key().size() + item.value().size();
        gac_->ChargeMore(table, admission::CapacityKind::kRead,
                         admission::ReadUnits(bytes, ConsistencyOf(consistency)) - min_units);
      }
      done(std::move(page));
    };
  }
  std::make_shared<ScanWalk>(*this, table, start_key, end_key, limit, consistency, std::move(done))
      ->Step();
}

}  // namespace tessera::router
