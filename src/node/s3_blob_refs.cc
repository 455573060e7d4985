#include "node/s3_blob_refs.h"

#include <set>

#include "common/limits.h"
#include "node/partition_range.h"
#include "node/rpc_handler_util.h"
#include "s3/model/blob_refs.h"
#include "s3/model/gc_ops.h"

namespace tessera::node {
namespace {

void OnBlobRefs(ReplicationHost* replication, const pb::Envelope& request, rpc::Responder responder) {
  pb::S3BlobRefsRequest refs;
  if (!ParsePayload(request, responder, &refs)) return;
  QueryBlobRefs(*replication, refs, [responder](Result<pb::S3BlobRefsResponse> r) {
    if (!r.ok()) return responder.Fail(r.status());
    responder.Reply(r->SerializeAsString());
  });
}

Result<pb::S3BlobScanResponse> AnswerBlobScan(const PartitionStateMachine& state,
                                              const pb::S3BlobScanRequest& request) {
  const PartitionRecords records(state);
  pb::S3BlobScanResponse response;
  if (request.start_key().empty()) {
    auto gcs = s3::model::ReadGcRecords(records, limits::kScanItemsMax);
    if (!gcs.ok()) return gcs.status();
    response.set_gc_records(static_cast<uint32_t>(gcs->size()));
    for (const s3::model::PendingGc& gc : *gcs) {
      for (const std::string& id : gc.record.blob_ids()) response.add_gc_blob_ids(id);
    }
  }
  auto page = s3::model::ScanReferencedBlobs(records, request.start_key(), request.end_key(),
                                             request.rows());
  if (!page.ok()) return page.status();
  for (std::string& id : page->referenced) response.add_referenced(std::move(id));
  response.set_next_key(std::move(page->next));
  return response;
}

void OnBlobScan(ReplicationHost* replication, const pb::Envelope& request, rpc::Responder responder) {
  pb::S3BlobScanRequest scan;
  if (!ParsePayload(request, responder, &scan)) return;
  if (scan.rows() == 0 || scan.rows() > limits::kScanItemsMax) {
    return responder.Fail(Status::InvalidArgument("s3.blob_scan rows out of range"));
  }
  auto host = FindGroupOrFail(*replication, scan.group_id(), responder);
  if (!host) return;
  host->ReadState(pb::CONSISTENCY_STRONG,
                  [scan = std::move(scan), responder](Result<const PartitionStateMachine*> state) {
                    if (!state.ok()) return responder.Fail(state.status());
                    auto answer = AnswerBlobScan(**state, scan);
                    if (!answer.ok()) return responder.Fail(answer.status());
                    responder.Reply(answer->SerializeAsString());
                  });
}

}  // namespace

Result<std::vector<s3::model::RecordRow>> PartitionRecords::Scan(const std::string& start,
                                                                 const std::string& end,
                                                                 size_t limit) const {
  auto rows = state_.Scan(start, end, static_cast<uint32_t>(limit));
  if (!rows.ok()) return rows.status();
  std::vector<s3::model::RecordRow> out;
  out.reserve(rows->items_size());
  for (pb::KvItem& item : *rows->mutable_items()) {
    out.push_back({std::move(*item.mutable_key()), std::move(*item.mutable_value())});
  }
  return out;
}

Status OwnerInRange(const PartitionStateMachine& state, const std::string& owner) {
  return state.CheckKeyInRange(owner);
}

Result<pb::S3BlobRefsResponse> AnswerBlobRefs(const PartitionStateMachine& state,
                                              const pb::S3BlobRefsRequest& request) {
  if (request.blob_ids_size() > static_cast<int>(limits::kBlobRefsIdsMax)) {
    return Status::InvalidArgument("s3.blob_refs: too many blob ids");
  }
  // Contract 1 of owner_refs.h: a group the owner left never answers
  // "unreferenced" (its records of the owner are gone or going).
  TESSERA_RETURN_IF_ERROR(OwnerInRange(state, request.owner()));
  const std::set<std::string> candidates(request.blob_ids().begin(), request.blob_ids().end());
  auto referenced = s3::model::ReferencedAmong(PartitionRecords(state), request.owner(), candidates,
                                               limits::kBlobRefsScanRowsMax);
  if (!referenced.ok()) return referenced.status();
  pb::S3BlobRefsResponse response;
  for (const std::string& id : *referenced) response.add_referenced(id);
  return response;
}

void QueryBlobRefs(ReplicationHost& replication, const pb::S3BlobRefsRequest& request,
                   std::function<void(Result<pb::S3BlobRefsResponse>)> done) {
  std::shared_ptr<GroupHost> host = replication.Find(request.group_id());
  if (!host) return done(Status::NotFound("group " + std::to_string(request.group_id()) + " not hosted here"));
  if (!replication.DescriptorAllows(request.group_id(), [&request](const pb::PartitionDescriptor& d) {
        return KeyInRange(d, request.owner());
      })) {
    return done(Status::WrongPartition("the owner is outside the range of group " +
                                       std::to_string(request.group_id())));
  }
  host->ReadState(pb::CONSISTENCY_STRONG,
                  [request, done = std::move(done)](Result<const PartitionStateMachine*> state) {
                    if (!state.ok()) return done(state.status());
                    done(AnswerBlobRefs(**state, request));
                  });
}

std::vector<std::pair<std::string, rpc::Handler>> S3BlobRefHandlers(ReplicationHost* replication) {
  return {{"s3.blob_refs", ServeWith(replication, OnBlobRefs)},
          {"s3.blob_scan", ServeWith(replication, OnBlobScan)}};
}

}  // namespace tessera::node
