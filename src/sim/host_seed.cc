#include "sim/host_seed.h"

#include <algorithm>
#include <memory>
#include <set>
#include <utility>

#include "autoadmin/planner.h"
#include "chaos/linearizability.h"
#include "common/check.h"
#include "common/limits.h"
#include "consensus/membership_step.h"
#include "consensus/quorum.h"
#include "sim/host_autoadmin.h"
#include "sim/host_cluster.h"
#include "sim/log_agreement.h"
#include "sim/prng.h"
#include "sim/s3_clients.h"

namespace tessera::sim {
namespace {

// Random streams of a seed, apart from HostCluster's own.
enum HostSeedStream : uint64_t {
  kStreamHostPlan = 201,
  kStreamHostFaults,
  kStreamHostClients,
  kStreamHostClocks,
  kStreamHostAutoadmin,
  kStreamHostS3,
};

constexpr TimeUs kCatchUpBudgetUs = 30'000'000;
constexpr TimeUs kWriteBudgetUs = 5'000'000;
// A client abandons an operation it has no answer to after this long
// (a write's outcome is then unknown; a get constrains nothing).
constexpr TimeUs kClientTimeoutUs = 1'500'000;
constexpr uint32_t kClientsMax = 4;
constexpr uint32_t kClientKeysMax = 3;
// History timestamps: virtual microseconds scaled so that operations within
// one instant keep the order in which they happened.
constexpr uint64_t kHistoryStepsPerUs = 1 << 16;
// A bound on the linearizability search per key (states explored).
constexpr uint64_t kLinearizabilityBudget = 2'000'000;

uint64_t TraceHash(const std::vector<std::string>& lines) {
  uint64_t hash = 0xcbf29ce484222325ULL;  // FNV-1a, one '\n' after each line
  for (const std::string& line : lines) {
    for (unsigned char c : line + "\n") hash = (hash ^ c) * 0x100000001b3ULL;
  }
  return hash;
}

// Timings about ten times faster than production, as the node tests use.
HostClusterOptions PlanOptions(uint64_t seed, uint32_t replicas, Prng& plan) {
  HostClusterOptions o;
  o.seed = seed;
  o.replicas = replicas;
  o.group_id = 1 + plan.Below(1'000);
  o.consensus.tick_interval_us = 2'000;
  o.consensus.heartbeat_interval_us = 20'000;
  o.consensus.lease_duration_us = 200'000;
  o.consensus.election_timeout_min_us = 250'000;
  o.consensus.election_timeout_max_us = 500'000;
  o.consensus.check_quorum_timeout_us = 250'000;
  o.network.loss_ppm = static_cast<uint32_t>(plan.Below(30'001));
  o.network.duplicate_ppm = static_cast<uint32_t>(plan.Below(20'001));
  o.network.delay_min_us = 200 + plan.Below(800);
  o.network.delay_jitter_us = plan.Below(5'001);
  o.disk_delay_min_us = 100 + plan.Below(900);
  o.disk_delay_jitter_us = plan.Below(5'001);
  if (plan.Chance(30)) {  // delay spikes: a few messages arrive very late
    o.network.spike_ppm = static_cast<uint32_t>(plan.Range(1'000, 20'000));
    o.network.spike_max_us = plan.Range(50'000, 400'000);
  }
  o.clock_offset_max_us = 1'000'000'000;
  if (plan.Chance(50)) {  // lagging replicas catch up by snapshot
    o.compaction_trigger_slots = 10 + plan.Below(20);
    o.compaction_keep_slots = plan.Below(5);
    o.snapshot_chunk_bytes = 1 << 10;
    o.snapshot_install_batch_bytes = 256 + plan.Below(1'024);
  }
  return o;
}

using PendingResult = std::shared_ptr<std::optional<Result<pb::KvApplyResult>>>;

class SeedRun {
 public:
  SeedRun(const HostSeedConfig& config, HostClusterOptions options, Prng& plan)
      : config_(config),
        voters_(options.replicas),
        spares_(options.spares),
        max_drift_ppm_(options.consensus.max_clock_drift_ppm),
        cluster_(std::move(options)),
        faults_(DeriveSeed(config.seed, kStreamHostFaults)),
        client_prng_(DeriveSeed(config.seed, kStreamHostClients)),
        clock_prng_(DeriveSeed(config.seed, kStreamHostClocks)),
        autoadmin_prng_(DeriveSeed(config.seed, kStreamHostAutoadmin)),
        descriptor_(HostInitialDescriptor(options.group_id, options.replicas)),
        clients_(2 + plan.Below(kClientsMax - 1)),
        keys_(static_cast<uint32_t>(1 + plan.Below(kClientKeysMax))),
        think_max_us_(plan.Range(1'000, 30'000)),
        clock_drift_(config.bug == SimBug::kLeaseIgnoreDrift || plan.Chance(60)),
        large_value_percent_(plan.Chance(30) ? 10 : 0),
        loss_round_(spares_ > 0 ? static_cast<uint32_t>(plan.Range(2, config.rounds / 2))
                                : UINT32_MAX) {}
  // Callbacks still queued in the cluster (run while it shuts down) find
  // the run gone.
  ~SeedRun() { *alive_ = false; }

  HostSeedResult Run() {
    const uint64_t start_us = cluster_.loop().now_us();
    const Status started = cluster_.Start();
    if (!started.ok()) return Fail("start: " + started.ToString());
    if (clock_drift_) {
      for (ReplicaId id = 1; id <= voters_; ++id) DriftClock(id);
    }
    for (uint32_t c = 0; c < clients_.size(); ++c) {
      clients_[c].id = c + 1;
      clients_[c].guess = Pick(client_prng_);
      ScheduleOp(c);
    }
    if (HostSeedRunsS3(config_)) {
      s3_ = std::make_unique<S3Clients>(
          cluster_, DeriveSeed(config_.seed, kStreamHostS3), config_.bug, &crashes_of_,
          [this](ReplicaId id) { return IsMember(id); },
          [this](Prng& prng) { return Pick(prng); });
      s3_->Start();
    }
    for (uint32_t round = 0; round < config_.rounds; ++round) Round(round);
    Heal();
    HostSeedResult result = Check();
    result.stats = stats_;
    if (s3_) {
      result.stats.s3_ops = s3_->stats().ops;
      result.stats.s3_acked = s3_->stats().acked;
      result.stats.s3_unknown = s3_->stats().unknown;
      result.stats.s3_resent = s3_->stats().resent;
      result.stats.s3_completed = s3_->stats().completed;
    }
    result.stats.messages_sent = cluster_.transport_stats().sent;
    result.stats.virtual_time_us = cluster_.loop().now_us() - start_us;
    result.trace_hash = TraceHash(cluster_.trace());
    if (config_.trace != nullptr) {
      for (const std::string& line : cluster_.trace()) *config_.trace << line << '\n';
    }
    return result;
  }

 private:
  HostSeedResult Fail(std::string violation) {
    HostSeedResult result;
    result.ok = false;
    result.violation = std::move(violation);
    return result;
  }

  void Round(uint32_t round) {
    Recover(/*all=*/false);
    if (const ReplicaId leader = cluster_.Leader(); leader != 0) {
      const std::string key = "k" + std::to_string(round);
      // Some values are large (16..256 KiB): many group commits and
      // snapshot chunks then carry one value each.
      std::string value = ValueOf(key);
      if (faults_.Chance(large_value_percent_)) {
        value.append(faults_.Range(16 << 10, 256 << 10), static_cast<char>('a' + round % 26));
        ++stats_.large_values;
      }
      values_[key] = value;
      pending_.push_back({key, std::make_shared<std::optional<Result<pb::KvApplyResult>>>()});
      cluster_.Write(leader, Batch(key, value), pending_.back().second);
    }
    RunChecked(faults_.Range(1'000, 40'000));
    if (lost_ == 0 && gone_.empty() && round >= loss_round_ && impaired_ == 0) {
      const bool lose = faults_.Chance(50) || config_.replica_loss_every_seed;
      lose ? LoseReplica() : RetireReplica();
    }
    StepReplacement();
    if (clock_drift_ && faults_.Chance(15)) {
      DriftClock(Pick(faults_));
    }
    if (impaired_ != 0) return;  // one replica impaired at a time: a quorum stays
    uint64_t draw = faults_.Below(100);
    ReplicaId victim = Pick(faults_);
    // Cutting off the leader is the case leases exist for; the
    // lease-ignore-drift bug runs it six times as often, always the leader.
    const bool bad_clocks = config_.bug == SimBug::kLeaseIgnoreDrift;
    if (bad_clocks && draw >= 24 && draw < 60) draw = 12;
    // Acknowledging before a quorum shows when the leader is cut off with
    // writes in flight; skipped fsyncs when the whole group loses power.
    const bool early_acks = config_.bug == SimBug::kAckBeforeQuorum;
    if (early_acks && draw >= 24 && draw < 60) draw = faults_.Chance(50) ? 12 : 48;
    if (config_.bug == SimBug::kSkipFsync && draw >= 24 && draw < 60) draw = 56;
    if (draw >= 12 && draw < 20 && (bad_clocks || early_acks || faults_.Chance(50)) &&
        cluster_.Leader() != 0) {
      victim = cluster_.Leader();
    }
    const TimeUs now_us = cluster_.loop().now_us();
    if (draw < 12) {
      CrashReplica(victim);
      ++stats_.crashes;
      impaired_ = victim;
      until_us_ = now_us + faults_.Range(0, 500'000);
      down_ = true;
      die_in_install_ = faults_.Chance(25);
    } else if (draw < 20) {
      if (config_.bug == SimBug::kLeaseIgnoreDrift) SlowLeaderFastFollowers(victim);
      cluster_.Isolate(victim, true);
      ++stats_.partitions;
      impaired_ = victim;
      until_us_ = now_us + faults_.Range(50'000, 800'000);
      isolated_ = true;
    } else if (draw < 24) {
      cluster_.SetDiskFailing(victim, true);
      ++stats_.disk_faults;
      impaired_ = victim;
      until_us_ = now_us + faults_.Range(50'000, 500'000);
      disk_failing_ = true;
    } else if (draw < 28) {
      // Asymmetric: the victim's messages to one peer are lost, the
      // peer's to it still arrive (or the other way round).
      const ReplicaId peer = PickOther(victim);
      if (peer == 0) return;
      const bool outbound = faults_.Chance(50);
      one_way_ = outbound ? std::make_pair(victim, peer) : std::make_pair(peer, victim);
      cluster_.network().Block(one_way_.first, one_way_.second);
      ++stats_.partitions;
      impaired_ = victim;
      until_us_ = now_us + faults_.Range(50'000, 800'000);
    } else if (draw < 32) {
      // Gray: the links between the victim and one peer lose most messages.
      const ReplicaId peer = PickOther(victim);
      if (peer == 0) return;
      gray_ = {victim, peer};
      gray_loss_ppm_ = static_cast<uint32_t>(faults_.Range(300'000, 900'000));
      cluster_.network().AddGray(victim, peer, gray_loss_ppm_);
      cluster_.network().AddGray(peer, victim, gray_loss_ppm_);
      ++stats_.gray_failures;
      impaired_ = victim;
      until_us_ = now_us + faults_.Range(50'000, 800'000);
    } else if (draw < 44) {
      // The process stops handling anything for a while (a long GC or VM
      // pause); the leader, half the time.
      if (faults_.Chance(50) && cluster_.Leader() != 0) victim = cluster_.Leader();
      cluster_.Pause(victim);
      ++stats_.pauses;
      impaired_ = victim;
      until_us_ = now_us + faults_.Range(50'000, 800'000);
      paused_ = true;
    } else if (draw < 48 && faults_.Chance(50)) {
      // A member that lost patience campaigns at once, skipping pre-vote:
      // a rival of the leader, or a learner or lagging replica that must
      // not win.
      if (!cluster_.up(victim)) return;
      cluster_.Campaign(victim);
      ++stats_.campaigns;
    } else if (draw < 48) {
      // The leader hands leadership to another voter.
      const ReplicaId leader = cluster_.Leader();
      const ReplicaId to = leader == 0 ? 0 : PickOther(leader);
      if (to == 0) return;
      cluster_.TransferLeadership(leader, to);
      ++stats_.transfers;
    } else if (draw < 56) {
      if (!Split()) return;
      impaired_ = victim;
      until_us_ = now_us + faults_.Range(50'000, 800'000);
    } else if (draw < 60) {
      PowerLoss();
      impaired_ = victim;
      until_us_ = now_us + faults_.Range(0, 300'000);
    }
  }

  // The group splits in two sides: a minority and a majority of the
  // members, the leader on the minority side half the time (and always
  // with the ack-before-quorum bug). Every link across is cut both ways.
  bool Split() {
    std::vector<ReplicaId> members = Members();
    if (members.size() < 3) return false;
    for (size_t i = members.size() - 1; i > 0; --i) {  // Fisher-Yates
      std::swap(members[i], members[faults_.Below(i + 1)]);
    }
    const size_t minority = 1 + faults_.Below((members.size() - 1) / 2);
    const auto leader = std::find(members.begin(), members.end(), cluster_.Leader());
    if (leader != members.end() &&
        (config_.bug == SimBug::kAckBeforeQuorum || faults_.Chance(50))) {
      std::swap(*leader, members[0]);
    }
    std::string sides = "split";
    for (size_t i = 0; i < members.size(); ++i) {
      sides += (i == minority ? " | " : " ") + std::to_string(members[i]);
      for (size_t j = minority; i < minority && j < members.size(); ++j) {
        split_links_.push_back({members[i], members[j]});
        split_links_.push_back({members[j], members[i]});
      }
    }
    for (const auto& [from, to] : split_links_) cluster_.network().Block(from, to);
    cluster_.Note(sides);
    ++stats_.partitions;
    ++stats_.splits;
    return true;
  }

  // Every member loses power at once (torn tails on every disk) and comes
  // back at the end of the impairment: what a synced write promised
  // survives, as long as the store really synced it.
  void PowerLoss() {
    const bool torn = faults_.Chance(50);  // else every unsynced byte is gone
    for (ReplicaId id : Members()) {
      if (!cluster_.up(id)) continue;
      CrashReplica(id, torn);
      powered_off_.push_back(id);
    }
    ++stats_.crashes;
    ++stats_.power_losses;
  }

  // A member other than `id` (0 when there is none).
  ReplicaId PickOther(ReplicaId id) {
    std::vector<ReplicaId> others;
    for (ReplicaId m : Members()) {
      if (m != id) others.push_back(m);
    }
    return others.empty() ? 0 : others[faults_.Below(others.size())];
  }

  // Ends the current impairment once its time came (or at once, `all`),
  // then restarts the replicas whose group fail-stopped.
  void Recover(bool all) {
    if (impaired_ != 0 && (all || cluster_.loop().now_us() >= until_us_)) {
      const ReplicaId id = impaired_;
      impaired_ = 0;
      if (down_ && IsMember(id)) {  // not a replica decommissioned meanwhile
        RestartFaults faults;
        if (die_in_install_ && !all) {
          faults.die_in_install_after_batches = faults_.Below(3);
          ++stats_.install_faults;
        }
        Restart(id, faults);
      }
      if (isolated_) cluster_.Isolate(id, false);
      if (disk_failing_) cluster_.SetDiskFailing(id, false);
      if (one_way_.first != 0) cluster_.network().Unblock(one_way_.first, one_way_.second);
      if (gray_.first != 0) {
        cluster_.network().RemoveGray(gray_.first, gray_.second, gray_loss_ppm_);
        cluster_.network().RemoveGray(gray_.second, gray_.first, gray_loss_ppm_);
      }
      if (paused_) cluster_.Resume(id);
      for (const auto& [from, to] : split_links_) cluster_.network().Unblock(from, to);
      split_links_.clear();
      for (ReplicaId off : powered_off_) {
        if (IsMember(off)) Restart(off, {});
      }
      powered_off_.clear();
      one_way_ = gray_ = {0, 0};
      down_ = isolated_ = disk_failing_ = die_in_install_ = paused_ = false;
    }
    RestartStopped();
  }

  // A group that fail-stopped (a failed disk write, or a snapshot install
  // that stopped half-way: the process died there) restarts from its disk,
  // once the disk works again.
  void RestartStopped() {
    for (ReplicaId id : Members()) {
      if (!cluster_.up(id) || (disk_failing_ && id == impaired_)) continue;
      const auto status = cluster_.StatusOf(id);
      if (status && status->stopped) {
        CrashReplica(id);
        ++stats_.crashes;
        Restart(id, {});
      }
    }
  }

  void Restart(ReplicaId id, const RestartFaults& faults) {
    const Status restarted = cluster_.Restart(id, faults);
    if (!restarted.ok() && restart_error_.empty()) {
      restart_error_ = "restart of replica " + std::to_string(id) + ": " + restarted.ToString();
    }
  }

  // --- replica loss and replacement --------------------------------------
  // The replicas that exist: provisioned and not lost, in id order.
  std::vector<ReplicaId> Members() const {
    std::vector<ReplicaId> members;
    for (ReplicaId id = 1; id <= voters_ + spares_; ++id) {
      if (IsMember(id)) members.push_back(id);
    }
    return members;
  }
  bool IsMember(ReplicaId id) const {
    return id >= 1 && id <= voters_ + spares_ && (id != lost_ || retiring_) &&
           gone_.count(id) == 0 && cluster_.provisioned(id);
  }
  ReplicaId Pick(Prng& prng) const {
    const std::vector<ReplicaId> members = Members();
    return members[prng.Below(members.size())];
  }

  // A voter dies for good (its disk is gone): it never restarts, and the
  // autoadmin's planner replaces it from then on (AutoadminRound).
  void LoseReplica() {
    const ReplicaId victim = Pick(faults_);
    cluster_.Note("lose " + std::to_string(victim));
    if (cluster_.up(victim)) CrashReplica(victim);
    gone_.insert(victim);
    planner_ = true;
    ++stats_.replicas_lost;
  }

  // One round of the active autoadmin, at most every 100..400 ms of virtual
  // time: the ClusterView of the cluster and meta's descriptor, planned by
  // autoadmin::Plan, the actions carried out. True (and no more rounds)
  // once the group is whole again: its voters number the voters at the
  // start, in as many AZs as the live nodes allow, no learner or log
  // replica left, meta's descriptor names them, and every replica outside
  // the membership is dropped.
  bool AutoadminRound() {
    if (replaced_) return true;
    const TimeUs now_us = cluster_.loop().now_us();
    if (now_us < next_autoadmin_us_) return false;
    next_autoadmin_us_ = now_us + autoadmin_prng_.Range(100'000, 400'000);
    const uint32_t nodes = voters_ + spares_;
    const autoadmin::ClusterView view = HostClusterView(cluster_, descriptor_, nodes, gone_);
    const autoadmin::GroupView& group = view.groups.at(descriptor_.group_id());
    if (group.leader != 0 && !change_in_flight_) {
      const autoadmin::ReplicaReport& report =
          view.nodes.at(group.leader).groups.at(descriptor_.group_id());
      if (!report.membership_pending &&
          ReplacementNotConverged(report.membership, descriptor_, voters_, nodes, gone_).empty() &&
          NoStaleReplica(report.membership)) {
        replaced_ = true;
        ++stats_.replicas_replaced;
        return true;
      }
    }
    autoadmin::PlannerOptions options;
    options.replication_factor = voters_;
    options.max_concurrent = 1;
    for (const autoadmin::Action& action : autoadmin::Plan(view, options)) Execute(action);
    return false;
  }

  // Every provisioned node not gone is a member of `membership`.
  bool NoStaleReplica(const pb::Membership& membership) const {
    for (ReplicaId id : Members()) {
      if (!consensus::IsMember(membership, id)) return false;
    }
    return true;
  }

  // Carries out one planned action as the autoadmin's executor does:
  // descriptors as meta stores them, a new replica as the target node
  // creates it, membership steps and transfers at the leader, a stale
  // replica dropped (its process stops for good, its node is not used
  // again).
  void Execute(const autoadmin::Action& action) {
    ++stats_.autoadmin_actions;
    cluster_.Note(std::string("autoadmin ") + autoadmin::ActionKindName(action.kind) + " node=" +
                  std::to_string(action.node) + " replica=" + std::to_string(action.replica) +
                  (action.log_only ? " log-only" : "") + ": " + action.reason);
    switch (action.kind) {
      case autoadmin::ActionKind::kAddReplica:
      case autoadmin::ActionKind::kSyncDescriptor:
        TESSERA_CHECK(action.descriptor.epoch() == descriptor_.epoch() + 1);
        descriptor_ = action.descriptor;
        return;
      case autoadmin::ActionKind::kCreateReplica:
        CreateReplica(action);
        return;
      case autoadmin::ActionKind::kAddLearner:
      case autoadmin::ActionKind::kPromote:
      case autoadmin::ActionKind::kRemove: {
        if (change_in_flight_ || !cluster_.up(action.node) || cluster_.paused(action.node)) return;
        const consensus::MembershipStep step =
            action.kind == autoadmin::ActionKind::kAddLearner
                ? (action.log_only ? consensus::MembershipStep::kAddLogLearner
                                   : consensus::MembershipStep::kAddLearner)
            : action.kind == autoadmin::ActionKind::kPromote ? consensus::MembershipStep::kPromote
                                                             : consensus::MembershipStep::kRemove;
        change_in_flight_ = true;
        ++stats_.membership_changes;
        cluster_.ChangeMembership(
            action.node, step, action.replica,
            [this, alive = alive_](Result<node::GroupHost::MembershipResult>) {
              if (*alive) change_in_flight_ = false;
            });
        return;
      }
      case autoadmin::ActionKind::kDropStale:
        if (cluster_.up(action.replica)) CrashReplica(action.replica);
        gone_.insert(action.replica);
        return;
      case autoadmin::ActionKind::kTransferLeader:
        if (!cluster_.up(action.node) || cluster_.paused(action.node)) return;
        cluster_.TransferLeadership(action.node, action.replica);
        return;
      case autoadmin::ActionKind::kMoveBlobSlots:
        TESSERA_CHECK(false && "Plan never moves blob slots (blob_slot_planner.h)");
        return;
    }
  }

  // The target node creates the group from the descriptor: its voters,
  // learners and log replica as the bootstrap membership.
  void CreateReplica(const autoadmin::Action& action) {
    TESSERA_CHECK(!cluster_.provisioned(action.replica) && gone_.count(action.replica) == 0);
    pb::Membership bootstrap;
    for (const pb::ReplicaPlacement& r : action.descriptor.replicas()) {
      if (r.role() == pb::REPLICA_LEARNER) {
        bootstrap.add_learners(r.node_id());
      } else {
        bootstrap.add_voters(r.node_id());
      }
      if (r.log_only()) bootstrap.add_log_only(r.node_id());
    }
    const Status provisioned = cluster_.Provision(action.replica, bootstrap);
    if (!provisioned.ok()) {
      if (restart_error_.empty()) {
        restart_error_ = "provision of replica " + std::to_string(action.replica) + ": " +
                         provisioned.ToString();
      }
      return;
    }
    if (consensus::IsLogOnly(bootstrap, action.replica)) ++stats_.log_replicas;
    if (clock_drift_) DriftClock(action.replica);
  }

  // The membership actor: a live voter (the leader, half the time) is
  // replaced by the spare while it keeps running, and decommissioned (its
  // process stops for good) only once the membership no longer names it.
  void RetireReplica() {
    const ReplicaId leader = cluster_.Leader();
    lost_ = leader != 0 && faults_.Chance(50) ? leader : Pick(faults_);
    retiring_ = true;
    ++stats_.replicas_retired;
    cluster_.Note("retire " + std::to_string(lost_));
  }

  // One step of the replacement, as an operator's autoadmin would take
  // it, read from the leader's membership each time (nothing remembered
  // but the change in flight): provision the spare and add it as a
  // learner, promote it, remove the lost voter. True once the membership
  // is the survivors and the spare as voters (or nothing was lost).
  bool StepReplacement() {
    if (planner_) return AutoadminRound();
    if (lost_ == 0) return true;
    if (change_in_flight_) return false;
    const ReplicaId leader = cluster_.Leader();
    if (leader == 0) return false;
    const auto status = cluster_.StatusOf(leader);
    if (!status || status->membership_pending) return false;
    const pb::Membership& m = status->membership;
    auto has = [](const auto& ids, ReplicaId id) {
      return std::find(ids.begin(), ids.end(), id) != ids.end();
    };
    const ReplicaId spare = voters_ + 1;
    consensus::MembershipStep step;
    ReplicaId target = spare;
    if (!has(m.voters(), spare) && !has(m.learners(), spare)) {
      if (!cluster_.provisioned(spare)) {
        pb::Membership bootstrap = m;
        bootstrap.add_learners(spare);
        const Status provisioned = cluster_.Provision(spare, bootstrap);
        if (!provisioned.ok() && restart_error_.empty()) {
          restart_error_ = "provision of replica " + std::to_string(spare) + ": " +
                           provisioned.ToString();
        }
        if (!provisioned.ok()) return false;
        if (clock_drift_) DriftClock(spare);
      }
      step = consensus::MembershipStep::kAddLearner;
    } else if (has(m.learners(), spare)) {
      step = consensus::MembershipStep::kPromote;
    } else if (has(m.voters(), lost_) || has(m.learners(), lost_)) {
      step = consensus::MembershipStep::kRemove;
      target = lost_;
    } else {
      if (retiring_) {  // removed: the process stops for good
        retiring_ = false;
        if (cluster_.up(lost_)) CrashReplica(lost_);
      }
      if (stats_.replicas_replaced == 0) stats_.replicas_replaced = 1;
      return true;
    }
    change_in_flight_ = true;
    ++stats_.membership_changes;
    cluster_.ChangeMembership(leader, step, target,
                              [this, alive = alive_](Result<node::GroupHost::MembershipResult>) {
                                if (*alive) change_in_flight_ = false;
                              });
    return false;
  }

  // After the heal: the replacement finishes.
  bool Converge() {
    return cluster_.RunUntil(
        [&] {
          CheckLeases();
          RestartStopped();
          return StepReplacement();
        },
        kCatchUpBudgetUs);
  }

  // What each member says of itself, for a liveness failure's message.
  std::string Statuses() {
    std::string out;
    for (ReplicaId id : Members()) {
      const auto st = cluster_.StatusOf(id);
      out += " " + std::to_string(id) + ":";
      if (!st) {
        out += "down";
        continue;
      }
      out += std::string("role=") + consensus::RoleName(st->role) + ",leader=" +
             std::to_string(st->leader) + ",ballot=" + std::to_string(st->ballot.round()) + "." +
             std::to_string(st->ballot.replica()) + ",chosen=" + std::to_string(st->chosen) +
             ",applied=" + std::to_string(st->applied) + ",last=" + std::to_string(st->last_slot) +
             ",lease=" + std::to_string(st->holds_lease) + ",stopped=" + std::to_string(st->stopped) +
             ",members={" + st->membership.ShortDebugString() + "}";
    }
    return out;
  }

  // Every crash goes through here: a client's put answered NotLeader by a
  // replica that did not crash meanwhile was refused before it was proposed
  // (a stop fails the pending writes with NotLeader too, outcome unknown).
  // Before it dies, its durable log joins the agreement check.
  void CrashReplica(ReplicaId id, bool torn = true) {
    ObserveLog(id);
    ++crashes_of_[id];  // first: the stop answers the pending writes
    cluster_.Crash(id, torn);
  }

  // The agreement per slot and request id (LogAgreement) on the durable
  // log of `id` (up). False when the log cannot be read.
  bool ObserveLog(ReplicaId id) {
    Result<consensus::RecoveredState> log = cluster_.DurableLog(id);
    if (!log.ok()) {
      if (log_error_.empty()) {
        log_error_ = "durable log of replica " + std::to_string(id) + ": " + log.status().ToString();
      }
      return false;
    }
    agreement_.Observe(id, *log);
    return true;
  }

  // Clock drift within the bound the leases assume: every rate within
  // +-0.45 * max_clock_drift_ppm, so any two differ by less than the
  // bound. The lease-ignore-drift bug draws half, true or double speed.
  void DriftClock(ReplicaId id) {
    int64_t rate_ppm = 0;
    if (config_.bug == SimBug::kLeaseIgnoreDrift) {
      static constexpr int64_t kBadRatesPpm[] = {-500'000, 0, 1'000'000};
      rate_ppm = kBadRatesPpm[clock_prng_.Below(3)];
    } else {
      const int64_t spread = static_cast<int64_t>(max_drift_ppm_) * 45 / 100;
      rate_ppm = static_cast<int64_t>(clock_prng_.Below(2 * spread + 1)) - spread;
    }
    cluster_.SetClockRate(id, rate_ppm);
    ++stats_.clock_changes;
  }

  // The lease-ignore-drift bug at its worst: the replica about to be cut
  // off (the leader, half the time) runs at half speed, the others at
  // double speed, far outside max_clock_drift_ppm.
  void SlowLeaderFastFollowers(ReplicaId victim) {
    for (ReplicaId id : Members()) {
      cluster_.SetClockRate(id, id == victim ? -500'000 : 1'000'000);
      ++stats_.clock_changes;
    }
  }

  // Runs `duration_us` of virtual time, checking lease safety between
  // every two steps.
  void RunChecked(TimeUs duration_us) {
    cluster_.RunUntil(
        [&] {
          CheckLeases();
          return false;
        },
        duration_us);
  }

  void CheckLeases() {
    if (!lease_violation_.empty()) return;
    lease_violation_ = CheckLeaseHolders(cluster_.LeaseHolders(), cluster_.loop().now_us());
  }

  // --- clients ---------------------------------------------------------
  struct Client {
    uint32_t id = 0;
    ReplicaId guess = 1;       // the replica it believes leads
    uint64_t serial = 0;       // of the operation in flight; 0: none
    size_t op_index = 0;       // its entry in history_
    ReplicaId target = 0;      // where it went, and that replica's crashes then
    uint64_t target_crashes = 0;
  };

  uint64_t HistoryTime() {
    const uint64_t now_us = cluster_.loop().now_us();
    if (now_us != history_instant_us_) {
      history_instant_us_ = now_us;
      history_step_ = 0;
    }
    return now_us * kHistoryStepsPerUs + std::min(history_step_++, kHistoryStepsPerUs - 1);
  }

  void ScheduleOp(uint32_t c) {
    if (clients_stopped_) return;
    const TimeUs at_us = cluster_.loop().now_us() + client_prng_.Range(0, think_max_us_);
    cluster_.loop().PostAt(at_us, [this, alive = alive_, c] {
      if (*alive) StartOp(c);
    });
  }

  // One operation of client `c` at the replica it believes leads: a put of
  // a value no other operation writes, or a get (a lease read).
  void StartOp(uint32_t c) {
    if (clients_stopped_) return;
    Client& client = clients_[c];
    if (!cluster_.up(client.guess)) {
      client.guess = Pick(client_prng_);
      ScheduleOp(c);
      return;
    }
    chaos::KvOperation op;
    op.client_id = client.id;
    op.key = "x" + std::to_string(client_prng_.Below(keys_));
    op.type = client_prng_.Chance(50) ? chaos::KvOpType::kGet : chaos::KvOpType::kPut;
    if (op.type == chaos::KvOpType::kPut) {
      op.value = "c" + std::to_string(client.id) + "." + std::to_string(history_.size());
    }
    op.invoke_time = HistoryTime();
    client.serial = ++next_serial_;
    client.op_index = history_.size();
    client.target = client.guess;
    client.target_crashes = crashes_of_[client.guess];
    history_.push_back(op);
    discarded_.push_back(false);
    const uint64_t serial = client.serial;
    if (op.type == chaos::KvOpType::kPut) {
      cluster_.Write(client.guess, Batch(op.key, op.value),
                     [this, alive = alive_, c, serial](Result<pb::KvApplyResult> r) {
                       if (*alive) Finish(c, serial, r.status(), std::nullopt);
                     });
    } else {
      // The stale-read bug: the asked replica's applied state, no lease.
      const pb::Consistency consistency = config_.bug == SimBug::kStaleRead
                                              ? pb::CONSISTENCY_EVENTUAL
                                              : pb::CONSISTENCY_STRONG;
      cluster_.Read(client.guess, op.key, consistency,
                    [this, alive = alive_, c, serial](Result<std::optional<pb::KvRecord>> r) {
                      if (!*alive) return;
                      std::optional<std::string> value;
                      if (r.ok() && r->has_value()) value = (*r)->value();
                      Finish(c, serial, r.status(), std::move(value));
                    });
    }
    cluster_.loop().PostAt(cluster_.loop().now_us() + kClientTimeoutUs,
                           [this, alive = alive_, c, serial] {
                             if (*alive) Finish(c, serial, Status::Timeout("client"), std::nullopt);
                           });
  }

  // The answer (or the deadline) of operation `serial` of client `c`; any
  // later one of the same operation is ignored. A put that failed may still
  // take effect (unknown outcome); a get that failed is dropped.
  void Finish(uint32_t c, uint64_t serial, const Status& status,
              std::optional<std::string> value) {
    Client& client = clients_[c];
    if (client.serial != serial) return;
    client.serial = 0;
    chaos::KvOperation& op = history_[client.op_index];
    if (status.ok()) {
      op.completed = true;
      op.return_time = HistoryTime();
      op.read = std::move(value);
      if (op.type == chaos::KvOpType::kGet) ++stats_.strong_reads;
    } else {
      // A get that failed constrains nothing; a put refused before it was
      // proposed (NotLeader from a replica that did not crash meanwhile, a
      // full queue) did not happen. Any other failure (a crash, a
      // fail-stop, a timeout) leaves it unknown.
      const bool refused = (status.code() == StatusCode::kNotLeader &&
                            crashes_of_[client.target] == client.target_crashes) ||
                           status.code() == StatusCode::kThrottled;
      if (op.type == chaos::KvOpType::kGet || refused) discarded_[client.op_index] = true;
      const bool hinted = status.code() == StatusCode::kNotLeader && status.leader_hint() != 0 &&
                          IsMember(status.leader_hint());
      client.guess = hinted ? static_cast<ReplicaId>(status.leader_hint())
                            : Pick(client_prng_);
    }
    ScheduleOp(c);
  }

  // After the heal: a strong read of every key at the leader, each after
  // every client operation ended, so the last acknowledged puts are seen.
  bool FinalReads() {
    for (uint32_t k = 0; k < keys_; ++k) {
      const std::string key = "x" + std::to_string(k);
      bool read = false;
      for (int attempt = 0; attempt < 5 && !read; ++attempt) {
        if (!cluster_.RunUntil([&] { return cluster_.Leader() != 0; }, kWriteBudgetUs)) {
          return false;
        }
        chaos::KvOperation op;
        op.client_id = clients_.size() + 1;
        op.key = key;
        op.invoke_time = HistoryTime();
        auto got = std::make_shared<std::optional<Result<std::optional<pb::KvRecord>>>>();
        cluster_.Read(cluster_.Leader(), key, pb::CONSISTENCY_STRONG,
                      [got](Result<std::optional<pb::KvRecord>> r) { *got = std::move(r); });
        if (!cluster_.RunUntil([&] { return got->has_value(); }, kWriteBudgetUs)) return false;
        if (!(*got)->ok()) continue;
        op.completed = true;
        op.return_time = HistoryTime();
        if ((*got)->value()) op.read = (*got)->value()->value();
        history_.push_back(op);
        discarded_.push_back(false);
        read = true;
      }
      if (!read) return false;
    }
    return true;
  }

  std::string CheckHistory() {
    std::vector<chaos::KvOperation> history;
    for (size_t i = 0; i < history_.size(); ++i) {
      if (discarded_[i]) continue;
      history.push_back(history_[i]);
      if (!history_[i].completed) ++stats_.unknown_puts;
    }
    stats_.client_ops = history.size();
    const chaos::CheckResult checked = chaos::CheckKvHistory(history, kLinearizabilityBudget);
    if (!checked.linearizable) {
      return "linearizability: key " + checked.key + ": " + checked.explanation;
    }
    if (checked.inconclusive) {
      return "linearizability inconclusive: key " + checked.key + " (" +
             std::to_string(stats_.unknown_puts) + " puts of unknown outcome)";
    }
    return "";
  }

  void Heal() {
    clients_stopped_ = true;
    if (s3_) s3_->Stop();
    Recover(/*all=*/true);
    // A seed that must lose a voter and found no round without an
    // impairment loses it now: the replacement then runs after the heal.
    if (config_.replica_loss_every_seed && lost_ == 0 && gone_.empty() && spares_ > 0) {
      LoseReplica();
    }
    cluster_.network().HealLinks();
    cluster_.network().set_params(NetworkParams{});
  }

  HostSeedResult Check() {
    if (!lease_violation_.empty()) return Fail(lease_violation_);
    if (!restart_error_.empty()) return Fail(restart_error_);
    // A spare provisioned before its learner entry was chosen waits for it.
    if (!Converge()) {
      return Fail("liveness: the lost replica not replaced within 30 s after the heal;" +
                  Statuses());
    }
    if (!CatchUp()) return Fail("liveness: no catch-up within 30 s after the heal;" + Statuses());
    for (const auto& [key, result] : pending_) {
      if (result->has_value() && (*result)->ok()) acked_[key] = values_.at(key);
    }
    if (!WriteAfterHeal()) return Fail("liveness: no write acknowledged after the heal");
    acked_["final"] = ValueOf("final");
    stats_.writes_acked = acked_.size();
    if (!CatchUp()) return Fail("liveness: the write after the heal not applied everywhere");
    if (!FinalReads()) return Fail("liveness: no strong read answered after the heal");
    if (!lease_violation_.empty()) return Fail(lease_violation_);
    std::map<uint32_t, std::map<std::string, std::optional<std::string>>> held;
    std::map<uint32_t, std::string> digests;
    for (ReplicaId id : Members()) {
      for (const auto& [key, value] : acked_) held[id][key] = cluster_.ValueAt(id, key);
      Result<std::string> digest = cluster_.Digest(id);
      if (!digest.ok()) return Fail("digest of replica " + std::to_string(id) + ": " +
                                    digest.status().ToString());
      digests[id] = *digest;
    }
    for (ReplicaId id : Members()) ObserveLog(id);
    stats_.log_slots_checked = agreement_.slots();
    if (!log_error_.empty()) return Fail(log_error_);
    if (!cluster_.contract_violation().empty()) return Fail(cluster_.contract_violation());
    std::string violation = CheckAcknowledgedWrites(acked_, held);
    if (violation.empty()) violation = agreement_.violation();
    if (violation.empty()) violation = CheckDigestsEqual(digests);
    if (violation.empty()) violation = CheckHistory();
    if (violation.empty() && s3_) violation = s3_->Check(Members());
    if (!violation.empty()) return Fail(violation);
    return HostSeedResult{};
  }

  // A fault injected before the heal may still fail-stop a replica after
  // it (an install that was in flight): that process dies and restarts too.
  bool CatchUp() {
    return cluster_.RunUntil(
        [&] {
          CheckLeases();
          RestartStopped();
          return cluster_.CaughtUp();
        },
        kCatchUpBudgetUs);
  }

  bool WriteAfterHeal() {
    for (int attempt = 0; attempt < 5; ++attempt) {
      if (!cluster_.RunUntil([&] { return cluster_.Leader() != 0; }, kWriteBudgetUs)) return false;
      auto result = std::make_shared<std::optional<Result<pb::KvApplyResult>>>();
      cluster_.Write(cluster_.Leader(), Batch("final", ValueOf("final")), result);
      if (!cluster_.RunUntil([&] { return result->has_value(); }, kWriteBudgetUs)) return false;
      if ((*result)->ok()) return true;
    }
    return false;
  }

  static std::string ValueOf(const std::string& key) { return "value of " + key; }
  static pb::KvBatch Batch(const std::string& key, const std::string& value) {
    pb::KvBatch batch;
    auto* w = batch.add_writes();
    w->set_key(key);
    w->set_value(value);
    return batch;
  }

  const HostSeedConfig config_;
  const uint32_t voters_;  // at the start: ids 1..voters_
  const uint32_t spares_;
  const uint32_t max_drift_ppm_;
  HostCluster cluster_;
  Prng faults_;
  Prng client_prng_;
  Prng clock_prng_;
  Prng autoadmin_prng_;
  // Meta's descriptor of the group, as the autoadmin's actions update it.
  pb::PartitionDescriptor descriptor_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  std::vector<Client> clients_;
  const uint32_t keys_;
  const TimeUs think_max_us_;
  const bool clock_drift_;
  const uint32_t large_value_percent_;  // of the rounds' writes
  bool clients_stopped_ = false;
  uint64_t next_serial_ = 0;
  std::vector<chaos::KvOperation> history_;
  std::vector<bool> discarded_;  // gets that failed: no constraint
  uint64_t history_instant_us_ = 0;
  uint64_t history_step_ = 0;
  std::string lease_violation_;
  std::map<ReplicaId, uint64_t> crashes_of_;
  const uint32_t loss_round_;  // the first round that may lose a voter
  ReplicaId lost_ = 0;         // the voter lost for good (or being retired), or 0
  bool retiring_ = false;      // lost_ still runs until it is removed
  bool change_in_flight_ = false;
  // Voters lost for good and replicas the autoadmin dropped: never up again.
  std::set<ReplicaId> gone_;
  bool planner_ = false;   // a voter was lost: the autoadmin's planner replaces it
  bool replaced_ = false;  // and it finished
  TimeUs next_autoadmin_us_ = 0;
  LogAgreement agreement_;
  std::string log_error_;
  HostSeedStats stats_;
  std::vector<std::pair<std::string, PendingResult>> pending_;
  std::map<std::string, std::string> acked_;
  std::string restart_error_;
  // The one impaired replica (0: none), until when, and how.
  ReplicaId impaired_ = 0;
  TimeUs until_us_ = 0;
  bool down_ = false;
  bool isolated_ = false;
  bool disk_failing_ = false;
  bool die_in_install_ = false;  // restart it with a snapshot-install fault
  bool paused_ = false;
  std::pair<ReplicaId, ReplicaId> one_way_{0, 0};  // a blocked direction
  std::vector<std::pair<ReplicaId, ReplicaId>> split_links_;  // cut by a split
  std::vector<ReplicaId> powered_off_;  // down since a power loss
  std::pair<ReplicaId, ReplicaId> gray_{0, 0};     // a gray pair of links
  uint32_t gray_loss_ppm_ = 0;
  std::map<std::string, std::string> values_;  // of each round's key
  // The S3 clients of an S3 seed (destroyed before the cluster).
  std::unique_ptr<S3Clients> s3_;
};

}  // namespace

bool HostSeedRunsS3(const HostSeedConfig& config) {
  if (config.s3_every_seed || config.bug == SimBug::kS3RetryUnknown) return true;
  Prng draw(DeriveSeed(config.seed, kStreamHostS3 + 100));
  return draw.Chance(25);
}

HostSeedResult RunHostSeed(const HostSeedConfig& config) {
  Prng plan(DeriveSeed(config.seed, kStreamHostPlan));
  HostClusterOptions options = PlanOptions(config.seed, config.replicas, plan);
  options.equal_restart_stamps = config.equal_restart_stamps;
  options.ack_before_quorum = config.bug == SimBug::kAckBeforeQuorum;
  options.skip_log_sync = config.bug == SimBug::kSkipFsync;
  // A third of the seeds lose a voter for good and replace it (not with
  // bad clocks: those seeds cut off a leader as often as they can, which
  // a group that lost a voter cannot survive in time).
  // Three spares: a log replica and a full one may both be needed (in the
  // AZs the planner wants), within the group size limit.
  const uint32_t spares =
      std::min<uint32_t>(3, static_cast<uint32_t>(limits::kGroupReplicasMax) - config.replicas);
  const bool loss = plan.Chance(33) || config.replica_loss_every_seed;
  options.spares = loss && config.bug != SimBug::kLeaseIgnoreDrift ? spares : 0;
  SeedRun run(config, std::move(options), plan);
  return run.Run();
}

std::vector<SimBug> HostSeedBugs() {
  return {SimBug::kAckBeforeQuorum, SimBug::kSkipFsync, SimBug::kLeaseIgnoreDrift,
          SimBug::kStaleRead, SimBug::kS3RetryUnknown};
}

std::string CheckLeaseHolders(const std::vector<uint32_t>& holders, uint64_t at_us) {
  if (holders.size() < 2) return "";
  std::string who;
  for (uint32_t id : holders) who += (who.empty() ? "" : " and ") + std::to_string(id);
  return "lease safety: replicas " + who + " hold a lease at " + std::to_string(at_us) + " us";
}

std::string CheckAcknowledgedWrites(
    const std::map<std::string, std::string>& acked,
    const std::map<uint32_t, std::map<std::string, std::optional<std::string>>>& held) {
  for (const auto& [replica, values] : held) {
    for (const auto& [key, value] : acked) {
      auto it = values.find(key);
      if (it == values.end() || !it->second) {
        return "durability: replica " + std::to_string(replica) + " lost acknowledged key " + key;
      }
      if (*it->second != value) {
        return "durability: replica " + std::to_string(replica) + " holds '" + *it->second +
               "' for acknowledged key " + key + ", not '" + value + "'";
      }
    }
  }
  return "";
}

std::string CheckDigestsEqual(const std::map<uint32_t, std::string>& digests) {
  if (digests.empty()) return "";
  const auto& [first_replica, first] = *digests.begin();
  for (const auto& [replica, digest] : digests) {
    if (digest != first) {
      return "agreement: replica " + std::to_string(replica) + " digest {" + digest +
             "} differs from replica " + std::to_string(first_replica) + " {" + first + "}";
    }
  }
  return "";
}

}  // namespace tessera::sim
