#include "blob/blob_client.h"

#include <openssl/rand.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <optional>

#include "blob/read_response.h"
#include "common/check.h"
#include "common/crc32c.h"
#include "rpc/frame.h"
#include "tessera/blob.pb.h"

namespace tessera::blob {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kStatusCodes = kStatusCodeCount;
enum Op : size_t { kPut, kRead, kDelete, kList, kOps };
constexpr const char* kOpNames[kOps] = {"put", "read", "delete", "list"};

// "node 3: Unavailable: ..." for error summaries.
std::string Describe(uint32_t node, const Status& status) {
  return "node " + std::to_string(node) + ": " + status.ToString();
}

}  // namespace

Status ValidateBlobClientOptions(const BlobClientOptions& o) {
  for (uint32_t t : {o.put_timeout_ms, o.read_timeout_ms, o.delete_timeout_ms, o.list_timeout_ms}) {
    if (t < 1 || t > limits::kBlobClientTimeoutMsMax) {
      return Status::InvalidArgument("blob client timeouts must be 1..kBlobClientTimeoutMsMax ms");
    }
  }
  if (o.inflight_max < 1 || o.inflight_max > limits::kBlobClientInflightMax) {
    return Status::InvalidArgument("blob client inflight_max out of range");
  }
  if (o.inflight_bytes_max < 1 || o.inflight_bytes_max > limits::kBlobClientInflightBytesMax) {
    return Status::InvalidArgument("blob client inflight_bytes_max out of range");
  }
  if (o.node_read_bytes_max < 1 || o.node_read_bytes_max > limits::kBlobClientNodeReadBytesMax) {
    return Status::InvalidArgument("blob client node_read_bytes_max out of range");
  }
  if (o.node_reads_max < 1 || o.node_reads_max > limits::kBlobClientNodeReadsMax) {
    return Status::InvalidArgument("blob client node_reads_max out of range");
  }
  return Status::Ok();
}

struct BlobClient::Metrics {
  explicit Metrics(metrics::Registry& r)
      : third_copy_ok(r.GetCounter("tessera_blob_client_third_copy_total",
                                   "Blob put replicas that answered after the put was acknowledged",
                                   {{"result", "ok"}})),
        third_copy_failed(r.GetCounter("tessera_blob_client_third_copy_total",
                                       "Blob put replicas that answered after the put was acknowledged",
                                       {{"result", "failed"}})),
        read_fallbacks(r.GetCounter("tessera_blob_client_read_fallbacks_total",
                                    "Blob reads retried on another replica after a failure")),
        throttled(r.GetCounter("tessera_blob_client_throttled_total",
                               "Blob operations refused: too many in flight")),
        read_wait(r.GetHistogram("tessera_blob_client_read_wait_seconds",
                                 "Time a blob read attempt waited for its node's bound on unanswered reads",
                                 metrics::LatencyBucketsSeconds())) {
    for (size_t op = 0; op < kOps; ++op) {
      latency[op] = &r.GetHistogram("tessera_blob_client_latency_seconds",
                                    "Blob operation latency as the router sees it",
                                    metrics::LatencyBucketsSeconds(), {{"op", kOpNames[op]}});
      for (size_t code = 0; code < kStatusCodes; ++code) {
        requests[op][code] = &r.GetCounter(
            "tessera_blob_client_requests_total", "Blob operations by outcome",
            {{"op", kOpNames[op]}, {"code", std::string(StatusCodeName(static_cast<StatusCode>(code)))}});
      }
    }
  }

  void Record(size_t op, Clock::time_point start, StatusCode code) {
    latency[op]->Observe(std::chrono::duration<double>(Clock::now() - start).count());
    requests[op][static_cast<size_t>(code)]->Increment();
  }

  metrics::Counter& third_copy_ok;
  metrics::Counter& third_copy_failed;
  metrics::Counter& read_fallbacks;
  metrics::Counter& throttled;
  metrics::Histogram& read_wait;
  std::array<metrics::Histogram*, kOps> latency{};
  std::array<std::array<metrics::Counter*, kStatusCodes>, kOps> requests{};
};

