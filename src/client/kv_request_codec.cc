#include "client/kv_request_codec.h"

#include "common/limits.h"

namespace tessera::kvapi {
namespace {

KvStatus Invalid(std::string message) { return KvStatus(KvCode::kInvalidArgument, std::move(message)); }

pb::Consistency ConsistencyToProto(KvConsistency c) {
  return c == KvConsistency::kEventual ? pb::CONSISTENCY_EVENTUAL : pb::CONSISTENCY_STRONG;
}

pb::KvCondition ConditionToProto(const KvCondition& c) {
  pb::KvCondition out;
  out.set_key(c.key);
  switch (c.kind) {
    case KvCondition::Kind::kAbsent: out.set_absent(true); break;
    case KvCondition::Kind::kPresent: out.set_present(true); break;
    case KvCondition::Kind::kVersion: out.set_version(c.version); break;
  }
  return out;
}

KvStatus CheckKey(const std::string& key) {
  if (key.size() > limits::kRouterKeyBytesMax) {
    return Invalid("key of " + std::to_string(key.size()) + " bytes exceeds " +
                   std::to_string(limits::kRouterKeyBytesMax));
  }
  return KvStatus();
}

KvStatus CheckSingleKeyCondition(const KvRequest& r) {
  if (r.condition && r.condition->key != r.key) return Invalid("the condition must be on the written key");
  return CheckKey(r.key);
}

KvStatus FillBatch(const KvBatch& batch, pb::KvBatch* out) {
  if (batch.writes.empty()) return Invalid("a batch needs at least one write");
  if (batch.writes.size() + batch.conditions.size() > limits::kNativeBatchRecordsMax) {
    return Invalid("a batch holds at most " + std::to_string(limits::kNativeBatchRecordsMax) +
                   " conditions and writes");
  }
  for (const KvCondition& c : batch.conditions) {
    if (KvStatus s = CheckKey(c.key); !s.ok()) return s;
    *out->add_conditions() = ConditionToProto(c);
  }
  for (const KvWrite& w : batch.writes) {
    if (KvStatus s = CheckKey(w.key); !s.ok()) return s;
    pb::KvWrite* write = out->add_writes();
    write->set_key(w.key);
    if (w.is_delete) {
      write->set_delete_(true);
    } else {
      write->set_value(w.value);
    }
  }
  return KvStatus();
}

KvStatus FillOp(const KvRequest& r, pb::KvApiRequest* out) {
  switch (r.op) {
    case KvRequest::Op::kGet:
      out->mutable_get()->set_key(r.key);
      out->mutable_get()->set_consistency(ConsistencyToProto(r.consistency));
      return CheckKey(r.key);
    case KvRequest::Op::kPut:
      out->mutable_put()->set_key(r.key);
      out->mutable_put()->set_value(r.value);
      if (r.condition) *out->mutable_put()->mutable_condition() = ConditionToProto(*r.condition);
      if (r.value.size() > limits::kStateValueBytesMax) return Invalid("value too large");
      return CheckSingleKeyCondition(r);
    case KvRequest::Op::kDelete:
      out->mutable_delete_()->set_key(r.key);
      if (r.condition) *out->mutable_delete_()->mutable_condition() = ConditionToProto(*r.condition);
      return CheckSingleKeyCondition(r);
    case KvRequest::Op::kScan:
      if (r.limit < 1 || r.limit > limits::kRouterScanItemsMax) {
        return Invalid("scan limit must be 1.." + std::to_string(limits::kRouterScanItemsMax));
      }
      out->mutable_scan()->set_start_key(r.key);
      out->mutable_scan()->set_end_key(r.end_key);
      out->mutable_scan()->set_limit(r.limit);
      out->mutable_scan()->set_consistency(ConsistencyToProto(r.consistency));
      return KvStatus();
    case KvRequest::Op::kBatch:
      return FillBatch(r.batch, out->mutable_batch());
  }
  return Invalid("unknown operation");
}

}  // namespace

KvCode CodeFromWire(uint32_t code) {
  if (code > static_cast<uint32_t>(KvCode::kThroughputExceeded)) return KvCode::kAborted;
  return static_cast<KvCode>(code);
}

KvResult<pb::KvApiRequest> ToProto(const KvRequest& request, uint64_t request_id) {
  if (request.table.empty() || request.table.size() > limits::kRouterTableBytesMax) {
    return Invalid("table name must be 1.." + std::to_string(limits::kRouterTableBytesMax) + " bytes");
  }
  pb::KvApiRequest out;
  out.set_request_id(request_id);
  out.set_table(request.table);
  if (KvStatus s = FillOp(request, &out); !s.ok()) return s;
  return out;
}

KvResult<KvReply> FromProto(const pb::KvApiResponse& response, KvRequest::Op op) {
  const KvCode code = CodeFromWire(response.code());
  if (code != KvCode::kOk) return KvStatus(code, response.message());
  KvReply reply;
  reply.version = response.version();
  if (op == KvRequest::Op::kGet && response.found()) {
    reply.value = KvValue{response.value(), response.version()};
  }
  if (op == KvRequest::Op::kScan) {
    reply.page.items.reserve(static_cast<size_t>(response.items_size()));
    for (const pb::KvItem& item : response.items()) {
      reply.page.items.push_back(KvItem{item.key(), item.value(), item.version()});
    }
    if (response.has_next()) reply.page.next = response.next_key();
  }
  return reply;
}

}  // namespace tessera::kvapi
