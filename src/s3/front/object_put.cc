// PutObject and UploadPart: stream the body (decoding aws-chunked, hashing
// as it goes) through a BlobWriter (blobs of blob_bytes, up to
// kS3BlobWritesInFlightMax written at once, each to its slot's three nodes
// and acknowledged at two), or keep it inline when it is small; verify
// every digest the client sent; then commit with ONE op. Memory per
// upload: the writer's window plus two body pieces (one being digested or
// waiting for the window to have room, the next one read meanwhile).
#include <openssl/evp.h>

#include <chrono>
#include <ctime>
#include <mutex>
#include <optional>

#include "s3/auth/aws_chunked.h"
#include "s3/auth/checksum.h"
#include "s3/auth/md5.h"
#include "s3/auth/sigv4.h"
#include "s3/front/blob_writer.h"
#include "s3/front/object_metadata.h"
#include "s3/front/s3_call.h"
#include "s3/front/s3_front.h"
#include "s3/front/upload_commit.h"
#include "s3/model/s3_keys.h"

namespace tessera::s3::front {
namespace {

// Body bytes asked of one ReadBody.
constexpr size_t kBodyPieceBytes = 1 << 20;

// The body flows read -> digest -> writer with one piece in each stage at
// most: the read of piece k+1 overlaps the digest and hand-off of piece k
// (one stream's MD5, ~0.47 GB/s here, is the slowest stage). Pieces are
// digested and handed on in order: a piece that arrives while the previous
// one is still in its digest or waiting for the writer is parked, and no
// further piece is read until it moves on. mu_ guards that stage state;
// callbacks come from the connection's executor (reads), a digest thread
// and channel threads (the writer's readiness).
class PutUpload : public std::enable_shared_from_this<PutUpload> {
 public:
  // `part`: the upload id and part number of an UploadPart; nullopt for a
  // PutObject, which records `access` (its owner and ACL).
  PutUpload(CallPtr call, std::optional<PartTarget> part, ObjectWriteAccess access = {})
      : call_(std::move(call)),
        front_(call_->front),
        part_(std::move(part)),
        access_(std::move(access)) {}

  void Start() {
    if (auto st = Prepare(); !st.ok()) return call_->Fail(st.error());
    ReadNext();
  }

 private:
  S3Status Prepare() {
    const http::RequestHead& head = call_->head();
    const auth::RequestHead auth_head = call_->AuthHead();
    if (auth::IsStreaming(call_->auth.mode)) {
      auto options = auth::AwsChunkedOptionsFor(auth_head, call_->auth);
      if (!options.ok()) return options.error();
      options->buffer_budget = call_->front.chunk_buffers();
      expected_size_ = options->decoded_content_length;
      stream_checksum_ = options->checksum;
      decoder_.emplace(std::move(options).value());
    } else {
      if (!head.content_length) {
        // A body in HTTP chunked coding that is not aws-chunked: S3 refuses
        // the coding itself (501, naming the header) before the length.
        if (head.chunked) {
          return S3Error(S3ErrorCode::kNotImplemented,
                         "A header you provided implies functionality that is not implemented")
              .With("Header", "Transfer-Encoding");
        }
        return S3Error(S3ErrorCode::kMissingContentLength);
      }
      expected_size_ = *head.content_length;
      auto declared = auth::FindDeclaredChecksum(auth_head.headers);
      if (!declared.ok()) return declared.error();
      if (declared->has_value()) {
        declared_ = **declared;
        checksum_.emplace(declared_->algorithm);
      }
    }
    if (expected_size_ > front_.options().object_bytes_max) {
      return S3Error(S3ErrorCode::kEntityTooLarge)
          .With("ProposedSize", std::to_string(expected_size_))
          .With("MaxSizeAllowed", std::to_string(front_.options().object_bytes_max));
    }
    if (call_->auth.mode == auth::PayloadMode::kSignedHex) {
      sha256_.emplace(auth::ChecksumAlgorithm::kSha256);
    }
    if (auto md5 = call_->Header("content-md5")) content_md5_ = std::string(*md5);
    if (!part_) {
      if (auto st = FillObjectMetadata(*call_, &object_); !st.ok()) return st;
      object_.set_owner(access_.owner);
      if (access_.acl) *object_.mutable_acl() = *access_.acl;
      if (auto tagging = call_->Header("x-amz-tagging")) {
        auto tags = ParseTaggingHeader(*tagging);
        if (!tags.ok()) return tags.error();
        for (pb::MetadataPair& t : *tags) *object_.add_tags() = std::move(t);
      }
    }
    // Parts always live in blobs: a completed upload concatenates them.
    if (part_ || expected_size_ > front_.options().inline_bytes_max) {
      writer_ = BlobWriter::Create(
          front_.blobs(), front_.options().blob_bytes,
          model::ObjectPrefix(call_->bucket_info.bucket_id(), call_->stored_key()), expected_size_);
    }
    // S3 implements If-None-Match: * and If-Match: <etag>, one at a time;
    // anything else is NotImplemented (AWS-recorded).
    const auto none_match = call_->Header("if-none-match");
    const auto match = call_->Header("if-match");
    if (auto st = CheckWriteConditionHeaders(match, none_match); !st.ok()) return st;
    if (none_match) if_none_match_any_ = true;
    if (match) if_match_ = std::string(UnquoteEtag(*match));
    return S3Status::Ok();
  }

