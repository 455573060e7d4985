#include "cli/kv_table_command.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <ostream>
#include <thread>

#include "cli/cluster_session.h"
#include "common/limits.h"
#include "meta/meta_keys.h"
#include "meta/table_capacity.h"

namespace tessera::cli {
namespace {

using cluster::ProcessRole;
using std::chrono::milliseconds;

constexpr milliseconds kDescribeTimeout{5'000};
// create_table waits until every replica's node acknowledged its group.
constexpr milliseconds kCreateTimeout{limits::kMetaCreateGroupDeadlineMs + 15'000};

Status UnitsArg(const char* flag, int64_t units) {
  if (units >= 1 && static_cast<uint64_t>(units) <= limits::kTableCapacityUnitsMax) return Status::Ok();
  return Status::InvalidArgument(std::string(flag) + " must be 1.." +
                                 std::to_string(limits::kTableCapacityUnitsMax) +
                                 " units per second, not " + std::to_string(units));
}

// The table as one metadata replica's MemDS holds it. A replica applies a
// create a moment after the leader answered it, so a table missing from
// the answers is asked for again for kCreatedTableLag before NotFound (a
// table created just before is found; a capacity just updated may still
// show its previous value for that moment).
Result<pb::TableDescriptor> Describe(cluster::ClusterClient& client, const std::string& name,
                                     uint32_t* partitions) {
  constexpr milliseconds kCreatedTableLag{2'000};
  constexpr milliseconds kAskAgainAfter{100};
  const auto give_up = std::chrono::steady_clock::now() + kCreatedTableLag;
  for (;;) {
    auto raw = client.CallAny(ProcessRole::kMeta, "meta.tables",
                              pb::TablesRequest().SerializeAsString(), kDescribeTimeout);
    if (!raw.ok()) return raw.status();
    pb::TablesResponse tables;
    if (!tables.ParseFromString(*raw)) return Status::Corruption("unparsable meta.tables answer");
    *partitions = 0;
    for (const pb::PartitionDescriptor& p : tables.partitions()) *partitions += p.table() == name;
    for (const pb::TableDescriptor& t : tables.tables()) {
      if (t.name() == name) return t;
    }
    if (std::chrono::steady_clock::now() >= give_up) break;
    std::this_thread::sleep_for(kAskAgainAfter);
  }
  return Status::NotFound("no table '" + name + "'");
}

void Print(std::ostream& out, const pb::TableDescriptor& t, uint32_t partitions) {
  out << "table " << t.name() << "\n"
      << "table_id " << t.table_id() << "\n"
      << "partitions " << partitions << "\n"
      << "capacity " << meta::CapacityText(t.capacity()) << "\n";
}

int Fail(std::ostream& err, const Status& s) {
  err << "tessera kv table: " << s.ToString() << "\n";
  return s.code() == StatusCode::kInvalidArgument ? 2 : 3;
}

}  // namespace

Result<pb::TableCapacity> RequestedCapacity(const KvTableArgs& a, const pb::TableCapacity* current) {
  pb::TableCapacity c;
  if (a.on_demand) {
    if (a.rcu || a.wcu) return Status::InvalidArgument("--on-demand takes no --rcu/--wcu");
    c.set_mode(pb::TableCapacity::CAPACITY_ON_DEMAND);
    return c;
  }
  if (a.rcu) TESSERA_RETURN_IF_ERROR(UnitsArg("--rcu", *a.rcu));
  if (a.wcu) TESSERA_RETURN_IF_ERROR(UnitsArg("--wcu", *a.wcu));
  const bool provisioned =
      current != nullptr && current->mode() == pb::TableCapacity::CAPACITY_PROVISIONED;
  if (current != nullptr && !a.rcu && !a.wcu) {
    return Status::InvalidArgument("update needs --rcu, --wcu or --on-demand");
  }
  if (!provisioned && a.rcu.has_value() != a.wcu.has_value()) {
    return Status::InvalidArgument(current == nullptr
                                       ? "give both --rcu and --wcu (or --on-demand, or neither)"
                                       : "the table is not provisioned: give both --rcu and --wcu");
  }
  if (!a.rcu && !a.wcu) return c;  // create without settings: unset
  c.set_mode(pb::TableCapacity::CAPACITY_PROVISIONED);
  c.set_rcu(a.rcu ? static_cast<uint64_t>(*a.rcu) : current->rcu());
  c.set_wcu(a.wcu ? static_cast<uint64_t>(*a.wcu) : current->wcu());
  return c;
}

int RunKvTableCommand(const KvTableArgs& a, std::ostream& out, std::ostream& err) {
  spdlog::set_level(spdlog::level::err);
  if (Status name = meta::ValidateTableName(a.table); !name.ok()) return Fail(err, name);
  if (a.action == "create") {
    if (a.partitions < 1 || a.partitions > limits::kMetaPartitionsPerTableMax) {
      return Fail(err, Status::InvalidArgument("--partitions must be 1.." +
                                               std::to_string(limits::kMetaPartitionsPerTableMax)));
    }
  }
  Result<pb::TableCapacity> create_capacity = pb::TableCapacity();
  if (a.action == "create") {
    create_capacity = RequestedCapacity(a, nullptr);
    if (!create_capacity.ok()) return Fail(err, create_capacity.status());
  } else if (a.action == "describe" && (a.rcu || a.wcu || a.on_demand)) {
    return Fail(err, Status::InvalidArgument("describe takes no capacity"));
  }
  auto session = ClusterSession::Open(a.layout_path, a.dir);
  if (!session.ok()) return Fail(err, session.status());
  auto client = (*session)->client();
  if (!client.ok()) return Fail(err, client.status());
  cluster::ClusterClient& c = **client;
  uint32_t partitions = 0;
  if (a.action == "create") {
    pb::CreateTableRequest req;
    req.set_name(a.table);
    req.set_partitions(a.partitions);
    *req.mutable_capacity() = *create_capacity;
    auto raw = c.CallAny(ProcessRole::kMeta, "meta.create_table", req.SerializeAsString(), kCreateTimeout);
    pb::CreateTableResponse created;
    if (!raw.ok()) return Fail(err, raw.status());
    if (!created.ParseFromString(*raw)) return Fail(err, Status::Corruption("unparsable answer"));
    Print(out, created.table(), static_cast<uint32_t>(created.partitions_size()));
    return 0;
  }
  auto table = Describe(c, a.table, &partitions);
  if (!table.ok()) return Fail(err, table.status());
  if (a.action == "describe") {
    Print(out, *table, partitions);
    return 0;
  }
  auto capacity = RequestedCapacity(a, &table->capacity());
  if (!capacity.ok()) return Fail(err, capacity.status());
  pb::UpdateTableCapacityRequest req;
  req.set_name(a.table);
  *req.mutable_capacity() = *capacity;
  auto raw = c.CallAny(ProcessRole::kMeta, "meta.update_table_capacity", req.SerializeAsString(),
                       kDescribeTimeout);
  if (!raw.ok()) return Fail(err, raw.status());
  pb::UpdateTableCapacityResponse updated;
  if (!updated.ParseFromString(*raw)) return Fail(err, Status::Corruption("unparsable answer"));
  Print(out, updated.table(), partitions);
  return 0;
}

}  // namespace tessera::cli