// Contract 2: one blob.put per replica, concurrently; answers at a quorum of
// acknowledgements or as soon as one is out of reach. Replies come from
// different channels' strands: mu_ guards the tallies.
class BlobClient::PutOp : public std::enable_shared_from_this<PutOp> {
 public:
  PutOp(BlobClient& client, BlobId id, std::vector<uint32_t> replicas, size_t bytes, StatusCallback done)
      : client_(client),
        id_(id),
        replicas_(std::move(replicas)),
        quorum_(replicas_.size() / 2 + 1),
        bytes_(bytes),
        done_(std::move(done)) {}

  void Start(rpc::SplitPayload payload) {
    const auto timeout = std::chrono::milliseconds(client_.options_.put_timeout_ms);
    for (size_t i = 0; i < replicas_.size(); ++i) {
      auto channel = client_.nodes_.Get(replicas_[i]);
      if (!channel.ok()) {
        OnReply(i, channel.status());
        continue;
      }
      // Every frame shares the data (payload.tail); the last takes the head.
      const Status accepted = (*channel)->Call(
          "blob.put", i + 1 == replicas_.size() ? std::move(payload) : payload, timeout,
          [self = shared_from_this(), i](Result<std::string> reply) { self->OnReply(i, reply.status()); });
      if (!accepted.ok()) OnReply(i, accepted);
    }
  }

 private:
  void OnReply(size_t index, const Status& status) {
    std::unique_lock lock(mu_);
    ++answered_;
    if (status.ok()) {
      ++acks_;
    } else {
      failures_.push_back(Describe(replicas_[index], status));
      conflict_ = conflict_ || status.code() == StatusCode::kConflict;
    }
    std::optional<Status> outcome;
    if (!decided_ && acks_ >= quorum_) {
      outcome = Status::Ok();
      acked_ = true;
    } else if (!decided_ && failures_.size() > replicas_.size() - quorum_) {
      outcome = Failure();
    }
    if (outcome) decided_ = true;
    const bool finished = answered_ == replicas_.size();
    lock.unlock();
    if (outcome) {
      client_.metrics_->Record(kPut, start_, outcome->code());
      done_(*outcome);
    }
    if (finished) Finished();
  }

  // Every replica answered (no lock needed: nothing changes any more).
  // Copies beyond the quorum of an acknowledged put are counted.
  void Finished() {
    if (acked_) {
      client_.metrics_->third_copy_ok.Increment(acks_ - quorum_);
      client_.metrics_->third_copy_failed.Increment(replicas_.size() - acks_);
      for (const std::string& f : failures_) {
        spdlog::info("blob.copy_missing id={} {}", id_.ToString(), f);
      }
    }
    client_.Release(bytes_);
  }

  // Called with mu_ held, once a quorum is out of reach.
  Status Failure() const {
    std::string why = "blob put " + id_.ToString() + ": " + std::to_string(acks_) + " of " +
                      std::to_string(replicas_.size()) + " replicas acknowledged, " +
                      std::to_string(quorum_) + " needed";
    for (const std::string& f : failures_) why += "; " + f;
    return conflict_ ? Status::Conflict(why) : Status::Unavailable(why);
  }

  BlobClient& client_;
  const BlobId id_;
  const std::vector<uint32_t> replicas_;
  const size_t quorum_;
  const size_t bytes_;
  const StatusCallback done_;
  const Clock::time_point start_ = Clock::now();
  std::mutex mu_;  // guards the fields below
  size_t answered_ = 0;
  size_t acks_ = 0;
  std::vector<std::string> failures_;
  bool conflict_ = false;
  bool decided_ = false;  // done_ was called
  bool acked_ = false;    // ... with OK
};

// Contract 3: one replica at a time, in read order. Each step starts from
// the previous step's callback, so steps never overlap and need no lock
// (the read gate's lock orders a step's start after its Enter).
class BlobClient::ReadOp : public std::enable_shared_from_this<ReadOp> {
 public:
  ReadOp(BlobClient& client, BlobId id, uint64_t offset, uint64_t length, ReadPriority priority,
         ReadCallback done)
      : client_(client),
        id_(id),
        order_(client.ReadOrder(id.slot)),
        priority_(priority),
        length_(length),
        charge_(static_cast<size_t>(std::min<uint64_t>(length, limits::kBlobBytesMax))),
        done_(std::move(done)) {
    pb::BlobReadRequest request;
    request.set_blob_id(id.ToString());
    request.set_offset(offset);
    request.set_length(length);
    payload_ = request.SerializeAsString();
  }

