// The hard limits of Tessera: every bound on a queue, batch, window,
// message, retry or protocol field, in one place, grouped by layer from the
// bottom (metrics, consensus, storage, rpc) to the top (router, autoadmin),
// unit last in the name, related values tied by static_assert. A full queue
// pushes back (Throttled) instead of growing.
//
// Only true limits live here: nobody tunes them, and changing one changes a
// protocol, a format or a safety margin. Tunables (defaults an operator or a
// layout may change) are knobs, declared once in src/knobs/knobs.h with
// bounds that may name a limit below, and listed in docs/knobs.md.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tessera::limits {

// --- metrics (src/common) ----------------------------------------------------
// Series (name + label set) in one registry; label values must come from
// small fixed sets, so more is a bug.
inline constexpr size_t kMetricSeriesMax = 10'000;
// Finite buckets of one histogram.
inline constexpr size_t kHistogramBucketsMax = 64;

// --- consensus (src/consensus) -----------------------------------------------
// Slots a leader may have proposed but not yet seen chosen. Proposals beyond
// it get Throttled.
inline constexpr uint64_t kUncommittedSlotsMax = 4096;
// Slots in flight (sent, not acknowledged) to one follower.
inline constexpr uint64_t kInflightSlotsPerPeerMax = 1024;
// Command bytes in flight to one follower (one Accept is always allowed).
// Well below kRpcChannelQueueBytesMax, which every group sending to that
// peer shares: Accepts the transport refuses wait for a heartbeat resend.
inline constexpr size_t kInflightBytesPerPeerMax = 8 << 20;
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

// --- storage (src/storage) ---------------------------------------------------
// Group-commit writer: pending requests before Submit pushes back.
inline constexpr size_t kGroupCommitQueueMax = 65536;
// One synced WriteBatch carries at most this many bytes.
inline constexpr size_t kGroupCommitBatchBytesMax = 16 << 20;
// Bytes of pending requests before Submit pushes back (a request is always
// admitted into an empty queue, so one larger than this still goes through).
inline constexpr size_t kGroupCommitQueueBytesMax = 256 << 20;
// WAL files waiting for zeros to be written ahead of their end (D41); RocksDB
// keeps only a few WAL files open, a fuller queue leaves a file ordinary.
inline constexpr size_t kWalZeroFillQueueMax = 64;
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

// --- rpc (src/rpc, docs/formats/rpc.md) --------------------------------------
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
// Connections still in their handshake one server holds at once: beyond,
// the oldest is closed to admit the newest (rpc/server.h, contract 6).
inline constexpr size_t kRpcServerHandshakesMax = 64;
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
static_assert(kInflightBytesPerPeerMax + kAcceptBytesMax + kCommandBytesMax <
                  kRpcChannelQueueBytesMax / 2,
              "one group's catch-up must leave the peer's channel room for others");
static_assert(kRpcPeersMax <= kRpcServerConnectionsMax,
              "a server must accept a connection from every peer of the cluster");
static_assert(kRpcFrameBytesMax < (size_t{1} << 32), "the header stores the length as uint32");

// --- http (src/http) ---------------------------------------------------------
// Request line plus header fields of one HTTP request; beyond it: 431.
// (SigV4 Authorization and S3 user metadata, 2 KiB, fit comfortably.)
inline constexpr size_t kHttpHeaderBytesMax = 64 << 10;
// Body of one HTTP request, buffered whole; beyond it: 413. A server may
// lower it (HttpServerOptions), never raise it.
inline constexpr size_t kHttpBodyBytesMax = 64 << 20;
// Open connections of one HTTP server; further accepts are closed at once.
inline constexpr size_t kHttpConnectionsMax = 1024;

static_assert(kHttpHeaderBytesMax < kHttpBodyBytesMax);

