#include "blob/blob_service.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <string>

#include "blob/blob_file.h"
#include "blob/read_response.h"
#include "common/thread_name.h"
#include "rpc/bytes_field.h"
#include "rpc/frame.h"
#include "tessera/blob.pb.h"

namespace tessera::blob {
namespace {

using Clock = std::chrono::steady_clock;

template <class Message>
Result<Message> ParseRequest(const pb::Envelope& request) {
  Message message;
  if (!message.ParseFromString(request.payload())) {
    return Status::InvalidArgument("payload of " + request.method() + " does not parse");
  }
  return message;
}

}  // namespace

enum Op : size_t { kPut, kRead, kDelete, kList, kStat, kOps };
constexpr const char* kOpNames[kOps] = {"put", "read", "delete", "list", "stat"};

struct BlobService::Metrics {
  explicit Metrics(metrics::Registry& r)
      : registry(r),
        done{&r.GetCounter("tessera_blob_puts_total", "Blob puts stored (new or identical)"),
             &r.GetCounter("tessera_blob_reads_total", "Blob reads served"),
             &r.GetCounter("tessera_blob_deletes_total", "Blobs deleted"),
             &r.GetCounter("tessera_blob_lists_total", "Blob list pages served"),
             &r.GetCounter("tessera_blob_stats_total", "Blob stats served")},
        written_bytes(r.GetCounter("tessera_blob_written_bytes_total", "Data bytes of blob puts stored")),
        read_bytes(r.GetCounter("tessera_blob_read_bytes_total", "Data bytes of blob reads served")),
        throttled(r.GetCounter("tessera_blob_throttled_total",
                               "Blob requests refused because the blob queue was full")),
        queue_depth(r.GetGauge("tessera_blob_queue_depth", "Blob requests waiting for a blob worker")) {
    for (size_t op = 0; op < kOps; ++op) {
      latency[op] = &r.GetHistogram("tessera_blob_latency_seconds",
                                    "Blob request latency on the node, queue wait included",
                                    metrics::LatencyBucketsSeconds(), {{"op", kOpNames[op]}});
    }
  }

  void Error(size_t op, StatusCode code) {
    registry
        .GetCounter("tessera_blob_errors_total", "Blob requests answered with an error",
                    {{"op", kOpNames[op]}, {"code", std::string(StatusCodeName(code))}})
        .Increment();
  }

