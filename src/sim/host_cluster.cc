#include "sim/host_cluster.h"

#include <future>
#include <utility>

#include "common/check.h"
#include "consensus/quorum.h"

namespace tessera::sim {
namespace {

// Random streams of a seed, apart from the consensus-only simulator's.
enum HostClusterStream : uint64_t {
  kStreamTransport = 101,
  kStreamDisk,
  kStreamCrash,
  kStreamReplica,  // + replica id << 8
  kStreamClock = 120,
};

// A replica's executor: the loop's, with NowUs read from the replica's
// DriftClock (the consensus core, leases and host deadlines then run on
// it) while tasks, ticks and restart stamps stay the loop's.
class DriftingExecutor final : public node::GroupExecutor {
 public:
  DriftingExecutor(std::unique_ptr<node::GroupExecutor> inner, std::shared_ptr<DriftClock> clock,
                   std::shared_ptr<PauseGate> gate, bool equal_restart_stamps)
      : inner_(std::move(inner)),
        clock_(std::move(clock)),
        gate_(std::move(gate)),
        equal_restart_stamps_(equal_restart_stamps) {}
  void Post(Task task) override {
    if (!gate_->Hold(task)) inner_->Post(std::move(task));
  }
  void ArmTick(uint64_t interval_us, Task task) override {
    inner_->ArmTick(interval_us, [gate = gate_, task = std::move(task)] {
      if (!gate->Hold(task)) task();
    });
  }
  void CancelTick() override { inner_->CancelTick(); }
  uint64_t NowUs() const override { return clock_->Local(inner_->NowUs()); }
  // The replica's own clock, as a process reads its machine's: the loop's
  // instant is the same for replicas started together, and GroupHost's
  // request ids (stamp << 16 + n) must not repeat across a group's
  // replicas (D99), unless the options ask for equal stamps.
  uint64_t RestartStampUs() const override {
    return equal_restart_stamps_ ? inner_->RestartStampUs()
                                 : clock_->Local(inner_->RestartStampUs());
  }

 private:
  std::unique_ptr<node::GroupExecutor> inner_;
  std::shared_ptr<DriftClock> clock_;
  std::shared_ptr<PauseGate> gate_;
  bool equal_restart_stamps_;
};

}  // namespace

bool PauseGate::Hold(const node::GroupExecutor::Task& task) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!paused_) return false;
  held_.push_back(task);
  return true;
}

void PauseGate::Pause() {
  std::lock_guard<std::mutex> lock(mu_);
  paused_ = true;
}

std::vector<node::GroupExecutor::Task> PauseGate::Resume() {
  std::lock_guard<std::mutex> lock(mu_);
  paused_ = false;
  return std::exchange(held_, {});
}

bool PauseGate::paused() const {
  std::lock_guard<std::mutex> lock(mu_);
  return paused_;
}

TimeUs DriftClock::Local(TimeUs virtual_us) const {
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t elapsed = static_cast<int64_t>(virtual_us - base_virtual_us_);
  return base_local_us_ + static_cast<TimeUs>(elapsed + elapsed * rate_ppm_ / 1'000'000);
}

void DriftClock::SetRate(TimeUs virtual_us, int64_t rate_ppm) {
  TESSERA_CHECK(rate_ppm > -1'000'000 && "a clock that stops or runs backwards");
  const TimeUs local_us = Local(virtual_us);
  std::lock_guard<std::mutex> lock(mu_);
  base_local_us_ = local_us;
  base_virtual_us_ = virtual_us;
  rate_ppm_ = rate_ppm;
}

int64_t DriftClock::rate_ppm() const {
  std::lock_guard<std::mutex> lock(mu_);
  return rate_ppm_;
}