// --- http streaming and TLS (src/http) ---------------------------------------
// Request body of one exchange on the StreamServer, read piecewise (never
// whole): S3's 5 GiB single PUT plus aws-chunked framing, with room to
// spare. Beyond it: 413 (Content-Length) or a ReadBody error (chunked).
inline constexpr uint64_t kHttpStreamBodyBytesMax = uint64_t{6} << 30;
// Largest piece one ReadBody delivers: the body memory of one request is
// about one piece plus the read buffer.
inline constexpr size_t kHttpStreamBodyPieceBytesMax = 16 << 20;
// Unread request body read and discarded after a response so that the
// connection stays usable; a larger rest closes the connection instead.
inline constexpr size_t kHttpStreamDrainBytesMax = 8 << 20;
// After a response that closes the connection: incoming bytes discarded,
// for at most this long, so the client reads the response instead of
// getting a reset.
inline constexpr size_t kHttpStreamLingerBytesMax = 16 << 20;
inline constexpr uint32_t kHttpStreamLingerMs = 1'000;
// Open connections of one StreamServer (both listeners).
inline constexpr size_t kHttpStreamConnectionsMax = 4096;
// Validity of a generated self-signed certificate.
inline constexpr int kTlsCertificateDaysMax = 3650;

static_assert(kHttpStreamDrainBytesMax <= kHttpStreamLingerBytesMax);
static_assert(kHttpStreamBodyBytesMax > (uint64_t{5} << 30),
              "an S3 single PUT of 5 GiB with aws-chunked framing must fit");

// --- blob store (src/blob, docs/formats/blobs.md) ----------------------------
// Blob slots: a blob id names its slot, a slot names its three nodes
// (BlobSlotMap). Changing it changes every blob's placement.
inline constexpr uint32_t kBlobSlots = 4096;
// Bytes of one blob; the S3 front stores larger objects as several blobs.
inline constexpr size_t kBlobBytesMax = 8 << 20;
// Blob ids one blob.list page returns.
inline constexpr size_t kBlobListItemsMax = 1'000;
// Node side: blob requests queued for the blob worker threads (beyond it:
// Throttled; a queued put holds up to kBlobBytesMax), and worker threads.
inline constexpr size_t kBlobServiceQueueMax = 32;
inline constexpr size_t kBlobServiceThreadsMax = 16;
// Router side (BlobClient): operations in flight, and bytes of put data
// they hold (a put is always admitted when nothing else is in flight).
inline constexpr size_t kBlobClientInflightMax = 1'024;
inline constexpr size_t kBlobClientInflightBytesMax = 256 << 20;
// Longest per-replica timeout a BlobClient may be configured with.
inline constexpr uint32_t kBlobClientTimeoutMsMax = 60'000;
// Router side, per node (NodeReadGate): reply bytes and reads asked of one
// node and not yet answered; reads beyond them wait in the router. Well
// below what a node queues for one connection (beyond it the node closes the
// connection as a slow peer) and its blob queue (beyond it: Throttled),
// leaving room for the connection's other replies, for other routers, and
// for the node freeing a reply's bytes only once its write completes (it
// may by then have the next request).
inline constexpr size_t kBlobClientNodeReadBytesMax = 16 << 20;
inline constexpr size_t kBlobClientNodeReadsMax = 16;

static_assert(kBlobSlots <= 0x10000, "a blob id's text form has 4 hex digits of slot");
static_assert(kBlobBytesMax + (64 << 10) <= kRpcFrameBytesMax,
              "a maximal blob.put must fit one rpc frame");
static_assert(kBlobBytesMax <= kBlobClientInflightBytesMax);
static_assert(kBlobClientTimeoutMsMax <= kRpcCallTimeoutMsMax);
// A node with no read in flight is always asked: the largest charge then is
// one whole blob.
static_assert(kBlobClientNodeReadBytesMax <= kRpcServerQueueBytesMax / 2);
static_assert(kBlobBytesMax <= kRpcServerQueueBytesMax / 2);
static_assert(kBlobClientNodeReadsMax <= kBlobServiceQueueMax / 2);

