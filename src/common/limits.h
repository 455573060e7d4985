// Every bound on a queue, batch, window, message or retry in Tessera, in one
// place, unit last in the name. A full queue pushes back (Throttled) instead
// of growing. Tunables that are not bounds live in each module's Options.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tessera::limits {

// --- consensus -------------------------------------------------------------
// Slots a leader may have proposed but not yet seen chosen. Proposals beyond
// it get Throttled.
inline constexpr uint64_t kUncommittedSlotsMax = 4096;
// Slots in flight (sent, not acknowledged) to one follower.
inline constexpr uint64_t kInflightSlotsPerPeerMax = 1024;
// One Accept message carries at most this many entries / bytes of commands.
inline constexpr size_t kEntriesPerAcceptMax = 256;
inline constexpr size_t kAcceptBytesMax = 1 << 20;
// A Promise carries at most this many entries; beyond it the promise is
// marked partial and only helps the candidate catch up.
inline constexpr size_t kEntriesPerPromiseMax = kUncommittedSlotsMax + 1024;
// Command size accepted by Propose.
inline constexpr size_t kCommandBytesMax = 4 << 20;
// Replicas in one replication group (voters + learners).
inline constexpr size_t kGroupReplicasMax = 9;

static_assert(kInflightSlotsPerPeerMax <= kUncommittedSlotsMax);
static_assert(kEntriesPerPromiseMax > kUncommittedSlotsMax,
              "a promise must be able to carry every uncommitted slot");
static_assert(kCommandBytesMax <= 4 * kAcceptBytesMax);

// --- node ------------------------------------------------------------------
// A partition snapshot ships in one InstallSnapshot message of at most this
// many bytes of state (streamed snapshots are future work).
inline constexpr size_t kSnapshotBytesMax = 64 << 20;
// Strong reads waiting for the applied index to reach their read index.
inline constexpr size_t kPendingReadsMax = 16384;
// Replication groups one node (or meta replica) hosts.
inline constexpr size_t kHostedGroupsMax = 4096;
// Outbound consensus messages: one ConsensusBatch (one one-way RPC frame)
// carries at most this many bytes of messages (a larger single message goes
// alone), and at most this many messages may wait for one destination peer
// before further ones are dropped (the protocol tolerates loss).
inline constexpr size_t kConsensusBatchBytesMax = 4 << 20;
inline constexpr size_t kConsensusPendingMessagesPerPeerMax = 65536;

// --- storage ---------------------------------------------------------------
// Group-commit writer: pending requests before Submit pushes back.
inline constexpr size_t kGroupCommitQueueMax = 65536;
// One synced WriteBatch carries at most this many bytes.
inline constexpr size_t kGroupCommitBatchBytesMax = 16 << 20;
// Bytes of pending requests before Submit pushes back (a request is always
// admitted into an empty queue, so one larger than this still goes through).
inline constexpr size_t kGroupCommitQueueBytesMax = 256 << 20;
// A user key of a group's applied state (S3 keys are at most 1 KiB; the rest
// is room for bucket id and record suffixes).
inline constexpr size_t kStateKeyBytesMax = 4 << 10;
// A user value of a group's applied state; it is produced by one command.
inline constexpr size_t kStateValueBytesMax = kCommandBytesMax;
// Fault injection: the longest delay added to one synced write.
inline constexpr uint32_t kStorageFaultDelayMsMax = 60'000;
// Items one range scan of applied state may return.
inline constexpr size_t kScanItemsMax = 10'000;
// Payload of one storage record (the header stores its length as uint32).
inline constexpr size_t kRecordPayloadBytesMax = (size_t{1} << 32) - 1;

static_assert(kGroupCommitBatchBytesMax <= kGroupCommitQueueBytesMax);
static_assert(kStateValueBytesMax + kStateKeyBytesMax <= kGroupCommitBatchBytesMax);
static_assert(kStateValueBytesMax <= kRecordPayloadBytesMax);

