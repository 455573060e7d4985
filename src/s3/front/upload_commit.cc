#include "s3/front/upload_commit.h"

#include <utility>

#include "s3/protocol/s3_error.h"

namespace tessera::s3::front {

S3Error BodyReadError(const Status& status) {
  return S3Error(status.code() == StatusCode::kTimeout ? S3ErrorCode::kRequestTimeout
                                                       : S3ErrorCode::kIncompleteBody);
}

S3Status VerifyDeclaredDigests(const std::optional<std::string>& content_md5,
                               const std::string& md5,
                               const std::optional<auth::DeclaredChecksum>& declared,
                               std::optional<auth::Checksummer>& checksum,
                               pb::ObjectVersion& object) {
  if (content_md5) {
    if (S3Status st = auth::VerifyChecksum(auth::ChecksumAlgorithm::kMd5, *content_md5, md5);
        !st.ok()) {
      return st;
    }
  }
  if (!checksum) return S3Status();
  TESSERA_CHECK(declared.has_value());  // a checksummer runs only for a declared checksum
  const std::string computed = checksum->Finish();
  if (S3Status st = auth::VerifyChecksum(declared->algorithm, declared->value_base64, computed);
      !st.ok()) {
    return st;
  }
  pb::ObjectChecksum* c = object.add_checksums();
  c->set_algorithm(std::string(auth::ChecksumName(declared->algorithm)));
  c->set_value(auth::Base64Encode(computed));
  return S3Status();
}

void FinishBlobs(const std::shared_ptr<BlobWriter>& writer, std::string inline_data,
                 pb::ObjectVersion& object, std::function<void()> commit,
                 std::function<void(const S3Error&)> abort) {
  if (!writer) {
    object.set_inline_data(std::move(inline_data));
    return commit();
  }
  writer->Finish([&object, commit = std::move(commit),
                  abort = std::move(abort)](Result<std::vector<pb::BlobRef>> blobs) {
    if (!blobs.ok()) return abort(FromBlobStatus(blobs.status()));
    for (pb::BlobRef& ref : *blobs) *object.add_blobs() = std::move(ref);
    commit();
  });
}

pb::S3Op PutObjectOpOf(const S3Call& call, const pb::ObjectVersion& object, uint64_t size,
                       const std::string& etag) {
  pb::S3Op op;
  pb::PutObjectOp* put = op.mutable_put_object();
  put->set_bucket_id(call.bucket_info.bucket_id());
  put->set_key(call.stored_key());
  *put->mutable_object() = object;
  put->mutable_object()->set_size(size);
  put->mutable_object()->set_etag(etag);
  put->mutable_object()->set_last_modified_ms(NowMs());
  put->set_versioning(call.bucket_info.versioning());
  return op;
}

bool CommittedOk(S3Call& call, S3Front& front, const Result<pb::S3OpResult>& answer,
                 size_t blobs, const OutcomeContext& context) {
  if (!answer.ok()) {
    front.KeepBlobsOfUnknownOutcome(blobs);
    call.Fail(answer.status());
    return false;
  }
  if (answer->outcome() != pb::S3_OK) {
    call.Fail(OpOutcomeError(call, *answer, context));
    return false;
  }
  return true;
}

}  // namespace tessera::s3::front