HostCluster::HostCluster(HostClusterOptions options)
    : options_(std::move(options)),
      network_(options_.replicas + options_.spares),
      transport_(&loop_, &network_, DeriveSeed(options_.seed, kStreamTransport)),
      disk_prng_(DeriveSeed(options_.seed, kStreamDisk)),
      crash_prng_(DeriveSeed(options_.seed, kStreamCrash)),
      clock_prng_(DeriveSeed(options_.seed, kStreamClock)) {
  network_.set_params(options_.network);
  for (ReplicaId id = 1; id <= options_.replicas + options_.spares; ++id) {
    replicas_[id].disk = std::make_shared<storage::CrashFileSystem>();
    replicas_[id].disk->SetSkipLogSync(options_.skip_log_sync);
    replicas_[id].clock = std::make_shared<DriftClock>(
        options_.clock_offset_max_us == 0 ? 0 : clock_prng_.Below(options_.clock_offset_max_us));
  }
}

// Hosts first (their callbacks hold only weak references), then what their
// stops queued, then the stores; the loop's undelivered timers go with it.
HostCluster::~HostCluster() {
  for (auto& [id, replica] : replicas_) {
    if (replica.gate) replica.gate->Resume();  // held work is dropped
    if (replica.host) replica.host->Stop();
  }
  loop_.RunReady();
  transport_.Clear();
  for (auto& [id, replica] : replicas_) replica.host.reset();
  loop_.RunReady();
  for (auto& [id, replica] : replicas_) replica.store.reset();
  scanner_.Stop();
}

Status HostCluster::Start() {
  for (ReplicaId id = 1; id <= options_.replicas; ++id) TESSERA_RETURN_IF_ERROR(Restart(id));
  return Status::Ok();
}

Status HostCluster::Restart(ReplicaId id, const RestartFaults& faults) {
  Replica& replica = replicas_.at(id);
  TESSERA_CHECK(replica.host == nullptr && "restart of a replica that is up");
  storage::NodeStoreOptions so;
  so.path = "/sim/n" + std::to_string(id);
  so.file_system = replica.disk;
  so.write_buffer_bytes = 4 << 20;
  so.state_write_buffer_bytes = 4 << 20;
  so.block_cache_bytes = 8 << 20;
  so.stepped_workers = true;
  so.snapshot_install_batch_bytes = options_.snapshot_install_batch_bytes;
  so.fault_install_stop_after_batches = faults.die_in_install_after_batches;
  auto store = storage::NodeStore::Open(so);
  if (!store.ok()) return store.status();
  node::GroupHostOptions o;
  o.consensus = options_.consensus;
  o.consensus.self = id;
  o.consensus.group_id = options_.group_id;
  o.consensus.random_seed = DeriveSeed(options_.seed, kStreamReplica + (uint64_t{id} << 8));
  if (replica.bootstrap) {
    o.bootstrap_membership = *replica.bootstrap;
  } else {
    for (ReplicaId v = 1; v <= options_.replicas; ++v) o.bootstrap_membership.add_voters(v);
  }
  o.log_only = replica.log_only;
  o.write_timeout_ms = options_.write_timeout_ms;
  o.compaction_trigger_slots = options_.compaction_trigger_slots;
  o.compaction_keep_slots = options_.compaction_keep_slots;
  o.snapshot.chunk_bytes = options_.snapshot_chunk_bytes;
  o.testing.ack_before_quorum = options_.ack_before_quorum;
  replica.contract = std::make_shared<ReadyContract>(id);
  o.testing.on_ready = [this, contract = replica.contract](const consensus::Ready& ready) {
    if (contract->Check(ready).empty() || !contract_violation_.empty()) return;
    contract_violation_ = contract->violation();
    Trace(contract_violation_);
  };
  replica.gate = std::make_shared<PauseGate>();
  auto host = node::GroupHost::Start(
      std::make_unique<DriftingExecutor>(loop_.NewExecutor(), replica.clock, replica.gate,
                                         options_.equal_restart_stamps),
      store->get(), &transport_, o);
  if (!host.ok()) return host.status();
  replica.store = std::move(store).value();
  replica.host = *host;
  ++replica.incarnation;
  replica.disk_step_posted = false;
  transport_.Attach(id, [this, id, host = *host](pb::Message m) {
    Trace("deliver " + std::to_string(m.from()) + ">" + std::to_string(id) + " body=" +
          std::to_string(m.body_case()) + " ballot=" + std::to_string(m.ballot().round()));
    host->Deliver(std::move(m));
  });
  Trace("start " + std::to_string(id) + " incarnation=" + std::to_string(replica.incarnation));
  return Status::Ok();
}

