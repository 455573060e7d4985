// RegistryService: the S3 bucket registry and S3 user methods of one meta
// replica (proto/tessera/s3_registry.proto). Owned by MetaService, which
// feeds the RegistryMemds from the applied state.
//
//   meta.get_bucket, meta.list_buckets, meta.get_user_by_key,
//   meta.list_users, meta.find_user  RegistryMemds reads on the io thread, any replica
//   meta.create_bucket, meta.delete_bucket, meta.set_bucket_versioning,
//   meta.set_bucket_capacity,
//   meta.create_user       mutations, one at a time on this service's worker
//                          thread (queue: limits::kS3RegistryQueueMax, then
//                          Throttled): strong reads, one conditional KvBatch
//                          (docs/formats/meta-keys.md rules 6-9), retried
//                          up to kS3RegistryAttemptsMax when a concurrent
//                          mutation won. On a follower the leader's
//                          NotLeader(hint) makes it forward a client's
//                          request to the leader.
//
// Thread safety: Start and Stop from the thread owning MetaService; the
// handlers run on io threads and the worker.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>

#include "common/limits.h"
#include "common/metrics.h"
#include "knobs/knobs.h"
#include "meta/memds.h"
#include "meta/registry_memds.h"
#include "node/group_host.h"
#include "rpc/channel_pool.h"
#include "rpc/server.h"
#include "tessera/s3_registry.pb.h"

namespace tessera::meta {

class RegistryService {
 public:
  // The references must outlive the service (Stop it first).
  RegistryService(uint32_t self_id, const MemDs& memds, const RegistryMemds& registry,
                  std::shared_ptr<node::GroupHost> host, rpc::ChannelPool& pool,
                  metrics::Registry& metrics,
                  size_t user_buckets_max = knobs::kMetaS3UserBucketsMax.default_value,
                  uint64_t placement_weights_max_age_ms = knobs::kMetaPlacementWeightsMaxAgeMs.default_value);
  ~RegistryService();
  RegistryService(const RegistryService&) = delete;
  RegistryService& operator=(const RegistryService&) = delete;

  // Starts the worker and registers the eight methods on `server`.
  Status Start(rpc::RpcServer& server);
  // Fails queued mutations (Aborted) and joins the worker. Idempotent. Call
  // after the server stopped.
  void Stop();

 private:
  using Task = std::function<void()>;
  using Mutation = std::function<Result<std::string>(const std::string& payload)>;

  // Reads (io threads): the serialized answer, or Unavailable when this
  // replica is behind the request's min_version.
  Result<std::string> ServeRead(const std::string& method, const std::string& payload) const;
  Status FreshEnough(uint64_t min_version) const;

  void Enqueue(const rpc::PeerInfo& peer, const std::string& method, const pb::Envelope& request,
               rpc::Responder responder, Mutation mutation);
  void RunMutation(const rpc::PeerInfo& peer, const std::string& method,
                   const std::string& payload, const rpc::Responder& responder,
                   const Mutation& mutation);
  void WorkerLoop();

  // Mutations (worker thread): serialized response or the failure.
  Result<std::string> CreateBucket(const std::string& payload);
  Result<std::string> DeleteBucket(const std::string& payload);
  Result<std::string> SetVersioning(const std::string& payload);
  Result<std::string> SetCapacity(const std::string& payload);
  Result<std::string> CreateUser(const std::string& payload);
  // create_user of an existing user: itself when the request names exactly
  // its key pair (and no other display name or email), Conflict otherwise.
  Result<std::string> AnswerExistingUser(const pb::CreateUserRequest& request,
                                         const pb::UserRecord& user, uint64_t user_version);
  Result<uint64_t> ChooseBucketId();

  // What one round of a read-modify-write does with the record it read.
  struct RmwPlan {
    // An answer now (a value or a failure), writing nothing; or nullopt:
    // write `batch` (conditional on what was read).
    std::optional<Result<std::string>> answer;
    pb::KvBatch batch;
    // The answer once `batch` applied.
    std::function<Result<std::string>(const pb::KvApplyResult&)> on_applied;
    // When `batch` lost its race (a condition failed): an answer to stop
    // with, or nullopt to read again. Optional.
    std::function<std::optional<Status>(const pb::KvApplyResult&)> on_lost_race;

    static RmwPlan Answer(Result<std::string> answer) {
      RmwPlan plan;
      plan.answer = std::move(answer);
      return plan;
    }
  };
  using RmwPlanner = std::function<RmwPlan(const std::optional<pb::KvRecord>& existing)>;
  // Reads `key` at the leader, lets `plan` decide, writes its batch. A
  // batch that lost its race (a concurrent mutation won) starts over from
  // the read, at most limits::kS3RegistryAttemptsMax rounds; then
  // Unavailable "<what> kept losing races; retry".
  Result<std::string> ReadModifyWrite(const std::string& key, const std::string& what,
                                      const RmwPlanner& plan);

  Result<std::optional<pb::KvRecord>> ReadStrong(const std::string& key);
  Result<pb::KvApplyResult> WriteSync(pb::KvBatch batch);

  const uint32_t self_id_;
  const size_t user_buckets_max_;  // buckets one owner may have (create_bucket)
  // Published keys older than this are not used (bucket_placement.h).
  const uint64_t placement_weights_max_age_ms_;
  const MemDs& memds_;
  const RegistryMemds& registry_;
  std::shared_ptr<node::GroupHost> host_;
  rpc::ChannelPool& pool_;
  metrics::Counter& reads_;
  metrics::Counter& mutations_;
  std::mt19937_64 rng_;  // worker thread only

  std::mutex mu_;  // guards tasks_ and stopping_
  std::condition_variable cv_;
  std::deque<Task> tasks_;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace tessera::meta
