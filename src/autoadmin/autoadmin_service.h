// AutoadminService: one `tessera autoadmin` instance (docs/autoadmin.md).
//
// Two threads:
//  * lease: every lease_ms / 3 asks meta for the autoadmin lease
//    (meta.autoadmin_lease). A grant at epoch E sent at time t makes this
//    instance active until t + lease_ms - lease_ms / 10 on its own steady
//    clock (meta gives the lease to another only lease_ms after its last
//    grant, which came after t).
//  * rounds: every poll_interval_ms (sooner right after a round whose
//    actions succeeded: kQuickRoundMsMin) polls every storage node's admin.status
//    (in parallel, one call each, whatever their state: constant work),
//    updates the HealthTracker and, while active, reads the partition map
//    from every meta replica (the newest epoch of each partition wins),
//    plans (planner.h) and carries out the actions one by one, each call
//    carrying E as its fencing token. Before each action it checks it is
//    still active; an answer of StaleEpoch ends its tenure at once.
// Each round it also carries partition splits on (split_driver.h: meta's
// intents and requested splits, and partitions above split_bytes) before
// planning the rest, and moves the blob slots of dead or draining nodes
// (blob_slot_planner.h; meta.update_blob_slots, fenced the same way).
// It only calls: meta's lease, partition and blob slot RPCs and the nodes' admin RPCs,
// as role autoadmin; it never touches another process's files.
//
// Thread safety: StatusText() from any thread; Start/Stop from one.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "autoadmin/blob_slot_planner.h"
#include "autoadmin/gray_detector.h"
#include "autoadmin/health_tracker.h"
#include "autoadmin/lag_tracker.h"
#include "autoadmin/planner.h"
#include "autoadmin/load_split_planner.h"
#include "autoadmin/merge_planner.h"
#include "autoadmin/placement_publisher.h"
#include "autoadmin/split_driver.h"
#include "cluster/cluster_client.h"
#include "cluster/process_table.h"
#include "common/metrics.h"
#include "knobs/knobs.h"

