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

// --- storage ---------------------------------------------------------------
// Group-commit writer: pending requests before Submit pushes back.
inline constexpr size_t kGroupCommitQueueMax = 65536;
// One synced WriteBatch carries at most this many bytes.
inline constexpr size_t kGroupCommitBatchBytesMax = 16 << 20;

}  // namespace tessera::limits
