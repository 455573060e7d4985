// ReplicationCluster: three in-process nodes, each with its own RocksDB
// (storage::NodeStore, synced group commit), hosting `groups` replication
// groups of three replicas, connected by an in-memory transport. One driver
// thread runs every replica as the node host will (ready.h contract); the
// group-commit writer threads do the fsyncs. Closed-loop clients keep
// `inflight` proposals outstanding per group on its leader.
//
// Thread safety: Run() is called from one thread; completions arrive from
// the writer threads through a locked queue.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/result.h"
#include "consensus/replica.h"
#include "storage/node_store.h"

namespace tessera::bench {

struct RunFigures {
  uint64_t ops = 0;
  double seconds = 0;
  std::vector<double> latencies_us;
  uint64_t fsyncs = 0;  // synced batches on all nodes during the run
};

class ReplicationCluster {
 public:
  static Result<std::unique_ptr<ReplicationCluster>> Create(const std::string& dir, int groups,
                                                            size_t command_bytes);
  ~ReplicationCluster();

  // Drives the cluster until every group has a leader (or the timeout).
  Status ElectLeaders(double timeout_s);
  // Runs closed-loop load: warm-up, then measures for `seconds`.
  RunFigures Run(int inflight_per_group, double warmup_s, double seconds);

 private:
  struct Node;
  struct Completion {
    int node;
    uint64_t group;
    uint64_t persist_seq;
    Status status;
    std::vector<pb::Message> after_persist;
  };
  struct Outstanding {
    uint64_t group;
    double started_us;
  };

  ReplicationCluster() = default;
  // One pass over every replica, the transport and the completions; true
  // when anything happened.
  bool Pump(double now_us);
  bool HandleReadies(int node, double now_us);
  void HandleCommitted(int node, uint64_t group, const std::vector<pb::Entry>& entries);
  void TopUp(double now_us);
  consensus::Replica* Leader(uint64_t group);

  std::vector<std::unique_ptr<Node>> nodes_;
  int groups_ = 0;
  size_t command_bytes_ = 100;
  std::deque<pb::Message> inbox_;

  std::mutex mu_;  // guards completions_
  std::condition_variable completed_;
  std::deque<Completion> completions_;

  // Client side.
  int inflight_ = 0;
  bool measuring_ = false;
  uint64_t next_request_id_ = 1;
  std::map<uint64_t, Outstanding> outstanding_;  // request id -> op
  std::map<uint64_t, int> outstanding_per_group_;
  RunFigures figures_;
  double last_tick_us_ = 0;
};

}  // namespace tessera::bench