// --- s3 protocol (src/s3/protocol) -------------------------------------------
// Bucket names (AWS general-purpose rules) and object keys.
inline constexpr size_t kS3BucketNameBytesMin = 3;
inline constexpr size_t kS3BucketNameBytesMax = 63;
inline constexpr size_t kS3ObjectKeyBytesMax = 1024;
// Hash ranges of a bucket created with the hashed key layout
// (s3/model/key_layout.h): each is one byte 1..N after the bucket id, so
// 0x00 stays free for the bucket's own records (`B 00 'c'`).
inline constexpr uint32_t kS3HashRangesMin = 2;
inline constexpr uint32_t kS3HashRangesMax = 255;
// The bytes the hashed layout puts before an object key in `_s3` keys.
inline constexpr size_t kS3HashRangeBytes = 1;
// x-amz-meta-* names (without the prefix) plus values, as AWS counts them.
inline constexpr size_t kS3UserMetadataBytesMax = 2 << 10;
// An XML request body the s3 protocol parsers accept. CompleteMultipartUpload
// is the largest legitimate one: 10,000 parts take ~0.9 MB, ~1.7 MB with
// SHA-256 checksums, more when pretty-printed.
inline constexpr size_t kS3XmlParseBytesMax = 4 << 20;
// Parts one CompleteMultipartUpload may name; part numbers are 1..this.
inline constexpr size_t kS3MultipartPartsMax = 10'000;
// Keys one DeleteObjects request may name.
inline constexpr size_t kS3DeleteObjectsMax = 1000;
// Parameters of one query string.
inline constexpr size_t kS3QueryParamsMax = 256;
// Tag sets: tags per object / bucket, key and value length in characters.
inline constexpr size_t kS3ObjectTagsMax = 10;
inline constexpr size_t kS3BucketTagsMax = 50;
inline constexpr size_t kS3TagKeyCharsMax = 128;
inline constexpr size_t kS3TagValueCharsMax = 256;
// Rules of one bucket's CORS configuration (S3's bound).
inline constexpr size_t kS3CorsRulesMax = 100;
// Grants of one ACL (S3's bound).
inline constexpr size_t kS3AclGrantsMax = 100;
// A bucket's configuration record (BucketConfig: CORS rules, later ACL,
// policy, ownership, public access block), serialized. S3 bounds a CORS
// configuration at 64 KiB and a policy at 20 KiB; the record is one value
// in one partition, replicated by Paxos like any object head.
inline constexpr size_t kS3BucketConfigBytesMax = 256 << 10;
// A bucket policy document (S3's bound, MalformedPolicy beyond it), its
// statements, and the JSON nesting depth the parser accepts (a policy needs
// four levels: document, statement, condition operator, key).
inline constexpr size_t kS3BucketPolicyBytesMax = 20 << 10;
inline constexpr size_t kS3BucketPolicyStatementsMax = 100;
inline constexpr size_t kS3BucketPolicyJsonDepthMax = 8;
static_assert(kS3BucketPolicyBytesMax * 2 < kS3BucketConfigBytesMax,
              "a policy must fit the bucket configuration record beside the other parts");
// Buckets whose configuration one router caches (bucket_config_cache.h).
inline constexpr size_t kS3BucketConfigCacheEntriesMax = 10'000;

static_assert(kS3BucketConfigBytesMax <= kStateValueBytesMax / 2,
              "a bucket configuration record must fit one state value");
static_assert(kS3HashRangesMax <= 255, "a hash range is one byte, 0 excluded");
static_assert(kS3HashRangeBytes + kS3ObjectKeyBytesMax <= kStateKeyBytesMax / 2,
              "an S3 key plus its record prefix must fit a state key");

// --- s3 auth (src/s3/auth) ---------------------------------------------------
// One aws-chunked chunk's data: signed chunks are buffered whole until their
// signature checks (the SDKs send 64 KiB to 1 MiB chunks).
inline constexpr size_t kAwsChunkBytesMax = 16 << 20;
// All requests' buffered aws-chunked chunks together, per router (beyond:
// SlowDown), and the buffer a request keeps between its chunks (larger
// buffers are freed once their chunk is verified).
inline constexpr size_t kRouterAwsChunkBufferBytesMax = 256 << 20;
inline constexpr size_t kAwsChunkBufferKeepBytes = 1 << 20;
static_assert(kRouterAwsChunkBufferBytesMax >= 4 * kAwsChunkBytesMax);
// One aws-chunked chunk header or trailer line, CRLF excluded.
inline constexpr size_t kAwsChunkLineBytesMax = 4096;
// Trailers (x-amz-trailer names, and trailer lines) of one aws-chunked body.
inline constexpr size_t kAwsChunkTrailersMax = 16;
// Headers one SigV4 request may sign.
inline constexpr size_t kSigV4SignedHeadersMax = 128;
// Longest validity of a presigned URL (X-Amz-Expires), as S3 allows.
inline constexpr int64_t kPresignExpiresSecondsMax = 604'800;

