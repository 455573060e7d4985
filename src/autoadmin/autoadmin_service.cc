#include "autoadmin/autoadmin_service.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <future>
#include <optional>
#include <set>
#include <sstream>

#include "common/limits.h"
#include "common/quoted_key.h"
#include "common/thread_name.h"
#include "tessera/cluster_rpc.pb.h"

namespace tessera::autoadmin {
namespace {

using Clock = std::chrono::steady_clock;

uint64_t SteadyMs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch()).count());
}

std::string UtcNow() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

pb::MembershipChangeKind KindOf(const Action& action) {
  switch (action.kind) {
    case ActionKind::kAddLearner:
      return action.log_only ? pb::MEMBERSHIP_ADD_LOG_LEARNER : pb::MEMBERSHIP_ADD_LEARNER;
    case ActionKind::kPromote: return pb::MEMBERSHIP_PROMOTE;
    default: return pb::MEMBERSHIP_REMOVE;
  }
}

// Answers that say the callee could not be reached or is not serving:
// another meta replica may answer.
bool TryAnother(const Status& s) {
  return s.code() == StatusCode::kUnavailable || s.code() == StatusCode::kTimeout ||
         s.code() == StatusCode::kIOError || s.code() == StatusCode::kAborted;
}

}  // namespace

AutoadminService::AutoadminService(const cluster::ProcessTable& table,
                                   cluster::ClusterClient& client, metrics::Registry& metrics,
                                   AutoadminOptions options)
    : table_(table),
      client_(client),
      options_(std::move(options)),
      actions_ok_(metrics.GetCounter("tessera_autoadmin_actions_total",
                                     "Autoadmin actions carried out", {{"outcome", "ok"}})),
      actions_failed_(metrics.GetCounter("tessera_autoadmin_actions_total",
                                         "Autoadmin actions carried out", {{"outcome", "failed"}})),
      active_gauge_(metrics.GetGauge("tessera_autoadmin_active",
                                     "1 while this instance holds the autoadmin lease")) {
  for (const pb::LoadSplitReason reason : {pb::LOAD_SPLIT_KEY_FOUND, pb::LOAD_SPLIT_ONE_HOT_KEY,
                                           pb::LOAD_SPLIT_SEQUENTIAL, pb::LOAD_SPLIT_UNBALANCED}) {
    for (const LoadSplitTrigger trigger :
         {LoadSplitTrigger::kConsumption, LoadSplitTrigger::kBoost, LoadSplitTrigger::kLoad}) {
      load_split_decisions_[{reason, trigger}] = &metrics.GetCounter(
          "tessera_autoadmin_load_split_decisions_total",
          "Partitions hot for split_after, by trigger and the leader's answer (once per group, reason, trigger)",
          {{"reason", LoadSplitReasonName(reason)}, {"trigger", LoadSplitTriggerName(trigger)}});
    }
  }
}