  metrics::Registry& registry;
  metrics::Counter* done[kOps];
  metrics::Histogram* latency[kOps] = {};
  metrics::Counter& written_bytes;
  metrics::Counter& read_bytes;
  metrics::Counter& throttled;
  metrics::Gauge& queue_depth;
};

struct BlobService::Job {
  size_t op;
  rpc::Responder responder;
  std::function<Result<rpc::SplitPayload>()> body;
  Clock::time_point queued;
};

BlobService::BlobService(std::unique_ptr<BlobStore> store, std::unique_ptr<Metrics> metrics,
                         BlobServiceOptions options)
    : options_(std::move(options)), store_(std::move(store)), metrics_(std::move(metrics)) {
  for (size_t i = 0; i < options_.worker_threads; ++i) {
    workers_.push_back(StartNamedThread("blob-" + std::to_string(i), [this] { WorkerLoop(); }));
  }
}

BlobService::~BlobService() { Stop(); }

Result<std::unique_ptr<BlobService>> BlobService::Open(metrics::Registry& metrics,
                                                       BlobServiceOptions options) {
  if (options.worker_threads < 1 || options.worker_threads > limits::kBlobServiceThreadsMax) {
    return Status::InvalidArgument("blob service: worker_threads out of range");
  }
  if (options.queue_max < 1 || options.queue_max > limits::kBlobServiceQueueMax) {
    return Status::InvalidArgument("blob service: queue_max out of range");
  }
  auto store = BlobStore::Open(options.path, options.store);
  if (!store.ok()) return store.status();
  return std::unique_ptr<BlobService>(new BlobService(std::move(store).value(),
                                                      std::make_unique<Metrics>(metrics), std::move(options)));
}

Status BlobService::RegisterHandlers(rpc::RpcServer& server) {
  using rpc::PeerInfo;
  using rpc::Responder;
  TESSERA_RETURN_IF_ERROR(server.RegisterPayloadHandler(
      "blob.put", [this](const PeerInfo&, pb::Envelope&, SharedBytes payload, Responder s) {
        HandlePut(std::move(payload), std::move(s));
      }));
  TESSERA_RETURN_IF_ERROR(server.RegisterHandler(
      "blob.read", [this](const PeerInfo&, const pb::Envelope& r, Responder s) { HandleRead(r, std::move(s)); }));
  TESSERA_RETURN_IF_ERROR(server.RegisterHandler(
      "blob.delete", [this](const PeerInfo&, const pb::Envelope& r, Responder s) { HandleDelete(r, std::move(s)); }));
  TESSERA_RETURN_IF_ERROR(server.RegisterHandler(
      "blob.list", [this](const PeerInfo&, const pb::Envelope& r, Responder s) { HandleList(r, std::move(s)); }));
  return server.RegisterHandler(
      "blob.stat", [this](const PeerInfo&, const pb::Envelope& r, Responder s) { HandleStat(r, std::move(s)); });
}

// A blob.put's data ends its frame, so a node receives it ending where an
// O_DIRECT write of a version 3 file can take it uncopied (D53).
static_assert(rpc::kOwnedFrameEndAlignment % file::kFileAlignmentBytes == 0);

void BlobService::HandlePut(SharedBytes payload, rpc::Responder responder) {
  // The data is used where it lies (rpc/bytes_field.h): for a large put,
  // in the buffer its frame was received into.
  pb::BlobPutRequest put;
  std::string_view data;
  if (!rpc::ParseAroundBytesField(payload.view(), pb::BlobPutRequest::kDataFieldNumber, &put, &data)) {
    return Refuse(kPut, responder, Status::InvalidArgument("payload of blob.put does not parse"));
  }
  auto id = BlobId::Parse(put.blob_id());
  if (!id.ok()) return Refuse(kPut, responder, id.status());
  if (data.size() > limits::kBlobBytesMax) {
    return Refuse(kPut, responder, Status::InvalidArgument("blob larger than kBlobBytesMax"));
  }
  if (put.owner().size() > limits::kBlobOwnerBytesMax) {
    return Refuse(kPut, responder, Status::InvalidArgument("blob owner longer than kBlobOwnerBytesMax"));
  }
  Submit(kPut, std::move(responder),
         [this, id = *id, payload, data, owner = put.owner(), crc = put.crc32c()]() -> Result<std::string> {
           // The CRC is checked here, not on the io thread (8 MiB take
           // milliseconds), by the store while it checksums the blocks.
           TESSERA_RETURN_IF_ERROR(store_->Put(id, owner, data, crc));
           metrics_->written_bytes.Increment(data.size());
           return pb::BlobPutResponse().SerializeAsString();
         });
}

void BlobService::HandleRead(const pb::Envelope& request, rpc::Responder responder) {
  auto read = ParseRequest<pb::BlobReadRequest>(request);
  if (!read.ok()) return Refuse(kRead, responder, read.status());
  auto id = BlobId::Parse(read->blob_id());
  if (!id.ok()) return Refuse(kRead, responder, id.status());
  SubmitSplit(kRead, std::move(responder),
              [this, id = *id, offset = read->offset(),
               length = read->length()]() -> Result<rpc::SplitPayload> {
                auto result = store_->Read(id, offset, length);
                if (!result.ok()) return result.status();
                metrics_->read_bytes.Increment(result->data.size());
                return EncodeReadResponse(std::move(result).value());
              });
}

void BlobService::HandleDelete(const pb::Envelope& request, rpc::Responder responder) {
  auto del = ParseRequest<pb::BlobDeleteRequest>(request);
  if (!del.ok()) return Refuse(kDelete, responder, del.status());
  auto id = BlobId::Parse(del->blob_id());
  if (!id.ok()) return Refuse(kDelete, responder, id.status());
  Submit(kDelete, std::move(responder), [this, id = *id]() -> Result<std::string> {
    TESSERA_RETURN_IF_ERROR(store_->Delete(id));
    return pb::BlobDeleteResponse().SerializeAsString();
  });
}

void BlobService::HandleList(const pb::Envelope& request, rpc::Responder responder) {
  auto list = ParseRequest<pb::BlobListRequest>(request);
  if (!list.ok()) return Refuse(kList, responder, list.status());
  std::optional<BlobId> after;
  if (!list->after_blob_id().empty()) {
    auto id = BlobId::Parse(list->after_blob_id());
    if (!id.ok()) return Refuse(kList, responder, id.status());
    after = *id;
  }
  const size_t limit = list->limit() == 0 ? limits::kBlobListItemsMax : list->limit();
  Submit(kList, std::move(responder),
         [this, slot_from = list->slot_from(), after, limit,
          with_owner = list->with_owner()]() -> Result<std::string> {
           auto page = store_->List(slot_from, after, limit);
           if (!page.ok()) return page.status();
           pb::BlobListResponse response;
           for (const BlobListEntry& e : page->entries) {
             pb::BlobListEntryProto* p = response.add_entries();
             p->set_blob_id(e.id.ToString());
             p->set_size(e.size);
             if (with_owner) {
               p->set_owner(e.owner);
               p->set_mtime_ms(e.mtime_ms);
             }
           }
           response.set_more(page->more);
           return response.SerializeAsString();
         });
}

void BlobService::HandleStat(const pb::Envelope& request, rpc::Responder responder) {
  auto stat = ParseRequest<pb::BlobStatRequest>(request);
  if (!stat.ok()) return Refuse(kStat, responder, stat.status());
  auto id = BlobId::Parse(stat->blob_id());
  if (!id.ok()) return Refuse(kStat, responder, id.status());
  Submit(kStat, std::move(responder), [this, id = *id]() -> Result<std::string> {
    auto result = store_->Stat(id);
    if (!result.ok()) return result.status();
    pb::BlobStatResponse response;
    response.set_size(result->size);
    response.set_owner(std::move(result->owner));
    response.set_mtime_ms(result->mtime_ms);
    return response.SerializeAsString();
  });
}

void BlobService::Refuse(size_t op, const rpc::Responder& responder, const Status& status) {
  metrics_->Error(op, status.code());
  responder.Fail(status);
}

void BlobService::Submit(size_t op, rpc::Responder responder, std::function<Result<std::string>()> body) {
  SubmitSplit(op, std::move(responder), [body = std::move(body)]() -> Result<rpc::SplitPayload> {
    Result<std::string> reply = body();
    if (!reply.ok()) return reply.status();
    return rpc::SplitPayload{std::move(reply).value(), {}, 0};
  });
}

void BlobService::SubmitSplit(size_t op, rpc::Responder responder,
                              std::function<Result<rpc::SplitPayload>()> body) {
  std::unique_lock lock(mu_);
  if (stopping_) {
    lock.unlock();
    return Refuse(op, responder, Status::Aborted("blob service stopping"));
  }
  if (queue_.size() >= options_.queue_max) {
    lock.unlock();
    metrics_->throttled.Increment();
    return Refuse(op, responder, Status::Throttled("blob queue full"));
  }
  queue_.push_back(std::make_unique<Job>(Job{op, std::move(responder), std::move(body), Clock::now()}));
  metrics_->queue_depth.Set(static_cast<double>(queue_.size()));
  lock.unlock();
  wake_.notify_one();
}

void BlobService::WorkerLoop() {
  for (;;) {
    std::unique_lock lock(mu_);
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping
    std::unique_ptr<Job> job = std::move(queue_.front());
    queue_.pop_front();
    metrics_->queue_depth.Set(static_cast<double>(queue_.size()));
    lock.unlock();
    Run(*job);
  }
}

void BlobService::Run(Job& job) {
  Result<rpc::SplitPayload> response = job.body();
  metrics_->latency[job.op]->Observe(std::chrono::duration<double>(Clock::now() - job.queued).count());
  if (!response.ok()) {
    if (response.status().code() != StatusCode::kNotFound || (job.op != kRead && job.op != kStat)) {
      spdlog::debug("blob.request_failed op={} status=\"{}\"", kOpNames[job.op], response.status().ToString());
    }
    return Refuse(job.op, job.responder, response.status());
  }
  metrics_->done[job.op]->Increment();
  job.responder.Reply(std::move(response).value());
}

void BlobService::Stop() {
  std::deque<std::unique_ptr<Job>> abandoned;
  {
    std::lock_guard lock(mu_);
    if (stopping_ && workers_.empty()) return;
    stopping_ = true;
    abandoned.swap(queue_);
    metrics_->queue_depth.Set(0);
  }
  wake_.notify_all();
  for (auto& job : abandoned) Refuse(job->op, job->responder, Status::Aborted("blob service stopping"));
  for (std::thread& t : workers_) t.join();
  workers_.clear();
}

}  // namespace tessera::blob