  // Asks the next replica, once its node's read bound lets it (contract 5a).
  void Attempt() {
    if (next_ == order_.size()) return Finish(Failure());
    const uint32_t node = order_[next_++];
    entered_ = Clock::now();
    client_.read_gate_.Enter(node, charge_, priority_, entered_,
                             [self = shared_from_this(), node](Status admitted) { self->Send(node, admitted); });
  }

 private:
  // `admitted` OK: this read holds its charge on `node` until OnReply.
  void Send(uint32_t node, const Status& admitted) {
    client_.metrics_->read_wait.Observe(std::chrono::duration<double>(Clock::now() - entered_).count());
    if (!admitted.ok()) return OnFailure(node, admitted);
    auto channel = client_.nodes_.Get(node);
    if (!channel.ok()) return OnReply(node, channel.status());
    const Status accepted = (*channel)->CallForBytes(
        "blob.read", payload_, std::chrono::milliseconds(client_.options_.read_timeout_ms),
        [self = shared_from_this(), node](Result<rpc::ReceivedBytes> reply) { self->OnReply(node, std::move(reply)); });
    if (!accepted.ok()) OnReply(node, accepted);
  }

  void OnReply(uint32_t node, Result<rpc::ReceivedBytes> reply) {
    client_.read_gate_.Leave(node, charge_, Clock::now());
    Result<SharedBytes> data = reply.ok() ? Verify(*reply) : Result<SharedBytes>(reply.status());
    if (data.ok()) return Finish(std::move(data));
    OnFailure(node, data.status());
  }

  void OnFailure(uint32_t node, const Status& status) {
    // A range past the end is past the end on every copy.
    if (status.code() == StatusCode::kInvalidArgument) return Finish(status);
    all_not_found_ = all_not_found_ && status.code() == StatusCode::kNotFound;
    only_corrupt_or_missing_ = only_corrupt_or_missing_ && (status.code() == StatusCode::kNotFound ||
                                                            status.code() == StatusCode::kCorruption);
    errors_.push_back(Describe(node, status));
    if (next_ < order_.size()) client_.metrics_->read_fallbacks.Increment();
    Attempt();
  }

  // The data of a response whose checksum and length hold, left where it
  // lies in the payload.
  Result<SharedBytes> Verify(const rpc::ReceivedBytes& reply) const {
    const SharedBytes& payload = reply.bytes;
    pb::BlobReadResponse response;
    std::string_view data;
    if (!ParseReadResponse(payload.view(), &response, &data)) {
      return Status::Corruption("blob.read response does not parse");
    }
    // The data ends the payload (read_response.h): when the rpc layer knows
    // the payload's CRC, the data's follows without reading it again.
    const size_t data_offset = static_cast<size_t>(data.data() - payload.data());
    const uint32_t data_crc = reply.crc32c && data_offset + data.size() == payload.size()
                                  ? Crc32cOfSuffix(*reply.crc32c, payload.view(), data_offset)
                                  : Crc32c(data);
    if (data_crc != response.crc32c()) {
      return Status::Corruption("blob.read response fails its crc32c");
    }
    if (data.size() > length_ || data.size() > response.total_size()) {
      return Status::Corruption("blob.read response longer than asked");
    }
    return payload.Slice(data_offset, data.size());
  }

  Status Failure() const {
    std::string why = "blob read " + id_.ToString() + ": no replica could serve it";
    for (const std::string& e : errors_) why += "; " + e;
    if (all_not_found_) return Status::NotFound(why);
    if (only_corrupt_or_missing_) return Status::Corruption(why);
    return Status::Unavailable(why);
  }

  void Finish(Result<SharedBytes> result) {
    client_.metrics_->Record(kRead, start_, result.status().code());
    client_.Release(0);
    done_(std::move(result));
  }