static_assert(kAwsChunkBytesMax >= (1 << 20), "the SDKs' largest chunks must fit");

// --- storage node (src/node) -------------------------------------------------
// The largest whole state a metadata group is designed for: MemDS holds it
// in memory (snapshots of every group stream in chunks of any total size,
// see "streamed snapshots" below).
inline constexpr size_t kSnapshotBytesMax = 64 << 20;
// Strong reads waiting for the applied index to reach their read index.
inline constexpr size_t kPendingReadsMax = 16384;
// Replication groups one node (or meta replica) hosts.
inline constexpr size_t kHostedGroupsMax = 4096;
// admin.state_digest: group scans waiting for the node's digest thread (one
// request asks for every hosted group; a second one waits or is refused).
inline constexpr size_t kNodeDigestJobsMax = kHostedGroupsMax;
// admin.change_membership / admin.drop_group: requests waiting for the
// node's admin thread (the autoadmin sends one step per group at a time).
inline constexpr size_t kNodeAdminJobsMax = 256;
// How often a node tries to restart the groups that stopped on a disk
// error (ReplicationHost::RestartFailedGroups, contract 12): a probe write
// per try, so a disk still failing costs one failed write per interval.
inline constexpr uint64_t kFailedGroupRestartIntervalMs = 5'000;
// Outbound consensus messages: one ConsensusBatch (one one-way RPC frame)
// carries at most this many bytes of messages (a larger single message goes
// alone), and at most this many messages may wait for one destination peer
// before further ones are dropped (the protocol tolerates loss).
inline constexpr size_t kConsensusBatchBytesMax = 4 << 20;
inline constexpr size_t kConsensusPendingMessagesPerPeerMax = 65536;
static_assert(kConsensusBatchBytesMax + (64 << 10) <= kRpcFrameBytesMax,
              "a full ConsensusBatch must fit one rpc frame");

// --- storage node: streamed snapshots ----------------------------------------
// A lagging replica catches up from a snapshot streamed in chunks
// (src/node/snapshot_sender.h, docs/formats/storage.md "Streamed
// snapshots"), of any total size. One chunk carries pairs until it holds at
// least node_settings.snapshot_chunk_bytes bytes of keys and values (so at
// most that plus one maximal pair); the setting is capped at the max.
inline constexpr size_t kSnapshotChunkBytesMax = 4 << 20;
// Chunks sent and not yet acknowledged, per transfer: the leader holds at
// most this many chunks of one transfer in memory.
inline constexpr size_t kSnapshotChunksInFlightMax = 4;
// Snapshot jobs (a chunk to stage, an install) waiting for a node's
// snapshot thread: at most this many chunks are held in memory there.
inline constexpr size_t kSnapshotJobsQueuedMax = 32;
// Outbound transfers one group runs at once (one per lagging replica).
inline constexpr size_t kSnapshotTransfersPerGroupMax = kGroupReplicasMax;

static_assert(kSnapshotChunkBytesMax + kStateKeyBytesMax + kStateValueBytesMax + (64 << 10) <=
                  kRpcFrameBytesMax,
              "a maximal chunk (the limit plus one maximal pair) fits one rpc frame");
static_assert(kSnapshotChunkBytesMax + kStateKeyBytesMax + kStateValueBytesMax <=
                  kGroupCommitBatchBytesMax,
              "a maximal chunk is staged in one WriteBatch");

// --- storage node: blob GC and repair ----------------------------------------
// Bytes of a blob's owner (the `_s3` prefix of its object: bucket id + key).
inline constexpr size_t kBlobOwnerBytesMax = 8 + kS3HashRangeBytes + kS3ObjectKeyBytesMax;
// Blob ids one s3.blob_refs request may ask about.
inline constexpr size_t kBlobRefsIdsMax = 1'000;
// Records of one object key the reference scan reads before giving up
// (Unavailable: the caller keeps the blobs and retries later).
inline constexpr size_t kBlobRefsScanRowsMax = 100'000;
// Records of one key an op reads when it commits, to keep blobs it still
// references out of its GC record; beyond, only the head is checked (the
// GC worker verifies again before deleting).
inline constexpr size_t kGcCommitScanRowsMax = 10'000;
// GC worker: GC records handled per partition per round, and blob deletes
// in flight per node.
inline constexpr size_t kGcRecordsPerRoundMax = 64;
inline constexpr size_t kGcDeletesInflightMax = 64;
// Sweeper/repairer: blobs examined per round on one node.
inline constexpr size_t kBlobSweepBlobsPerRoundMax = 256;
// Checker (tessera s3 check): problems listed at most.
inline constexpr size_t kS3CheckProblemsListedMax = 50;