Result<std::unique_ptr<AutoadminService>> AutoadminService::Start(const cluster::ProcessTable& table,
                                                                  cluster::ClusterClient& client,
                                                                  metrics::Registry& metrics,
                                                                  AutoadminOptions options) {
  if (options.self_id == 0) return Status::InvalidArgument("autoadmin: self_id is 0");
  if (options.lease_ms < limits::kAutoadminLeaseMsMin || options.lease_ms > limits::kAutoadminLeaseMsMax) {
    return Status::InvalidArgument("autoadmin: lease_ms must be " +
                                   std::to_string(limits::kAutoadminLeaseMsMin) + ".." +
                                   std::to_string(limits::kAutoadminLeaseMsMax));
  }
  if (options.poll_interval_ms < 100 || options.poll_interval_ms > options.lease_ms) {
    return Status::InvalidArgument("autoadmin: poll_interval_ms must be 100..lease_ms");
  }
  if (options.dead_after_ms < options.poll_interval_ms) {
    return Status::InvalidArgument("autoadmin: dead_after_ms must be at least poll_interval_ms");
  }
  if (options.lag_for_ms < options.poll_interval_ms) {
    return Status::InvalidArgument("autoadmin: lag_for_ms must be at least poll_interval_ms");
  }
  if (options.planner.max_concurrent == 0) {
    return Status::InvalidArgument("autoadmin: max_concurrent must be at least 1");
  }
  std::unique_ptr<AutoadminService> s(new AutoadminService(table, client, metrics, std::move(options)));
  std::vector<HealthTracker::Node> nodes;
  for (const cluster::ProcessEntry& e : table.OfRole(cluster::ProcessRole::kNode)) {
    nodes.push_back({e.id, e.az});
    s->polled_.push_back(e);
    s->node_names_[e.id] = e.name;
  }
  s->health_ = std::make_unique<HealthTracker>(nodes, s->options_.dead_after_ms, s->options_.gray,
                                               SteadyMs());
  s->lag_ = std::make_unique<LagTracker>(s->options_.lag_for_ms);
  std::vector<blob::NodeRef> refs;
  for (const cluster::ProcessEntry& e : table.LayoutNodes()) refs.push_back({e.id, e.az});
  auto base = blob::BlobSlotMap::Build(std::move(refs));
  if (!base.ok()) return base.status();
  s->base_slot_map_.emplace(std::move(base).value());
  SplitCalls calls;
  AutoadminService* self = s.get();
  calls.meta = [self](const std::string& method, const std::string& payload,
                      std::chrono::milliseconds timeout) { return self->CallMeta(method, payload, timeout); };
  calls.node = [self](uint32_t node, const std::string& method, const std::string& payload,
                      std::chrono::milliseconds timeout) {
    return self->client_.Call(node, method, payload, timeout);
  };
  if (!s->options_.testing_exit_at_split_step.empty()) {
    calls.reached = [step = s->options_.testing_exit_at_split_step](std::string_view reached) {
      if (reached != step) return;
      spdlog::warn("autoadmin.testing_exit step={}", step);
      spdlog::default_logger()->flush();
      std::raise(SIGKILL);
    };
  }
  SplitTimeouts timeouts;
  timeouts.call = s->options_.call_timeout;
  s->splits_ = std::make_unique<SplitDriver>(std::move(calls), timeouts);
  s->lease_thread_ = StartNamedThread("aa-lease", [p = s.get()] { p->LeaseLoop(); });
  s->round_thread_ = StartNamedThread("aa-rounds", [p = s.get()] { p->RoundLoop(); });
  spdlog::info("autoadmin.started self={} lease_ms={} dead_after_ms={} max_concurrent={}",
               s->options_.self_id, s->options_.lease_ms, s->options_.dead_after_ms,
               s->options_.planner.max_concurrent);
  return s;
}

AutoadminService::~AutoadminService() { Stop(); }

void AutoadminService::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (lease_thread_.joinable()) lease_thread_.join();
  if (round_thread_.joinable()) round_thread_.join();
}

bool AutoadminService::Sleep(uint32_t ms) {
  std::unique_lock lock(mu_);
  return !cv_.wait_for(lock, std::chrono::milliseconds(ms), [this] { return stopping_; });
}

uint64_t AutoadminService::ActiveEpoch() const {
  std::lock_guard lock(mu_);
  return Clock::now() < active_until_ ? epoch_ : 0;
}

void AutoadminService::LoseLease(const std::string& why) {
  std::lock_guard lock(mu_);
  if (active_until_ == Clock::time_point{}) return;
  spdlog::warn("autoadmin.lease_lost epoch={} why=\"{}\"", epoch_, why);
  active_until_ = Clock::time_point{};
  active_gauge_.Set(0);
}

Result<std::string> AutoadminService::CallMeta(const std::string& method, const std::string& payload,
                                               std::chrono::milliseconds timeout) {
  Result<std::string> last = Status::Unavailable("no metadata replica");
  for (const cluster::ProcessEntry& e : table_.OfRole(cluster::ProcessRole::kMeta)) {
    last = client_.Call(e.id, method, payload, timeout);
    if (last.ok() || !TryAnother(last.status())) return last;
  }
  return last;
}

