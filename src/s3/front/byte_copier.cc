#include "s3/front/byte_copier.h"

#include <algorithm>

#include "common/limits.h"
#include "s3/front/s3_front.h"

namespace tessera::s3::front {

ByteCopier::ByteCopier(S3Front& front, pb::ObjectVersion source, uint64_t first, uint64_t length,
                       std::shared_ptr<BlobWriter> writer,
                       std::vector<auth::ChecksumAlgorithm> checksums)
    : front_(front),
      source_(std::move(source)),
      next_(first),
      end_(first + length),
      writer_(std::move(writer)),
      md5_(auth::ChecksumAlgorithm::kMd5) {
  for (auth::ChecksumAlgorithm algorithm : checksums) checksums_.emplace_back(algorithm);
}

void ByteCopier::Run(Done done) {
  done_ = std::move(done);
  ReadNext();
}

void ByteCopier::ReadNext() {
  if (next_ >= end_) return Complete();
  if (source_.blobs_size() == 0) {
    // Inline source: at most the inline threshold, one piece.
    if (end_ > source_.inline_data().size()) {
      return Fail(S3Error(S3ErrorCode::kInternalError, "inline source shorter than its size"));
    }
    std::string data = source_.inline_data().substr(next_, end_ - next_);
    next_ = end_;
    return Consume(std::move(data));
  }
  uint64_t blob_start = 0;
  for (const pb::BlobRef& ref : source_.blobs()) {
    if (next_ < blob_start + ref.size()) {
      const uint64_t offset = next_ - blob_start;
      const uint64_t length = std::min<uint64_t>(
          {ref.size() - offset, end_ - next_, limits::kS3ReadPieceBytes});
      auto id = blob::BlobId::Parse(ref.blob_id());
      if (!id.ok()) return Fail(S3Error(S3ErrorCode::kInternalError, "bad source blob id"));
      front_.blobs().Read(*id, offset, length,
                          [self = shared_from_this(), length](Result<SharedBytes> data) {
                            self->OnPiece(std::move(data), length);
                          });
      return;
    }
    blob_start += ref.size();
  }
  Fail(S3Error(S3ErrorCode::kInternalError, "source blobs do not cover its size"));
}

void ByteCopier::OnPiece(Result<SharedBytes> data, uint64_t length) {
  if (!data.ok()) {
    return Fail(FromBlobStatus(data.status()));
  }
  if (data->size() != length) {
    return Fail(S3Error(S3ErrorCode::kInternalError, "short source blob read"));
  }
  next_ += length;
  Consume(std::string(data->view()));  // the blob writer keeps a string of its own
}

void ByteCopier::Consume(std::string data) {
  md5_.Update(data);
  for (auth::Checksummer& c : checksums_) c.Update(data);
  out_.size += data.size();
  if (!writer_) {
    out_.inline_data.append(data);
    return ReadNext();
  }
  writer_->Write(std::move(data), [self = shared_from_this()](Status st) {
    if (!st.ok()) {
      return self->Fail(FromBlobStatus(st));
    }
    self->ReadNext();
  });
}

void ByteCopier::Complete() {
  out_.md5_hex = auth::HexEncode(md5_.Finish());
  for (auth::Checksummer& c : checksums_) {
    out_.checksums.emplace_back(c.algorithm(), auth::Base64Encode(c.Finish()));
  }
  if (!writer_) return done_(std::move(out_));
  writer_->Finish([self = shared_from_this()](Result<std::vector<pb::BlobRef>> blobs) {
    if (!blobs.ok()) {
      return self->Fail(FromBlobStatus(blobs.status()));
    }
    self->out_.blobs = std::move(blobs).value();
    self->done_(std::move(self->out_));
  });
}

void ByteCopier::Fail(S3Error error) {
  if (writer_) writer_->Abandon();
  if (done_) {
    Done done = std::move(done_);
    done_ = nullptr;
    done(std::move(error));
  }
}

}  // namespace tessera::s3::front