// --- rpc (docs/formats/rpc.md) ---------------------------------------------
// Payload bytes of one frame; a larger length in a header closes the
// connection. Must carry the largest consensus message: an Accept of
// kAcceptBytesMax plus one command of kCommandBytesMax, with room to spare.
inline constexpr size_t kRpcFrameBytesMax = 16 << 20;
// Payload bytes of one frame before the handshake completed (Challenge,
// Hello, Welcome): an unauthenticated peer cannot make us buffer more.
inline constexpr size_t kRpcHandshakeFrameBytesMax = 4 << 10;
// Bytes of a role name and of a method name.
inline constexpr size_t kRpcRoleBytesMax = 64;
inline constexpr size_t kRpcMethodBytesMax = 128;
// Channel (client side, per remote peer): frames accepted by Send/Call and
// not yet written, by count and bytes, before Send/Call return Throttled.
// A frame is always accepted into an empty queue, whatever its size.
inline constexpr size_t kRpcChannelQueueFramesMax = 65536;
inline constexpr size_t kRpcChannelQueueBytesMax = 64 << 20;
// Calls of one channel awaiting a response, before Call returns Throttled.
inline constexpr size_t kRpcPendingCallsMax = 16384;
// One gather write carries at most this many frames / bytes (always at
// least one frame).
inline constexpr size_t kRpcWriteBatchFramesMax = 1024;
inline constexpr size_t kRpcWriteBatchBytesMax = 4 << 20;
// Server: accepted connections, requests per connection handed to handlers
// and not yet answered (beyond it: Throttled responses), and response bytes
// queued per connection (beyond it the peer is not reading: closed).
inline constexpr size_t kRpcServerConnectionsMax = 1024;
inline constexpr size_t kRpcServerInflightRequestsMax = 4096;
inline constexpr size_t kRpcServerQueueBytesMax = 64 << 20;
// Remote peers one process keeps channels to (ChannelPool).
inline constexpr size_t kRpcPeersMax = 1024;
// Fault injection: the longest delay a rule may impose, and rules (one per
// destination peer) per process.
inline constexpr uint32_t kRpcFaultDelayMsMax = 60'000;
inline constexpr size_t kRpcFaultRulesMax = 1024;
// Longest call timeout and reconnect backoff a caller may ask for.
inline constexpr uint32_t kRpcCallTimeoutMsMax = 600'000;
inline constexpr uint32_t kRpcBackoffMsMax = 60'000;

static_assert(kCommandBytesMax + kAcceptBytesMax + (64 << 10) <= kRpcFrameBytesMax,
              "an Accept with a maximal command must fit one frame");
static_assert(kRpcHandshakeFrameBytesMax < kRpcFrameBytesMax);
static_assert(kRpcFrameBytesMax <= kRpcChannelQueueBytesMax);
static_assert(kRpcFrameBytesMax <= kRpcServerQueueBytesMax);
static_assert(kRpcWriteBatchBytesMax <= kRpcChannelQueueBytesMax);
static_assert(kRpcPeersMax <= kRpcServerConnectionsMax,
              "a server must accept a connection from every peer of the cluster");
static_assert(kConsensusBatchBytesMax + (64 << 10) <= kRpcFrameBytesMax,
              "a full ConsensusBatch must fit one rpc frame");
static_assert(kRpcFrameBytesMax < (size_t{1} << 32), "the header stores the length as uint32");

// --- http (src/http/) --------------------------------------------------------
// Request line plus header fields of one HTTP request; beyond it: 431.
// (SigV4 Authorization and S3 user metadata, 2 KiB, fit comfortably.)
inline constexpr size_t kHttpHeaderBytesMax = 64 << 10;
// Body of one HTTP request, buffered whole; beyond it: 413. A server may
// lower it (HttpServerOptions), never raise it.
inline constexpr size_t kHttpBodyBytesMax = 64 << 20;
// Open connections of one HTTP server; further accepts are closed at once.
inline constexpr size_t kHttpConnectionsMax = 1024;

static_assert(kHttpHeaderBytesMax < kHttpBodyBytesMax);