void AutoadminService::LeaseLoop() {
  const uint32_t period = options_.lease_ms / 3;
  do {
    pb::AutoadminLeaseRequest request;
    request.set_holder(options_.self_id);
    request.set_duration_ms(options_.lease_ms);
    const Clock::time_point sent = Clock::now();
    // A replica that does not answer must not cost the tenure: a quarter of
    // the lease each.
    auto answer = CallMeta("meta.autoadmin_lease", request.SerializeAsString(),
                           std::min(options_.call_timeout,
                                    std::chrono::milliseconds(options_.lease_ms / 4)));
    pb::AutoadminLeaseResponse response;
    if (!answer.ok() || !response.ParseFromString(*answer)) {
      // The tenure, if any, runs out by itself.
      spdlog::warn("autoadmin.lease_call_failed status=\"{}\"", answer.status().ToString());
      continue;
    }
    std::lock_guard lock(mu_);
    holder_ = response.lease().holder();
    if (response.granted() && response.lease().holder() == options_.self_id) {
      if (epoch_ != response.lease().epoch() || active_until_ == Clock::time_point{}) {
        spdlog::info("autoadmin.active epoch={}", response.lease().epoch());
      }
      epoch_ = response.lease().epoch();
      active_until_ = sent + std::chrono::milliseconds(options_.lease_ms - options_.lease_ms / 10);
      active_gauge_.Set(1);
    } else if (active_until_ != Clock::time_point{}) {
      spdlog::warn("autoadmin.standby holder={} epoch={}", holder_, response.lease().epoch());
      active_until_ = Clock::time_point{};
      active_gauge_.Set(0);
    }
  } while (Sleep(period));
}

void AutoadminService::RoundLoop() {
  uint32_t quick_rounds = 0;
  for (;;) {
    const size_t done = RunRound();
    // A step that succeeded usually makes the group's next one ready (its
    // membership or meta's descriptor moved): look again soon rather than a
    // whole interval later, at most kQuickRoundsMax times in a row.
    const bool quick = done > 0 && quick_rounds < kQuickRoundsMax;
    quick_rounds = quick ? quick_rounds + 1 : 0;
    const uint32_t wait = quick ? std::max(options_.poll_interval_ms / 10, kQuickRoundMsMin)
                                : options_.poll_interval_ms;
    if (!Sleep(wait)) return;
  }
}

Result<ClusterView> AutoadminService::BuildView() {
  // Every node, in parallel: one admin.status each.
  const std::vector<cluster::ProcessEntry> nodes = polled_;
  std::vector<std::future<Result<std::string>>> polls;
  for (const cluster::ProcessEntry& e : nodes) {
    polls.push_back(std::async(std::launch::async, [this, id = e.id] {
      return client_.Call(id, "admin.status", pb::StatusRequest().SerializeAsString(),
                          options_.call_timeout);
    }));
  }
  // Wait for every answer before taking mu_: the lease thread needs it.
  std::vector<std::optional<pb::NodeStatus>> answers(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    Result<std::string> answer = polls[i].get();
    pb::NodeStatus status;
    if (answer.ok() && status.ParseFromString(*answer)) answers[i] = std::move(status);
  }
  ClusterView view;
  {
    const uint64_t now = SteadyMs();
    std::lock_guard lock(mu_);
    for (size_t i = 0; i < nodes.size(); ++i) {
      health_->OnPoll(nodes[i].id, answers[i] ? &*answers[i] : nullptr, now);
    }
    view.nodes = health_->nodes();
  }
  // The partition map: the newest epoch of each partition any meta replica has.
  bool any = false;
  for (const cluster::ProcessEntry& e : table_.OfRole(cluster::ProcessRole::kMeta)) {
    auto answer = client_.Call(e.id, "meta.tables", pb::TablesRequest().SerializeAsString(),
                               options_.call_timeout);
    pb::TablesResponse tables;
    if (!answer.ok() || !tables.ParseFromString(*answer)) continue;
    any = true;
    for (const pb::TableDescriptor& t : tables.tables()) {
      view.created_split_points[t.name()].insert(t.split_points().begin(), t.split_points().end());
    }
    for (const pb::PartitionDescriptor& p : tables.partitions()) {
      GroupView& g = view.groups[p.group_id()];
      if (g.descriptor.group_id() == 0 || p.epoch() > g.descriptor.epoch()) g.descriptor = p;
    }
  }
  if (!any) return Status::Unavailable("no metadata replica answered meta.tables");
  // The blob slot assignments: the newest version any meta replica has.
  for (const cluster::ProcessEntry& e : table_.OfRole(cluster::ProcessRole::kMeta)) {
    auto answer = client_.Call(e.id, "meta.blob_slots", pb::BlobSlotsRequest().SerializeAsString(),
                               options_.call_timeout);
    pb::BlobSlotAssignments slots;
    if (answer.ok() && slots.ParseFromString(*answer) && slots.version() > view.blob_slots.version()) {
      view.blob_slots = std::move(slots);
    }
  }
  LearnAddedNodes(view.blob_slots);
  // Drained nodes (a strong read on the meta leader); the last set known
  // when meta does not answer.
  auto drains = CallMeta("meta.drains", pb::DrainsRequest().SerializeAsString(),
                         options_.call_timeout);
  pb::NodeDrains drained;
  std::lock_guard lock(mu_);
  if (drains.ok() && drained.ParseFromString(*drains)) {
    draining_ = std::set<uint32_t>(drained.nodes().begin(), drained.nodes().end());
  }
  for (uint32_t node : draining_) {
    const auto it = view.nodes.find(node);
    if (it != view.nodes.end()) it->second.draining = true;
  }
  FindLeaders(view);
  lag_->OnRound(view, SteadyMs());
  return view;
}