static_assert(kBlobOwnerBytesMax <= 0xffff, "a blob file stores the owner length in 2 bytes");
static_assert(kBlobRefsIdsMax <= kBlobListItemsMax);

// --- metadata service (src/meta, docs/formats/meta-keys.md) ------------------
// Bytes of a table name, and of one split point (a partition start key).
inline constexpr size_t kMetaTableNameBytesMax = 128;
inline constexpr size_t kMetaSplitPointBytesMax = 1024;
// Partitions one table may be created with.
inline constexpr size_t kMetaPartitionsPerTableMax = 1024;
// A provisioned table's read or write capacity, units per second
// (docs/admission.md): 1..this.
inline constexpr uint64_t kTableCapacityUnitsMax = 1'000'000;
// Global admission control (src/gac/): tables one router report may carry
// (and a router tracks), and routers one GAC instance keeps per table.
inline constexpr size_t kGacTablesPerReportMax = 4096;
inline constexpr size_t kGacRoutersPerTableMax = 1024;
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
// Lookups one meta.lookup_batch call may carry.
inline constexpr size_t kMetaLookupBatchMax = 1'024;

static_assert(kMetaCreateGroupBackoffInitialMs <= kMetaCreateGroupBackoffMaxMs);
static_assert(kMetaCreateGroupBackoffMaxMs < kMetaCreateGroupDeadlineMs);
static_assert(kMetaCreateGroupDeadlineMs < kRpcCallTimeoutMsMax);
static_assert(kMetaSplitPointBytesMax + kMetaTableNameBytesMax + 3 <= kStateKeyBytesMax,
              "a partition key must fit a state key");
static_assert(kMetaPartitionsPerTableMax *
                      (3 * kMetaSplitPointBytesMax + 2 * kMetaTableNameBytesMax + 256) <=
                  kCommandBytesMax,
              "a whole table's create batch must fit one command");

// --- metadata service: S3 bucket registry and users --------------------------
// The registry in the metadata service (docs/formats/meta-keys.md) and the
// router's RegistryClient.
// Buckets and users in the registry (each is held in every meta replica's
// memory, listed in one rpc frame and shipped in the meta group's one
// snapshot message); a create beyond them answers Unavailable.
inline constexpr size_t kS3RegistryBucketsMax = 50'000;
inline constexpr size_t kS3UsersMax = 10'000;
// Bytes of a user name, an access key, a secret key, and a region name.
inline constexpr size_t kS3UserNameBytesMax = 64;
inline constexpr size_t kS3UserAccessKeyBytesMax = 64;
inline constexpr size_t kS3UserSecretKeyBytesMax = 256;
inline constexpr size_t kS3RegistryRegionBytesMax = 64;
// Bytes of a user's display name and email address (RFC 5321's path limit).
inline constexpr size_t kS3UserDisplayNameBytesMax = 128;
inline constexpr size_t kS3UserEmailBytesMax = 254;
// Registry mutations (create/delete bucket, versioning, create user) queued
// on one meta replica before it answers Throttled (one runs at a time), and
// conditional batches retried when a concurrent mutation won.
inline constexpr size_t kS3RegistryQueueMax = 256;
inline constexpr int kS3RegistryAttemptsMax = 8;
// Random bucket ids tried inside the chosen partition before giving up.
inline constexpr int kS3RegistryPlacementAttemptsMax = 64;
// Router cache entries per kind (buckets by name, access keys) and async
// refresh lookups in flight for both kinds together.
inline constexpr size_t kS3RegistryCacheEntriesMax = 100'000;
inline constexpr size_t kS3RegistryAsyncLookupsMax = 1024;

static_assert(kS3RegistryBucketsMax * 256 <= kRpcFrameBytesMax,
              "a listing of every bucket (descriptors of at most ~256 bytes) fits one frame");
