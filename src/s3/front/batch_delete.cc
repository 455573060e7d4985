// DeleteObjects (POST ?delete): up to 1,000 keys, each deleted by its own
// DeleteObjectOp on its own partition (S3 gives no atomicity across keys),
// at most kS3BatchDeletesInFlightMax at a time; per-key errors; quiet mode;
// per-object ETag / LastModifiedTime / Size conditions checked by the op.
#include <memory>
#include <mutex>

#include "common/limits.h"
#include "s3/front/delete_conditions.h"
#include "s3/front/charge_rest.h"
#include "s3/front/s3_charge.h"
#include "s3/front/s3_call.h"
#include "s3/front/s3_front.h"
#include "s3/front/small_body.h"
#include "s3/protocol/names.h"
#include "s3/protocol/xml_documents.h"

namespace tessera::s3::front {
namespace {

class BatchDelete : public std::enable_shared_from_this<BatchDelete> {
 public:
  BatchDelete(CallPtr call, DeleteRequest request)
      : call_(std::move(call)), request_(std::move(request)),
        results_(request_.objects.size()),
        conditions_(request_.objects.size()) {
    for (size_t i = 0; i < request_.objects.size(); ++i) {
      const ObjectToDelete& object = request_.objects[i];
      if (auto valid = ValidateObjectKey(object.key); !valid.ok()) {
        results_[i].error = valid.error();
      } else if (!object.version_id.empty() && !IsVersionIdSyntax(object.version_id)) {
        // S3 reports a version id it could never have made as absent.
        results_[i].error = S3Error(S3ErrorCode::kNoSuchVersion);
      } else if (auto set = SetDeleteConditions(
                     {object.etag, object.last_modified_time, object.size},
                     DeleteConditionNames{"ETag", "LastModifiedTime", "Size"}, conditions_[i]);
                 !set.ok()) {
        results_[i].error = set.error();
      } else {
        todo_.push_back(i);
      }
    }
  }

  void Start() {
    if (todo_.empty()) return Answer();
    std::lock_guard lock(mu_);
    while (inflight_ < limits::kS3BatchDeletesInFlightMax && next_ < todo_.size()) {
      LaunchLocked(todo_[next_++]);
    }
  }

 private:
  struct Outcome {
    std::optional<S3Error> error;
    pb::S3OpResult result;
  };

  void LaunchLocked(size_t index) {
    ++inflight_;
    const ObjectToDelete& object = request_.objects[index];
    pb::S3Op op;
    pb::DeleteObjectOp* del = op.mutable_delete_object();
    *del = conditions_[index];
    del->set_bucket_id(call_->bucket_info.bucket_id());
    del->set_key(model::StoredKey(model::KeyLayoutOf(call_->bucket_info), object.key));
    del->set_versioning(call_->bucket_info.versioning());
    del->set_version_id(object.version_id);
    del->set_now_ms(NowMs());
    del->set_owner(call_->user);
    call_->front.index().Apply(std::move(op), [self = shared_from_this(), index](
                                                  Result<pb::S3OpResult> r) {
      self->OnDeleted(index, std::move(r));
    });
  }

  void OnDeleted(size_t index, Result<pb::S3OpResult> r) {
    bool finished = false;
    {
      std::lock_guard lock(mu_);
      if (!r.ok()) {
        results_[index].error = FromStatus(r.status());
      } else if (r->outcome() == pb::S3_PRECONDITION_FAILED) {
        results_[index].error = S3Error(S3ErrorCode::kPreconditionFailed);
      } else if (r->outcome() == pb::S3_NO_SUCH_KEY) {
        results_[index].error = S3Error(S3ErrorCode::kNoSuchKey);
      } else if (r->outcome() != pb::S3_OK) {
        results_[index].error = S3Error(S3ErrorCode::kInvalidRequest, r->message());
      } else {
        results_[index].result = std::move(r).value();
      }
      --inflight_;
      ++done_;
      if (next_ < todo_.size()) LaunchLocked(todo_[next_++]);
      finished = done_ == todo_.size();
    }
    if (finished) Answer();
  }

  void Answer() {
    DeleteResult result;
    for (size_t i = 0; i < request_.objects.size(); ++i) {
      const ObjectToDelete& object = request_.objects[i];
      const Outcome& outcome = results_[i];
      if (outcome.error) {
        result.errors.push_back(DeleteErrorEntry{object.key, object.version_id, *outcome.error});
        continue;
      }
      if (request_.quiet) continue;
      DeletedEntry entry;
      entry.key = object.key;
      entry.version_id = object.version_id;
      entry.delete_marker = outcome.result.delete_marker();
      // The marker made, or the one deleted by its version id.
      if (entry.delete_marker) {
        entry.delete_marker_version_id =
            object.version_id.empty() ? outcome.result.version_id() : object.version_id;
      }
      result.deleted.push_back(std::move(entry));
    }
    call_->RespondXml(200, DeleteResultXml(result));
  }

  CallPtr call_;
  const DeleteRequest request_;
  std::mutex mu_;  // guards everything below
  std::vector<Outcome> results_;
  std::vector<pb::DeleteObjectOp> conditions_;  // per object, its conditions only
  std::vector<size_t> todo_;  // indices of valid keys, launched in order
  size_t next_ = 0;
  size_t inflight_ = 0;
  size_t done_ = 0;
};

}  // namespace

void DeleteObjects(CallPtr call) {
  if (!call->Header("content-md5") && !call->Header("x-amz-checksum-crc32") &&
      !call->Header("x-amz-checksum-crc32c") && !call->Header("x-amz-checksum-sha1") &&
      !call->Header("x-amz-checksum-sha256") && !call->Header("x-amz-checksum-crc64nvme") &&
      !call->Header("x-amz-trailer")) {
    return call->Fail(S3Error(S3ErrorCode::kInvalidRequest,
                              "Missing required header for this request: Content-MD5"));
  }
  WithAuthorizedBucket(call, authz::Action::kDeleteObject, [call] {
    ReadSmallBody(call, limits::kS3XmlBodyBytesMax, [call](S3Result<std::string> body) {
      if (!body.ok()) return call->Fail(body.error());
      auto request = ParseDelete(*body);
      if (!request.ok()) return call->Fail(request.error());
      ChargeRest(*call, S3RestAfterBatchDelete(request->objects.size()));
      std::make_shared<BatchDelete>(call, std::move(request).value())->Start();
    });
  });
}

}  // namespace tessera::s3::front
