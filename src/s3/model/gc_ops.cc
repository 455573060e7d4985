#include "s3/model/gc_ops.h"

#include <set>
#include <string>

#include "s3/model/op_context.h"
#include "s3/model/s3_keys.h"

namespace tessera::s3::model {

Result<pb::S3OpResult> ApplyGcDone(const pb::GcDoneOp& op, StateAccess& state) {
  const std::string key = GcKey(op.gc_slot());
  auto record = ReadRecord<pb::GcRecord>(state, key, "gc");
  if (!record.ok()) return record.status();
  if (!record->has_value()) return Outcome(pb::S3_OK);  // retired already
  const std::set<std::string> done(op.blob_ids().begin(), op.blob_ids().end());
  pb::GcRecord rest = **record;
  rest.clear_blob_ids();
  for (const std::string& id : (*record)->blob_ids()) {
    if (!done.count(id)) rest.add_blob_ids(id);
  }
  if (rest.blob_ids_size() == 0) {
    state.Delete(key);
  } else if (rest.blob_ids_size() != (*record)->blob_ids_size()) {
    state.Put(key, rest.SerializeAsString());
  }
  return Outcome(pb::S3_OK);
}

Result<std::vector<PendingGc>> ReadGcRecords(const RecordSource& records, size_t limit) {
  std::vector<PendingGc> out;
  if (limit == 0) return out;
  auto rows = records.Scan(GcKeysBegin(), GcKeysEnd(), limit);
  if (!rows.ok()) return rows.status();
  const size_t prefix_bytes = GcKeysBegin().size();
  for (const RecordRow& row : *rows) {
    if (row.key.size() != prefix_bytes + 8) return Status::Corruption("malformed GC record key");
    PendingGc gc;
    gc.gc_slot = ReadBigEndian64(std::string_view(row.key).substr(prefix_bytes));
    if (!gc.record.ParseFromString(row.value)) return Status::Corruption("unparseable gc record");
    out.push_back(std::move(gc));
  }
  return out;
}

}  // namespace tessera::s3::model
