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
// Items one range scan of applied state may return.
inline constexpr size_t kScanItemsMax = 10'000;
// Payload of one storage record (the header stores its length as uint32).
inline constexpr size_t kRecordPayloadBytesMax = (size_t{1} << 32) - 1;

static_assert(kGroupCommitBatchBytesMax <= kGroupCommitQueueBytesMax);
static_assert(kStateValueBytesMax + kStateKeyBytesMax <= kGroupCommitBatchBytesMax);
static_assert(kStateValueBytesMax <= kRecordPayloadBytesMax);

}  // namespace tessera::limits
