// ByteCopier: copies a byte range of a stored object version into new
// bytes for a destination (CopyObject, UploadPartCopy): reads the source
// piece by piece (inline data, or its blobs at most kS3ReadPieceBytes per
// read, each verified by the blob client), hashes the bytes (MD5 for the
// ETag, plus the checksums asked for) and feeds them to the destination's
// BlobWriter, which writes new blobs owned by the destination (decision
// D21: blob ids are never shared between objects). Without a writer the
// bytes are collected inline (sources stored inline, at most the inline
// threshold).
//
// Memory: one source piece plus the writer's window (the next piece is
// read only when the writer has room).
//
// Thread safety: one chain of callbacks; hold it by shared_ptr.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "s3/auth/checksum.h"
#include "s3/front/blob_writer.h"
#include "s3/protocol/s3_result.h"
#include "tessera/s3.pb.h"

namespace tessera::s3::front {

class S3Front;

struct CopiedBytes {
  uint64_t size = 0;
  std::string md5_hex;
  // base64 values, one per algorithm asked for, in that order.
  std::vector<std::pair<auth::ChecksumAlgorithm, std::string>> checksums;
  std::vector<pb::BlobRef> blobs;  // with a writer
  std::string inline_data;         // without one
};

class ByteCopier : public std::enable_shared_from_this<ByteCopier> {
 public:
  using Done = std::function<void(S3Result<CopiedBytes>)>;

  // Copies bytes [first, first + length) of `source` (length 0: nothing).
  // `writer` null: collect inline (length must be at most the inline
  // threshold; CHECKed by the caller's choice). On failure the writer is
  // abandoned (its blobs deleted, best effort).
  ByteCopier(S3Front& front, pb::ObjectVersion source, uint64_t first, uint64_t length,
             std::shared_ptr<BlobWriter> writer, std::vector<auth::ChecksumAlgorithm> checksums);

  // Runs the copy; `done` exactly once: the bytes' digests and blobs, or
  // ServiceUnavailable/SlowDown/InternalError.
  void Run(Done done);

 private:
  void ReadNext();
  void OnPiece(Result<SharedBytes> data, uint64_t length);
  void Consume(std::string data);
  void Complete();
  void Fail(S3Error error);

  S3Front& front_;
  const pb::ObjectVersion source_;
  uint64_t next_;       // next source offset to read
  const uint64_t end_;  // past the last byte
  std::shared_ptr<BlobWriter> writer_;
  auth::Checksummer md5_;
  std::vector<auth::Checksummer> checksums_;
  CopiedBytes out_;
  Done done_;
};

}  // namespace tessera::s3::front