// --- router ----------------------------------------------------------------
// Route cache entries (partition descriptors) over all tables; beyond it the
// cache drops a table's entries before inserting (a miss only costs a MemDS
// lookup).
inline constexpr size_t kRouterRouteCacheEntriesMax = 100'000;
// Asynchronous refresh lookups to MemDS in flight at once; a cache hit beyond
// it skips its refresh (counted as skipped).
inline constexpr size_t kRouterAsyncLookupsMax = 1024;
// Attempts of one client operation (first try + retries + redirects).
inline constexpr uint32_t kRouterAttemptsMax = 64;
// Longest backoff between two attempts, and longest total deadline of one
// client operation a caller may configure.
inline constexpr uint32_t kRouterBackoffMsMax = 5'000;
inline constexpr uint32_t kRouterRequestDeadlineMsMax = 120'000;
// Items one HTTP range scan returns (the page size cap) and partitions one
// HTTP range scan may visit before it answers with a resume key.
inline constexpr uint32_t kRouterScanItemsMax = 1'000;
inline constexpr uint32_t kRouterScanPartitionsMax = 64;
// Bytes of a table name (as the metadata service allows), of a decoded key,
// and of a request body.
inline constexpr size_t kRouterTableBytesMax = 128;
inline constexpr size_t kRouterKeyBytesMax = kStateKeyBytesMax;
inline constexpr size_t kRouterBodyBytesMax = kStateValueBytesMax + (64 << 10);
// Bytes of an Authorization bearer token, and credentials in one file.
inline constexpr size_t kRouterTokenBytesMax = 512;
inline constexpr size_t kRouterCredentialsMax = 1'000;

static_assert(kRouterScanItemsMax <= kScanItemsMax);
static_assert(kRouterBodyBytesMax <= kHttpBodyBytesMax);
static_assert(kRouterBackoffMsMax <= kRouterRequestDeadlineMsMax);
static_assert(kRouterRequestDeadlineMsMax <= kRpcCallTimeoutMsMax);
static_assert(kRouterBodyBytesMax + kRouterKeyBytesMax + (64 << 10) <= kRpcFrameBytesMax,
              "a maximal PUT must fit one kv.write frame");

// --- meta (docs/formats/meta-keys.md) -------------------------------------
// Bytes of a table name, and of one split point (a partition start key).
inline constexpr size_t kMetaTableNameBytesMax = 128;
inline constexpr size_t kMetaSplitPointBytesMax = 1024;
// Partitions one table may be created with.
inline constexpr size_t kMetaPartitionsPerTableMax = 1024;
// meta.create_table requests queued on one replica before it answers
// Throttled (they run one at a time).
inline constexpr size_t kMetaAdminQueueMax = 64;
// Conditional create batches retried when a concurrent create won the ids.
inline constexpr int kMetaCreateAttemptsMax = 8;
// admin.create_group: first and longest backoff between attempts, and the
// time after which create_table stops retrying and answers Unavailable (the
// descriptors are durable; repeating the create finishes the job).
inline constexpr uint32_t kMetaCreateGroupBackoffInitialMs = 50;
inline constexpr uint32_t kMetaCreateGroupBackoffMaxMs = 1'000;
inline constexpr uint32_t kMetaCreateGroupDeadlineMs = 20'000;
// Consensus messages waiting for the next batch to one meta peer; beyond it
// they are dropped (the protocol tolerates loss).
inline constexpr size_t kMetaSenderQueueMessagesMax = 4096;

static_assert(kMetaCreateGroupBackoffInitialMs <= kMetaCreateGroupBackoffMaxMs);
static_assert(kMetaCreateGroupBackoffMaxMs < kMetaCreateGroupDeadlineMs);
static_assert(kMetaCreateGroupDeadlineMs < kRpcCallTimeoutMsMax);
static_assert(kMetaSplitPointBytesMax + kMetaTableNameBytesMax + 3 <= kStateKeyBytesMax,
              "a partition key must fit a state key");
static_assert(kMetaPartitionsPerTableMax *
                      (3 * kMetaSplitPointBytesMax + 2 * kMetaTableNameBytesMax + 256) <=
                  kCommandBytesMax,
              "a whole table's create batch must fit one command");

// --- metrics ---------------------------------------------------------------
// Series (name + label set) in one registry; label values must come from
// small fixed sets, so more is a bug.
inline constexpr size_t kMetricSeriesMax = 10'000;
// Finite buckets of one histogram.
inline constexpr size_t kHistogramBucketsMax = 64;

}  // namespace tessera::limits
