#include "sim/kv_state.h"

#include <utility>

#include "common/crc32c.h"

namespace tessera::sim {

std::optional<std::string> KvState::Get(const std::string& key) const {
  auto it = data_.find(key);
  if (it == data_.end()) return std::nullopt;
  return it->second;
}

const SlotResult* KvState::ResultAt(Slot slot) const {
  auto it = results_.find(slot);
  return it == results_.end() ? nullptr : &it->second;
}

Status KvState::Apply(const pb::Entry& entry) {
  if (entry.slot() != applied_index_ + 1) {
    return Status::InvalidArgument("apply of slot " + std::to_string(entry.slot()) +
                                   " after " + std::to_string(applied_index_));
  }
  if (entry.type() == pb::ENTRY_COMMAND) {
    pb::sim::KvCommand command;
    if (!command.ParseFromString(entry.command())) {
      return Status::Corruption("slot " + std::to_string(entry.slot()) +
                                ": command does not parse");
    }
    SlotResult result{entry.request_id(), false};
    bool write = true;
    if (command.op() == pb::sim::KV_CAS) {
      auto it = data_.find(command.key());
      write = command.expect_present() ? (it != data_.end() && it->second == command.expected())
                                       : it == data_.end();
      result.cas_succeeded = write;
    }
    if (write) {
      data_[command.key()] = command.value();
      changed_keys_.push_back(command.key());
    }
    results_[entry.slot()] = result;
  }
  applied_index_ = entry.slot();
  return Status::Ok();
}

Status KvState::Skip(const pb::Entry& entry) {
  if (entry.slot() != applied_index_ + 1) {
    return Status::InvalidArgument("skip of slot " + std::to_string(entry.slot()) + " after " +
                                   std::to_string(applied_index_));
  }
  applied_index_ = entry.slot();
  return Status::Ok();
}

KvState KvState::EmptyAt(Slot applied_index) {
  KvState state;
  state.applied_index_ = state.delta_base_index_ = applied_index;
  return state;
}

uint64_t KvState::DataHash() const {
  uint32_t crc = 0;
  for (const auto& [key, value] : data_) {
    crc = Crc32c(key, crc);
    crc = Crc32c(std::string_view("\0", 1), crc);
    crc = Crc32c(value, crc);
    crc = Crc32c(std::string_view("\1", 1), crc);
  }
  return (static_cast<uint64_t>(data_.size()) << 32) | crc;
}

std::string KvState::Serialize() const {
  pb::sim::KvSnapshot snapshot;
  snapshot.set_applied_index(applied_index_);
  for (const auto& [key, value] : data_) {
    pb::sim::KvPair* pair = snapshot.add_data();
    pair->set_key(key);
    pair->set_value(value);
  }
  for (const auto& [slot, result] : results_) {
    pb::sim::KvSlotResult* out = snapshot.add_results();
    out->set_slot(slot);
    out->set_request_id(result.request_id);
    out->set_cas_succeeded(result.cas_succeeded);
  }
  std::string bytes;
  snapshot.SerializeToString(&bytes);
  return bytes;
}

Result<KvState> KvState::Parse(std::string_view bytes) {
  pb::sim::KvSnapshot snapshot;
  if (!snapshot.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return Status::Corruption("kv snapshot does not parse");
  }
  KvState state;
  state.applied_index_ = snapshot.applied_index();
  state.delta_base_index_ = snapshot.applied_index();
  for (const pb::sim::KvPair& pair : snapshot.data()) state.data_[pair.key()] = pair.value();
  for (const pb::sim::KvSlotResult& result : snapshot.results()) {
    if (result.slot() > state.applied_index_) {
      return Status::Corruption("kv snapshot has a result above its applied index");
    }
    state.results_[result.slot()] = SlotResult{result.request_id(), result.cas_succeeded()};
  }
  return state;
}

KvState::Delta KvState::TakeDelta() {
  Delta delta;
  delta.applied_index = applied_index_;
  for (const std::string& key : changed_keys_) delta.data[key] = data_.at(key);
  for (auto it = results_.upper_bound(delta_base_index_); it != results_.end(); ++it) {
    delta.results.emplace_back(it->first, it->second);
  }
  changed_keys_.clear();
  delta_base_index_ = applied_index_;
  return delta;
}

void KvState::MergeDelta(const Delta& delta) {
  applied_index_ = delta.applied_index;
  for (const auto& [key, value] : delta.data) data_[key] = value;
  for (const auto& [slot, result] : delta.results) results_[slot] = result;
  delta_base_index_ = applied_index_;
}

std::string EncodeKvCommand(uint64_t client_id, const std::string& key,
                            const std::string& value, bool cas,
                            const std::optional<std::string>& expected) {
  pb::sim::KvCommand command;
  command.set_op(cas ? pb::sim::KV_CAS : pb::sim::KV_PUT);
  command.set_key(key);
  command.set_value(value);
  command.set_client_id(client_id);
  if (cas && expected) {
    command.set_expect_present(true);
    command.set_expected(*expected);
  }
  std::string bytes;
  command.SerializeToString(&bytes);
  return bytes;
}

std::string EntryFingerprint(const pb::Entry& entry) {
  std::string out;
  out.reserve(entry.command().size() + 32);
  out += std::to_string(static_cast<int>(entry.type()));
  out += '/';
  out += std::to_string(entry.request_id());
  out += '/';
  if (entry.type() == pb::ENTRY_COMMAND) out += entry.command();
  if (entry.type() == pb::ENTRY_MEMBERSHIP) {
    for (uint32_t voter : entry.membership().voters()) out += "v" + std::to_string(voter);
    for (uint32_t learner : entry.membership().learners()) out += "l" + std::to_string(learner);
  }
  return out;
}

}  // namespace tessera::sim