void AutoadminService::LearnAddedNodes(const pb::BlobSlotAssignments& map) {
  for (const pb::AddedNode& added : map.added_nodes()) {
    const pb::NodeSpec& spec = added.spec();
    const bool known = std::any_of(polled_.begin(), polled_.end(),
                                   [&](const cluster::ProcessEntry& e) { return e.id == added.id(); });
    if (known) continue;
    // Reachable first; a node that cannot be is tried again next round.
    if (Status set = client_.AddPeer(added.id(), spec.host(), static_cast<uint16_t>(spec.peer_port()));
        !set.ok()) {
      spdlog::error("autoadmin.added_node_unusable id={} status=\"{}\"", added.id(), set.ToString());
      continue;
    }
    {
      std::lock_guard lock(mu_);
      health_->AddNode({added.id(), spec.az()}, SteadyMs());
      node_names_[added.id()] = spec.name();
    }
    cluster::ProcessEntry entry;
    entry.id = added.id();
    entry.role = cluster::ProcessRole::kNode;
    entry.name = spec.name();
    entry.az = spec.az();
    entry.host = spec.host();
    entry.peer_port = spec.peer_port();
    entry.http_port = spec.http_port();
    entry.added = true;
    polled_.push_back(std::move(entry));
    spdlog::info("autoadmin.node_added id={} name={} az={}", added.id(), spec.name(), spec.az());
  }
}

size_t AutoadminService::RunRound() {
  auto view = BuildView();
  if (!view.ok()) {
    spdlog::debug("autoadmin.view_failed status=\"{}\"", view.status().ToString());
    return 0;
  }
  {
    std::lock_guard lock(mu_);
    last_view_ = *view;
  }
  if (ActiveEpoch() == 0) return 0;
  size_t done = RunSplits(*view);
  PlanMerges(*view);
  PublishPlacement(*view);
  std::vector<Action> actions = Plan(*view, options_.planner);
  if (auto move = MoveBlobSlots(*view)) actions.push_back(std::move(*move));
  for (const Action& action : actions) {
    const uint64_t epoch = ActiveEpoch();
    if (epoch == 0) return done;
    const Status outcome = Execute(action, epoch);
    Record(action, outcome);
    if (outcome.ok()) ++done;
    if (outcome.code() == StatusCode::kStaleEpoch) {
      LoseLease(outcome.message());
      return done;
    }
  }
  return done;
}