// A BucketDescriptor at its largest, field by field (tag + length + bytes):
// name, id, owner, region, created_ms, versioning, object_lock, and the
// capacity (mode, rcu, wcu <= kTableCapacityUnitsMax: 3-byte varints).
inline constexpr size_t kS3BucketDescriptorBytesMax =
    (2 + kS3BucketNameBytesMax) + 11 + (2 + kS3UserNameBytesMax) + (2 + kS3RegistryRegionBytesMax) +
    11 + 2 + 2 + (2 + 2 + 2 * 4);
static_assert(kTableCapacityUnitsMax < (uint64_t{1} << 21), "a capacity is a 3-byte varint");
static_assert(kS3BucketDescriptorBytesMax <= 256, "a bucket descriptor stays within ~256 bytes");
// A stored bucket (two keys) takes under 384 bytes, a user with a key
// (display name, email and canonical id included) under 1280.
static_assert(kS3UserNameBytesMax * 3 + kS3UserAccessKeyBytesMax * 2 + kS3UserSecretKeyBytesMax +
                  kS3UserDisplayNameBytesMax + kS3UserEmailBytesMax + 64 + 128 <= 1280,
              "a user's records fit the 1280 bytes the snapshot bound assumes");
static_assert(kS3RegistryBucketsMax * 384 + kS3UsersMax * 1280 <= kSnapshotBytesMax / 2,
              "the registry leaves half the meta snapshot to the partition map");
static_assert(kS3UserNameBytesMax + kS3UserAccessKeyBytesMax + 8 <= kStateKeyBytesMax);
// New-key visibility in the router's RegistryClient (registry_client.h):
// leader reads after a miss a replica answered "absent", in flight at once
// (beyond: the replica's answer stands), and how long and how many
// leader-confirmed absences are remembered per kind (bucket, access key;
// how long: knob router.s3_registry_negative_ttl_ms).
inline constexpr size_t kS3RegistryLeaderReadsMax = 64;
inline constexpr size_t kS3RegistryNegativeEntriesMax = 10'000;

// --- router (src/router) -----------------------------------------------------
// Route cache entries (partition descriptors) over all tables; beyond it the
// cache drops a table's entries before inserting (a miss only costs a MemDS
// lookup).
inline constexpr size_t kRouterRouteCacheEntriesMax = 100'000;
// Asynchronous refresh lookups to MemDS in flight at once; a cache hit beyond
// it skips its refresh (counted as skipped).
inline constexpr size_t kRouterAsyncLookupsMax = 1024;
// MemDS lookups travel in meta.lookup_batch calls of at most this many; at
// most kRouterMemdsBatchesInFlightMax batches are in flight, and at most
// kRouterMemdsQueuedLookupsMax lookups wait for the next one (beyond it a
// lookup answers Throttled at once).
inline constexpr size_t kRouterMemdsBatchLookupsMax = 256;
inline constexpr size_t kRouterMemdsBatchesInFlightMax = 4;
inline constexpr size_t kRouterMemdsQueuedLookupsMax = 16'384;
// A metadata replica whose lookup call failed is not picked first for this
// long.
inline constexpr int64_t kRouterMemdsSuspectMs = 1'000;
// Storage nodes a router remembers as unresponsive (router/unresponsive_nodes.h).
inline constexpr size_t kRouterUnresponsiveNodesMax = 4'096;
// Attempts of one client operation (first try + retries + redirects).
inline constexpr uint32_t kRouterAttemptsMax = 1'024;
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
inline constexpr size_t kRouterTokenBytesMax = 4096;
// Tables one KV grant may name (router/kv_grant.h), and the longest a bearer
// token may be valid for (router/token.h; `tessera kv token --ttl`).
inline constexpr size_t kRouterGrantTablesMax = 16;
inline constexpr int64_t kRouterTokenLifetimeSecondsMax = 30 * 86'400;
static_assert(kRouterGrantTablesMax * (kRouterTableBytesMax + 1) + 256 <= kRouterTokenBytesMax,
              "a token with the largest grant must fit");
inline constexpr size_t kRouterCredentialsMax = 1'000;

static_assert(kRouterScanItemsMax <= kScanItemsMax);
static_assert(kRouterBodyBytesMax <= kHttpBodyBytesMax);
static_assert(kRouterBackoffMsMax <= kRouterRequestDeadlineMsMax);
static_assert(kRouterRequestDeadlineMsMax <= kRpcCallTimeoutMsMax);
static_assert(kRouterBodyBytesMax + kRouterKeyBytesMax + (64 << 10) <= kRpcFrameBytesMax,
              "a maximal PUT must fit one kv.write frame");