  BlobClient& client_;
  const BlobId id_;
  const std::vector<uint32_t> order_;
  const ReadPriority priority_;
  const uint64_t length_;
  const size_t charge_;  // against the node's read bound
  const ReadCallback done_;
  const Clock::time_point start_ = Clock::now();
  std::string payload_;
  Clock::time_point entered_;  // the current attempt's Enter
  size_t next_ = 0;
  bool all_not_found_ = true;
  bool only_corrupt_or_missing_ = true;
  std::vector<std::string> errors_;
};

// Contract 4: blob.delete to every replica; answers once all answered.
// mu_ guards the tallies (replies come from different strands).
class BlobClient::DeleteOp : public std::enable_shared_from_this<DeleteOp> {
 public:
  DeleteOp(BlobClient& client, BlobId id, DeleteCallback done)
      : client_(client), id_(id), replicas_(client.slot_map()->ReplicasOf(id.slot)), done_(std::move(done)) {}

  void Start() {
    pb::BlobDeleteRequest request;
    request.set_blob_id(id_.ToString());
    const std::string payload = request.SerializeAsString();
    for (const uint32_t node : replicas_) {
      auto channel = client_.nodes_.Get(node);
      if (!channel.ok()) {
        OnReply(node, channel.status());
        continue;
      }
      const Status accepted = (*channel)->Call(
          "blob.delete", payload, std::chrono::milliseconds(client_.options_.delete_timeout_ms),
          [self = shared_from_this(), node](Result<std::string> reply) { self->OnReply(node, reply.status()); });
      if (!accepted.ok()) OnReply(node, accepted);
    }
  }

 private:
  // `status`: the node's answer (OK: removed, NotFound: it held none), or
  // a failure to reach it (never NotFound: ChannelPool::Get).
  void OnReply(uint32_t node, const Status& status) {
    std::unique_lock lock(mu_);
    if (status.ok()) {
      ++outcome_.copies_removed;
    } else if (status.code() == StatusCode::kNotFound) {
      ++outcome_.copies_absent;
    } else if (first_error_.ok()) {
      first_error_ = Status(status.code(), "blob delete " + id_.ToString() + ": " + Describe(node, status));
    }
    if (++answered_ < replicas_.size()) return;
    const Result<DeleteOutcome> result = first_error_.ok() ? Result<DeleteOutcome>(outcome_)
                                                           : Result<DeleteOutcome>(first_error_);
    lock.unlock();
    client_.metrics_->Record(kDelete, start_, result.status().code());
    client_.Release(0);
    done_(result);
  }

  BlobClient& client_;
  const BlobId id_;
  const std::vector<uint32_t> replicas_;
  const DeleteCallback done_;
  const Clock::time_point start_ = Clock::now();
  std::mutex mu_;  // guards answered_, outcome_ and first_error_
  size_t answered_ = 0;
  DeleteOutcome outcome_;
  Status first_error_;
};

BlobClient::BlobClient(rpc::ChannelPool& nodes, BlobSlotMap slot_map, std::string local_az,
                       metrics::Registry& metrics, BlobClientOptions options)
    : nodes_(nodes),
      slot_map_(std::make_shared<const BlobSlotMap>(std::move(slot_map))),
      local_az_(std::move(local_az)),
      options_(options),
      metrics_(std::make_unique<Metrics>(metrics)),
      read_gate_(NodeReadGate::Options{options.node_read_bytes_max, options.node_reads_max,
                                       std::chrono::milliseconds(options.read_timeout_ms)}) {
  TESSERA_CHECK(ValidateBlobClientOptions(options_).ok());
  uint32_t first = 0;
  TESSERA_CHECK(RAND_bytes(reinterpret_cast<unsigned char*>(&first), sizeof(first)) == 1);
  next_slot_ = first % limits::kBlobSlots;
}

BlobClient::~BlobClient() = default;

std::shared_ptr<const BlobSlotMap> BlobClient::slot_map() const {
  std::lock_guard lock(map_mu_);
  return slot_map_;
}

