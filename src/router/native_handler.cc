#include "router/native_handler.h"

#include "common/limits.h"
#include "router/kv_ops.h"

namespace tessera::router {
namespace {

std::optional<pb::KvCondition> ConditionOf(bool has_condition, const pb::KvCondition& condition) {
  if (!has_condition) return std::nullopt;
  return condition;
}

Status CheckSingleKey(const std::string& key, const std::optional<pb::KvCondition>& condition) {
  if (condition && condition->key() != key) {
    return Status::InvalidArgument("a put's or delete's condition must be on its key");
  }
  return Status::Ok();
}

// The answer to a kv.write.
pb::KvApiResponse WriteAnswer(uint64_t id, const Result<pb::KvApplyResult>& result) {
  if (!result.ok()) return ErrorResponse(id, result.status());
  pb::KvApiResponse r;
  r.set_request_id(id);
  if (!result->applied()) {
    r.set_code(static_cast<uint32_t>(StatusCode::kConflict));
    r.set_message("condition " + std::to_string(result->failed_condition()) + " does not hold");
    r.set_failed_condition(result->failed_condition());
    return r;
  }
  r.set_version(result->version());
  return r;
}

}  // namespace

pb::KvApiResponse ErrorResponse(uint64_t request_id, const Status& status) {
  pb::KvApiResponse r;
  r.set_request_id(request_id);
  // The native wire numbers StatusCodes as they are up to kAborted; its own
  // codes follow (native_handler.h).
  switch (status.code()) {
    case StatusCode::kPermissionDenied: r.set_code(kWirePermissionDenied); break;
    case StatusCode::kThroughputExceeded: r.set_code(kWireThroughputExceeded); break;
    // The router re-resolves and resends a WrongPartition answer; should
    // one still get here, the client sees what it means: retry later.
    case StatusCode::kWrongPartition: r.set_code(static_cast<uint32_t>(StatusCode::kUnavailable)); break;
    default: r.set_code(static_cast<uint32_t>(status.code()));
  }
  r.set_message(status.message());
  return r;
}

NativeKvHandler::NativeKvHandler(KvRouter& router, RouteResolver& routes) : router_(router), routes_(routes) {}

void NativeKvHandler::Handle(pb::KvApiRequest request, const KvGrant& grant, Reply reply) {
  const uint64_t id = request.request_id();
  const std::string& table = request.table();
  if (table.empty() || table.size() > limits::kRouterTableBytesMax) {
    return reply(ErrorResponse(id, Status::InvalidArgument("table name must be 1.." +
                                                           std::to_string(limits::kRouterTableBytesMax) +
                                                           " bytes")));
  }
  const KvAccess access = request.op_case() == pb::KvApiRequest::kGet ||
                                  request.op_case() == pb::KvApiRequest::kScan
                              ? KvAccess::kRead
                              : KvAccess::kWrite;
  if (!grant.Allows(table, access)) {
    pb::KvApiResponse denied;
    denied.set_request_id(id);
    denied.set_code(kWirePermissionDenied);
    denied.set_message(DenialMessage(grant, table, access));
    return reply(std::move(denied));
  }
  switch (request.op_case()) {
    case pb::KvApiRequest::kGet:
      return router_.Get(table, request.get().key(), request.get().consistency(),
                         [id, reply](Result<pb::KvGetResponse> got) {
                           if (!got.ok()) return reply(ErrorResponse(id, got.status()));
                           pb::KvApiResponse r;
                           r.set_request_id(id);
                           r.set_found(got->found());
                           r.set_value(std::move(*got->mutable_value()));
                           r.set_version(got->version());
                           reply(std::move(r));
                         });
    case pb::KvApiRequest::kPut: {
      pb::KvApiPut& put = *request.mutable_put();
      const std::optional<pb::KvCondition> condition = ConditionOf(put.has_condition(), put.condition());
      if (Status s = CheckSingleKey(put.key(), condition); !s.ok()) return reply(ErrorResponse(id, s));
      return Batch(id, table, SingleKeyBatch(put.key(), std::move(*put.mutable_value()), condition),
                   std::move(reply));
    }
    case pb::KvApiRequest::kDelete: {
      const pb::KvApiDelete& del = request.delete_();
      const std::optional<pb::KvCondition> condition = ConditionOf(del.has_condition(), del.condition());
      if (Status s = CheckSingleKey(del.key(), condition); !s.ok()) return reply(ErrorResponse(id, s));
      return Batch(id, table, SingleKeyBatch(del.key(), std::nullopt, condition), std::move(reply));
    }
    case pb::KvApiRequest::kScan: {
      const pb::KvApiScan& scan = request.scan();
      return router_.Scan(table, scan.start_key(), scan.end_key(), scan.limit(), scan.consistency(),
                          [id, reply](Result<ScanPage> page) {
                            if (!page.ok()) return reply(ErrorResponse(id, page.status()));
                            pb::KvApiResponse r;
                            r.set_request_id(id);
                            for (pb::KvItem& item : page->items) *r.add_items() = std::move(item);
                            if (page->next) {
                              r.set_has_next(true);
                              r.set_next_key(std::move(*page->next));
                            }
                            reply(std::move(r));
                          });
    }
    case pb::KvApiRequest::kBatch:
      return Batch(id, table, std::move(*request.mutable_batch()), std::move(reply));
    case pb::KvApiRequest::OP_NOT_SET:
      break;
  }
  reply(ErrorResponse(id, Status::InvalidArgument("request without an operation")));
}

void NativeKvHandler::Batch(uint64_t id, const std::string& table, pb::KvBatch batch, Reply reply) {
  if (Status s = CheckBatch(batch); !s.ok()) return reply(ErrorResponse(id, s));
  const char* op_name = batch.writes_size() == 1 && batch.writes(0).delete_() ? "delete" : "put";
  const bool single_key = batch.writes_size() == 1 &&
                          (batch.conditions().empty() ||
                           (batch.conditions_size() == 1 && batch.conditions(0).key() == batch.writes(0).key()));
  if (single_key) {
    const std::string key = RoutingKey(batch);
    return router_.Write(table, key, std::move(batch), op_name, [id, reply](Result<pb::KvApplyResult> result) {
      reply(WriteAnswer(id, result));
    });
  }
  // Several keys: they must share one partition, checked against the route
  // the write will take.
  const std::string key = RoutingKey(batch);
  routes_.Resolve(table, key, [this, id, table, key, batch = std::move(batch),
                               reply](Result<pb::PartitionDescriptor> partition) mutable {
    if (!partition.ok()) return reply(ErrorResponse(id, partition.status()));
    if (!BatchInPartition(batch, *partition)) {
      return reply(ErrorResponse(id, Status::InvalidArgument(
                                         "the batch's keys span more than one partition (atomic "
                                         "batches must stay within one)")));
    }
    router_.Write(table, key, std::move(batch), "batch", [id, reply](Result<pb::KvApplyResult> result) {
      reply(WriteAnswer(id, result));
    });
  });
}

}  // namespace tessera::router
