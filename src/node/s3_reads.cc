#include "node/s3_reads.h"

#include "common/limits.h"
#include "node/rpc_handler_util.h"
#include "s3/model/listing.h"
#include "s3/model/s3_keys.h"
#include "tessera/s3.pb.h"

namespace tessera::node {
namespace {

// The listing's view of a partition: its applied state, KvRecord-unwrapped.
class StateRecords : public s3::model::RecordSource {
 public:
  explicit StateRecords(const PartitionStateMachine& state) : state_(state) {}

  Result<std::vector<s3::model::RecordRow>> Scan(const std::string& start, const std::string& end,
                                                 size_t limit) const override {
    auto rows = state_.Scan(start, end, static_cast<uint32_t>(limit));
    if (!rows.ok()) return rows.status();
    std::vector<s3::model::RecordRow> out;
    out.reserve(rows->items_size());
    for (pb::KvItem& item : *rows->mutable_items()) {
      out.push_back({std::move(*item.mutable_key()), std::move(*item.mutable_value())});
    }
    return out;
  }

 private:
  const PartitionStateMachine& state_;
};

void OnList(ReplicationHost* replication, const pb::Envelope& request, rpc::Responder responder) {
  pb::S3ListRequest list;
  if (!ParsePayload(request, responder, &list)) return;
  if (list.max_keys() == 0 || list.max_keys() > limits::kS3ListItemsPerReadMax) {
    return responder.Fail(Status::InvalidArgument("s3.list max_keys out of range"));
  }
  auto host = FindGroupOrFail(*replication, list.group_id(), responder);
  if (!host) return;
  const auto consistency = static_cast<pb::Consistency>(list.consistency());
  host->ReadState(consistency, [list = std::move(list), responder](
                                   Result<const PartitionStateMachine*> state) {
    if (!state.ok()) return responder.Fail(state.status());
    auto listed = s3::model::ListPartition(StateRecords(**state), list);
    if (!listed.ok()) return responder.Fail(listed.status());
    responder.Reply(listed->SerializeAsString());
  });
}

void OnUsage(ReplicationHost* replication, const pb::Envelope& request, rpc::Responder responder) {
  pb::S3UsageRequest usage;
  if (!ParsePayload(request, responder, &usage)) return;
  auto host = FindGroupOrFail(*replication, usage.group_id(), responder);
  if (!host) return;
  host->ReadState(pb::CONSISTENCY_STRONG, [usage, responder](
                                              Result<const PartitionStateMachine*> state) {
    if (!state.ok()) return responder.Fail(state.status());
    auto record = (*state)->Get(s3::model::UsageKey(usage.bucket_id()));
    if (!record.ok()) return responder.Fail(record.status());
    pb::BucketUsage out;
    if (record->has_value() && !out.ParseFromString((*record)->value())) {
      return responder.Fail(Status::Corruption("unparseable usage record"));
    }
    responder.Reply(out.SerializeAsString());
  });
}

}  // namespace

std::vector<std::pair<std::string, rpc::Handler>> S3ReadHandlers(ReplicationHost* replication) {
  return {{"s3.list", ServeWith(replication, OnList)},
          {"s3.usage", ServeWith(replication, OnUsage)}};
}

}  // namespace tessera::node