bool BlobClient::SetSlotMap(BlobSlotMap map) {
  auto next = std::make_shared<const BlobSlotMap>(std::move(map));
  std::lock_guard lock(map_mu_);
  if (next->version() <= slot_map_->version()) return false;
  slot_map_ = std::move(next);
  return true;
}

BlobId BlobClient::NextBlobId() {
  return BlobId::Generate(next_slot_.fetch_add(1, std::memory_order_relaxed) % limits::kBlobSlots);
}

Status BlobClient::Admit(size_t bytes) {
  std::lock_guard lock(mu_);
  const bool fits = inflight_ == 0 || (inflight_ < options_.inflight_max &&
                                       inflight_bytes_ + bytes <= options_.inflight_bytes_max);
  if (!fits) {
    metrics_->throttled.Increment();
    return Status::Throttled("too many blob operations in flight");
  }
  ++inflight_;
  inflight_bytes_ += bytes;
  return Status::Ok();
}

void BlobClient::Release(size_t bytes) {
  std::lock_guard lock(mu_);
  TESSERA_CHECK(inflight_ > 0 && inflight_bytes_ >= bytes);
  --inflight_;
  inflight_bytes_ -= bytes;
}

size_t BlobClient::inflight() const {
  std::lock_guard lock(mu_);
  return inflight_;
}

std::vector<uint32_t> BlobClient::ReadOrder(uint32_t slot) const {
  std::vector<uint32_t> local;
  std::vector<uint32_t> remote;
  const std::shared_ptr<const BlobSlotMap> map = slot_map();
  for (const uint32_t node : map->ReplicasOf(slot)) {
    (map->AzOf(node) == local_az_ ? local : remote).push_back(node);
  }
  const auto rotate = [slot](std::vector<uint32_t>& v) {
    if (!v.empty()) std::rotate(v.begin(), v.begin() + slot % v.size(), v.end());
  };
  rotate(local);
  rotate(remote);
  local.insert(local.end(), remote.begin(), remote.end());
  return local;
}

void BlobClient::Put(const BlobId& id, std::string owner, std::string data, StatusCallback done,
                     std::optional<uint32_t> data_crc32c) {
  if (id.slot >= limits::kBlobSlots) return done(Status::InvalidArgument("blob slot out of range"));
  if (data.size() > limits::kBlobBytesMax) {
    return done(Status::InvalidArgument("blob of " + std::to_string(data.size()) + " bytes exceeds " +
                                        std::to_string(limits::kBlobBytesMax)));
  }
  const size_t bytes = data.size();
  const Status admitted = Admit(bytes);
  if (!admitted.ok()) {
    metrics_->requests[kPut][static_cast<size_t>(admitted.code())]->Increment();
    return done(admitted);
  }
  // One copy of the data for every replica's frame: the request's other
  // fields, then the data field as the frames' shared tail.
  rpc::SplitPayload payload;
  payload.tail_crc32c = data_crc32c ? *data_crc32c : Crc32c(data);
  pb::BlobPutRequest request;
  request.set_blob_id(id.ToString());
  request.set_crc32c(payload.tail_crc32c);
  request.set_owner(std::move(owner));
  payload.head = request.SerializeAsString();
  rpc::AppendLengthDelimitedFieldHeader(&payload.head, pb::BlobPutRequest::kDataFieldNumber,
                                        data.size());
  payload.tail = SharedBytes(std::move(data));
  auto op = std::make_shared<PutOp>(*this, id, slot_map()->ReplicasOf(id.slot), bytes, std::move(done));
  op->Start(std::move(payload));
}

void BlobClient::Read(const BlobId& id, uint64_t offset, uint64_t length, ReadCallback done,
                      ReadPriority priority) {
  if (id.slot >= limits::kBlobSlots) return done(Status::InvalidArgument("blob slot out of range"));
  const Status admitted = Admit(0);
  if (!admitted.ok()) {
    metrics_->requests[kRead][static_cast<size_t>(admitted.code())]->Increment();
    return done(admitted);
  }
  std::make_shared<ReadOp>(*this, id, offset, length, priority, std::move(done))->Attempt();
}