size_t AutoadminService::RunSplits(ClusterView& view) {
  auto answer = CallMeta("meta.splits", pb::SplitsRequest().SerializeAsString(), options_.call_timeout);
  pb::SplitsResponse splits;
  if (!answer.ok() || !splits.ParseFromString(*answer)) {
    // Without the intents no split may start (it could double one in
    // progress); repairs go on (a replica added mid-split creates the
    // child empty once it has the narrowed parent, step 6).
    spdlog::warn("autoadmin.splits_unread status=\"{}\"", answer.status().ToString());
    return 0;
  }
  {
    std::lock_guard lock(mu_);
    last_splits_ = splits;
  }
  const SplitPlan plan = PlanSplits(view, splits, options_.planner);
  size_t done = 0;
  for (const SplitRefusal& refusal : plan.refusals) {
    RecordRefusal(refusal);
    const uint64_t epoch = ActiveEpoch();
    const auto group = view.groups.find(refusal.group_id);
    if (!refusal.abandon_request || epoch == 0 || group == view.groups.end()) continue;
    if (splits_->Abandon(group->second.descriptor, epoch).ok()) ++done;
  }
  std::vector<SplitWork> work_list = plan.work;
  for (SplitWork& load : PlanLoadSplits(view, plan)) work_list.push_back(std::move(load));
  for (const SplitWork& work : work_list) {
    const uint64_t epoch = ActiveEpoch();
    if (epoch == 0) return done;
    const SplitOutcome outcome = splits_->Carry(work, epoch);
    // A stale estimate (exact state within split_bytes): nothing to record.
    if (outcome.step == "exact_size" && outcome.status.ok()) continue;
    RecordSplit(work, outcome);
    if (outcome.committed || outcome.abandoned) ++done;
    if (outcome.status.code() == StatusCode::kStaleEpoch) {
      LoseLease(outcome.status.message());
      return done;
    }
  }
  return done;
}

void AutoadminService::RecordSplit(const SplitWork& work, const SplitOutcome& outcome) {
  const uint64_t group = work.parent.group_id();
  const std::string result = outcome.committed ? "committed"
                             : outcome.abandoned ? "abandoned: " + outcome.status.ToString()
                             : outcome.status.ok() ? "ok"
                                                   : outcome.status.ToString();
  if (outcome.committed || outcome.abandoned) {
    spdlog::info("autoadmin.split group={} table={} step={} result=\"{}\" reason=\"{}\"", group,
                 work.parent.table(), outcome.step, result, work.reason);
  } else if (!outcome.status.ok()) {
    spdlog::warn("autoadmin.split_step_failed group={} step={} status=\"{}\"", group, outcome.step,
                 outcome.status.ToString());
  }
  if (outcome.abandoned || (work.requested && !outcome.status.ok())) {
    RecordRefusal({group, work.parent.table(), outcome.step + ": " + outcome.status.ToString(), false});
  }
  std::lock_guard lock(mu_);
  split_history_.push_back(UtcNow() + " group=" + std::to_string(group) + " (" + work.parent.table() +
                           ") " + outcome.step + " -> " + result + " (" + work.reason + ")");
  while (split_history_.size() > limits::kAutoadminHistoryMax) split_history_.pop_front();
}

std::vector<SplitWork> AutoadminService::PlanLoadSplits(const ClusterView& view, const SplitPlan& plan) {
  std::set<uint64_t> busy;
  for (const SplitWork& w : plan.work) busy.insert(w.parent.group_id());
  for (const auto& [id, group] : view.groups) {
    if (group.splitting) busy.insert(id);
  }
  const size_t max = options_.planner.max_concurrent;
  const size_t room = busy.size() < max ? max - busy.size() : 0;
  LoadSplitPlan load = load_splits_.Plan(view, options_.planner, busy, room, SteadyMs());
  // Recorded when the reason changes (the text's load figure changes every round).
  for (const LoadSplitRefusal& r : load.new_refusals) {
    RecordRefusal({r.group_id, r.table, r.text, false});
    const auto counter = load_split_decisions_.find({r.reason, r.trigger});
    if (counter != load_split_decisions_.end()) counter->second->Increment();
  }
  for (size_t i = 0; i < load.work.size(); ++i) {
    const SplitWork& w = load.work[i];
    spdlog::info("autoadmin.load_split group={} table={} key_bytes={} trigger={} reason=\"{}\"",
                 w.parent.group_id(), w.parent.table(), w.split_key.size(),
                 LoadSplitTriggerName(load.triggers[i]), w.reason);
    load_split_decisions_.at({pb::LOAD_SPLIT_KEY_FOUND, load.triggers[i]})->Increment();
  }
  return std::move(load.work);
}