uint64_t HostCluster::Crash(ReplicaId id, bool torn) {
  Replica& replica = replicas_.at(id);
  TESSERA_CHECK(replica.host != nullptr && "crash of a replica that is down");
  transport_.Detach(id);
  const uint64_t lost = replica.disk->Crash([this, torn](const std::string&, uint64_t unsynced) {
    return torn ? crash_prng_.Below(unsynced + 1) : 0;
  });
  replica.gate->Resume();  // a paused process dies with the work it held
  replica.host->Stop();
  loop_.RunReady();
  replica.host.reset();
  loop_.RunReady();
  replica.store.reset();  // its shutdown writes nothing on the crashed disk
  Trace("crash " + std::to_string(id) + " unsynced_lost=" + std::to_string(lost));
  return lost;
}

void HostCluster::Isolate(ReplicaId id, bool isolated) {
  for (const auto& [other, unused] : replicas_) {
    if (other == id) continue;
    if (isolated) {
      network_.Block(id, other);
      network_.Block(other, id);
    } else {
      network_.Unblock(id, other);
      network_.Unblock(other, id);
    }
  }
  Trace("link " + std::to_string(id) + (isolated ? " isolated" : " healed"));
}

Status HostCluster::Provision(ReplicaId id, const pb::Membership& bootstrap) {
  TESSERA_CHECK(id > options_.replicas && "only a spare is provisioned");
  replicas_.at(id).bootstrap = bootstrap;
  replicas_.at(id).log_only = consensus::IsLogOnly(bootstrap, id);
  Trace("provision " + std::to_string(id) + " " + bootstrap.ShortDebugString());
  return Restart(id);
}

void HostCluster::ChangeMembership(ReplicaId at, consensus::MembershipStep step, ReplicaId replica,
                                   node::GroupHost::MembershipCallback done) {
  const std::string what = "membership@" + std::to_string(at) + " step=" +
                           std::to_string(static_cast<int>(step)) + " replica=" +
                           std::to_string(replica);
  Trace(what);
  replicas_.at(at).host->ChangeMembership(
      step, replica,
      [this, what, done = std::move(done)](Result<node::GroupHost::MembershipResult> r) {
        Trace(what + " -> " + (r.ok() ? r->membership.ShortDebugString() : r.status().ToString()));
        done(std::move(r));
      });
}

void HostCluster::Pause(ReplicaId id) {
  Replica& replica = replicas_.at(id);
  TESSERA_CHECK(replica.host != nullptr && "pause of a replica that is down");
  replica.gate->Pause();
  Trace("pause " + std::to_string(id));
}

void HostCluster::Resume(ReplicaId id) {
  Replica& replica = replicas_.at(id);
  if (!replica.host) return;
  std::vector<node::GroupExecutor::Task> held = replica.gate->Resume();
  Trace("resume " + std::to_string(id) + " held=" + std::to_string(held.size()));
  // In the order they were held, on the loop's thread as every task.
  loop_.PostAt(loop_.now_us(), [this, id, incarnation = replica.incarnation,
                                 held = std::move(held)] {
    const Replica& r = replicas_.at(id);
    if (r.incarnation != incarnation || !r.host) return;  // crashed meanwhile
    for (const auto& task : held) task();
  });
}

bool HostCluster::paused(ReplicaId id) const {
  const Replica& replica = replicas_.at(id);
  return replica.host != nullptr && replica.gate->paused();
}

void HostCluster::TransferLeadership(ReplicaId at, ReplicaId to) {
  const std::string what = "transfer@" + std::to_string(at) + " to=" + std::to_string(to);
  Trace(what);
  replicas_.at(at).host->TransferLeadership(to, [this, what](Result<bool> r) {
    Trace(what + " -> " + (r.ok() ? (*r ? "started" : "already") : r.status().ToString()));
  });
}

