// The registry of knobs: every tunable an operator or a cluster layout sets,
// declared once with its unit, default, bounds, where it is set and what it
// means (knob.h). docs/knobs.md is generated from kAllKnobs
// (`tessera config knobs --markdown`), and a test fails when it differs.
//
// One source of truth: the Options structs' defaults read `kX.default_value`
// (no default is written twice), layout validation (cluster/layout_knobs.h)
// checks every set layout field against its knob's bounds, and the CLI flags
// check the same bounds. Hard limits that nobody tunes (protocol and safety
// bounds) stay in common/limits.h; a knob's bound that is such a limit names
// it, and the static_asserts below tie defaults to those limits.
//
// Adding a layout setting to proto/tessera/cluster.proto without a knob here
// fails cluster_layout_test (LayoutKnobs.EverySettingHasAKnob).
//
// Thread safety: immutable constexpr data.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/limits.h"
#include "knobs/knob.h"

namespace tessera::knobs {

using P = KnobProcess;
using U = KnobUnit;
using std::string_view_literals::operator""sv;

// --- storage node (NodeSettings; `tessera node`) ----------------------------
inline constexpr Knob<uint32_t> kNodeGcIntervalMs{
    "node.gc_interval_ms", P::kNode, U::kMs, 5'000, 0, 3'600'000,
    "node_settings.gc_interval_ms", "tessera node --gc-interval-ms", "BlobGcOptions.interval_ms",
    "blob GC round interval (deletes blobs whose object records are gone); 0: no GC"};
inline constexpr Knob<uint32_t> kNodeBlobSweepIntervalMs{
    "node.blob_sweep_interval_ms", P::kNode, U::kMs, 2'000, 0, 3'600'000,
    "node_settings.blob_sweep_interval_ms", "tessera node --blob-sweep-interval-ms",
    "BlobSweepOptions.interval_ms",
    "orphan sweeper/repairer round interval; 0: no sweeper"};
inline constexpr Knob<uint32_t> kNodeBlobMinAgeS{
    "node.blob_min_age_s", P::kNode, U::kS, 60, 0, 7 * 86'400,
    "node_settings.blob_min_age_s", "tessera node --blob-min-age-s", "BlobSweepOptions.min_age_s",
    "blobs younger than this are neither swept nor repaired (uploads in progress)"};
inline constexpr Knob<uint32_t> kNodeOrphanGraceS{
    "node.orphan_grace_s", P::kNode, U::kS, 3'600, 0, 30 * 86'400,
    "node_settings.orphan_grace_s", "tessera node --orphan-grace-s",
    "BlobSweepOptions.orphan_grace_s", "unreferenced blobs older than this are deleted"};
inline constexpr Knob<uint32_t> kNodeSnapshotChunkBytes{
    "node.snapshot_chunk_bytes", P::kNode, U::kBytes, 4 << 20, 1 << 10, limits::kSnapshotChunkBytesMax,
    "node_settings.snapshot_chunk_bytes", "", "SnapshotTransferOptions.chunk_bytes",
    "key+value bytes per chunk of a streamed snapshot (a chunk ends after the pair that reaches it)"};
inline constexpr Knob<uint64_t> kNodeSnapshotStreamBytesPerS{
    "node.snapshot_stream_bytes_per_s", P::kNode, U::kBytes, uint64_t{32} << 20, 0, uint64_t{1} << 40,
    "node_settings.snapshot_stream_bytes_per_s", "", "SnapshotTransferOptions.bytes_per_s",
    "key+value bytes per second a node streams in snapshots, all groups together; 0: unpaced"};
inline constexpr Knob<uint32_t> kNodeCompactionTriggerSlots{
    "node.compaction_trigger_slots", P::kNode, U::kSlots, 20'000, 1, 10'000'000,
    "node_settings.compaction_trigger_slots", "", "GroupHostOptions.compaction_trigger_slots",
    "a group compacts its log once it holds this many applied slots"};
inline constexpr Knob<uint32_t> kNodeCompactionKeepSlots{
    "node.compaction_keep_slots", P::kNode, U::kSlots, 2'000, 0, 10'000'000,
    "node_settings.compaction_keep_slots", "", "GroupHostOptions.compaction_keep_slots",
    "applied slots a compaction keeps (must be below node.compaction_trigger_slots)"};
inline constexpr Knob<uint32_t> kNodeFaultSnapshotInstallDelayMs{
    "node.fault_snapshot_install_delay_ms", P::kNode, U::kMs, 0, 0, limits::kStorageFaultDelayMsMax,
    "node_settings.fault_snapshot_install_delay_ms", "",
    "NodeServerOptions.fault_snapshot_install_delay_ms",
    "fault injection for tests: a snapshot install pauses this long after its durable marker; 0: off"};
inline constexpr Knob<uint32_t> kNodeIoThreads{
    "node.io_threads", P::kNode, U::kThreads, 0, 0, limits::kProcessIoThreadsMax,
    "node_settings.io_threads", "", "NodeServerOptions.io_threads",
    "threads for network, consensus and requests; 0: half the cores (1..8)"};
inline constexpr Knob<uint64_t> kNodeSnapshotInstallBatchBytes{
    "node.snapshot_install_batch_bytes", P::kNode, U::kBytes, 4 << 20, 1,
    limits::kGroupCommitBatchBytesMax - limits::kStateKeyBytesMax - limits::kStateValueBytesMax,
    "", "", "NodeStoreOptions.snapshot_install_batch_bytes",
    "key+value bytes per WriteBatch while a staged snapshot is installed"};

// Capacity admission of KV requests on a storage node (docs/admission.md).
inline constexpr Knob<double> kNodeAdmissionNodeRcuPerS{
    "node.admission_node_rcu_per_s", P::kNode, U::kUnitsPerS, 200'000, 0, 1e12,
    "node_settings.admission_node_rcu_per_s", "", "NodeAdmissionOptions.node_rcu_per_s",
    "read units a node admits per second over all its partitions; 0: unlimited"};
inline constexpr Knob<double> kNodeAdmissionNodeWcuPerS{
    "node.admission_node_wcu_per_s", P::kNode, U::kUnitsPerS, 100'000, 0, 1e12,
    "node_settings.admission_node_wcu_per_s", "", "NodeAdmissionOptions.node_wcu_per_s",
    "write units a node admits per second over all its partitions; 0: unlimited"};
inline constexpr Knob<double> kNodeAdmissionPartitionRcuMax{
    "node.admission_partition_rcu_max", P::kNode, U::kUnitsPerS, 3'000, 1, 1e9,
    "node_settings.admission_partition_rcu_max", "", "NodeAdmissionOptions.partition_rcu_max",
    "cap on one partition's share of its table's read capacity"};
inline constexpr Knob<double> kNodeAdmissionPartitionWcuMax{
    "node.admission_partition_wcu_max", P::kNode, U::kUnitsPerS, 1'000, 1, 1e9,
    "node_settings.admission_partition_wcu_max", "", "NodeAdmissionOptions.partition_wcu_max",
    "cap on one partition's share of its table's write capacity"};
inline constexpr Knob<double> kNodeAdmissionBurstWindowS{
    "node.admission_burst_window_s", P::kNode, U::kS, 300, 0, 86'400,
    "node_settings.admission_burst_window_s", "", "NodeAdmissionOptions.burst_window_s",
    "seconds of unused capacity a partition keeps as burst credit"};
inline constexpr Knob<double> kNodeAdmissionNodeSpareFraction{
    "node.admission_node_spare_fraction", P::kNode, U::kFraction, 0.2, 0, 1,
    "node_settings.admission_node_spare_fraction", "", "NodeAdmissionOptions.node_spare_fraction",
    "burst credit is spent only while the node bucket keeps this share of its cap"};
inline constexpr Knob<uint32_t> kNodeAdmissionCapacityRefreshMs{
    "node.admission_capacity_refresh_ms", P::kNode, U::kMs, 1'000, 10, 600'000,
    "node_settings.admission_capacity_refresh_ms", "", "NodeAdmissionOptions.capacity_refresh_ms",
    "how often a node polls meta for its tables' capacities"};
inline constexpr Knob<bool> kNodeAdmissionAdaptive{
    "node.admission_adaptive", P::kNode, U::kBool, true, false, true,
    "node_settings.admission_adaptive", "", "NodeAdmissionOptions.adaptive",
    "raise a hot partition's share while its table is under capacity (needs GAC); false: static"};
inline constexpr Knob<double> kNodeAdmissionAdaptiveGain{
    "node.admission_adaptive_gain", P::kNode, U::kFraction, 0.5, 0.01, 1,
    "node_settings.admission_adaptive_gain", "", "NodeAdmissionOptions.adaptive_gain",
    "share of the gap to its target a partition's rate closes per capacity refresh"};

// --- metadata replica (MetaSettings; `tessera meta`) -----------------------
inline constexpr Knob<uint32_t> kMetaS3UserBucketsMax{
    "meta.s3_user_buckets_max", P::kMeta, U::kCount, 100, 1, limits::kS3RegistryBucketsMax,
    "meta_settings.s3_user_buckets_max", "", "MetaServiceOptions.s3_user_buckets_max",
    "buckets one S3 user may own (AWS's default quota); beyond: TooManyBuckets"};
inline constexpr Knob<uint32_t> kMetaPlacementWeightsMaxAgeMs{
    "meta.placement_weights_max_age_ms", P::kMeta, U::kMs, 600'000, 1'000, 86'400'000,
    "meta_settings.placement_weights_max_age_ms", "", "MetaServiceOptions.placement_weights_max_age_ms",
    "bucket placement weighs published partition keys younger than this; else bucket counts"};

// --- router (RouterSettings; `tessera router`) -----------------------------
inline constexpr Knob<std::string_view> kRouterS3Region{
    "router.s3_region", P::kRouter, U::kText, "us-east-1"sv, ""sv, ""sv,
    "router_settings.s3_region", "tessera router --region", "S3FrontOptions.region",
    "the S3 region the routers serve (SigV4 scope, GetBucketLocation)"};
inline constexpr Knob<std::string_view> kRouterS3BaseDomain{
    "router.s3_base_domain", P::kRouter, U::kText, "s3.localhost"sv, ""sv, ""sv,
    "router_settings.s3_base_domain", "tessera router --base-domain", "S3FrontOptions.base_domain",
    "virtual-hosted-style domain (BUCKET.DOMAIN); other hosts are path style"};
inline constexpr Knob<uint64_t> kRouterS3MinPartBytes{
    "router.s3_min_part_bytes", P::kRouter, U::kBytes, 5 << 20, 1, limits::kS3ObjectBytesMax,
    "router_settings.s3_min_part_bytes", "", "S3FrontOptions.min_part_bytes",
    "smallest part of a multipart upload but the last (S3: 5 MiB); 0 in the layout: the default"};
inline constexpr Knob<double> kRouterS3BucketRate{
    "router.s3_bucket_rate", P::kRouter, U::kPerS, 20'000, 0, limits::kAdmissionRateMaxPerS,
    "router_settings.s3_bucket_rate", "tessera router --s3-bucket-rate",
    "S3AdmissionOptions.bucket_rate_per_s",
    "S3 requests per second per bucket on each router, beyond: SlowDown; 0: unlimited"};
inline constexpr Knob<double> kRouterS3BucketBurst{
    "router.s3_bucket_burst", P::kRouter, U::kRequests, 40'000, 0, limits::kAdmissionRateMaxPerS,
    "router_settings.s3_bucket_burst", "tessera router --s3-bucket-burst",
    "S3AdmissionOptions.bucket_burst",
    "S3 requests per bucket allowed at once above the rate; 0: one second's worth"};
inline constexpr Knob<double> kRouterS3UserRate{
    "router.s3_user_rate", P::kRouter, U::kPerS, 50'000, 0, limits::kAdmissionRateMaxPerS,
    "router_settings.s3_user_rate", "tessera router --s3-user-rate",
    "S3AdmissionOptions.user_rate_per_s",
    "S3 requests per second per user on each router, beyond: SlowDown; 0: unlimited"};
inline constexpr Knob<double> kRouterS3UserBurst{
    "router.s3_user_burst", P::kRouter, U::kRequests, 100'000, 0, limits::kAdmissionRateMaxPerS,
    "router_settings.s3_user_burst", "tessera router --s3-user-burst", "S3AdmissionOptions.user_burst",
    "S3 requests per user allowed at once above the rate; 0: one second's worth"};
inline constexpr Knob<uint32_t> kRouterIoThreads{
    "router.io_threads", P::kRouter, U::kThreads, 0, 0, limits::kProcessIoThreadsMax,
    "router_settings.io_threads", "", "RouterServiceOptions.io_threads",
    "threads for network and request handling; 0: half the cores (1..8)"};
inline constexpr Knob<uint64_t> kRouterS3InlineBytesMax{
    "router.s3_inline_bytes_max", P::kRouter, U::kBytes, 16 << 10, 0, limits::kS3InlineBytesMax,
    "", "", "S3FrontOptions.inline_bytes_max",
    "objects up to this size are stored in their metadata record, not in blobs"};
inline constexpr Knob<uint64_t> kRouterS3BlobBytes{
    "router.s3_blob_bytes", P::kRouter, U::kBytes, 8 << 20, 1, limits::kBlobBytesMax,
    "", "", "S3FrontOptions.blob_bytes",
    "an object's bytes are cut into blobs of this size; bounds upload memory"};
inline constexpr Knob<uint64_t> kRouterHttpBodyPieceBytes{
    "router.http_body_piece_bytes", P::kRouter, U::kBytes, 1 << 20, 1,
    limits::kHttpStreamBodyPieceBytesMax, "", "", "StreamServerOptions.body_read_chunk_bytes",
    "largest piece of a request body one read delivers"};
inline constexpr Knob<uint32_t> kRouterS3RegistryNegativeTtlMs{
    "router.s3_registry_negative_ttl_ms", P::kRouter, U::kMs, 1'000, 0, 60'000,
    "", "", "RegistryClientOptions.negative_ttl_ms",
    "a leader-confirmed absent bucket or access key is remembered this long; 0: not"};
inline constexpr Knob<uint32_t> kRouterS3BucketConfigTtlMs{
    "router.s3_bucket_config_ttl_ms", P::kRouter, U::kMs, 1'000, 0, 60'000,
    "", "", "S3FrontOptions.bucket_config_ttl_ms",
    "a bucket's configuration (CORS) is cached this long: other routers' changes lag by it"};

// --- autoadmin (AutoadminSettings; `tessera autoadmin`) ---------------------
inline constexpr Knob<uint32_t> kAutoadminDeadAfterMs{
    "autoadmin.dead_after_ms", P::kAutoadmin, U::kMs, 10'000, 100, 3'600'000,
    "autoadmin_settings.dead_after_ms", "", "AutoadminOptions.dead_after_ms",
    "a node unreachable this long is dead and its replicas are replaced"};
inline constexpr Knob<uint32_t> kAutoadminPollIntervalMs{
    "autoadmin.poll_interval_ms", P::kAutoadmin, U::kMs, 1'000, 100, limits::kAutoadminLeaseMsMax,
    "autoadmin_settings.poll_interval_ms", "", "AutoadminOptions.poll_interval_ms",
    "how often the active instance reads every node's health (at most autoadmin.lease_ms)"};
inline constexpr Knob<uint32_t> kAutoadminLeaseMs{
    "autoadmin.lease_ms", P::kAutoadmin, U::kMs, 3'000, limits::kAutoadminLeaseMsMin,
    limits::kAutoadminLeaseMsMax, "autoadmin_settings.lease_ms", "", "AutoadminOptions.lease_ms",
    "the autoadmin lease in meta; the holder renews it at a third"};
inline constexpr Knob<uint32_t> kAutoadminMaxConcurrent{
    "autoadmin.max_concurrent", P::kAutoadmin, U::kCount, 4, 1, 1'024,
    "autoadmin_settings.max_concurrent", "", "PlannerOptions.max_concurrent",
    "replacements in flight cluster-wide (one per group in any case)"};
inline constexpr Knob<uint32_t> kAutoadminGraySyncP99Ms{
    "autoadmin.gray_sync_p99_ms", P::kAutoadmin, U::kMs, 50, 1, 60'000,
    "autoadmin_settings.gray_sync_p99_ms", "", "GrayOptions.sync_p99_us (x 1000)",
    "a node whose synced log writes have a p99 above this is degraded"};
inline constexpr Knob<uint32_t> kAutoadminDegradedForMs{
    "autoadmin.degraded_for_ms", P::kAutoadmin, U::kMs, 10'000, 0, 3'600'000,
    "autoadmin_settings.degraded_for_ms", "", "GrayOptions.degraded_for_ms",
    "degraded this long, a node is gray (its leaders move away), and healthy after as long without"};
inline constexpr Knob<uint32_t> kAutoadminGrayReplaceAfterMs{
    "autoadmin.gray_replace_after_ms", P::kAutoadmin, U::kMs, 60'000, 0, 86'400'000,
    "autoadmin_settings.gray_replace_after_ms", "", "PlannerOptions.gray_replace_after_ms",
    "gray this long, a node's replicas are replaced"};
inline constexpr Knob<uint32_t> kAutoadminMinFreeMib{
    "autoadmin.min_free_mib", P::kAutoadmin, U::kMib, 1'024, 0, 1 << 20,
    "autoadmin_settings.min_free_mib", "", "GrayOptions.min_free_bytes (x 2^20)",
    "a node with less free disk space than this is degraded"};
inline constexpr Knob<bool> kAutoadminBalanceLeaders{
    "autoadmin.balance_leaders", P::kAutoadmin, U::kBool, true, false, true,
    "autoadmin_settings.balance_leaders", "", "PlannerOptions.balance_leaders",
    "keep leaders per node within one of each other; false: leaders stay where elected"};
inline constexpr Knob<uint32_t> kAutoadminLagForMs{
    "autoadmin.lag_for_ms", P::kAutoadmin, U::kMs, 60'000, 100, 86'400'000,
    "autoadmin_settings.lag_for_ms", "", "AutoadminOptions.lag_for_ms",
    "a voter still below what its group had chosen this long ago is replaced"};
inline constexpr Knob<bool> kAutoadminLogReplicas{
    "autoadmin.log_replicas", P::kAutoadmin, U::kBool, true, false, true,
    "autoadmin_settings.log_replicas", "", "PlannerOptions.log_replicas",
    "a group that lost a voter first gets a log replica; false: full replacements only"};
inline constexpr Knob<uint32_t> kAutoadminPeerTimeoutPercent{
    "autoadmin.peer_timeout_percent", P::kAutoadmin, U::kPercent, 50, 0, 100,
    "autoadmin_settings.peer_timeout_percent", "", "PeerTimeoutOptions.timeout_percent",
    "degraded while most callers (2+) see this share of their pings time out; 0: off"};
inline constexpr Knob<uint64_t> kAutoadminSplitBytes{
    "autoadmin.split_bytes", P::kAutoadmin, U::kBytes, uint64_t{512} << 20, 4 << 10, uint64_t{1} << 40,
    "autoadmin_settings.split_bytes", "", "PlannerOptions.split_bytes",
    "a partition whose leader stores more key+value bytes than this splits in two halves"};
inline constexpr Knob<uint32_t> kAutoadminSplitLoad{
    "autoadmin.split_load", P::kAutoadmin, U::kPerS, 0, 0, 10'000'000,
    "autoadmin_settings.split_load", "", "PlannerOptions.split_load",
    "a partition serving more KV requests/s than this for split_after_s splits by load; 0: off"};
inline constexpr Knob<uint32_t> kAutoadminSplitAfterS{
    "autoadmin.split_after_s", P::kAutoadmin, U::kS, 30, 1, 86'400,
    "autoadmin_settings.split_after_s", "", "PlannerOptions.split_after_ms",
    "how long a partition's load must stay above split_load before it splits"};
inline constexpr Knob<uint32_t> kAutoadminSplitBoostPercent{
    "autoadmin.split_boost_percent", P::kAutoadmin, U::kPercent, 50, 0, 10'000,
    "autoadmin_settings.split_boost_percent", "", "PlannerOptions.split_boost_percent",
    "a partition boosted more than this above its static share for split_after_s splits; 0: off"};
inline constexpr Knob<uint32_t> kAutoadminSplitConsumptionPercent{
    "autoadmin.split_consumption_percent", P::kAutoadmin, U::kPercent, 80, 0, 100,
    "autoadmin_settings.split_consumption_percent", "", "PlannerOptions.split_consumption_percent",
    "a partition consuming more than this share of the partition cap for split_after_s splits; 0: off"};
inline constexpr Knob<uint64_t> kAutoadminMergeBytes{
    "autoadmin.merge_bytes", P::kAutoadmin, U::kBytes, uint64_t{128} << 20, 0, uint64_t{1} << 40,
    "autoadmin_settings.merge_bytes", "", "PlannerOptions.merge_bytes",
    "adjacent cold partitions storing fewer bytes than this together merge (<= split_bytes/2); 0: off"};
inline constexpr Knob<uint32_t> kAutoadminMergeAfterS{
    "autoadmin.merge_after_s", P::kAutoadmin, U::kS, 3'600, 1, 7 * 86'400,
    "autoadmin_settings.merge_after_s", "", "PlannerOptions.merge_after_ms",
    "how long two adjacent partitions must stay small and cold before they merge"};
inline constexpr Knob<uint32_t> kAutoadminMergeLoadPercent{
    "autoadmin.merge_load_percent", P::kAutoadmin, U::kPercent, 25, 1, 100,
    "autoadmin_settings.merge_load_percent", "", "PlannerOptions.merge_load_percent",
    "two partitions are cold while their summed load stays below this share of each split trigger"};
inline constexpr Knob<uint32_t> kAutoadminBalanceThresholdPercent{
    "autoadmin.balance_threshold_percent", P::kAutoadmin, U::kPercent, 10, 1, 1'000,
    "autoadmin_settings.balance_threshold_percent", "", "BalanceOptions.threshold_percent",
    "replicas and leaders move while nodes' scores (or counts) differ by more than this"};
inline constexpr Knob<uint32_t> kAutoadminBalanceBytesFloorMib{
    "autoadmin.balance_bytes_floor_mib", P::kAutoadmin, U::kMib, 256, 0, 1 << 24,
    "autoadmin_settings.balance_bytes_floor_mib", "", "BalanceOptions.bytes_floor (x 2^20)",
    "replica balance weighs bytes only once the AZ's mean per node exceeds this"};
inline constexpr Knob<uint32_t> kAutoadminBalanceLoadFloor{
    "autoadmin.balance_load_floor", P::kAutoadmin, U::kPerS, 1'000, 0, 10'000'000,
    "autoadmin_settings.balance_load_floor", "", "BalanceOptions.load_floor",
    "balance weighs load (requests, write units) only once a node's mean exceeds this"};
inline constexpr Knob<uint32_t> kAutoadminPlacementIntervalMs{
    "autoadmin.placement_interval_ms", P::kAutoadmin, U::kMs, 60'000, 100, 3'600'000,
    "autoadmin_settings.placement_interval_ms", "", "AutoadminOptions.placement_interval_ms",
    "how often the `_s3` partitions' live keys are published to meta for bucket placement"};

// --- global admission control (GacSettings; `tessera gac` and the routers) ---
inline constexpr Knob<uint32_t> kGacIntervalMs{
    "gac.interval_ms", P::kGac, U::kMs, 1'000, 50, 60'000,
    "gac_settings.interval_ms", "", "GacOptions.interval_ms",
    "how often a router reports its tables' use to their GAC and gets its next share"};
inline constexpr Knob<uint32_t> kGacHoldMs{
    "gac.hold_ms", P::kGac, U::kMs, 10'000, 0, 3'600'000,
    "gac_settings.hold_ms", "", "GacOptions.hold_ms",
    "a router cut off from its GAC keeps its last share this long, then capacity / routers"};
inline constexpr Knob<double> kGacOnDemandInitialRcu{
    "gac.on_demand_initial_rcu", P::kGac, U::kUnitsPerS, 2'000, 1, 1e9,
    "gac_settings.on_demand_initial_rcu", "", "GacOptions.on_demand_initial_rcu",
    "the read peak an on-demand table starts with (it may use twice its peak at once)"};
inline constexpr Knob<double> kGacOnDemandInitialWcu{
    "gac.on_demand_initial_wcu", P::kGac, U::kUnitsPerS, 1'000, 1, 1e9,
    "gac_settings.on_demand_initial_wcu", "", "GacOptions.on_demand_initial_wcu",
    "the write peak an on-demand table starts with (it may use twice its peak at once)"};
inline constexpr Knob<bool> kGacEnabled{
    "gac.enabled", P::kGac, U::kBool, true, false, true,
    "gac_settings.enabled", "", "GacOptions.enabled",
    "routers charge tables against GAC shares; false: only the nodes' budgets admit"};

// --- cluster commands (`tessera cluster`) -----------------------------------
inline constexpr Knob<uint32_t> kClusterPartitions{
    "cluster.partitions", P::kCluster, U::kCount, 6, 1, 256,
    "", "tessera cluster up --partitions", "UpSettings.partitions",
    "partitions of the default table kv when neither given nor recorded in the cluster directory"};
inline constexpr Knob<uint32_t> kClusterDrainTimeoutS{
    "cluster.drain_timeout_s", P::kCluster, U::kS, 600, 1, 86'400,
    "", "tessera cluster drain --timeout", "ClusterCommandArgs.drain_timeout_s",
    "how long `cluster drain` waits for the replicas to leave the nodes"};
inline constexpr Knob<uint32_t> kClusterSplitTimeoutS{
    "cluster.split_timeout_s", P::kCluster, U::kS, 120, 1, 86'400,
    "", "tessera kv partition split --timeout", "KvPartitionArgs.timeout_s",
    "how long `kv partition split` waits for meta's map to show both halves"};

// The table, ordered by process, as docs/knobs.md lists it.
inline constexpr std::array kAllKnobs = {
    Describe(kNodeGcIntervalMs),
    Describe(kNodeBlobSweepIntervalMs),
    Describe(kNodeBlobMinAgeS),
    Describe(kNodeOrphanGraceS),
    Describe(kNodeSnapshotChunkBytes),
    Describe(kNodeSnapshotStreamBytesPerS),
    Describe(kNodeCompactionTriggerSlots),
    Describe(kNodeCompactionKeepSlots),
    Describe(kNodeFaultSnapshotInstallDelayMs),
    Describe(kNodeIoThreads),
    Describe(kNodeSnapshotInstallBatchBytes),
    Describe(kNodeAdmissionNodeRcuPerS),
    Describe(kNodeAdmissionNodeWcuPerS),
    Describe(kNodeAdmissionPartitionRcuMax),
    Describe(kNodeAdmissionPartitionWcuMax),
    Describe(kNodeAdmissionBurstWindowS),
    Describe(kNodeAdmissionNodeSpareFraction),
    Describe(kNodeAdmissionCapacityRefreshMs),
    Describe(kNodeAdmissionAdaptive),
    Describe(kNodeAdmissionAdaptiveGain),
    Describe(kMetaS3UserBucketsMax),
    Describe(kMetaPlacementWeightsMaxAgeMs),
    Describe(kRouterS3Region),
    Describe(kRouterS3BaseDomain),
    Describe(kRouterS3MinPartBytes),
    Describe(kRouterS3BucketRate),
    Describe(kRouterS3BucketBurst),
    Describe(kRouterS3UserRate),
    Describe(kRouterS3UserBurst),
    Describe(kRouterIoThreads),
    Describe(kRouterS3InlineBytesMax),
    Describe(kRouterS3BlobBytes),
    Describe(kRouterHttpBodyPieceBytes),
    Describe(kRouterS3RegistryNegativeTtlMs),
    Describe(kRouterS3BucketConfigTtlMs),
    Describe(kAutoadminDeadAfterMs),
    Describe(kAutoadminPollIntervalMs),
    Describe(kAutoadminLeaseMs),
    Describe(kAutoadminMaxConcurrent),
    Describe(kAutoadminGraySyncP99Ms),
    Describe(kAutoadminDegradedForMs),
    Describe(kAutoadminGrayReplaceAfterMs),
    Describe(kAutoadminMinFreeMib),
    Describe(kAutoadminBalanceLeaders),
    Describe(kAutoadminLagForMs),
    Describe(kAutoadminLogReplicas),
    Describe(kAutoadminPeerTimeoutPercent),
    Describe(kAutoadminSplitBytes),
    Describe(kAutoadminSplitLoad),
    Describe(kAutoadminSplitAfterS),
    Describe(kAutoadminSplitBoostPercent),
    Describe(kAutoadminSplitConsumptionPercent),
    Describe(kAutoadminMergeBytes),
    Describe(kAutoadminMergeAfterS),
    Describe(kAutoadminMergeLoadPercent),
    Describe(kAutoadminBalanceThresholdPercent),
    Describe(kAutoadminBalanceBytesFloorMib),
    Describe(kAutoadminBalanceLoadFloor),
    Describe(kAutoadminPlacementIntervalMs),
    Describe(kGacIntervalMs),
    Describe(kGacHoldMs),
    Describe(kGacOnDemandInitialRcu),
    Describe(kGacOnDemandInitialWcu),
    Describe(kGacEnabled),
    Describe(kClusterPartitions),
    Describe(kClusterDrainTimeoutS),
    Describe(kClusterSplitTimeoutS),
};

// The knob named `name`; nullptr when none is.
const KnobInfo* FindKnob(std::string_view name);
// The knob set by layout field `path` ("node_settings.gc_interval_ms").
const KnobInfo* FindKnobByLayoutField(std::string_view path);

// --- invariants of the table ---------------------------------------------------
constexpr bool WithinBounds(const KnobValue& v, const KnobInfo& k) {
  switch (k.kind) {
    case KnobKind::kUnsigned:
      return k.min.unsigned_value <= v.unsigned_value && v.unsigned_value <= k.max.unsigned_value;
    case KnobKind::kDouble:
      return k.min.double_value <= v.double_value && v.double_value <= k.max.double_value;
    case KnobKind::kBool:
    case KnobKind::kText:
      return true;
  }
  return false;
}
constexpr bool EveryDefaultWithinBounds() {
  for (const KnobInfo& k : kAllKnobs) {
    if (!WithinBounds(k.default_value, k)) return false;
  }
  return true;
}
constexpr bool NamesUnique() {
  for (size_t i = 0; i < kAllKnobs.size(); ++i) {
    for (size_t j = i + 1; j < kAllKnobs.size(); ++j) {
      if (kAllKnobs[i].name == kAllKnobs[j].name) return false;
    }
  }
  return true;
}
static_assert(EveryDefaultWithinBounds(), "every knob's default lies within its bounds");
static_assert(NamesUnique(), "knob names are unique");
static_assert(kNodeCompactionKeepSlots.default_value < kNodeCompactionTriggerSlots.default_value);
static_assert(kAutoadminPollIntervalMs.default_value <= kAutoadminLeaseMs.default_value &&
              kAutoadminPollIntervalMs.default_value <= kAutoadminDeadAfterMs.default_value &&
              kAutoadminPollIntervalMs.default_value <= kAutoadminLagForMs.default_value,
              "the autoadmin's own checks (AutoadminService::Start) accept the defaults");
// A merged partition must not meet a split trigger at once (merge_planner.h):
// by default merges stop at a quarter of split_bytes, and wait longer than
// a split does.
static_assert(kAutoadminMergeBytes.default_value * 4 <= kAutoadminSplitBytes.default_value);
static_assert(kAutoadminMergeAfterS.default_value > kAutoadminSplitAfterS.default_value);

}  // namespace tessera::knobs
