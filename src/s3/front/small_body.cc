#include "s3/front/small_body.h"

#include <memory>
#include <optional>

#include "s3/auth/aws_chunked.h"
#include "s3/auth/checksum.h"
#include "s3/auth/sigv4.h"
#include "s3/front/s3_front.h"

namespace tessera::s3::front {
namespace {

constexpr size_t kPieceBytes = 64 << 10;

class SmallBodyReader : public std::enable_shared_from_this<SmallBodyReader> {
 public:
  SmallBodyReader(CallPtr call, size_t bytes_max, std::function<void(S3Result<std::string>)> done,
                  DeclaredChecksums declared)
      : call_(std::move(call)), bytes_max_(bytes_max), done_(std::move(done)), declared_of_(declared) {}

  void Start() {
    const auth::RequestHead auth_head = call_->AuthHead();
    if (auth::IsStreaming(call_->auth.mode)) {
      auto options = auth::AwsChunkedOptionsFor(auth_head, call_->auth);
      if (!options.ok()) return done_(options.error());
      options->buffer_budget = call_->front.chunk_buffers();
      decoder_.emplace(std::move(options).value());
    } else if (declared_of_ == DeclaredChecksums::kBody) {
      auto declared = auth::FindDeclaredChecksum(auth_head.headers);
      if (!declared.ok()) return done_(declared.error());
      declared_ = *declared;
    }
    Read();
  }

 private:
  void Read() {
    call_->exchange->ReadBody(kPieceBytes, [self = shared_from_this()](Result<std::string> piece,
                                                                        bool end) {
      self->OnPiece(std::move(piece), end);
    });
  }

  void OnPiece(Result<std::string> piece, bool end) {
    if (!piece.ok()) return done_(S3Error(S3ErrorCode::kIncompleteBody));
    if (decoder_) {
      if (auto st = decoder_->Feed(*piece, &body_); !st.ok()) return done_(st.error());
    } else {
      body_ += *piece;
    }
    if (body_.size() > bytes_max_) return done_(S3Error(S3ErrorCode::kEntityTooLarge));
    if (!end) return Read();
    if (decoder_) {
      if (auto st = decoder_->Finish(); !st.ok()) return done_(st.error());
    }
    if (auto st = Verify(); !st.ok()) return done_(st.error());
    done_(std::move(body_));
  }

  S3Status Verify() const {
    if (call_->auth.mode == auth::PayloadMode::kSignedHex) {
      if (auto st = auth::VerifyPayloadSha256(call_->auth, auth::Sha256Hex(body_)); !st.ok()) {
        return st;
      }
    }
    if (auto md5 = call_->Header("content-md5")) {
      const std::string computed = auth::ComputeChecksum(auth::ChecksumAlgorithm::kMd5, body_);
      if (auto st = auth::VerifyChecksum(auth::ChecksumAlgorithm::kMd5, *md5, computed); !st.ok()) {
        return st;
      }
    }
    if (declared_) {
      const std::string computed = auth::ComputeChecksum(declared_->algorithm, body_);
      return auth::VerifyChecksum(declared_->algorithm, declared_->value_base64, computed);
    }
    return S3Status::Ok();
  }

  CallPtr call_;
  const size_t bytes_max_;
  const std::function<void(S3Result<std::string>)> done_;
  const DeclaredChecksums declared_of_;
  std::optional<auth::AwsChunkedDecoder> decoder_;
  std::optional<auth::DeclaredChecksum> declared_;
  std::string body_;
};

}  // namespace

void ReadSmallBody(CallPtr call, size_t bytes_max,
                   std::function<void(S3Result<std::string>)> done, DeclaredChecksums declared) {
  std::make_shared<SmallBodyReader>(std::move(call), bytes_max, std::move(done), declared)->Start();
}

}  // namespace tessera::s3::front
