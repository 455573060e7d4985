// Helpers shared by the tests that drive a PartitionStateMachine directly
// (partition_state_machine_test, partition_split_apply_test,
// gc_check_test): a NodeStore in a fresh temporary directory, and the log
// entries they apply.
#pragma once

#include <memory>
#include <string>

#include "storage/node_store.h"
#include "storage/storage_test_util.h"
#include "tessera/consensus.pb.h"
#include "tessera/kv.pb.h"

namespace tessera::node::testing {

// A NodeStore opened in a fresh directory, removed at destruction.
// Reopen closes and opens it again (a restart of its process).
class TempStore {
 public:
  TempStore() { Open(); }
  ~TempStore() { store_.reset(); }  // before dir_ goes
  TempStore(const TempStore&) = delete;
  TempStore& operator=(const TempStore&) = delete;

  void Reopen() {
    store_.reset();
    Open();
  }
  storage::NodeStore* get() { return store_.get(); }

 private:
  void Open() {
    storage::NodeStoreOptions options;
    options.path = dir_.path();
    store_ = storage::testing::OpenStoreWith(options);
  }
  storage::testing::TempDir dir_;
  std::unique_ptr<storage::NodeStore> store_;
};

// The chosen entry at `slot` carrying `command` (request id slot * 10).
inline pb::Entry CommandEntry(consensus::Slot slot, const pb::KvCommand& command) {
  pb::Entry e;
  e.set_slot(slot);
  e.set_type(pb::ENTRY_COMMAND);
  e.set_command(command.SerializeAsString());
  e.set_request_id(slot * 10);
  return e;
}

// The entry at `slot` writing `value` at `key`, unconditionally.
inline pb::Entry PutEntry(consensus::Slot slot, const std::string& key, const std::string& value) {
  pb::KvCommand command;
  pb::KvWrite* w = command.mutable_batch()->add_writes();
  w->set_key(key);
  w->set_value(value);
  return CommandEntry(slot, command);
}

}  // namespace tessera::node::testing
