#include "node/group_host.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <future>
#include <google/protobuf/util/message_differencer.h>

#include "common/check.h"
#include "common/limits.h"
#include "node/asio_group_executor.h"
#include "storage/snapshot_staging.h"

namespace tessera::node {

namespace {

// What a stopped group answers every request: not the leader and no hint,
// so a router looks for the leader among the other replicas (they elect
// one once this replica falls silent). Nothing was proposed: a write
// answered this way provably did not happen here.
Status StoppedStatus() {
  return Status::NotLeader(0, "group stopped on this replica (a log write, apply or snapshot "
                              "install failed); another replica leads");
}

}  // namespace
namespace asio = boost::asio;
using consensus::Slot;

Result<std::shared_ptr<GroupHost>> GroupHost::Start(asio::io_context& io,
                                                    storage::NodeStore* store,
                                                    MessageSender* sender,
                                                    GroupHostOptions options) {
  return Start(std::make_unique<AsioGroupExecutor>(io), store, sender, std::move(options));
}

Result<std::shared_ptr<GroupHost>> GroupHost::Start(std::unique_ptr<GroupExecutor> executor,
                                                    storage::NodeStore* store,
                                                    MessageSender* sender,
                                                    GroupHostOptions options) {
  const std::string invalid = options.consensus.Validate();
  if (!invalid.empty()) return Status::InvalidArgument("group options: " + invalid);
  std::shared_ptr<GroupHost> host(
      new GroupHost(std::move(executor), store, sender, std::move(options)));
  auto recovered = store->RecoverGroup(host->group_id());
  if (!recovered.ok()) return recovered.status();
  consensus::RecoveredState state = std::move(recovered).value();
  if (state.log_base.base_membership().voters_size() == 0) {
    *state.log_base.mutable_base_membership() = host->options_.bootstrap_membership;
  }
  if (state.log_base.base_membership().voters_size() == 0) {
    return Status::InvalidArgument("group " + std::to_string(host->group_id()) +
                                   " has no membership");
  }
  host->replica_ = std::make_unique<consensus::Replica>(host->options_.consensus, std::move(state),
                                                        host->NowUs());
  // Distinct across restarts (in production the real monotonic clock,
  // never the skewed one).
  host->next_request_id_ = host->executor_->RestartStampUs() << 16;
  host->executor_->Post([self = host] { self->ScheduleTick(); });
  return host;
}

GroupHost::GroupHost(std::unique_ptr<GroupExecutor> executor, storage::NodeStore* store,
                     MessageSender* sender, GroupHostOptions options)
    : executor_(std::move(executor)),
      store_(store),
      sender_(sender),
      options_(std::move(options)),
      state_(store, options_.consensus.group_id),
      snapshot_sender_(store, options_.consensus.group_id, options_.consensus.self, sender,
                       options_.snapshot, options_.snapshot_counters),
      snapshot_receiver_(store, options_.consensus.group_id, options_.consensus.self,
                         options_.snapshot_counters) {
  // The child's log base membership is the parent's latest (the planner
  // splits no group with a membership change pending).
  state_.set_split_hooks(
      [this](const pb::KvSplit& split, Slot) -> Result<SplitPlan> {
        SplitPlan plan;
        plan.membership = replica_->membership();
        if (!options_.split_descriptors) return plan;
        auto writes = options_.split_descriptors(split);
        if (!writes.ok()) return writes.status();
        plan.descriptor_writes = std::move(writes).value();
        return plan;
      },
      [this](const pb::KvSplit& split, Slot) {
        if (options_.on_split_applied) options_.on_split_applied(split);
      });
}

GroupHost::~GroupHost() { *alive_ = false; }

// The executor's clock (in production the monotonic clock with the
// process's injected skew, admin.faults clock_skew_ppm; the tick timer
// itself keeps real time).
uint64_t GroupHost::NowUs() const { return executor_->NowUs(); }

void GroupHost::ScheduleTick() {
  if (stopped_) return;
  executor_->ArmTick(options_.consensus.tick_interval_us,
                     [self = shared_from_this()] { self->OnTick(); });
}

void GroupHost::OnTick() {
  if (stopped_) return;
  if (!installing_) replica_->Tick(NowUs());  // frozen: no election while installing
  snapshot_sender_.Tick(NowUs());
  ExpireDeadlines();
  Pump();
  ScheduleTick();
}

void GroupHost::Pump() {
  while (!stopped_ && !installing_ && replica_->HasReady()) {
    consensus::Ready ready = replica_->TakeReady();
    if (options_.testing.on_ready) options_.testing.on_ready(ready);
    for (pb::Message& m : ready.messages) sender_->Send(std::move(m));
    Persist(ready);
    if (!ready.committed.empty()) ApplyCommitted(ready.committed);
    if (stopped_) break;  // an apply failed: nothing more on this replica
    if (!ready.snapshot_requests.empty()) AnswerSnapshotRequests(ready.snapshot_requests);
    if (ready.snapshot_to_install) StartInstall(std::move(*ready.snapshot_to_install));
  }
  ServeReadyReads();
}

void GroupHost::SchedulePump() {
  if (pump_scheduled_) return;
  pump_scheduled_ = true;
  executor_->Post([self = shared_from_this()] {
    self->pump_scheduled_ = false;
    if (!self->stopped_) self->Pump();
  });
}

void GroupHost::Persist(consensus::Ready& ready) {
  if (ready.persist_seq == 0) return;
  storage::LogWrite write;
  write.group_id = group_id();
  write.hard_state = std::move(ready.hard_state);
  write.truncate_from = ready.truncate_from;
  const Slot last_entry_slot = ready.entries.empty() ? 0 : ready.entries.back().slot();
  write.entries = std::move(ready.entries);
  auto after = std::make_shared<std::vector<pb::Message>>(std::move(ready.messages_after_persist));
  const uint64_t seq = ready.persist_seq;
  std::weak_ptr<GroupHost> weak = weak_from_this();
  Status submitted = store_->SubmitLogWrite(std::move(write), [weak, after, seq,
                                                                last_entry_slot](const Status& s) {
    auto self = weak.lock();
    if (!self) return;
    self->executor_->Post([self, after, seq, s, last_entry_slot] {
      if (self->stopped_) return;
      if (self->installing_) {
        // Queued before the install, so durable before it; reported after
        // it, as when the install held the strand.
        self->persisted_during_install_.push_back(PersistDone{after, seq, s, last_entry_slot});
        return;
      }
      self->OnPersistDone(PersistDone{after, seq, s, last_entry_slot});
    });
  });
  if (!submitted.ok()) {
    FailAll(Status::IOError("log write refused: " + submitted.ToString()));
    stopped_ = true;
    stopped_on_disk_error_ = true;
  }
}

void GroupHost::OnPersistDone(const PersistDone& done) {
  if (stopped_) return;
  if (!done.status.ok()) {
    // The log could not be made durable: this replica must not promise or
    // acknowledge anything more. Stop the group loudly.
    FailAll(Status::IOError("log write failed: " + done.status.ToString()));
    stopped_ = true;
    stopped_on_disk_error_ = true;
    return;
  }
  for (pb::Message& m : *done.messages_after) sender_->Send(std::move(m));
  replica_->OnPersisted(done.seq);
  if (options_.testing.ack_before_quorum) AckBeforeQuorum(done.last_entry_slot);
  SchedulePump();
}

void GroupHost::AckBeforeQuorum(Slot slot) {
  for (auto it = writes_by_slot_.begin(); it != writes_by_slot_.end() && it->first <= slot;) {
    it->second.done(pb::KvApplyResult{});
    it = writes_by_slot_.erase(it);
  }
}

void GroupHost::ApplyCommitted(const std::vector<pb::Entry>& entries) {
  if (membership_change_) {
    for (const pb::Entry& e : entries) {
      if (e.slot() != membership_change_->slot) continue;
      MembershipCallback done = std::move(membership_change_->done);
      const bool ours =
          e.type() == pb::ENTRY_MEMBERSHIP &&
          IsOwnProposal(e.proposer(), e.request_id(), membership_change_->request_id);
      membership_change_.reset();
      if (ours) {
        done(MembershipResult{e.membership(), true});
      } else {
        done(Status::Aborted("another value took the membership change's slot; safe to retry"));
      }
      break;
    }
  }
  if (options_.log_only) {
    // Nothing to apply, nobody waiting: a log replica never leads, so it
    // proposed nothing. A split entry narrows its range all the same,
    // before the applied index passes it (a restart sees it again).
    const Status narrowed = NarrowOnLogSplits(entries);
    if (!narrowed.ok()) return StopOnApplyError(narrowed);
    const Status skipped = state_.SkipTo(entries.back().slot());
    if (!skipped.ok()) return StopOnApplyError(skipped);
    MaybeCompact();
    return;
  }
  auto results = state_.Apply(entries);
  if (!results.ok()) return StopOnApplyError(results.status());
  if (options_.on_applied) options_.on_applied(entries);
  std::map<Slot, const SlotResult*> by_slot;
  for (const SlotResult& r : *results) by_slot[r.slot] = &r;
  const Slot last = entries.back().slot();
  for (auto it = writes_by_slot_.begin(); it != writes_by_slot_.end() && it->first <= last;) {
    auto found = by_slot.find(it->first);
    if (found != by_slot.end() && IsOwnProposal(found->second->proposer, found->second->request_id,
                                                it->second.request_id)) {
      it->second.done(found->second->result);
    } else {
      it->second.done(Status::Aborted("another value took the slot; safe to retry"));
    }
    it = writes_by_slot_.erase(it);
  }
  MaybeCompact();
}

// The batch was not applied (all or nothing: the durable state is as
// before it). A replica that cannot apply must not go on: the group stops
// here, as after a failed log write, and the process's next start recovers
// it. A disk error is an operating condition (one group stops, not the
// process); any other error is a bug.
void GroupHost::StopOnApplyError(const Status& status) {
  TESSERA_CHECK(status.code() == StatusCode::kIOError ||
                status.code() == StatusCode::kUnavailable);
  spdlog::error("node.apply_failed group={} reason=\"{}\"", group_id(), status.ToString());
  FailAll(Status::IOError("apply failed: " + status.ToString()));
  stopped_ = true;
  stopped_on_disk_error_ = true;
  snapshot_sender_.AbortAll();
}

// Streams the state to each replica in chunks (snapshot_sender.h); the
// core gets the manifest once every chunk is staged (OnSnapshotAck).
void GroupHost::AnswerSnapshotRequests(const std::vector<consensus::ReplicaId>& to) {
  for (consensus::ReplicaId id : to) snapshot_sender_.Start(NowUs(), id);
}

void GroupHost::OnSnapshotAck(const pb::Message& message) {
  auto done = snapshot_sender_.OnAck(NowUs(), message.from(), message.snapshot_transfer().ack());
  if (!done) return;
  // Dropped by the core when no longer leader or the log was compacted past
  // applied_index meanwhile (MaybeCompact prevents that): it asks again.
  replica_->SendSnapshot(NowUs(), done->to, done->applied_index, std::move(done->manifest));
  Pump();
}

// The install waits for several synced writes: it runs on the store's
// snapshot thread while the group stays frozen (installing_: no ticks, no
// pumps, consensus messages dropped, reads refused), then FinishInstall
// resumes the group on its strand. Writes the group queued before the
// install become durable before it (the writer's FIFO).
void GroupHost::StartInstall(pb::InstallSnapshot snapshot) {
  TESSERA_CHECK(!installing_);
  installing_ = true;
  auto shared = std::make_shared<const pb::InstallSnapshot>(std::move(snapshot));
  std::weak_ptr<GroupHost> weak = weak_from_this();
  Status queued = store_->SubmitSnapshotWork([weak, shared] {
    auto self = weak.lock();
    if (!self) return;
    Status installed = self->options_.log_only ? self->InstallLogBase(*shared)
                                               : self->snapshot_receiver_.Install(*shared);
    self->executor_->Post([self, shared, installed] { self->FinishInstall(*shared, installed); });
  });
  if (!queued.ok()) {
    // Nothing changed: refused like a snapshot that does not match, so the
    // core takes the next one the leader sends.
    FinishInstall(*shared, Status::InvalidArgument("snapshot install not queued: " + queued.ToString()));
  }
}

// A log replica's "snapshot" is the leader's log base: no state, so the
// empty state at meta.last_slot (as NodeStore::InstallSnapshot writes it)
// is all there is. A snapshot with data is not for a log replica.
Status GroupHost::InstallLogBase(const pb::InstallSnapshot& snapshot) const {
  if (!snapshot.data().empty()) {
    return Status::InvalidArgument("a log replica installs no state");
  }
  spdlog::info("node.log_base_installed group={} log_start={}", group_id(),
               snapshot.meta().last_slot() + 1);
  return store_->InstallSnapshot(group_id(), snapshot.meta(), {});
}

void GroupHost::FinishInstall(const pb::InstallSnapshot& snapshot, const Status& installed) {
  TESSERA_CHECK(installing_);
  installing_ = false;
  std::vector<PersistDone> persisted = std::move(persisted_during_install_);
  persisted_during_install_.clear();
  if (stopped_) return;
  ReportInstall(snapshot, installed);
  for (const PersistDone& done : persisted) OnPersistDone(done);
  SchedulePump();
}

void GroupHost::ReportInstall(const pb::InstallSnapshot& snapshot, const Status& installed) {
  if (installed.code() == StatusCode::kInvalidArgument) {
    // Not exactly the staged snapshot (another transfer replaced it):
    // nothing changed; the core takes the next snapshot the leader sends.
    spdlog::warn("node.snapshot_install_refused group={} last_slot={} reason=\"{}\"", group_id(),
                 snapshot.meta().last_slot(), installed.ToString());
    replica_->OnSnapshotRefused(NowUs(), snapshot.meta());
    return;
  }
  if (!installed.ok()) {
    // The install marker stays: this group must serve nothing more; the
    // store finishes the install when the process restarts.
    spdlog::error("node.snapshot_install_failed group={} reason=\"{}\"", group_id(),
                  installed.ToString());
    FailAll(Status::IOError("snapshot install failed: " + installed.ToString()));
    stopped_ = true;
    snapshot_sender_.AbortAll();
    return;
  }
  replica_->OnSnapshotInstalled(NowUs(), snapshot.meta());
  state_.ForgetRangeEnd();
  if (options_.on_range_narrowed && !options_.log_only) {
    auto end = store_->RangeEnd(group_id());
    Status narrowed = end.ok() ? Status::Ok() : end.status();
    if (narrowed.ok() && end->has_value()) narrowed = options_.on_range_narrowed(**end);
    if (!narrowed.ok()) {
      // The store holds the range end: a restart narrows the descriptor.
      spdlog::error("node.range_narrow_failed group={} reason=\"{}\"", group_id(),
                    narrowed.ToString());
      FailAll(Status::IOError("narrowing the range after an install: " + narrowed.ToString()));
      stopped_ = true;
      snapshot_sender_.AbortAll();
      return;
    }
  }
  if (options_.on_state_replaced) options_.on_state_replaced();
}

// Only what the state machine would check without its state: a log
// replica has no range end of its own, and the host ignores a key outside
// the descriptor's range (such a split is refused where it applies).
Status GroupHost::NarrowOnLogSplits(const std::vector<pb::Entry>& entries) {
  if (!options_.on_range_narrowed) return Status::Ok();
  for (const pb::Entry& e : entries) {
    if (e.type() != pb::ENTRY_COMMAND) continue;
    pb::KvCommand command;
    if (!command.ParseFromString(e.command()) || !command.has_split()) continue;
    const pb::KvSplit& split = command.split();
    if (split.split_key().empty() || split.child_group_id() == 0 ||
        split.child_group_id() == group_id()) {
      continue;
    }
    TESSERA_RETURN_IF_ERROR(options_.on_range_narrowed(split.split_key()));
  }
  return Status::Ok();
}

// The store's compaction is queued without waiting (a synced write: the
// strand would otherwise stall for an fsync, every group of the node with
// it when the disk is slow). The replica drops its entries first, so no log
// write queued after the compaction can bring back a slot below the new
// log start; a compaction that then fails leaves the store with more log
// than the replica, which recovery reads as usual.
void GroupHost::MaybeCompact() {
  if (compaction_in_flight_) return;
  const Slot applied = replica_->applied_index();
  if (applied < replica_->log_start() + options_.compaction_trigger_slots) return;
  Slot upto = applied - options_.compaction_keep_slots;
  // Keep what a snapshot in flight needs: SendSnapshot refuses a snapshot
  // older than log_start - 1.
  const std::optional<Slot> pinned = snapshot_sender_.OldestPinnedIndex();
  if (pinned) upto = std::min(upto, *pinned);
  if (upto + 1 <= replica_->log_start()) return;
  std::weak_ptr<GroupHost> weak = weak_from_this();
  const uint64_t group = group_id();
  Result<bool> queued = store_->SubmitCompactLog(
      group, upto, replica_->MembershipAt(upto), [weak, group, upto](const Status& s) {
        if (!s.ok()) {
          spdlog::warn("node.compaction_failed group={} upto={} reason=\"{}\"", group, upto,
                       s.ToString());
        }
        auto self = weak.lock();
        if (!self) return;
        self->executor_->Post([self] { self->compaction_in_flight_ = false; });
      });
  if (!queued.ok()) return;  // not covered yet, or the writer is full: next time
  compaction_in_flight_ = *queued;
  replica_->CompactLog(upto);
}

void GroupHost::ServeReadyReads() {
  while (!reads_.empty() && reads_.front().read_index <= replica_->applied_index()) {
    auto serve = std::move(reads_.front().serve);
    reads_.pop_front();
    serve(Status::Ok());
  }
}

void GroupHost::ExpireDeadlines() {
  const uint64_t now = NowUs();
  for (auto it = writes_by_slot_.begin(); it != writes_by_slot_.end();) {
    if (it->second.deadline_us > now) {
      ++it;
      continue;
    }
    it->second.done(Status::Timeout("write outcome unknown: not applied within the deadline"));
    it = writes_by_slot_.erase(it);
  }
  if (membership_change_ && membership_change_->deadline_us <= now) {
    MembershipCallback done = std::move(membership_change_->done);
    membership_change_.reset();
    done(Status::Timeout("membership change outcome unknown: not applied within the deadline"));
  }
  while (!reads_.empty() && reads_.front().deadline_us <= now) {
    reads_.front().serve(Status::Timeout("read index not applied within the deadline"));
    reads_.pop_front();
  }
}

void GroupHost::FailAll(const Status& status) {
  for (auto& [slot, w] : writes_by_slot_) w.done(status);
  writes_by_slot_.clear();
  if (membership_change_) {
    MembershipCallback done = std::move(membership_change_->done);
    membership_change_.reset();
    done(status);
  }
  for (PendingRead& r : reads_) r.serve(status);
  reads_.clear();
}

void GroupHost::Deliver(pb::Message message) {
  executor_->Post([self = shared_from_this(), m = std::move(message)]() mutable {
    if (self->stopped_) return;
    if (m.to() != self->options_.consensus.self || m.group_id() != self->group_id()) return;
    if (m.snapshot_transfer().has_chunk()) return self->StageChunk(std::move(m));
    // Frozen while installing: dropped; the leader sends again.
    if (self->installing_) return;
    if (m.snapshot_transfer().has_ack()) return self->OnSnapshotAck(m);
    self->replica_->Step(self->NowUs(), m);
    self->SchedulePump();
  });
}

// Staging waits for a synced write: it runs on the store's snapshot thread,
// whose FIFO keeps a group's chunks in arrival order; the ack is sent from
// the strand. A chunk the full queue refuses is dropped (no ack): the
// sender retransmits it. A chunk the disk refuses stops the group.
void GroupHost::StageChunk(pb::Message chunk) {
  const uint64_t seq = chunk.snapshot_transfer().chunk().seq();
  std::weak_ptr<GroupHost> weak = weak_from_this();
  Status queued = store_->SubmitSnapshotWork([weak, chunk = std::move(chunk)] {
    auto self = weak.lock();
    if (!self) return;
    Status store_error;
    pb::Message ack = self->snapshot_receiver_.StageChunk(chunk, &store_error);
    self->executor_->Post([self, ack = std::move(ack), store_error]() mutable {
      if (self->stopped_) return;
      // The store refuses every write after a failed one: the group
      // fail-stops as after a failed log write (a restart recovers it),
      // rather than refusing every later chunk while it looks healthy.
      if (!store_error.ok()) {
        spdlog::error("node.snapshot_stage_failed group={} reason=\"{}\"", self->group_id(),
                      store_error.ToString());
        return self->StopOnApplyError(store_error);
      }
      self->sender_->Send(std::move(ack));
    });
  });
  if (!queued.ok()) {
    spdlog::warn("node.snapshot_chunk_dropped group={} seq={} reason=\"{}\"", group_id(), seq,
                 queued.ToString());
  }
}

void GroupHost::Write(pb::KvBatch batch, WriteCallback done) {
  pb::KvCommand command;
  *command.mutable_batch() = std::move(batch);
  Write(std::move(command), std::move(done));
}

void GroupHost::Write(pb::KvCommand command, WriteCallback done) {
  executor_->Post([self = shared_from_this(), c = std::move(command), done = std::move(done)] {
    if (self->stopped_) return done(StoppedStatus());
    if (self->writes_by_slot_.size() >= limits::kUncommittedSlotsMax) {
      return done(Status::Throttled("too many writes in flight"));
    }
    const uint64_t request_id = self->next_request_id_++;
    auto slot = self->replica_->Propose(self->NowUs(), c.SerializeAsString(), request_id);
    if (!slot.ok()) return done(slot.status());
    const uint64_t deadline = self->NowUs() + self->options_.write_timeout_ms * 1000;
    self->writes_by_slot_[*slot] = PendingWrite{request_id, std::move(done), deadline};
    self->SchedulePump();
  });
}

void GroupHost::WhenReadable(std::function<void(Status)> serve, uint64_t timeout_ms) {
  auto index = replica_->LeaseReadIndex(NowUs());
  if (!index.ok()) return serve(index.status());
  if (*index <= replica_->applied_index()) return serve(Status::Ok());
  if (reads_.size() >= limits::kPendingReadsMax) return serve(Status::Throttled("read queue full"));
  reads_.push_back(PendingRead{*index, std::move(serve), NowUs() + timeout_ms * 1000});
}

void GroupHost::ReadState(pb::Consistency consistency, StateReader read) {
  executor_->Post([self = shared_from_this(), consistency, read = std::move(read)]() mutable {
    if (self->stopped_) return read(StoppedStatus());
    if (self->options_.log_only) {
      return read(Status::NotLeader(self->replica_->leader_hint(), "a log replica holds no state"));
    }
    if (self->installing_) return read(Status::Unavailable("replica is installing a snapshot"));
    auto serve = [self, read = std::move(read)](Status st) {
      if (!st.ok()) return read(st);
      read(&self->state_);
    };
    if (consistency == pb::CONSISTENCY_EVENTUAL) return serve(Status::Ok());
    self->WhenReadable(std::move(serve), self->options_.read_timeout_ms);
  });
}

void GroupHost::Read(std::string key, pb::Consistency consistency, ReadCallback done) {
  ReadState(consistency, [key = std::move(key), done = std::move(done)](
                             Result<const PartitionStateMachine*> state) {
    if (!state.ok()) return done(state.status());
    done((*state)->Get(key));
  });
}

void GroupHost::Scan(pb::KvScanRequest request, ScanCallback done) {
  const pb::Consistency consistency = request.consistency();
  ReadState(consistency, [req = std::move(request), done = std::move(done)](
                             Result<const PartitionStateMachine*> state) {
    if (!state.ok()) return done(state.status());
    done((*state)->Scan(req.start_key(), req.end_key(), req.limit()));
  });
}

void GroupHost::GetStatus(StatusCallback done) {
  executor_->Post([self = shared_from_this(), done = std::move(done)] {
    GroupStatus s;
    const consensus::Replica& r = *self->replica_;
    s.role = r.role();
    s.leader = r.leader_hint();
    s.ballot = r.promised();
    s.chosen = r.chosen_index();
    s.applied = r.applied_index();
    s.last_slot = r.last_slot();
    s.log_start = r.log_start();
    s.holds_lease = r.HoldsLease(self->NowUs());
    s.membership = r.membership();
    s.membership_pending =
        !google::protobuf::util::MessageDifferencer::Equals(r.membership(), r.MembershipAt(r.chosen_index()));
    s.stopped = self->stopped_;
    s.log_only = self->options_.log_only;
    if (s.stopped) {  // frozen: it leads nothing and holds no lease any more
      s.role = consensus::Role::kFollower;
      s.holds_lease = false;
    }
    done(s);
  });
}

void GroupHost::ChangeMembership(MembershipStep step, consensus::ReplicaId replica,
                                 MembershipCallback done) {
  executor_->Post([self = shared_from_this(), step, replica, done = std::move(done)]() mutable {
    if (self->stopped_) return done(StoppedStatus());
    consensus::Replica& r = *self->replica_;
    if (r.role() != consensus::Role::kLeader) {
      return done(Status::NotLeader(r.leader_hint()));
    }
    if (self->membership_change_) return done(Status::Conflict("a membership change is in flight"));
    auto next = consensus::NextMembership(r.membership(), step, replica);
    if (!next.ok()) return done(next.status());
    if (!next->has_value()) return done(MembershipResult{r.membership(), false});
    const uint64_t request_id = self->next_request_id_++;
    auto slot = r.ProposeMembership(self->NowUs(), **next, request_id);
    if (!slot.ok()) return done(slot.status());
    const uint64_t deadline = self->NowUs() + self->options_.write_timeout_ms * 1000;
    self->membership_change_ = PendingMembership{*slot, request_id, std::move(done), deadline};
    spdlog::info("group.membership_proposed group={} slot={} replica={} step={}", self->group_id(),
                 *slot, replica, static_cast<int>(step));
    self->SchedulePump();
  });
}

void GroupHost::TransferLeadership(consensus::ReplicaId to,
                                   std::function<void(Result<bool>)> done) {
  executor_->Post([self = shared_from_this(), to, done = std::move(done)]() mutable {
    if (self->stopped_) return done(StoppedStatus());
    consensus::Replica& r = *self->replica_;
    if (r.role() != consensus::Role::kLeader) {
      if (r.leader_hint() == to) return done(false);
      return done(Status::NotLeader(r.leader_hint()));
    }
    if (self->membership_change_) return done(Status::Conflict("a membership change is in flight"));
    const Status started = r.TransferLeadership(self->NowUs(), to);
    if (!started.ok()) return done(started);
    spdlog::info("group.leadership_transfer group={} to={}", self->group_id(), to);
    self->SchedulePump();
    done(true);
  });
}

void GroupHost::CampaignNow() {
  executor_->Post([self = shared_from_this()] {
    if (self->stopped_ || self->installing_) return;
    self->replica_->Campaign(self->NowUs());
    self->Pump();
  });
}

void GroupHost::StateDigest(JobThread& scanner, DigestCallback done) {
  executor_->Post([self = shared_from_this(), &scanner, done = std::move(done)]() mutable {
    if (self->stopped_) return done(StoppedStatus());
    if (self->options_.log_only) return done(Status::Unavailable("a log replica holds no state"));
    if (self->installing_) return done(Status::Unavailable("replica is installing a snapshot"));
    auto opened = self->store_->OpenSnapshot(self->group_id());
    if (!opened.ok()) return done(opened.status());
    // The scan reads the pinned snapshot; the strand goes on at once.
    auto snapshot = std::shared_ptr(std::move(opened).value());
    auto shared_done = std::make_shared<DigestCallback>(std::move(done));
    const Status accepted = scanner.Submit([snapshot, shared_done] {
      pb::SnapshotManifest digest;
      digest.set_applied_index(snapshot->applied_index());
      if (snapshot->range_end()) digest.mutable_range_end()->set_end_key(*snapshot->range_end());
      for (;;) {
        auto next = snapshot->Next();
        if (!next.ok()) return (*shared_done)(next.status());
        if (!next->has_value()) break;
        storage::AddPairToManifest((*next)->key, (*next)->value, &digest);
      }
      (*shared_done)(std::move(digest));
    });
    if (!accepted.ok()) (*shared_done)(accepted);
  });
}

bool GroupHost::StopForRemoval() {
  std::promise<bool> decided;
  std::future<bool> stopped = decided.get_future();
  executor_->Post([self = shared_from_this(), &decided] {
    if (self->installing_) return decided.set_value(false);
    if (!self->stopped_) {
      self->stopped_ = true;
      self->executor_->CancelTick();
      self->FailAll(Status::Aborted("group removed"));
    }
    decided.set_value(true);
  });
  const bool result = stopped.get();
  if (result) snapshot_sender_.AbortAll();
  return result;
}

void GroupHost::Stop() {
  snapshot_sender_.AbortAll();  // synchronous: see the header
  executor_->Post([self = shared_from_this()] {
    if (self->stopped_) return;
    self->stopped_ = true;
    self->executor_->CancelTick();
    self->FailAll(StoppedStatus());
  });
}

}  // namespace tessera::node
