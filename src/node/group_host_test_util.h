// Test helpers for GroupHost-level tests (group_host_test.cc,
// snapshot_transfer_test.cc): consensus timings fast enough for tests, an
// in-process message router with per-replica faults, and the three-replica
// fixture both use.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <boost/asio/executor_work_guard.hpp>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "node/group_host.h"
#include "node/virtual_time_loop.h"
#include "storage/node_store.h"

namespace tessera::node::testing {

// About ten times faster than production: elections in 250..500 ms.
inline consensus::Options FastOptions(consensus::ReplicaId self, uint64_t group_id, uint64_t seed) {
  consensus::Options o;
  o.self = self;
  o.group_id = group_id;
  o.random_seed = seed;
  o.tick_interval_us = 2'000;
  o.heartbeat_interval_us = 20'000;
  o.lease_duration_us = 200'000;
  o.election_timeout_min_us = 250'000;
  o.election_timeout_max_us = 500'000;
  o.check_quorum_timeout_us = 250'000;
  return o;
}

// Runs `loop` until `done` holds or `virtual_budget_us` of virtual time
// passed: queued tasks first, then a short real wait for the stores'
// completions, and only when nothing arrived the next tick. False when the
// budget ran out.
template <typename Pred>
bool RunVirtualUntil(VirtualTimeLoop& loop, Pred done, uint64_t virtual_budget_us) {
  const uint64_t deadline = loop.now_us() + virtual_budget_us;
  for (;;) {
    loop.RunReady();
    if (done()) return true;
    if (loop.WaitForTask(std::chrono::milliseconds(2))) continue;
    const std::optional<uint64_t> tick = loop.NextTickUs();
    if (!tick || *tick > deadline) return false;
    loop.AdvanceTo(*tick);
  }
}

// Routes messages to the host registered under `to`. A "down" replica
// neither sends nor receives; a "muted" one receives, but everything it
// sends is lost.
class LoopbackSender : public MessageSender {
 public:
  void Send(pb::Message m) override {
    std::shared_ptr<GroupHost> target;
    {
      std::lock_guard lock(mu_);
      if (down_.count(m.to()) || down_.count(m.from()) || muted_.count(m.from())) return;
      auto it = hosts_.find(m.to());
      if (it == hosts_.end()) return;
      target = it->second;
    }
    target->Deliver(std::move(m));
  }
  void Register(consensus::ReplicaId id, std::shared_ptr<GroupHost> host) {
    std::lock_guard lock(mu_);
    hosts_[id] = std::move(host);
  }
  void SetDown(consensus::ReplicaId id, bool down) {
    std::lock_guard lock(mu_);
    if (down) {
      down_.insert(id);
    } else {
      down_.erase(id);
    }
  }
  void SetMuted(consensus::ReplicaId id, bool muted) {
    std::lock_guard lock(mu_);
    if (muted) {
      muted_.insert(id);
    } else {
      muted_.erase(id);
    }
  }
  void Clear() {
    std::lock_guard lock(mu_);
    hosts_.clear();
  }

 private:
  std::mutex mu_;
  std::map<consensus::ReplicaId, std::shared_ptr<GroupHost>> hosts_;
  std::set<consensus::ReplicaId> down_, muted_;
};

// Three GroupHosts of group kGroupId, each on its own NodeStore under a
// temporary directory, wired by a LoopbackSender and run by two io threads
// (IoThreads).
// Subclasses adjust the options in the hooks, which SetUp calls before any
// host starts.
class ThreeReplicaGroupTest : public ::testing::Test {
 protected:
  static constexpr uint64_t kGroupId = 5;

  virtual void AdjustStoreOptions(storage::NodeStoreOptions&) {}
  virtual void AdjustHostOptions(GroupHostOptions&) {}
  virtual int IoThreads() const { return 2; }

  void SetUp() override {
    char pattern[] = "/tmp/tessera-gh-XXXXXX";
    dir_ = ::mkdtemp(pattern);
    for (int i = 0; i < IoThreads(); ++i) threads_.emplace_back([this] { io_.run(); });
    for (consensus::ReplicaId id = 1; id <= 3; ++id) {
      storage::NodeStoreOptions so;
      so.path = dir_ + "/n" + std::to_string(id);
      AdjustStoreOptions(so);
      stores_[id] = std::move(storage::NodeStore::Open(so)).value();
      StartHost(id);
    }
  }
  void TearDown() override {
    for (auto& [id, h] : hosts_) h->Stop();
    work_.reset();
    io_.stop();
    for (auto& t : threads_) t.join();
    sender_.Clear();
    hosts_.clear();
    stores_.clear();
    std::filesystem::remove_all(dir_);
  }
  void StartHost(consensus::ReplicaId id) {
    GroupHostOptions o;
    o.consensus = FastOptions(id, kGroupId, 99);
    for (consensus::ReplicaId v = 1; v <= 3; ++v) o.bootstrap_membership.add_voters(v);
    AdjustHostOptions(o);
    auto host = GroupHost::Start(io_, stores_[id].get(), &sender_, o);
    ASSERT_TRUE(host.ok()) << host.status().ToString();
    hosts_[id] = *host;
    sender_.Register(id, *host);
  }
  GroupStatus StatusOf(consensus::ReplicaId id) {
    std::promise<GroupStatus> p;
    hosts_[id]->GetStatus([&p](GroupStatus s) { p.set_value(s); });
    return p.get_future().get();
  }
  // One write of `k` = `v`, with an expected version when given.
  Result<pb::KvApplyResult> Put(consensus::ReplicaId at, const std::string& k, const std::string& v,
                                std::optional<uint64_t> expected_version = std::nullopt) {
    pb::KvBatch b;
    auto* w = b.add_writes();
    w->set_key(k);
    w->set_value(v);
    if (expected_version) {
      auto* c = b.add_conditions();
      c->set_key(k);
      c->set_version(*expected_version);
    }
    std::promise<Result<pb::KvApplyResult>> p;
    hosts_[at]->Write(b, [&p](Result<pb::KvApplyResult> r) { p.set_value(std::move(r)); });
    return p.get_future().get();
  }

  std::string dir_;
  boost::asio::io_context io_;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_{
      io_.get_executor()};
  std::vector<std::thread> threads_;
  LoopbackSender sender_;
  std::map<consensus::ReplicaId, std::unique_ptr<storage::NodeStore>> stores_;
  std::map<consensus::ReplicaId, std::shared_ptr<GroupHost>> hosts_;
};

// Replicas of one group on a VirtualTimeLoop, by replica id.
using VirtualHosts = std::map<consensus::ReplicaId, std::shared_ptr<GroupHost>>;
using VirtualStores = std::map<consensus::ReplicaId, std::unique_ptr<storage::NodeStore>>;

// Shuts such a group down in the order the hosts need: stop every host,
// run what the stops queued, forget the senders' routes, drop the hosts,
// run what their destruction queued, and only then close their stores.
inline void StopVirtualTimeGroup(VirtualTimeLoop& loop, LoopbackSender& sender, VirtualHosts& hosts,
                                 VirtualStores& stores) {
  for (auto& [id, h] : hosts) h->Stop();
  loop.RunReady();
  sender.Clear();
  hosts.clear();
  loop.RunReady();
  stores.clear();
}

}  // namespace tessera::node::testing