void AutoadminService::PlanMerges(const ClusterView& view) {
  const MergePlan plan =
      merges_.Plan(view, options_.planner, {}, MergeRoom(view, options_.planner, 0), SteadyMs());
  std::vector<std::string> due;
  std::set<std::pair<uint64_t, uint64_t>> pairs;
  for (const MergeDecision& d : plan.decisions) {
    due.push_back("group " + std::to_string(d.left.group_id()) + " + group " +
                  std::to_string(d.right.group_id()) + " (" + d.table + "), survivor group " +
                  std::to_string(d.survivor_group_id) + ": " + d.reason);
    const std::pair<uint64_t, uint64_t> pair{d.left.group_id(), d.right.group_id()};
    pairs.insert(pair);
    // Logged once while it stays due (its reason's "cold for" grows every round).
    if (merge_pairs_due_.count(pair) == 0) {
      spdlog::info("autoadmin.merge_due table={} left={} right={} survivor={} reason=\"{}\"", d.table,
                   pair.first, pair.second, d.survivor_group_id, d.reason);
    }
  }
  merge_pairs_due_ = std::move(pairs);
  std::lock_guard lock(mu_);
  merges_due_ = std::move(due);
  merges_waiting_ = plan.waiting;
}

void AutoadminService::PublishPlacement(const ClusterView& view) {
  std::optional<pb::SetPlacementWeightsRequest> request = placement_.Due(view, SteadyMs());
  const uint64_t epoch = ActiveEpoch();
  if (!request || epoch == 0) return;
  request->set_autoadmin_epoch(epoch);
  uint64_t keys = 0;
  for (const pb::PartitionKeys& p : request->partitions()) keys += p.keys();
  auto answer = CallMeta("meta.set_placement_weights", request->SerializeAsString(), options_.call_timeout);
  if (!answer.ok()) {
    spdlog::warn("autoadmin.placement_weights_failed status=\"{}\"", answer.status().ToString());
    if (answer.status().code() == StatusCode::kStaleEpoch) LoseLease(answer.status().message());
    return;
  }
  placement_.Published(SteadyMs());
  std::lock_guard lock(mu_);
  last_placement_ = UtcNow() + ", " + std::to_string(request->partitions_size()) + " _s3 partitions, " +
                    std::to_string(keys) + " keys";
}

void AutoadminService::RecordRefusal(const SplitRefusal& refusal) {
  std::lock_guard lock(mu_);
  const std::string line = "group " + std::to_string(refusal.group_id) + " (" + refusal.table + "): " +
                           refusal.reason;
  if (split_refusals_[refusal.group_id] != line) {
    spdlog::warn("autoadmin.split_refused group={} reason=\"{}\"", refusal.group_id, refusal.reason);
  }
  split_refusals_[refusal.group_id] = line;
  while (split_refusals_.size() > limits::kSplitRefusalsMax) split_refusals_.erase(split_refusals_.begin());
}