namespace tessera::autoadmin {

struct AutoadminOptions {
  uint32_t self_id = 0;
  std::string name;
  uint32_t lease_ms = knobs::kAutoadminLeaseMs.default_value;
  uint32_t poll_interval_ms = knobs::kAutoadminPollIntervalMs.default_value;
  uint32_t dead_after_ms = knobs::kAutoadminDeadAfterMs.default_value;
  GrayOptions gray;
  uint32_t lag_for_ms = knobs::kAutoadminLagForMs.default_value;  // a voter behind its group this long is replaced
  PlannerOptions planner;
  // How often the `_s3` partitions' keys are published for bucket
  // placement (placement_publisher.h).
  uint32_t placement_interval_ms = knobs::kAutoadminPlacementIntervalMs.default_value;
  std::chrono::milliseconds call_timeout{2'000};
  // A membership step answers once chosen and applied on the leader.
  std::chrono::milliseconds membership_timeout{10'000};
  // Testing only (`tessera autoadmin --testing-exit-at-split-step`; no
  // layout field or knob sets it): the process kills itself with SIGKILL
  // when a split reaches this step (SplitCalls::reached), so a test can
  // check that a successor finishes the split. Empty: never.
  std::string testing_exit_at_split_step;
};

class AutoadminService {
 public:
  // `client` calls as this instance (role autoadmin); it must outlive the
  // service. InvalidArgument for options out of range.
  static Result<std::unique_ptr<AutoadminService>> Start(const cluster::ProcessTable& table,
                                                         cluster::ClusterClient& client,
                                                         metrics::Registry& metrics,
                                                         AutoadminOptions options);
  ~AutoadminService();
  void Stop();

  // Human-readable state: whether this instance acts (and its epoch), the
  // nodes it does not see as healthy and why, groups mid-replacement, the
  // splits in progress and requested, the last split refusals (at most
  // limits::kSplitRefusalsMax groups) and split steps, and the last
  // limits::kAutoadminHistoryMax actions with times and outcomes.
  std::string StatusText() const;

  // After a round whose actions succeeded, the next starts after a tenth of
  // the poll interval (at least kQuickRoundMsMin), at most kQuickRoundsMax
  // rounds in a row: steps follow each other without waiting a whole
  // interval, and a step that keeps "succeeding" cannot speed polling up
  // for long.
  static constexpr uint32_t kQuickRoundMsMin = 50;
  static constexpr uint32_t kQuickRoundsMax = 30;

 private:
  AutoadminService(const cluster::ProcessTable& table, cluster::ClusterClient& client,
                   metrics::Registry& metrics, AutoadminOptions options);
  void LeaseLoop();
  void RoundLoop();
  // One round; the number of actions that succeeded.
  size_t RunRound();
  // The epoch while this instance holds the lease, 0 otherwise.
  uint64_t ActiveEpoch() const;
  void LoseLease(const std::string& why);
  Result<ClusterView> BuildView();
  // Starts tracking and polling the storage nodes the map names as added
  // beyond the layout that this instance does not know yet.
  void LearnAddedNodes(const pb::BlobSlotAssignments& map);
  // The blob slots to move off lost nodes, as one action; nullopt when none.
  std::optional<Action> MoveBlobSlots(const ClusterView& view) const;
  Status Execute(const Action& action, uint64_t epoch);
  // The split steps of this round (split_driver.h); the number that
  // progressed. Marks splitting parents in `view`.
  size_t RunSplits(ClusterView& view);
  void RecordSplit(const SplitWork& work, const SplitOutcome& outcome);
  void RecordRefusal(const SplitRefusal& refusal);
  // The load splits that may start this round (load_split_planner.h),
  // after `plan`'s; records and counts their refusals.
  std::vector<SplitWork> PlanLoadSplits(const ClusterView& view, const SplitPlan& plan);
  // The merges due this round (merge_planner.h), shown by StatusText and
  // logged once each; not carried out (docs/partition-merges.md: the merge
  // steps are not built).
  void PlanMerges(const ClusterView& view);
  // Publishes the `_s3` partitions' keys when due (placement_publisher.h).
  void PublishPlacement(const ClusterView& view);
  // Calls `method` on the meta replicas in turn until one answers other than
  // unreachable (followers forward to the leader).
  Result<std::string> CallMeta(const std::string& method, const std::string& payload,
                               std::chrono::milliseconds timeout);
  void Record(const Action& action, const Status& outcome);
  // Waits `ms` unless Stop; false when stopping.
  bool Sleep(uint32_t ms);

  const cluster::ProcessTable table_;
  cluster::ClusterClient& client_;
  const AutoadminOptions options_;
  // The layout's blob slot map (set in Start, then read-only).
  std::optional<blob::BlobSlotMap> base_slot_map_;
  // The storage nodes polled every round: the table's and those learnt
  // since (LearnAddedNodes). Round thread only.
  std::vector<cluster::ProcessEntry> polled_;
  metrics::Counter& actions_ok_;
  metrics::Counter& actions_failed_;
  metrics::Gauge& active_gauge_;

  mutable std::mutex mu_;  // guards everything below
  std::condition_variable cv_;
  bool stopping_ = false;
  uint64_t epoch_ = 0;
  uint32_t holder_ = 0;  // the lease holder meta last named
  std::chrono::steady_clock::time_point active_until_{};
  std::unique_ptr<HealthTracker> health_;
  std::unique_ptr<LagTracker> lag_;  // guarded by mu_
  ClusterView last_view_;
  std::map<uint32_t, std::string> node_names_;  // storage node id -> name
  std::set<uint32_t> draining_;  // as meta.drains last answered
  struct HistoryEntry {
    std::string time;  // UTC
    Action action;
    std::string outcome;
  };
  std::deque<HistoryEntry> history_;
  // Splits: meta's intents and requests as the last round read them, the
  // last split steps and the last refusals (by group), for StatusText.
  std::unique_ptr<SplitDriver> splits_;  // round thread only
  LoadSplitPlanner load_splits_;          // round thread only
  // tessera_autoadmin_load_split_decisions_total{reason,trigger}: a group
  // hot for split_after, once per group, reason and trigger.
  std::map<std::pair<pb::LoadSplitReason, LoadSplitTrigger>, metrics::Counter*> load_split_decisions_;
  pb::SplitsResponse last_splits_;
  std::deque<std::string> split_history_;
  std::map<uint64_t, std::string> split_refusals_;
  MergePlanner merges_;                  // round thread only
  std::set<std::pair<uint64_t, uint64_t>> merge_pairs_due_;  // round thread only: logged
  std::vector<std::string> merges_due_;  // the last round's, for StatusText
  size_t merges_waiting_ = 0;            // pairs small and cold, not yet for merge_after_s
  PlacementPublisher placement_{options_.placement_interval_ms};  // round thread only
  std::string last_placement_;  // the last publication, for StatusText
  std::thread lease_thread_;
  std::thread round_thread_;
};

}  // namespace tessera::autoadmin
