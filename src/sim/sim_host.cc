// The host side of every simulated replica: it drives consensus::Replica
// exactly as ready.h documents, with a simulated disk and network.
#include <algorithm>
#include <utility>

#include "sim/simulation.h"

namespace tessera::sim {

namespace {

// Upper bound on Ready batches one input may produce before we call it a
// livelock of the core (each batch normally follows from the previous one).
constexpr int kReadyBatchesPerInputMax = 10'000;

const char* RoleText(consensus::Role role) { return consensus::RoleName(role); }

std::string DescribePersist(const consensus::Ready& ready) {
  std::string text = "persist seq=" + std::to_string(ready.persist_seq);
  if (ready.hard_state) {
    text += " promised=" + FormatBallot(ready.hard_state->promised()) +
            " chosen=" + std::to_string(ready.hard_state->chosen_index());
  }
  if (ready.truncate_from) text += " truncate>=" + std::to_string(*ready.truncate_from);
  if (!ready.entries.empty()) {
    text += " entries=[" + std::to_string(ready.entries.front().slot()) + ".." +
            std::to_string(ready.entries.back().slot()) + "]";
  }
  return text;
}

std::string DescribeEntry(const pb::Entry& entry) {
  switch (entry.type()) {
    case pb::ENTRY_NOOP: return "noop";
    case pb::ENTRY_MEMBERSHIP: return "membership";
    default: break;
  }
  return "cmd rid=" + FormatRequestId(entry.request_id());
}

}  // namespace

void Simulation::StartReplica(ReplicaHost& host) {
  Result<consensus::RecoveredState> recovered = host.disk.Recover();
  if (!recovered.ok()) {
    Violate(Invariant::kContract, Who(host.id) + " cannot recover: " + recovered.status().message());
    return;
  }
  host.kv = host.disk.image().kv;
  host.awaiting_sync.clear();
  host.last_sync_at = now_;
  ++host.incarnation;
  const Slot applied = recovered->applied_index;
  const size_t entries = recovered->entries.size();
  host.replica = std::make_unique<consensus::Replica>(ReplicaOptions(host.id, host.incarnation),
                                                      std::move(*recovered), LocalNow(host));
  host.last_role = host.replica->role();
  tracer_.Event(now_, Who(host.id), 10, host.incarnation, applied, [&] {
    return "start incarnation=" + std::to_string(host.incarnation) +
           " applied=" + std::to_string(applied) +
           " log_start=" + std::to_string(host.disk.image().log_base.log_start()) +
           " entries=" + std::to_string(entries) +
           " promised=" + FormatBallot(host.disk.image().hard_state.promised());
  });
  Drain(host);
}

void Simulation::Drain(ReplicaHost& host) {
  int batches = 0;
  while (result_.ok && host.up() && host.replica->HasReady()) {
    if (++batches > kReadyBatchesPerInputMax) {
      Violate(Invariant::kContract, Who(host.id) + " keeps producing Ready batches");
      return;
    }
    consensus::Ready ready = host.replica->TakeReady();
    HandleReady(host, ready);
  }
  if (host.up()) NoteRole(host);
}

void Simulation::HandleReady(ReplicaHost& host, consensus::Ready& ready) {
  const bool wrote = PersistReady(host, ready);                      // 1
  for (const pb::Message& message : ready.messages) Send(host, message);  // 2
  HoldAfterPersist(host, ready);                                     // 3
  for (const pb::Entry& entry : ready.committed) {                   // 4
    ApplyCommitted(host, entry);
    if (!result_.ok || !host.up()) return;
  }
  if (!ready.committed.empty()) {
    WriteKvDelta(host);
    ServeReadWaiters(host);
  }
  for (ReplicaId to : ready.snapshot_requests) AnswerSnapshotRequest(host, to);  // 5
  if (ready.snapshot_to_install) InstallSnapshot(host, *ready.snapshot_to_install);  // 6
  if (wrote || !ready.committed.empty()) ScheduleSync(host);
}

bool Simulation::PersistReady(ReplicaHost& host, consensus::Ready& ready) {
  if (!ready.hard_state && !ready.truncate_from && ready.entries.empty()) return false;
  tracer_.Event(now_, Who(host.id), 11, ready.persist_seq,
                ready.entries.empty() ? 0 : ready.entries.back().slot(),
                [&] { return DescribePersist(ready); });
  DiskWrite write;
  write.hard_state = ready.hard_state;
  write.truncate_from = ready.truncate_from;
  write.entries = std::move(ready.entries);
  host.disk.Append(std::move(write));
  return true;
}

void Simulation::HoldAfterPersist(ReplicaHost& host, consensus::Ready& ready) {
  if (ready.persist_seq == 0 && ready.messages_after_persist.empty()) return;
  // With the skip-fsync bug the host promises durability it does not have.
  const bool durable = host.disk.last_durable() >= host.disk.last_appended();
  if (durable || config_.bug == SimBug::kSkipFsync) {
    for (const pb::Message& message : ready.messages_after_persist) Send(host, message);
    if (ready.persist_seq != 0) host.replica->OnPersisted(ready.persist_seq);
    return;
  }
  host.awaiting_sync.push_back(AfterPersist{host.disk.last_appended(), ready.persist_seq,
                                            std::move(ready.messages_after_persist)});
}

void Simulation::ScheduleSync(ReplicaHost& host) {
  if (!host.disk.has_pending()) return;
  TimeUs delay = plan_.fsync_min_us + disk_prng_.Below(plan_.fsync_jitter_us + 1);
  if (plan_.fsync_slow_ppm > 0 && disk_prng_.ChancePpm(plan_.fsync_slow_ppm)) {
    delay += disk_prng_.Below(plan_.fsync_slow_max_us + 1);
  }
  host.last_sync_at = std::max(now_ + delay, host.last_sync_at);
  ++result_.stats.fsyncs;
  ScheduleSimple(host.last_sync_at, EventKind::kSyncDone, host.id, host.incarnation,
                 host.disk.last_appended());
}

void Simulation::OnSyncDone(ReplicaHost& host, uint64_t incarnation, uint64_t upto) {
  if (!host.up() || host.incarnation != incarnation) return;
  host.disk.SyncUpTo(upto);
  tracer_.Mix(upto);
  if (config_.bug == SimBug::kAckBeforeQuorum) AckBeforeQuorum(host);
  ReleaseDurable(host);
  Drain(host);
}

void Simulation::ReleaseDurable(ReplicaHost& host) {
  while (host.up() && !host.awaiting_sync.empty() &&
         host.awaiting_sync.front().disk_position <= host.disk.last_durable()) {
    AfterPersist released = std::move(host.awaiting_sync.front());
    host.awaiting_sync.pop_front();
    for (const pb::Message& message : released.messages) Send(host, message);
    if (released.persist_seq != 0) host.replica->OnPersisted(released.persist_seq);
  }
}

void Simulation::ApplyCommitted(ReplicaHost& host, const pb::Entry& entry) {
  if (entry.slot() != host.kv.applied_index() + 1) {
    Violate(Invariant::kContract, Who(host.id) + " was handed committed slot " +
                                      std::to_string(entry.slot()) + " with applied index " +
                                      std::to_string(host.kv.applied_index()));
    return;
  }
  const Status applied = host.log_only ? host.kv.Skip(entry) : host.kv.Apply(entry);
  if (!applied.ok()) {
    Violate(Invariant::kContract, Who(host.id) + " cannot apply: " + applied.ToString());
    return;
  }
  tracer_.Event(now_, Who(host.id), 12, entry.slot(), entry.request_id(), [&] {
    return "apply slot=" + std::to_string(entry.slot()) + " " + DescribeEntry(entry);
  });
  CheckAgreement(host, entry, DescribeEntry(entry));
  if (!result_.ok) return;
  if (entry.type() == pb::ENTRY_COMMAND) CheckAckedSlot(host, entry.slot(), entry.request_id());
  if (!result_.ok) return;
  OnWriteSlotApplied(host, entry.slot(), host.kv.ResultAt(entry.slot()));
}

void Simulation::WriteKvDelta(ReplicaHost& host) {
  DiskWrite write;
  write.kv_delta = host.kv.TakeDelta();
  host.disk.Append(std::move(write));
}

void Simulation::AnswerSnapshotRequest(ReplicaHost& host, ReplicaId to) {
  ++result_.stats.snapshots_sent;
  tracer_.Event(now_, Who(host.id), 13, to, host.kv.applied_index(), [&] {
    return "snapshot for " + Who(to) + " at " + std::to_string(host.kv.applied_index());
  });
  host.replica->SendSnapshot(LocalNow(host), to, host.kv.applied_index(), host.kv.Serialize());
}

void Simulation::InstallSnapshot(ReplicaHost& host, const pb::InstallSnapshot& install) {
  const pb::SnapshotMeta& meta = install.meta();
  // A log replica installs the leader's log base: no data, an empty state.
  Result<KvState> parsed =
      host.log_only ? (install.data().empty()
                           ? Result<KvState>(KvState::EmptyAt(meta.last_slot()))
                           : Result<KvState>(Status::InvalidArgument("state for a log replica")))
                    : KvState::Parse(install.data());
  if (!parsed.ok() || parsed->applied_index() != meta.last_slot() ||
      meta.last_slot() < host.kv.applied_index()) {
    Violate(Invariant::kContract,
            Who(host.id) + " was asked to install a bad snapshot at " +
                std::to_string(meta.last_slot()) + " (applied " +
                std::to_string(host.kv.applied_index()) + ", " +
                (parsed.ok() ? "covers " + std::to_string(parsed->applied_index())
                             : parsed.status().ToString()) + ")");
    return;
  }
  if (!host.log_only) CheckSnapshotAgreement(host, *parsed);
  if (!result_.ok) return;
  tracer_.Event(now_, Who(host.id), 14, meta.last_slot(), 0, [&] {
    return "install snapshot at " + std::to_string(meta.last_slot());
  });
  ++result_.stats.snapshots_installed;
  host.kv = std::move(*parsed);
  DiskWrite write;
  write.kv_replace = host.kv;
  pb::LogBase base;
  base.set_log_start(meta.last_slot() + 1);
  *base.mutable_base_membership() = meta.membership();
  write.log_base = std::move(base);
  host.disk.SyncUpTo(host.disk.Append(std::move(write)));
  ReleaseDurable(host);
  host.replica->OnSnapshotInstalled(LocalNow(host), meta);
  std::vector<Slot> covered;
  for (auto it = host.write_waiters.begin();
       it != host.write_waiters.end() && it->first <= meta.last_slot(); ++it) {
    if (covered.empty() || covered.back() != it->first) covered.push_back(it->first);
  }
  for (Slot slot : covered) OnWriteSlotApplied(host, slot, host.kv.ResultAt(slot));
  ServeReadWaiters(host);
}

void Simulation::MaybeCompact(ReplicaHost& host) {
  if (!plan_.compaction || now_ < host.next_compaction_at) return;
  host.next_compaction_at = now_ + plan_.compaction_period_us;
  consensus::Replica& replica = *host.replica;
  const Slot applied = std::min(host.kv.applied_index(), replica.applied_index());
  if (applied <= plan_.compaction_keep) return;
  const Slot upto = applied - plan_.compaction_keep;
  if (upto < replica.log_start()) return;
  pb::LogBase base;
  base.set_log_start(upto + 1);
  *base.mutable_base_membership() = replica.MembershipAt(upto);
  replica.CompactLog(upto);
  ++result_.stats.compactions;
  tracer_.Event(now_, Who(host.id), 15, upto, 0,
                [&] { return "compact log <= " + std::to_string(upto); });
  DiskWrite write;
  write.log_base = std::move(base);
  host.disk.Append(std::move(write));
  ScheduleSync(host);
  Drain(host);
}

void Simulation::Send(ReplicaHost& from, const pb::Message& message) {
  ++result_.stats.messages_sent;
  const ReplicaId to = message.to();
  if (to == 0 || to > replica_ids_ || to == from.id || message.from() != from.id) {
    Violate(Invariant::kContract, Who(from.id) + " sent a misaddressed message: " +
                                      DescribeMessage(message));
    return;
  }
  scratch_delays_.clear();
  network_.Route(from.id, to, net_prng_, &scratch_delays_);
  if (scratch_delays_.empty()) {
    ++result_.stats.messages_lost;
    tracer_.Event(now_, Who(from.id), 20, MessageDigest(message), 0,
                  [&] { return "lost " + DescribeMessage(message); });
    return;
  }
  if (scratch_delays_.size() > 1) ++result_.stats.messages_duplicated;
  for (TimeUs delay : scratch_delays_) {
    Event event;
    event.kind = EventKind::kDeliver;
    event.target = to;
    event.message = std::make_unique<pb::Message>(message);
    Schedule(now_ + delay, std::move(event));
  }
}

void Simulation::Deliver(Event& event) {
  const ReplicaId to = event.target;
  const pb::Message& message = *event.message;
  ReplicaHost& host = Host(to);
  if (host.up() && host.paused(now_)) {  // waits in the socket buffer
    Schedule(host.paused_until, std::move(event));
    return;
  }
  if (!host.up()) {
    tracer_.Event(now_, Who(to), 21, MessageDigest(message), 0,
                  [&] { return "down, drops " + DescribeMessage(message); });
    return;
  }
  ++result_.stats.messages_delivered;
  tracer_.Event(now_, Who(to), 22, MessageDigest(message), 0,
                [&] { return "recv " + DescribeMessage(message); });
  host.replica->Step(LocalNow(host), message);
  Drain(host);
}

void Simulation::OnTick(ReplicaHost& host) {
  // Tick at least every tick_interval_us of the replica's own clock, at the
  // fastest rate it may run.
  const int64_t rate = std::max<int64_t>({host.clock.rate_ppm, plan_.drift_half_spread_ppm, 0});
  const TimeUs period = static_cast<TimeUs>(
      static_cast<int64_t>(plan_.options.tick_interval_us) * 1'000'000 / (1'000'000 + rate));
  ScheduleSimple(now_ + std::max<TimeUs>(period, 1), EventKind::kTick, host.id);
  if (!host.up() || host.paused(now_)) return;
  host.replica->Tick(LocalNow(host));
  Drain(host);
  if (host.up()) MaybeCompact(host);
}

void Simulation::Crash(ReplicaHost& host) {
  // Half the crashes lose every unsynced write; the rest keep a prefix, as
  // when the OS flushed some of them.
  const size_t pending = host.disk.pending_count();
  const size_t keep = disk_prng_.Chance(50) ? 0 : disk_prng_.Below(pending + 1);
  tracer_.Event(now_, Who(host.id), 16, pending, keep, [&] {
    return "CRASH: loses " + std::to_string(pending - keep) + " of " + std::to_string(pending) +
           " pending writes";
  });
  ++result_.stats.crashes;
  host.disk.Crash(keep);
  host.replica.reset();
  host.awaiting_sync.clear();
  host.kv = KvState();
  host.last_role = consensus::Role::kFollower;
  host.paused_until = 0;
  FailWaitersOnCrash(host);
}

void Simulation::NoteRole(ReplicaHost& host) {
  const consensus::Role role = host.replica->role();
  if (role == host.last_role) return;
  if (role == consensus::Role::kLeader) ++result_.stats.elections;
  tracer_.Event(now_, Who(host.id), 17, static_cast<uint64_t>(role),
                host.replica->promised().round(), [&] {
                  return std::string("role ") + RoleText(host.last_role) + " -> " +
                         RoleText(role) + " ballot=" + FormatBallot(host.replica->promised());
                });
  host.last_role = role;
}

}  // namespace tessera::sim
