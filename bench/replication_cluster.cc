#include "replication_cluster.h"

#include <chrono>
#include <filesystem>

#include "common/check.h"

namespace tessera::bench {
namespace {


using consensus::Replica;
using consensus::TimeUs;

constexpr int kReplicas = 3;
constexpr double kTickUs = 1'000;

double NowUs() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

consensus::Options BenchOptions(consensus::ReplicaId self, uint64_t group) {
  consensus::Options o;
  o.self = self;
  o.group_id = group;
  o.random_seed = group * 7919 + 17;
  o.tick_interval_us = 1'000;
  o.heartbeat_interval_us = 20'000;
  o.lease_duration_us = 200'000;
  o.election_timeout_min_us = 250'000;
  o.election_timeout_max_us = 500'000;
  o.check_quorum_timeout_us = 250'000;
  return o;
}

}  // namespace

struct ReplicationCluster::Node {
  std::unique_ptr<storage::NodeStore> store;
  std::map<uint64_t, std::unique_ptr<Replica>> replicas;  // by group id
};

Result<std::unique_ptr<ReplicationCluster>> ReplicationCluster::Create(const std::string& dir,
                                                                       int groups,
                                                                       size_t command_bytes) {
  std::unique_ptr<ReplicationCluster> c(new ReplicationCluster());
  c->groups_ = groups;
  c->command_bytes_ = command_bytes;
  const double now = NowUs();
  for (int n = 0; n < kReplicas; ++n) {
    auto node = std::make_unique<Node>();
    storage::NodeStoreOptions options;
    options.path = dir + "/node" + std::to_string(n + 1);
    std::filesystem::create_directories(options.path);
    auto store = storage::NodeStore::Open(options);
    if (!store.ok()) return store.status();
    node->store = std::move(store).value();
    for (uint64_t g = 1; g <= static_cast<uint64_t>(groups); ++g) {
      auto recovered = node->store->RecoverGroup(g);
      if (!recovered.ok()) return recovered.status();
      consensus::RecoveredState rs = std::move(recovered).value();
      for (int v = 1; v <= kReplicas; ++v) rs.log_base.mutable_base_membership()->add_voters(v);
      node->replicas[g] = std::make_unique<Replica>(BenchOptions(n + 1, g), std::move(rs),
                                                    static_cast<TimeUs>(now));
    }
    c->nodes_.push_back(std::move(node));
  }
  return c;
}

ReplicationCluster::~ReplicationCluster() {
  // Stores flush their queues (firing callbacks into completions_) before
  // the replicas they refer to are gone.
  for (auto& node : nodes_) node->store.reset();
}

Replica* ReplicationCluster::Leader(uint64_t group) {
  for (auto& node : nodes_) {
    Replica* r = node->replicas[group].get();
    if (r->role() == consensus::Role::kLeader) return r;
  }
  return nullptr;
}

Status ReplicationCluster::ElectLeaders(double timeout_s) {
  const double deadline = NowUs() + timeout_s * 1e6;
  while (NowUs() < deadline) {
    if (!Pump(NowUs())) {
      std::unique_lock lock(mu_);
      completed_.wait_for(lock, std::chrono::microseconds(200));
    }
    bool all = true;
    for (uint64_t g = 1; g <= static_cast<uint64_t>(groups_); ++g) {
      Replica* leader = Leader(g);
      all = all && leader != nullptr && leader->HoldsLease(static_cast<TimeUs>(NowUs()));
    }
    if (all) return Status::Ok();
  }
  return Status::Timeout("not every group elected a leader");
}

bool ReplicationCluster::Pump(double now_us) {
  bool moved = false;
  if (now_us - last_tick_us_ >= kTickUs) {
    last_tick_us_ = now_us;
    for (auto& node : nodes_) {
      for (auto& [g, r] : node->replicas) r->Tick(static_cast<TimeUs>(now_us));
    }
  }
  TopUp(now_us);
  for (int n = 0; n < kReplicas; ++n) moved |= HandleReadies(n, now_us);
  std::deque<pb::Message> batch;
  batch.swap(inbox_);
  for (const pb::Message& m : batch) {
    nodes_[m.to() - 1]->replicas[m.group_id()]->Step(static_cast<TimeUs>(now_us), m);
    moved = true;
  }
  std::deque<Completion> done;
  {
    std::lock_guard lock(mu_);
    done.swap(completions_);
  }
  for (Completion& c : done) {
    TESSERA_CHECK(c.status.ok());
    for (pb::Message& m : c.after_persist) inbox_.push_back(std::move(m));
    nodes_[c.node]->replicas[c.group]->OnPersisted(c.persist_seq);
    moved = true;
  }
  return moved;
}

bool ReplicationCluster::HandleReadies(int n, double now_us) {
  Node& node = *nodes_[n];
  bool moved = false;
  for (auto& [g, replica] : node.replicas) {
    if (!replica->HasReady()) continue;
    moved = true;
    consensus::Ready rd = replica->TakeReady();
    for (pb::Message& m : rd.messages) inbox_.push_back(std::move(m));
    if (rd.persist_seq != 0) {
      storage::LogWrite write;
      write.group_id = g;
      write.hard_state = std::move(rd.hard_state);
      write.truncate_from = rd.truncate_from;
      write.entries = std::move(rd.entries);
      Completion c{n, g, rd.persist_seq, Status::Ok(), std::move(rd.messages_after_persist)};
      Status st = node.store->SubmitLogWrite(std::move(write), [this, c](const Status& s) mutable {
        c.status = s;
        std::lock_guard lock(mu_);
        completions_.push_back(std::move(c));
        completed_.notify_one();
      });
      TESSERA_CHECK(st.ok());
    }
    if (!rd.committed.empty()) HandleCommitted(n, g, rd.committed);
    TESSERA_CHECK(rd.snapshot_requests.empty() && !rd.snapshot_to_install);
  }
  (void)now_us;
  return moved;
}

void ReplicationCluster::HandleCommitted(int n, uint64_t group,
                                         const std::vector<pb::Entry>& entries) {
  std::vector<storage::Mutation> mutations;
  for (const pb::Entry& e : entries) {
    if (e.type() == pb::ENTRY_COMMAND) {
      mutations.push_back(storage::Mutation::Put("k" + std::to_string(e.request_id()), e.command()));
    }
  }
  Status st = nodes_[n]->store->Apply(group, entries.back().slot(), mutations);
  TESSERA_CHECK(st.ok());
  const double now = NowUs();
  for (const pb::Entry& e : entries) {
    auto it = outstanding_.find(e.request_id());
    if (e.type() != pb::ENTRY_COMMAND || it == outstanding_.end() ||
        nodes_[n]->replicas[group]->role() != consensus::Role::kLeader) {
      continue;
    }
    if (measuring_) {
      ++figures_.ops;
      figures_.latencies_us.push_back(now - it->second.started_us);
    }
    --outstanding_per_group_[it->second.group];
    outstanding_.erase(it);
  }
}

void ReplicationCluster::TopUp(double now_us) {
  for (uint64_t g = 1; g <= static_cast<uint64_t>(groups_); ++g) {
    Replica* leader = Leader(g);
    if (leader == nullptr) continue;
    while (outstanding_per_group_[g] < inflight_) {
      const uint64_t id = next_request_id_++;
      auto slot = leader->Propose(static_cast<TimeUs>(now_us), std::string(command_bytes_, 'c'), id);
      if (!slot.ok()) break;
      outstanding_[id] = Outstanding{g, now_us};
      ++outstanding_per_group_[g];
    }
  }
}

RunFigures ReplicationCluster::Run(int inflight_per_group, double warmup_s, double seconds) {
  inflight_ = inflight_per_group;
  figures_ = RunFigures();
  measuring_ = false;
  uint64_t fsyncs_before = 0;
  const double start = NowUs();
  double measure_start = 0;
  for (double now = start; now < start + (warmup_s + seconds) * 1e6; now = NowUs()) {
    if (!measuring_ && now >= start + warmup_s * 1e6) {
      measuring_ = true;
      measure_start = now;
      for (auto& node : nodes_) fsyncs_before += node->store->group_commit_stats().batches_synced;
    }
    if (!Pump(now)) {
      std::unique_lock lock(mu_);
      completed_.wait_for(lock, std::chrono::microseconds(100));
    }
  }
  figures_.seconds = (NowUs() - measure_start) / 1e6;
  for (auto& node : nodes_) figures_.fsyncs += node->store->group_commit_stats().batches_synced;
  figures_.fsyncs -= fsyncs_before;
  inflight_ = 0;
  return figures_;
}

}  // namespace tessera::bench
