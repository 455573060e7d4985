// `tessera kv table create|describe|update`: a KV table's partitions and
// capacity (docs/admission.md), through the metadata replicas
// (meta.create_table, meta.tables, meta.update_table_capacity) with the
// operator's identity from the cluster directory.
//
//   create NAME [--partitions N] [--rcu N --wcu N | --on-demand]
//   describe NAME
//   update NAME [--rcu N] [--wcu N] [--on-demand]
//
// Capacities are checked here first (1..limits::kTableCapacityUnitsMax, both
// or neither of --rcu/--wcu at create, not with --on-demand), so bad input
// never reaches the cluster; meta checks them again.
// Exit codes: 0 done, 2 bad input, 3 failed (unknown table included); the
// message on err.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

#include "common/result.h"
#include "tessera/cluster_rpc.pb.h"

namespace tessera::cli {

struct KvTableArgs {
  std::string action;  // create | describe | update
  std::string layout_path;
  std::string dir;
  std::string table;
  uint32_t partitions = 1;   // create
  std::optional<int64_t> rcu;  // signed: a negative value gets our message
  std::optional<int64_t> wcu;
  bool on_demand = false;
};

// The capacity `args` asks for, given the table's current one (update);
// InvalidArgument for bad input. Pure.
Result<pb::TableCapacity> RequestedCapacity(const KvTableArgs& args,
                                            const pb::TableCapacity* current);

int RunKvTableCommand(const KvTableArgs& args, std::ostream& out, std::ostream& err);

}  // namespace tessera::cli
