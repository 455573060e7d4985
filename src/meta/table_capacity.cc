#include "meta/table_capacity.h"

#include <spdlog/spdlog.h>

#include "common/limits.h"
#include "meta/meta_group_calls.h"
#include "meta/meta_keys.h"

namespace tessera::meta {
namespace {

// Attempts of an update that keeps finding the descriptor moved.
constexpr int kUpdateAttemptsMax = 3;

Status UnitsInRange(const char* what, uint64_t units) {
  if (units >= 1 && units <= limits::kTableCapacityUnitsMax) return Status::Ok();
  return Status::InvalidArgument(std::string(what) + " must be 1.." +
                                 std::to_string(limits::kTableCapacityUnitsMax) + " units per second, not " +
                                 std::to_string(units));
}

}  // namespace

Status ValidateTableCapacity(const pb::TableCapacity& c) {
  switch (c.mode()) {
    case pb::TableCapacity::CAPACITY_PROVISIONED:
      TESSERA_RETURN_IF_ERROR(UnitsInRange("rcu", c.rcu()));
      return UnitsInRange("wcu", c.wcu());
    case pb::TableCapacity::CAPACITY_UNSET:
    case pb::TableCapacity::CAPACITY_ON_DEMAND:
      if (c.rcu() != 0 || c.wcu() != 0) {
        return Status::InvalidArgument("rcu and wcu are only for a provisioned table");
      }
      return Status::Ok();
    default:
      return Status::InvalidArgument("unknown capacity mode " + std::to_string(c.mode()));
  }
}

bool SameCapacity(const pb::TableCapacity& a, const pb::TableCapacity& b) {
  return a.mode() == b.mode() && a.rcu() == b.rcu() && a.wcu() == b.wcu();
}

std::string CapacityText(const pb::TableCapacity& c) {
  switch (c.mode()) {
    case pb::TableCapacity::CAPACITY_PROVISIONED:
      return "provisioned rcu=" + std::to_string(c.rcu()) + " wcu=" + std::to_string(c.wcu());
    case pb::TableCapacity::CAPACITY_ON_DEMAND: return "on-demand";
    default: return "unset";
  }
}

Result<pb::UpdateTableCapacityResponse> UpdateTableCapacity(
    node::GroupHost& group, const pb::UpdateTableCapacityRequest& request) {
  TESSERA_RETURN_IF_ERROR(ValidateTableName(request.name()));
  TESSERA_RETURN_IF_ERROR(ValidateTableCapacity(request.capacity()));
  const std::string key = TableKey(request.name());
  for (int attempt = 0; attempt < kUpdateAttemptsMax; ++attempt) {
    auto stored = ReadStrongSync(group, key);
    if (!stored.ok()) return stored.status();
    if (!stored->has_value()) return Status::NotFound("no table '" + request.name() + "'");
    pb::UpdateTableCapacityResponse response;
    pb::TableDescriptor& table = *response.mutable_table();
    if (!table.ParseFromString((*stored)->value())) {
      return Status::Corruption("unparsable descriptor of table '" + request.name() + "'");
    }
    if (SameCapacity(table.capacity(), request.capacity())) return response;
    *table.mutable_capacity() = request.capacity();
    pb::KvBatch batch;
    pb::KvCondition* held = batch.add_conditions();
    held->set_key(key);
    held->set_version((*stored)->version());
    pb::KvWrite* w = batch.add_writes();
    w->set_key(key);
    w->set_value(table.SerializeAsString());
    auto written = WriteSync(group, std::move(batch));
    if (!written.ok()) return written.status();
    if (!written->applied()) continue;  // moved meanwhile: read again
    spdlog::info("meta.table_capacity_updated table={} capacity=\"{}\"", request.name(),
                 CapacityText(table.capacity()));
    return response;
  }
  return Status::Conflict("the descriptor of table '" + request.name() + "' kept changing; retry");
}

}  // namespace tessera::meta