void HostCluster::Campaign(ReplicaId id) {
  Trace("campaign " + std::to_string(id));
  replicas_.at(id).host->CampaignNow();
}

void HostCluster::SetClockRate(ReplicaId id, int64_t rate_ppm) {
  replicas_.at(id).clock->SetRate(loop_.now_us(), rate_ppm);
  Trace("clock " + std::to_string(id) + " rate_ppm=" + std::to_string(rate_ppm));
}

void HostCluster::SetDiskFailing(ReplicaId id, bool failing) {
  replicas_.at(id).disk->SetFailWrites(failing);
  Trace("disk " + std::to_string(id) + (failing ? " failing" : " healed"));
}

void HostCluster::Settle() {
  for (;;) {
    loop_.RunReady();
    for (auto& [id, replica] : replicas_) {
      if (replica.store && !replica.disk_step_posted && replica.store->WorkQueued()) {
        PostDiskStep(id, replica);
      }
    }
    if (loop_.RunReady() == 0) return;
  }
}

// The store's queued group commits and snapshot jobs run after a disk
// latency drawn from the seed; their callbacks post to the host.
void HostCluster::PostDiskStep(ReplicaId id, Replica& replica) {
  replica.disk_step_posted = true;
  const TimeUs delay_us =
      options_.disk_delay_min_us + disk_prng_.Below(options_.disk_delay_jitter_us + 1);
  loop_.PostAt(loop_.now_us() + delay_us, [this, id, incarnation = replica.incarnation] {
    Replica& r = replicas_.at(id);
    if (r.incarnation != incarnation || !r.store) return;
    r.disk_step_posted = false;
    r.store->RunWorkers();
  });
}

void HostCluster::Write(ReplicaId id, pb::KvBatch batch,
                        std::shared_ptr<std::optional<Result<pb::KvApplyResult>>> result) {
  Write(id, std::move(batch),
        [result](Result<pb::KvApplyResult> r) { *result = std::move(r); });
}

void HostCluster::Write(ReplicaId id, pb::KvBatch batch,
                        std::function<void(Result<pb::KvApplyResult>)> done) {
  const std::string what = "write@" + std::to_string(id) + " " +
                           (batch.writes_size() > 0 ? batch.writes(0).key() : std::string());
  Trace(what);
  replicas_.at(id).host->Write(std::move(batch),
                               [this, what, done = std::move(done)](Result<pb::KvApplyResult> r) {
                                 Trace(what + " -> " + r.status().ToString());
                                 done(std::move(r));
                               });
}

void HostCluster::Write(ReplicaId id, pb::KvCommand command,
                        std::function<void(Result<pb::KvApplyResult>)> done) {
  const std::string what = "s3@" + std::to_string(id) + " " + command.s3().ShortDebugString();
  Trace(what);
  replicas_.at(id).host->Write(std::move(command),
                               [this, what, done = std::move(done)](Result<pb::KvApplyResult> r) {
                                 Trace(what + " -> " + r.status().ToString() +
                                       (r.ok() ? " " + r->s3().ShortDebugString() : ""));
                                 done(std::move(r));
                               });
}

Status HostCluster::ReadState(
    ReplicaId id, const std::function<Status(const node::PartitionStateMachine&)>& read) {
  const Replica& replica = replicas_.at(id);
  if (!replica.host || replica.gate->paused()) {
    return Status::Unavailable("replica " + std::to_string(id) + " is down or paused");
  }
  std::optional<Status> status;
  replica.host->ReadState(pb::CONSISTENCY_EVENTUAL,
                          [&status, &read](Result<const node::PartitionStateMachine*> state) {
                            status = state.ok() ? read(**state) : state.status();
                          });
  Settle();
  if (!status) return Status::Unavailable("replica " + std::to_string(id) + " read no state");
  return *status;
}