  void ReadNext() {
    call_->exchange->ReadBody(kBodyPieceBytes, [self = shared_from_this()](
                                                   Result<std::string> piece, bool end) {
      self->OnPiece(std::move(piece), end);
    });
  }

  void OnPiece(Result<std::string> piece, bool end) {
    if (!piece.ok()) return Abort(BodyReadError(piece.status()));
    {
      std::lock_guard lock(mu_);
      if (stopped_) return;
      if (processing_) {
        parked_.emplace(Parked{std::move(piece).value(), end});
        return;
      }
      processing_ = true;
    }
    Advance(std::move(piece).value(), end);
  }

  // Starts a piece that just entered processing, reading the next one
  // meanwhile unless this was the last.
  void Advance(std::string piece, bool end) {
    if (!end) ReadNext();
    Process(std::move(piece), end);
  }

  // The digest stage of one piece, then HandOn. One piece at a time, in
  // order (processing_).
  void Process(std::string piece, bool end) {
    if (piece.size() <= front_.options().digest_inline_bytes_max) {
      if (auto decoded = Decode(std::move(piece))) md5_.Update(*decoded);
      return HandOn(end);
    }
    front_.digests().Post(DigestJob{
        .prepare = [self = shared_from_this(), piece = std::move(piece)]() mutable {
          return self->Decode(std::move(piece));
        },
        .md5 = &md5_,
        .then = [self = shared_from_this(), end] { self->HandOn(end); }});
  }

  // Decodes one piece into decoded_ and runs every digest but MD5 over it;
  // returns the decoded bytes for MD5, or nullopt after a failure (kept in
  // failure_ for HandOn). Any thread; one piece at a time.
  std::optional<std::string_view> Decode(std::string piece) {
    decoded_.clear();
    if (decoder_) {
      if (auto st = decoder_->Feed(piece, &decoded_); !st.ok()) {
        failure_ = st.error();
        return std::nullopt;
      }
    } else {
      decoded_ = std::move(piece);
    }
    if (sha256_) sha256_->Update(decoded_);
    if (checksum_) checksum_->Update(decoded_);
    size_ += decoded_.size();
    if (size_ > expected_size_) {
      failure_ = S3Error(S3ErrorCode::kIncompleteBody);
      return std::nullopt;
    }
    return decoded_;
  }

  // Hands the decoded piece to the writer (or the inline bytes), then
  // moves on (Processed).
  void HandOn(bool end) {
    if (failure_) return Abort(*failure_);
    if (!writer_) {
      inline_data_.append(decoded_);
      return Processed(end);
    }
    // Backpressure: the next piece moves on only when the writer has room.
    writer_->Write(std::move(decoded_), [self = shared_from_this(), end](Status st) {
      if (!st.ok()) return self->Abort(FromBlobStatus(st));
      self->Processed(end);
    });
  }

  // A piece left the digest stage: finishes after the last one, else starts
  // the parked piece (and the read after it) if one arrived meanwhile; if
  // none did, its read is still pending and OnPiece starts it.
  void Processed(bool end) {
    if (end) return Finish();
    std::optional<Parked> next;
    {
      std::lock_guard lock(mu_);
      processing_ = false;
      if (stopped_ || !parked_) return;
      next = std::move(parked_);
      parked_.reset();
      processing_ = true;
    }
    Advance(std::move(next->piece), next->end);
  }

  void Finish() {
    if (size_ != expected_size_) return Abort(S3Error(S3ErrorCode::kIncompleteBody));
    if (decoder_) {
      if (auto st = decoder_->Finish(); !st.ok()) return Abort(st.error());
    }
    const std::string md5 = md5_.Finish();
    if (sha256_) {
      if (auto st = auth::VerifyPayloadSha256(call_->auth, auth::HexEncode(sha256_->Finish()));
          !st.ok()) {
        return Abort(st.error());
      }
    }
    if (S3Status st = VerifyDeclaredDigests(content_md5_, md5, declared_, checksum_, object_);
        !st.ok()) {
      return Abort(st.error());
    }
    if (!checksum_ && decoder_ && decoder_->computed_checksum_base64() && stream_checksum_) {
      AddChecksum(*stream_checksum_, *decoder_->computed_checksum_base64());
    }
    etag_ = auth::HexEncode(md5);
    auto self = shared_from_this();
    FinishBlobs(writer_, std::move(inline_data_), object_, [self] { self->Commit(); },
                [self](const S3Error& error) { self->Abort(error); });
  }

