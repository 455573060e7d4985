// KvState: the simulator's replicated state machine, a small key-value map
// with put and compare-and-set, plus the result of every command it applied
// (slot -> request id, cas outcome) so that clients learn results after a
// snapshot and the durability checker can find acknowledged writes. Reads
// are served by the host (lease reads), never logged.
//
// Invariants: applied_index() only grows through Apply (by one) or is
// replaced wholesale by a snapshot; results() holds only slots <=
// applied_index().
//
// Thread safety: a value type; no sharing.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "consensus/options.h"
#include "tessera/consensus.pb.h"
#include "tessera/sim.pb.h"

namespace tessera::sim {

using consensus::Slot;

struct SlotResult {
  uint64_t request_id = 0;
  bool cas_succeeded = false;
  bool operator==(const SlotResult&) const = default;
};

class KvState {
 public:
  Slot applied_index() const { return applied_index_; }
  std::optional<std::string> Get(const std::string& key) const;
  // The result recorded for `slot`, nullptr when it held no command (or is
  // not applied yet).
  const SlotResult* ResultAt(Slot slot) const;
  const std::map<Slot, SlotResult>& results() const { return results_; }
  const std::map<std::string, std::string>& data() const { return data_; }

  // Applies the committed entry at applied_index() + 1 (InvalidArgument when
  // the slot is not next, Corruption when the command does not parse).
  Status Apply(const pb::Entry& entry);
  // A log replica's apply: the committed entry at applied_index() + 1
  // only advances the applied index (no data, no result).
  Status Skip(const pb::Entry& entry);
  // A log replica's state after it installed the leader's log base.
  static KvState EmptyAt(Slot applied_index);

  // A stable 64-bit digest of the data (not the results): replicas at the
  // same applied index must agree on it.
  uint64_t DataHash() const;

  // Snapshot encoding (sim.proto KvSnapshot), byte-identical for equal states.
  std::string Serialize() const;
  static Result<KvState> Parse(std::string_view bytes);

  // --- crash-consistent persistence in increments --------------------------
  // What changed since the previous TakeDelta (or since this state was
  // parsed or merged into): the keys written and the results of the slots
  // applied. MergeDelta on the image the previous deltas built yields this
  // state.
  struct Delta {
    Slot applied_index = 0;
    std::map<std::string, std::string> data;  // changed keys only
    std::vector<std::pair<Slot, SlotResult>> results;
  };
  Delta TakeDelta();
  void MergeDelta(const Delta& delta);

 private:
  Slot applied_index_ = 0;
  std::map<std::string, std::string> data_;
  std::map<Slot, SlotResult> results_;
  // Since the previous TakeDelta: keys written, and the applied index then.
  std::vector<std::string> changed_keys_;
  Slot delta_base_index_ = 0;
};

// Encodes a put (expected unset, cas false) or a compare-and-set.
std::string EncodeKvCommand(uint64_t client_id, const std::string& key,
                            const std::string& value, bool cas,
                            const std::optional<std::string>& expected);

// The value an entry carries, without its slot and ballot: two replicas
// agree on a slot iff their fingerprints are equal.
std::string EntryFingerprint(const pb::Entry& entry);

}  // namespace tessera::sim