void HostCluster::Read(ReplicaId id, const std::string& key, pb::Consistency consistency,
                       std::function<void(Result<std::optional<pb::KvRecord>>)> done) {
  const std::string what = std::string(consistency == pb::CONSISTENCY_STRONG ? "read" : "eread") +
                           "@" + std::to_string(id) + " " + key;
  Trace(what);
  replicas_.at(id).host->Read(
      key, consistency, [this, what, done = std::move(done)](Result<std::optional<pb::KvRecord>> r) {
        Trace(what + " -> " + (!r.ok() ? r.status().ToString()
                               : r->has_value() ? "'" + (*r)->value() + "'"
                                                : std::string("absent")));
        done(std::move(r));
      });
}

std::vector<ReplicaId> HostCluster::LeaseHolders() {
  std::vector<ReplicaId> holders;
  for (const auto& [id, unused] : replicas_) {
    auto status = StatusOf(id);
    if (status && status->holds_lease && !status->stopped) holders.push_back(id);
  }
  return holders;
}

std::optional<node::GroupStatus> HostCluster::StatusOf(ReplicaId id) {
  const Replica& replica = replicas_.at(id);
  if (!replica.host || replica.gate->paused()) return std::nullopt;
  std::optional<node::GroupStatus> status;
  replica.host->GetStatus([&status](node::GroupStatus s) { status = s; });
  Settle();
  return status;
}

ReplicaId HostCluster::Leader() {
  for (const auto& [id, unused] : replicas_) {
    auto status = StatusOf(id);
    if (status && status->holds_lease && !status->stopped) return id;
  }
  return 0;
}

bool HostCluster::CaughtUp() {
  const ReplicaId leader = Leader();
  if (leader == 0) return false;
  const consensus::Slot chosen = StatusOf(leader)->chosen;
  for (const auto& [id, unused] : replicas_) {
    auto status = StatusOf(id);
    if (status && status->applied < chosen) return false;
  }
  return true;
}

bool HostCluster::InstallPending(ReplicaId id) {
  Result<bool> pending = replicas_.at(id).store->InstallPending(options_.group_id);
  TESSERA_CHECK(pending.ok());
  return *pending;
}

consensus::Slot HostCluster::LogStart(ReplicaId id) {
  auto status = StatusOf(id);
  TESSERA_CHECK(status.has_value());
  return status->log_start;
}

Result<consensus::RecoveredState> HostCluster::DurableLog(ReplicaId id) {
  const Replica& replica = replicas_.at(id);
  TESSERA_CHECK(replica.store != nullptr && "the durable log of a replica that is down");
  return replica.store->RecoverGroup(options_.group_id);
}

Result<std::string> HostCluster::Digest(ReplicaId id) {
  const Replica& replica = replicas_.at(id);
  if (!replica.host || replica.gate->paused()) {
    return Status::Unavailable("replica " + std::to_string(id) + " is down or paused");
  }
  std::promise<Result<pb::SnapshotManifest>> digest;
  replica.host->StateDigest(scanner_,
                            [&digest](Result<pb::SnapshotManifest> d) { digest.set_value(d); });
  Settle();
  Result<pb::SnapshotManifest> got = digest.get_future().get();
  // The scan job pins a store snapshot until it is destroyed, after its
  // callback: the next job runs only once it is gone.
  std::promise<void> scanned;
  TESSERA_RETURN_IF_ERROR(scanner_.Submit([&scanned] { scanned.set_value(); }));
  scanned.get_future().get();
  if (!got.ok()) return got.status();
  return got->ShortDebugString();
}

std::optional<std::string> HostCluster::ValueAt(ReplicaId id, const std::string& key) {
  const Replica& replica = replicas_.at(id);
  if (!replica.host || replica.gate->paused()) return std::nullopt;
  std::optional<Result<std::optional<pb::KvRecord>>> read;
  replica.host->Read(key, pb::CONSISTENCY_EVENTUAL,
                     [&read](Result<std::optional<pb::KvRecord>> r) { read = std::move(r); });
  Settle();
  if (!read || !read->ok() || !read->value()) return std::nullopt;
  return (*read)->value().value();
}

void HostCluster::Trace(std::string event) {
  trace_.push_back(std::to_string(loop_.now_us()) + " " + std::move(event));
}

}  // namespace tessera::sim
