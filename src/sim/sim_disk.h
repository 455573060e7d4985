// SimDisk: one replica's simulated storage. Writes are appended to an
// ordered stream and stay PENDING (volatile) until a sync covering them
// completes; a crash drops the pending writes except, at the simulator's
// choice, a prefix of them (the OS may have flushed some pages), exactly the
// freedom a write-ahead log on a real disk has.
//
// The durable image is what a restarted replica recovers: hard state, log
// base, log entries and the applied key-value state with its applied index
// (one durable unit, as the storage module writes them in one WriteBatch).
//
// Invariants: writes become durable in stream order; the durable log holds
// no slot below log_base.log_start.
//
// Thread safety: none; owned by the simulation.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "consensus/replica.h"
#include "sim/kv_state.h"

namespace tessera::sim {

// One record of the write stream; its parts apply in the order declared.
struct DiskWrite {
  std::optional<pb::HardState> hard_state;
  std::optional<Slot> truncate_from;    // delete log slots >= it
  std::vector<pb::Entry> entries;       // each overwrites its slot
  std::optional<pb::LogBase> log_base;  // deletes log slots < log_start
  std::optional<KvState> kv_replace;    // snapshot install
  std::optional<KvState::Delta> kv_delta;
};

struct DurableImage {
  pb::HardState hard_state;
  pb::LogBase log_base;
  std::map<Slot, pb::Entry> log;
  KvState kv;
};

class SimDisk {
 public:
  explicit SimDisk(const pb::Membership& bootstrap_membership);

  // Appends a write; returns its position in the stream (1, 2, ...).
  uint64_t Append(DiskWrite write);
  // Makes every write at position <= upto durable.
  void SyncUpTo(uint64_t upto);
  uint64_t last_appended() const { return appended_; }
  uint64_t last_durable() const { return durable_; }
  bool has_pending() const { return !pending_.empty(); }

  // Loses every pending write except the first `keep` of them.
  void Crash(size_t keep);
  size_t pending_count() const { return pending_.size(); }

  const DurableImage& image() const { return image_; }
  // The recovered state for a new Replica; an error names what is wrong
  // with the durable image (a gap in the log, an applied index below it).
  Result<consensus::RecoveredState> Recover() const;

 private:
  void ApplyDurable(const DiskWrite& write);

  DurableImage image_;
  std::deque<std::pair<uint64_t, DiskWrite>> pending_;
  uint64_t appended_ = 0;
  uint64_t durable_ = 0;
};

}  // namespace tessera::sim