static_assert(kRouterMemdsBatchLookupsMax <= kMetaLookupBatchMax);

// --- router: native KV API (docs/formats/kv-api.md) --------------------------
// docs/formats/kv-api.md. Payload bytes of one frame: a maximal put (value +
// key) or batch with room to spare; a larger length in a header closes the
// connection after an error response. Before the handshake completed only
// kNativeHandshakeFrameBytesMax: an unauthenticated client cannot make the
// router buffer more.
inline constexpr size_t kNativeFrameBytesMax = kRouterBodyBytesMax + kRouterKeyBytesMax + (64 << 10);
inline constexpr size_t kNativeHandshakeFrameBytesMax = 4 << 10;
// Payload bytes of one response frame (a scan page gathers many partitions'
// answers); a larger answer is replaced by an InvalidArgument error asking
// for a lower limit.
inline constexpr size_t kNativeResponseFrameBytesMax = 32 << 20;
// Requests of one connection handed to the KV router and not yet answered;
// beyond it a request is answered Throttled at once.
inline constexpr size_t kNativeInflightRequestsMax = 1'024;
// Response bytes queued on one connection; beyond it the client is not
// reading its answers and the connection is closed.
inline constexpr size_t kNativeQueueBytesMax = 64 << 20;
// Open connections of one router's native API; further accepts are closed.
inline constexpr size_t kNativeConnectionsMax = 1'024;
// A connection without a valid Hello this long after accept is closed.
inline constexpr uint32_t kNativeHandshakeTimeoutMs = 5'000;
// Conditions plus writes of one atomic batch.
inline constexpr size_t kNativeBatchRecordsMax = 1'000;
// After a connection-level error: how long the router flushes it and
// discards incoming bytes (at most kNativeLingerBytesMax) before closing,
// so the client reads the error instead of a reset.
inline constexpr uint32_t kNativeLingerMs = 1'000;
inline constexpr size_t kNativeLingerBytesMax = 16 << 20;
// Client side: the longest request and connect timeout a caller may ask for.
inline constexpr uint32_t kNativeClientTimeoutMsMax = 600'000;
// Client side: after a failed reconnect, calls fail at once for a backoff
// that starts here and doubles up to the max; a KvClient takes at most this
// many router endpoints.
inline constexpr uint32_t kNativeClientReconnectBackoffMsInitial = 50;
inline constexpr uint32_t kNativeClientReconnectBackoffMsMax = 2'000;
inline constexpr size_t kNativeClientEndpointsMax = 64;
// Signed HTTP KV requests (docs/formats/credentials.md): how far a request's
// Timestamp may be from the router's clock, either way. A captured signed
// request can be replayed within this window (as with SigV4).
inline constexpr int64_t kRouterSignatureSkewSecondsMax = 300;

static_assert(kNativeHandshakeFrameBytesMax < kNativeFrameBytesMax);
static_assert(kNativeFrameBytesMax <= kNativeResponseFrameBytesMax);
static_assert(kNativeResponseFrameBytesMax <= kNativeQueueBytesMax);
static_assert(kNativeFrameBytesMax < (size_t{1} << 32), "the header stores the length as uint32");
static_assert(kNativeFrameBytesMax <= kRpcFrameBytesMax,
              "a maximal native put must fit one kv.write rpc frame");

