// BlobService: a storage node's blob RPCs ("blob.put", "blob.read",
// "blob.delete", "blob.list", "blob.stat"; proto/tessera/blob.proto) over
// its BlobStore.
//
// Contract:
//  1. The Handle* methods never block: they parse the request and queue the
//     file work for a small pool of worker threads (fsync takes
//     milliseconds and must not stall the io threads). With queue_max
//     requests already queued a request is answered Throttled at once.
//  2. Every request gets exactly one answer: the store's result, or
//     InvalidArgument for a payload that does not parse or a bad blob id,
//     Corruption for a put whose data does not match its crc32c, Aborted
//     once Stop has begun.
//  3. Metrics (registry given to Open): tessera_blob_puts_total,
//     tessera_blob_reads_total, tessera_blob_deletes_total,
//     tessera_blob_lists_total, tessera_blob_stats_total (successes),
//     tessera_blob_written_bytes_total,
//     tessera_blob_read_bytes_total, tessera_blob_errors_total{op,code},
//     tessera_blob_throttled_total, tessera_blob_latency_seconds{op} (queue
//     wait included), tessera_blob_queue_depth.
//
// Lifecycle: Open; register the handlers (RegisterHandlers, or route each
// method to its Handle*) before the RpcServer starts; Stop after the
// RpcServer stopped and while the io_context still runs (queued requests
// are answered Aborted, workers joined); destroy.
//
// Thread safety: Handle* from any thread (the RpcServer's io threads);
// Stop from one thread.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "blob/blob_store.h"
#include "common/limits.h"
#include "common/metrics.h"
#include "common/result.h"
#include "rpc/server.h"

namespace tessera::blob {

struct BlobServiceOptions {
  std::string path;  // the BlobStore directory
  size_t worker_threads = 4;  // 1..limits::kBlobServiceThreadsMax
  size_t queue_max = limits::kBlobServiceQueueMax;  // 1..kBlobServiceQueueMax
  BlobStoreOptions store;  // fault seams
};

class BlobService {
 public:
  // Opens the store and starts the workers. InvalidArgument for options out
  // of bounds; the store's errors.
  static Result<std::unique_ptr<BlobService>> Open(metrics::Registry& metrics,
                                                   BlobServiceOptions options);
  ~BlobService();  // Stop
  BlobService(const BlobService&) = delete;
  BlobService& operator=(const BlobService&) = delete;

  void HandlePut(SharedBytes payload, rpc::Responder responder);
  void HandleRead(const pb::Envelope& request, rpc::Responder responder);
  void HandleDelete(const pb::Envelope& request, rpc::Responder responder);
  void HandleList(const pb::Envelope& request, rpc::Responder responder);
  void HandleStat(const pb::Envelope& request, rpc::Responder responder);

  // Registers the five methods on `server` (before its Start).
  Status RegisterHandlers(rpc::RpcServer& server);

  // Answers queued requests Aborted and joins the workers. Idempotent.
  void Stop();

  BlobStore& store() { return *store_; }

 private:
  struct Metrics;
  struct Job;
  BlobService(std::unique_ptr<BlobStore> store, std::unique_ptr<Metrics> metrics,
              BlobServiceOptions options);

  // Queues `body` (the store work of request kind `op`, returning the
  // serialized response, or for SubmitSplit a response whose tail is sent
  // uncopied) for a worker, or answers Throttled/Aborted.
  void Submit(size_t op, rpc::Responder responder, std::function<Result<std::string>()> body);
  void SubmitSplit(size_t op, rpc::Responder responder, std::function<Result<rpc::SplitPayload>()> body);
  // Answers a request that failed before it was queued.
  void Refuse(size_t op, const rpc::Responder& responder, const Status& status);
  void WorkerLoop();
  void Run(Job& job);

  const BlobServiceOptions options_;
  std::unique_ptr<BlobStore> store_;
  std::unique_ptr<Metrics> metrics_;
  std::mutex mu_;  // guards queue_ and stopping_
  std::condition_variable wake_;
  std::deque<std::unique_ptr<Job>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace tessera::blob