void BlobClient::Delete(const BlobId& id, DeleteCallback done) {
  if (id.slot >= limits::kBlobSlots) return done(Status::InvalidArgument("blob slot out of range"));
  const Status admitted = Admit(0);
  if (!admitted.ok()) {
    metrics_->requests[kDelete][static_cast<size_t>(admitted.code())]->Increment();
    return done(admitted);
  }
  std::make_shared<DeleteOp>(*this, id, std::move(done))->Start();
}

void BlobClient::ListNode(uint32_t node_id, uint32_t slot_from, const std::optional<BlobId>& after,
                          uint32_t limit, ListCallback done, bool with_owner) {
  auto channel = nodes_.Get(node_id);
  if (!channel.ok()) return done(channel.status());
  pb::BlobListRequest request;
  request.set_slot_from(slot_from);
  if (after) request.set_after_blob_id(after->ToString());
  request.set_limit(limit);
  request.set_with_owner(with_owner);
  const Clock::time_point start = Clock::now();
  auto finish = [this, start, done](Result<ListPage> page) {
    metrics_->Record(kList, start, page.status().code());
    done(std::move(page));
  };
  const Status accepted = (*channel)->Call(
      "blob.list", request.SerializeAsString(), std::chrono::milliseconds(options_.list_timeout_ms),
      [finish, with_owner](Result<std::string> reply) {
        if (!reply.ok()) return finish(reply.status());
        pb::BlobListResponse response;
        if (!response.ParseFromString(*reply)) return finish(Status::Corruption("blob.list response does not parse"));
        ListPage page;
        page.more = response.more();
        for (const pb::BlobListEntryProto& e : response.entries()) {
          auto id = BlobId::Parse(e.blob_id());
          if (!id.ok()) return finish(Status::Corruption("blob.list answered a bad id"));
          page.entries.emplace_back(*id, e.size());
          if (with_owner) page.owners.emplace_back(e.owner(), e.mtime_ms());
        }
        finish(std::move(page));
      });
  if (!accepted.ok()) finish(accepted);
}

void BlobClient::PutNode(uint32_t node_id, const BlobId& id, std::string owner, std::string data,
                         StatusCallback done) {
  if (id.slot >= limits::kBlobSlots) return done(Status::InvalidArgument("blob slot out of range"));
  if (data.size() > limits::kBlobBytesMax) return done(Status::InvalidArgument("blob too large"));
  auto channel = nodes_.Get(node_id);
  if (!channel.ok()) return done(channel.status());
  const size_t bytes = data.size();
  const Status admitted = Admit(bytes);
  if (!admitted.ok()) return done(admitted);
  pb::BlobPutRequest request;
  request.set_blob_id(id.ToString());
  request.set_crc32c(Crc32c(data));
  request.set_data(std::move(data));
  request.set_owner(std::move(owner));
  const Clock::time_point start = Clock::now();
  auto finish = [this, start, bytes, done](const Status& status) {
    metrics_->Record(kPut, start, status.code());
    Release(bytes);
    done(status);
  };
  const Status accepted = (*channel)->Call(
      "blob.put", request.SerializeAsString(), std::chrono::milliseconds(options_.put_timeout_ms),
      [finish](Result<std::string> reply) { finish(reply.status()); });
  if (!accepted.ok()) finish(accepted);
}

void BlobClient::StatNode(uint32_t node_id, const BlobId& id, StatCallback done) {
  auto channel = nodes_.Get(node_id);
  if (!channel.ok()) return done(channel.status());
  pb::BlobStatRequest request;
  request.set_blob_id(id.ToString());
  const Status accepted = (*channel)->Call(
      "blob.stat", request.SerializeAsString(), std::chrono::milliseconds(options_.read_timeout_ms),
      [done](Result<std::string> reply) {
        if (!reply.ok()) return done(reply.status());
        pb::BlobStatResponse response;
        if (!response.ParseFromString(*reply)) return done(Status::Corruption("blob.stat response does not parse"));
        done(StatInfo{response.size(), response.owner(), response.mtime_ms()});
      });
  if (!accepted.ok()) done(accepted);
}

}  // namespace tessera::blob
