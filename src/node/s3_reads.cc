#include "node/s3_reads.h"

#include "common/limits.h"
#include "node/partition_range.h"
#include "node/read_charge.h"
#include "node/rpc_handler_util.h"
#include "s3/model/listing.h"
#include "s3/model/object_read.h"
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
    std::vector<s3::model::RecordRow> out;
    out.reserve(std::min<size_t>(limit, 1024));
    TESSERA_RETURN_IF_ERROR(Walk(start, end, limit, {},
                                 [&out](std::string_view key, std::string_view value) {
                                   out.push_back({std::string(key), std::string(value)});
                                   return true;
                                 }));
    return out;
  }

  // In place: the rows' views point into the RocksDB iterator.
  Status Walk(const std::string& start, const std::string& end, size_t limit,
              const s3::model::KeyFilter& wants_value,
              const s3::model::RowVisitor& visit) const override {
    return state_.VisitRows(
        start, end, std::min(limit, limits::kScanItemsMax), wants_value,
        [&visit](std::string_view key, const PartitionStateMachine::RecordView* record) {
          return visit(key, record ? record->value : std::string_view());
        });
  }

 private:
  const PartitionStateMachine& state_;
};

// The object read's view: point reads of the applied state, unwrapped.
class StatePoints : public s3::model::PointReader {
 public:
  explicit StatePoints(const PartitionStateMachine& state) : state_(state) {}

  Result<std::optional<std::string>> Get(const std::string& key) const override {
    auto record = state_.Get(key);
    if (!record.ok()) return record.status();
    if (!record->has_value()) return std::optional<std::string>();
    return std::optional<std::string>(std::move(*(*record)->mutable_value()));
  }

 private:
  const PartitionStateMachine& state_;
};

// The bytes of a version's record an s3.get read: the object's bytes
// (inline data) are not charged (docs/admission.md, "S3 operations").
uint64_t RecordBytes(const pb::S3GetResponse& read) {
  if (!read.found()) return 0;
  return read.version().ByteSizeLong() - read.version().inline_data().size();
}

// A listing's keys and common prefixes, as the router charges a listing.
uint64_t ListedBytes(const pb::S3ListResponse& listed) {
  uint64_t bytes = 0;
  for (const pb::S3ListItem& item : listed.items()) {
    bytes += item.has_entry() ? item.entry().key().size() : item.common_prefix().size();
  }
  return bytes;
}

void OnGet(ReplicationHost* replication, KvAdmission* admission, const S3LoadRecorder& record_load,
           const pb::Envelope& request, rpc::Responder responder) {
  pb::S3GetRequest get;
  if (!ParsePayload(request, responder, &get)) return;
  auto charge = ReadCharge::Admit(*admission, get.group_id(),
                                  static_cast<pb::Consistency>(get.consistency()));
  if (!charge.ok()) return responder.Fail(charge.status());
  record_load(get.group_id(), S3LoadKey(get));
  ReadS3Object(*replication, get, [responder, charge = *charge](Result<pb::S3GetResponse> read) {
    if (!read.ok()) {
      charge.Failed();
      return responder.Fail(read.status());
    }
    charge.Served(RecordBytes(*read));
    responder.Reply(read->SerializeAsString());
  });
}

void OnList(ReplicationHost* replication, KvAdmission* admission, const S3LoadRecorder& record_load,
            const pb::Envelope& request, rpc::Responder responder) {
  pb::S3ListRequest list;
  if (!ParsePayload(request, responder, &list)) return;
  if (list.max_keys() == 0 || list.max_keys() > limits::kS3ListItemsPerReadMax) {
    return responder.Fail(Status::InvalidArgument("s3.list max_keys out of range"));
  }
  auto host = FindGroupOrFail(*replication, list.group_id(), responder);
  if (!host) return;
  if (!replication->DescriptorAllows(
          list.group_id(), [&list](const pb::PartitionDescriptor& d) { return S3ListInRange(d, list); })) {
    return responder.Fail(Status::WrongPartition("s3.list ends past the range of group " +
                                                 std::to_string(list.group_id())));
  }
  const auto consistency = static_cast<pb::Consistency>(list.consistency());
  auto charge = ReadCharge::Admit(*admission, list.group_id(), consistency);
  if (!charge.ok()) return responder.Fail(charge.status());
  record_load(list.group_id(), S3LoadKey(list));
  host->ReadState(consistency, [list = std::move(list), responder, charge = *charge](
                                   Result<const PartitionStateMachine*> state) {
    if (!state.ok()) {
      charge.Failed();
      return responder.Fail(state.status());
    }
    // Checked again in the state read (D130).
    if (Status in_range = (*state)->CheckEndInRange(list.end_key()); !in_range.ok()) {
      charge.Failed();
      return responder.Fail(in_range);
    }
    auto listed = s3::model::ListPartition(StateRecords(**state), list);
    if (!listed.ok()) {
      charge.Failed();
      return responder.Fail(listed.status());
    }
    charge.Served(ListedBytes(*listed));
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

void ReadS3Object(ReplicationHost& replication, const pb::S3GetRequest& request,
                  std::function<void(Result<pb::S3GetResponse>)> done) {
  std::shared_ptr<GroupHost> host = replication.Find(request.group_id());
  if (!host) {
    return done(Status::NotFound("group " + std::to_string(request.group_id()) +
                                 " not hosted here"));
  }
  if (!replication.DescriptorAllows(request.group_id(), [&request](const pb::PartitionDescriptor& d) {
        return S3GetInRange(d, request);
      })) {
    return done(Status::WrongPartition("object is outside the range of group " +
                                       std::to_string(request.group_id())));
  }
  const auto consistency = static_cast<pb::Consistency>(request.consistency());
  host->ReadState(consistency, [request, done = std::move(done)](
                                   Result<const PartitionStateMachine*> state) {
    if (!state.ok()) return done(state.status());
    const Status in_range =
        (*state)->CheckKeyInRange(s3::model::ObjectPrefix(request.bucket_id(), request.key()));
    if (!in_range.ok()) return done(in_range);
    done(s3::model::ReadObject(StatePoints(**state), request));
  });
}

std::vector<std::pair<std::string, rpc::Handler>> S3ReadHandlers(ReplicationHost* replication,
                                                                 KvAdmission* admission,
                                                                 S3LoadRecorder record_load) {
  auto charged = [replication, admission, record_load](auto serve) -> rpc::Handler {
    return [replication, admission, record_load, serve](const rpc::PeerInfo&, const pb::Envelope& request,
                                                        rpc::Responder responder) {
      serve(replication, admission, record_load, request, std::move(responder));
    };
  };
  return {{"s3.list", charged(OnList)},
          {"s3.usage", ServeWith(replication, OnUsage)},
          {"s3.get", charged(OnGet)}};
}

}  // namespace tessera::node