// --- router: S3 object model and front (src/s3/model, src/s3/front) ----------
// Items (entries + common prefixes) one s3.list read returns: a page of
// ListObjects (1,000) plus the one extra that tells whether more follow.
inline constexpr uint32_t kS3ListItemsPerReadMax = 1'001;
// Partitions one listing (or usage sum) may visit before it answers
// ServiceUnavailable: bounds the work of one request.
inline constexpr uint32_t kS3ListPartitionsPerRequestMax = 4'096;
// Hash ranges whose walks one listing of a hashed bucket runs at once
// (s3/front/object_index.h); each holds at most one page of items.
inline constexpr uint32_t kS3HashedListRangesInFlightMax = 8;
// Objects stored inline in their metadata record (replicated by Paxos)
// instead of in blobs are at most this big (knob router.s3_inline_bytes_max).
inline constexpr size_t kS3InlineBytesMax = 256 << 10;
// S3's single-PUT limit.
inline constexpr uint64_t kS3ObjectBytesMax = uint64_t{5} << 30;
// Bytes of one blob read while streaming an object out.
inline constexpr size_t kS3ReadPieceBytes = 2 << 20;
// Pieces of one GET held at once (being read, waiting, being written): the
// read-ahead that overlaps the nodes' reads with each other and with the
// client's (D42, D51); a GET holds at most this many times kS3ReadPieceBytes.
inline constexpr size_t kS3ReadPiecesInFlight = 8;
// Bytes all GETs of a router may hold in pieces read ahead (every piece but
// each GET's first, which is always allowed: s3/front/read_ahead_budget.h).
inline constexpr size_t kS3ReadAheadBytesMax = 256 << 20;
// XML request bodies (CreateBucketConfiguration, Delete, and the largest:
// CompleteMultipartUpload of 10,000 parts with checksums, about 1.7 MB).
inline constexpr size_t kS3XmlBodyBytesMax = 4 << 20;
// DeleteObjects: key deletions of one request in flight at once.
inline constexpr size_t kS3BatchDeletesInFlightMax = 16;
// Part numbers of a multipart upload: 1..this.
inline constexpr uint32_t kS3PartNumberMax = 10'000;
// Blobs one upload (PutObject, UploadPart, a copy) writes at once: the
// pipelined BlobWriter's window. Upload memory is about this many blobs.
inline constexpr size_t kS3BlobWritesInFlightMax = 4;
// CopyObject's source limit (S3's): larger objects copy with UploadPartCopy.
inline constexpr uint64_t kS3CopySourceBytesMax = uint64_t{5} << 30;
static_assert(kS3BlobWritesInFlightMax >= 1 &&
                  kS3BlobWritesInFlightMax * kBlobBytesMax <= kBlobClientInflightBytesMax,
              "one upload's window fits the blob client's in-flight bytes");

// --- router: admission control (src/admission) -------------------------------
// S3 request budgets of one router (src/admission/s3_admission.h; their
// defaults are knobs): the largest rate or burst an option may set.
inline constexpr double kAdmissionRateMaxPerS = 1e9;
// Budgets one router keeps per scope (buckets, users); each costs about
// 100 bytes plus its name.
inline constexpr size_t kAdmissionTrackedMax = 100'000;
// Lock shards per scope.
inline constexpr size_t kAdmissionShards = 16;
static_assert(kAdmissionTrackedMax >= kAdmissionShards);

// --- autoadmin and cluster commands (src/autoadmin, src/cluster, src/cli) ----
// The autoadmin lease (meta.autoadmin_lease): how long one grant or renewal
// lasts. The holder renews at a third of it.
inline constexpr uint32_t kAutoadminLeaseMsMin = 1'000;
inline constexpr uint32_t kAutoadminLeaseMsMax = 60'000;
// `tessera autoadmin status`: the actions an instance remembers.
inline constexpr size_t kAutoadminHistoryMax = 100;
// Requested splits (`tessera kv partition split`, meta "sr/") pending at
// once; a request beyond it is Throttled. Also the most split intents and
// requests meta.splits answers.
inline constexpr size_t kSplitRequestsMax = 16;
inline constexpr size_t kSplitIntentsListedMax = 256;
// `tessera autoadmin status`: the split refusals an instance remembers.
inline constexpr size_t kSplitRefusalsMax = 16;
// `_s3` partitions one placement weights record (meta a/placement_weights)
// names; the autoadmin publishes none for a larger table (placement then
// weighs bucket counts). A PartitionKeys entry is at most 24 bytes.
inline constexpr size_t kPlacementWeightsPartitionsMax = 16'384;
static_assert(kPlacementWeightsPartitionsMax * 24 + 64 <= kStateValueBytesMax);
// io threads of a router or node process (cluster/io_threads.h).
inline constexpr unsigned kProcessIoThreadsMax = 8;
// `tessera cluster up` that fails names a disk with less free space than
// this as a likely cause.
inline constexpr uint64_t kClusterDiskFreeWarnBytes = uint64_t{1} << 30;

}  // namespace tessera::limits
