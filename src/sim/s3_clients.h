// S3Clients: simulated S3 clients of one bucket in a HostCluster's group,
// as the S3 front and the router drive a partition (docs/simulator.md):
// each sends PutObject (small inline bodies), DeleteObject of the latest
// version or of a version by id, PutObjectTagging of the latest version or
// of a version by id, multipart uploads (create, parts that
// reference blobs by id, complete, abort), under the bucket's versioning as it
// changes (unversioned, then enabled, suspended, enabled again), as one
// S3Op per operation (pb::KvCommand::s3) proposed at the replica it
// believes leads. An operation is resent (to the hinted leader) only when
// the answer proves it was never proposed: NotLeader from a replica that
// did not crash since, or Throttled; any other failure or a client
// timeout leaves its outcome unknown and the client moves on. Check then
// reads every replica's applied state and runs CheckS3State
// (s3_invariants.h) on it.
//
// The bug SimBug::kS3RetryUnknown resends what the answer does not prove
// unsent (a timeout, a crash) and answers it pretends were lost, as a
// router retrying blindly would: the checker must see an operation in
// effect twice.
//
// Thread safety: none; the HostCluster's owner thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/host_cluster.h"
#include "sim/prng.h"
#include "sim/s3_invariants.h"
#include "sim/sim_bug.h"

namespace tessera::sim {

struct S3ClientStats {
  uint64_t ops = 0;        // operations sent (each counted once, however often resent)
  uint64_t acked = 0;      // answered
  uint64_t unknown = 0;    // outcome unknown
  uint64_t refused = 0;    // proven never proposed, retries spent
  uint64_t resent = 0;     // sends after the first
  uint64_t completed = 0;  // multipart uploads completed (answered S3_OK)
};

class S3Clients {
 public:
  // `crashes_of` counts each replica's crashes (a NotLeader from a replica
  // that crashed since the send proves nothing); `is_member` says whether
  // a leader hint may be followed. Both outlive this object.
  S3Clients(HostCluster& cluster, uint64_t seed, SimBug bug,
            const std::map<ReplicaId, uint64_t>* crashes_of,
            std::function<bool(ReplicaId)> is_member, std::function<ReplicaId(Prng&)> pick);
  ~S3Clients() { *alive_ = false; }
  S3Clients(const S3Clients&) = delete;
  S3Clients& operator=(const S3Clients&) = delete;

  void Start();
  // No new operation or resend from now on (answers still land).
  void Stop() { stopped_ = true; }
  // The S3 invariants on the applied state of every replica in `replicas`
  // (each up); empty when they hold.
  std::string Check(const std::vector<ReplicaId>& replicas);
  const S3ClientStats& stats() const { return stats_; }
  static constexpr uint64_t kBucketId = 7;

 private:
  struct Client {
    ReplicaId guess = 1;
    uint64_t serial = 0;  // of the send in flight; 0: none
    size_t op = 0;        // index into sent_
    uint32_t sends = 0;   // of that operation
    ReplicaId target = 0;
    uint64_t target_crashes = 0;
  };

  void Schedule(uint32_t c);
  void NewOp(uint32_t c);
  void Send(uint32_t c);
  void Finish(uint32_t c, uint64_t serial, const Result<pb::KvApplyResult>& result);
  void EndOp(size_t i);
  void MultipartOp(S3SentOp& op);
  std::string KnownVersion(const std::string& key);
  pb::S3Op OpOf(const S3SentOp& op) const;
  void NextVersioning();

  HostCluster& cluster_;
  Prng prng_;
  const bool retry_unknown_;
  const std::map<ReplicaId, uint64_t>* crashes_of_;
  std::function<bool(ReplicaId)> is_member_;
  std::function<ReplicaId(Prng&)> pick_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  std::vector<Client> clients_;
  const uint32_t keys_;
  const uint64_t think_max_us_;
  pb::BucketVersioning versioning_ = pb::VERSIONING_UNSET;
  bool stopped_ = false;
  uint64_t next_serial_ = 0;
  std::vector<S3SentOp> sent_;
  std::vector<bool> maybe_sent_;  // per operation: some send's outcome was not a refusal
  S3ClientStats stats_;
};

}  // namespace tessera::sim
