// What every upload of one object's bytes (PutObject, UploadPart, POST
// Object) does once its body has ended: verify the digests the client
// declared, collect the blobs the writer stored, and turn the
// partition op's answer into the client's error or success.
//
// Contract:
//  1. VerifyDeclaredDigests checks Content-MD5 (when given) against the
//     body's MD5 and a declared x-amz-checksum-* (when given) against the
//     one computed, BadDigest / InvalidDigest as S3 answers; on success
//     the declared checksum is recorded in `object`.
//  2. FinishBlobs hands `object` the inline bytes (no writer) or, once the
//     writer finished, its blob references, then runs `commit`; a writer
//     that failed runs `abort` with the blob store's error instead.
//     `object` must outlive the writer's answer: the callers' `commit`
//     holds the upload that owns it.
//  3. PutObjectOpOf stamps `object` with its size, ETag and the router's
//     time and wraps it in the PutObject op of the call's key, under the
//     bucket's versioning.
//  4. CommittedOk: the op's answer. Not OK (outcome unknown): the op may
//     have committed the blobs, so they are kept (never freed here), and
//     the call fails with the status; an outcome other than S3_OK fails the
//     call with its S3 error (`context` names the upload). True
//     only when the op applied.
//
// Thread safety: as the call's; each runs on the thread given the answer.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "s3/auth/checksum.h"
#include "s3/front/blob_writer.h"
#include "s3/front/s3_call.h"
#include "s3/front/s3_front.h"
#include "tessera/s3.pb.h"

namespace tessera::s3::front {

// A body piece that could not be read: RequestTimeout when the client was
// too slow, IncompleteBody otherwise.
S3Error BodyReadError(const Status& status);

S3Status VerifyDeclaredDigests(const std::optional<std::string>& content_md5,
                               const std::string& md5,
                               const std::optional<auth::DeclaredChecksum>& declared,
                               std::optional<auth::Checksummer>& checksum,
                               pb::ObjectVersion& object);

void FinishBlobs(const std::shared_ptr<BlobWriter>& writer, std::string inline_data,
                 pb::ObjectVersion& object, std::function<void()> commit,
                 std::function<void(const S3Error&)> abort);

pb::S3Op PutObjectOpOf(const S3Call& call, const pb::ObjectVersion& object, uint64_t size,
                       const std::string& etag);

bool CommittedOk(S3Call& call, S3Front& front, const Result<pb::S3OpResult>& answer,
                 size_t blobs, const OutcomeContext& context = {});

}  // namespace tessera::s3::front