std::optional<Action> AutoadminService::MoveBlobSlots(const ClusterView& view) const {
  auto map = base_slot_map_->WithAssignments(view.blob_slots);
  if (!map.ok()) {
    spdlog::error("autoadmin.blob_slots_unusable version={} status=\"{}\"", view.blob_slots.version(),
                  map.status().ToString());
    return std::nullopt;
  }
  std::vector<pb::BlobSlotReplicas> slots = PlanBlobSlots(*map, view.nodes);
  if (slots.empty()) return std::nullopt;
  Action action;
  action.kind = ActionKind::kMoveBlobSlots;
  const bool off_lost = std::any_of(slots.begin(), slots.end(), [&](const pb::BlobSlotReplicas& s) {
    for (uint32_t node : map->ReplicasOf(s.slot())) {
      const auto it = view.nodes.find(node);
      if (it != view.nodes.end() && (it->second.health == NodeHealth::kDead || it->second.draining)) {
        return true;
      }
    }
    return false;
  });
  action.reason = std::to_string(slots.size()) +
                  (off_lost ? " blob slots off dead or draining nodes"
                            : " blob slots spread within their AZs or back to an AZ of their own");
  action.blob_slots = std::move(slots);
  action.blob_slots_version = view.blob_slots.version();
  return action;
}

Status AutoadminService::Execute(const Action& action, uint64_t epoch) {
  switch (action.kind) {
    case ActionKind::kMoveBlobSlots: {
      pb::UpdateBlobSlotsRequest request;
      request.set_autoadmin_epoch(epoch);
      request.set_expected_version(action.blob_slots_version);
      for (const pb::BlobSlotReplicas& r : action.blob_slots) *request.add_slots() = r;
      return CallMeta("meta.update_blob_slots", request.SerializeAsString(), options_.call_timeout)
          .status();
    }
    case ActionKind::kAddReplica:
    case ActionKind::kSyncDescriptor: {
      pb::UpdatePartitionRequest request;
      request.set_autoadmin_epoch(epoch);
      *request.mutable_partition() = action.descriptor;
      return CallMeta("meta.update_partition", request.SerializeAsString(), options_.call_timeout)
          .status();
    }
    case ActionKind::kCreateReplica: {
      pb::CreateGroupRequest request;
      *request.mutable_partition() = action.descriptor;
      return client_.Call(action.node, "admin.create_group", request.SerializeAsString(),
                          options_.call_timeout)
          .status();
    }
    case ActionKind::kAddLearner:
    case ActionKind::kPromote:
    case ActionKind::kRemove: {
      pb::ChangeMembershipRequest request;
      request.set_group_id(action.group_id);
      request.set_autoadmin_epoch(epoch);
      request.set_kind(KindOf(action));
      request.set_replica_id(action.replica);
      return client_.Call(action.node, "admin.change_membership", request.SerializeAsString(),
                          options_.membership_timeout)
          .status();
    }
    case ActionKind::kTransferLeader: {
      pb::TransferLeadershipRequest request;
      request.set_group_id(action.group_id);
      request.set_autoadmin_epoch(epoch);
      request.set_to_replica(action.replica);
      return client_.Call(action.node, "admin.transfer_leadership", request.SerializeAsString(),
                          options_.call_timeout)
          .status();
    }
    case ActionKind::kDropStale: {
      pb::DropGroupRequest request;
      request.set_group_id(action.group_id);
      request.set_autoadmin_epoch(epoch);
      return client_.Call(action.node, "admin.drop_group", request.SerializeAsString(),
                          options_.membership_timeout)
          .status();
    }
  }
  return Status::InvalidArgument("unknown action");
}

void AutoadminService::Record(const Action& action, const Status& outcome) {
  if (outcome.ok()) {
    actions_ok_.Increment();
    spdlog::info("autoadmin.action kind={} group={} node={} replica={} reason=\"{}\"",
                 ActionKindName(action.kind), action.group_id, action.node, action.replica,
                 action.reason);
  } else {
    actions_failed_.Increment();
    spdlog::warn("autoadmin.action_failed kind={} group={} node={} replica={} status=\"{}\"",
                 ActionKindName(action.kind), action.group_id, action.node, action.replica,
                 outcome.ToString());
  }
  std::lock_guard lock(mu_);
  history_.push_back({UtcNow(), action, outcome.ok() ? "ok" : outcome.ToString()});
  while (history_.size() > limits::kAutoadminHistoryMax) history_.pop_front();
}