  void AddChecksum(auth::ChecksumAlgorithm algorithm, std::string value) {
    pb::ObjectChecksum* c = object_.add_checksums();
    c->set_algorithm(std::string(auth::ChecksumName(algorithm)));
    c->set_value(std::move(value));
  }

  void Commit() {
    if (part_) return CommitPart();
    pb::S3Op op = PutObjectOpOf(*call_, object_, size_, etag_);
    pb::PutObjectOp* put = op.mutable_put_object();
    put->set_if_none_match_any(if_none_match_any_);
    put->set_if_match_etag(if_match_);
    front_.index().Apply(std::move(op), [self = shared_from_this()](Result<pb::S3OpResult> r) {
      self->OnCommitted(std::move(r));
    });
  }

  void CommitPart() {
    pb::S3Op op;
    pb::UploadPartOp* put = op.mutable_upload_part();
    put->set_bucket_id(call_->bucket_info.bucket_id());
    put->set_key(call_->stored_key());
    put->set_upload_id(part_->upload_id);
    pb::PartRecord* record = put->mutable_part();
    record->set_part_number(part_->part_number);
    record->set_size(size_);
    record->set_etag(etag_);
    record->set_last_modified_ms(NowMs());
    *record->mutable_blobs() = object_.blobs();
    *record->mutable_checksums() = object_.checksums();
    front_.index().Apply(std::move(op), [self = shared_from_this()](Result<pb::S3OpResult> r) {
      self->OnCommitted(std::move(r));
    });
  }

  void OnCommitted(Result<pb::S3OpResult> r) {
    // A failed op already queued the blobs for GC (the op's contract).
    if (!CommittedOk(*call_, front_, r, static_cast<size_t>(object_.blobs_size()),
                     {part_ ? part_->upload_id : std::string()})) {
      return;
    }
    http::Headers headers = {{"ETag", QuoteEtag(etag_)}};
    if (!part_) AddWrittenVersionHeader(call_->bucket_info, r->version_id(), headers);
    for (const pb::ObjectChecksum& c : object_.checksums()) {
      std::string name = "x-amz-checksum-" + c.algorithm();
      for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      headers.emplace_back(name, c.value());
    }
    // A PutObject's checksum is always of the whole body.
    if (!part_ && object_.checksums_size() > 0) {
      headers.emplace_back("x-amz-checksum-type", "FULL_OBJECT");
    }
    call_->Respond(200, std::move(headers), "");
  }

  // Answers `error` and deletes the blobs written so far (best effort: a
  // blob that survives is an orphan for the GC sweeper).
  void Abort(const S3Error& error) {
    {
      std::lock_guard lock(mu_);
      if (stopped_) return;
      stopped_ = true;
      parked_.reset();
    }
    if (writer_) writer_->Abandon();
    object_.clear_blobs();
    if (!call_->answered()) call_->Fail(error);
  }

  CallPtr call_;
  S3Front& front_;
  const std::optional<PartTarget> part_;
  const ObjectWriteAccess access_;
  uint64_t expected_size_ = 0;
  uint64_t size_ = 0;
  std::optional<auth::AwsChunkedDecoder> decoder_;
  std::optional<auth::ChecksumAlgorithm> stream_checksum_;  // computed by the decoder
  auth::Md5 md5_;
  std::optional<auth::Checksummer> sha256_;
  std::optional<auth::Checksummer> checksum_;
  std::optional<auth::DeclaredChecksum> declared_;
  std::optional<std::string> content_md5_;
  bool if_none_match_any_ = false;
  std::string if_match_;
  std::shared_ptr<BlobWriter> writer_;  // null: the object stays inline
  std::string inline_data_;
  std::string decoded_;  // the piece being handed on
  std::optional<S3Error> failure_;  // set by Decode

  struct Parked {
    std::string piece;
    bool end = false;
  };
  std::mutex mu_;  // guards the stage state below
  bool processing_ = false;  // a piece is in Process / HandOn
  bool stopped_ = false;     // aborted: nothing more moves
  std::optional<Parked> parked_;  // read while the previous piece was processing
  std::string etag_;
  pb::ObjectVersion object_;
};

}  // namespace

void PutObject(CallPtr call) {
  WithAuthorizedBucket(call, authz::Action::kPutObject, [call] {
    WithObjectWriteAccess(call, [call](ObjectWriteAccess access) {
      std::make_shared<PutUpload>(call, std::nullopt, std::move(access))->Start();
    });
  });
}

void UploadPart(CallPtr call, PartTarget part) {
  WithAuthorizedBucket(call, authz::Action::kPutObject, [call, part = std::move(part)] {
    std::make_shared<PutUpload>(call, part)->Start();
  });
}

}  // namespace tessera::s3::front