std::string AutoadminService::StatusText() const {
  std::lock_guard lock(mu_);
  std::ostringstream out;
  const bool active = Clock::now() < active_until_;
  out << "autoadmin " << options_.name << " (" << options_.self_id << "): "
      << (active ? "active, epoch " + std::to_string(epoch_)
                 : "standby, lease held by " + (holder_ ? std::to_string(holder_) : "nobody"))
      << "\n";
  out << "nodes not healthy or draining:\n";
  size_t unhealthy = 0;
  for (const auto& [id, node] : last_view_.nodes) {
    if (node.health == NodeHealth::kHealthy && !node.draining) continue;
    ++unhealthy;
    const auto name = node_names_.find(id);
    out << "  " << (name != node_names_.end() ? name->second : std::to_string(id)) << " (" << id << ", " << node.az
        << "): " << NodeHealthName(node.health);
    if (node.health == NodeHealth::kGray) {
      out << " for " << node.gray_for_ms << " ms (" << node.degraded_reason << ")";
    } else if (node.health != NodeHealth::kHealthy) {
      out << ", no answer for " << node.unreachable_for_ms << " ms";
    }
    out << (node.draining ? ", draining" : "") << "\n";
  }
  if (unhealthy == 0) out << "  none\n";
  out << "groups changing:\n";
  size_t changing = 0;
  for (const auto& [id, group] : last_view_.groups) {
    std::string replicas;
    bool mid = false;
    for (const pb::ReplicaPlacement& r : group.descriptor.replicas()) {
      replicas += (replicas.empty() ? "" : ",") + std::to_string(r.node_id()) +
                  (r.role() == pb::REPLICA_LEARNER ? "(learner)" : "") + (r.log_only() ? "(log)" : "");
      mid = mid || r.role() == pb::REPLICA_LEARNER || r.log_only();
    }
    mid = mid || group.descriptor.replicas_size() > static_cast<int>(options_.planner.replication_factor);
    if (!mid) continue;
    ++changing;
    out << "  group " << id << " (" << group.descriptor.table() << ") epoch "
        << group.descriptor.epoch() << ": replicas " << replicas << "\n";
  }
  if (changing == 0) out << "  none\n";
  out << "splits in progress:\n";
  if (last_splits_.intents_size() == 0) out << "  none\n";
  for (const pb::SplitPartitionResponse& i : last_splits_.intents()) {
    out << "  group " << i.parent().group_id() << " (" << i.parent().table() << ") -> group "
        << i.child().group_id() << " at key " << QuotedKey(i.child().start_key()) << "\n";
  }
  out << "splits requested:\n";
  if (last_splits_.requests_size() == 0) out << "  none\n";
  for (const pb::SplitRequestRecord& r : last_splits_.requests()) {
    out << "  group " << r.group_id() << " (" << r.table() << ") at "
        << (r.split_key().empty() ? std::string("a key the leader chooses") : "key " + QuotedKey(r.split_key()))
        << "\n";
  }
  out << "split refusals:\n";
  if (split_refusals_.empty()) out << "  none\n";
  for (const auto& [group, line] : split_refusals_) out << "  " << line << "\n";
  out << "merges due (not carried out: the merge steps are not built yet):\n";
  if (merges_due_.empty()) out << "  none\n";
  for (const std::string& line : merges_due_) out << "  " << line << "\n";
  out << "pairs small and cold, waiting merge_after_s: " << merges_waiting_ << "\n";
  out << "placement weights published: " << (last_placement_.empty() ? "not yet" : last_placement_) << "\n";
  out << "last split steps:\n";
  if (split_history_.empty()) out << "  none\n";
  for (const std::string& line : split_history_) out << "  " << line << "\n";
  out << "last actions:\n";
  if (history_.empty()) out << "  none\n";
  for (const HistoryEntry& h : history_) {
    out << "  " << h.time << " " << ActionKindName(h.action.kind) << " group=" << h.action.group_id
        << " replica=" << h.action.replica << " -> " << h.outcome << " (" << h.action.reason
        << ")\n";
  }
  return out.str();
}

}  // namespace tessera::autoadmin
