// S3Front: the S3 HTTP API of a router, on the streaming HTTP server. One
// S3Call per request: parse (path-style or virtual-hosted-style), authenticate
// (SigV4 / SigV2, header or presigned; secrets from the registry's users),
// admission (one token from the bucket's and the user's budget, else 503
// SlowDown; src/admission), authorize (a user sees only its own buckets),
// then one handler per S3 operation. Object metadata goes through
// ObjectIndex (one atomic op in one partition per S3 operation); object
// bytes through the BlobClient (objects up to inline_bytes_max are stored
// inline in the metadata record instead).
//
// Contract:
//  - Every request gets exactly one response; failures are S3 error
//    documents (code, message, resource, request id = x-amz-request-id), no
//    body on HEAD.
//  - Request and response bodies stream: memory per request is bounded by
//    about two blobs (blob_bytes), never the object size.
//  - Nothing is stored half-way: an object becomes visible only through its
//    one PutObject op, after every byte is durable on two blob replicas and
//    every digest (Content-MD5, x-amz-checksum-*, x-amz-content-sha256,
//    chunk signatures) was verified. Blobs of a refused or failed upload are
//    deleted (best effort) or collected by GC.
//
// Thread safety: Handle from any thread; the front must outlive its calls
// (destroy it after the io threads are joined).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "admission/s3_admission.h"
#include "gac/gac_client.h"
#include "blob/blob_client.h"
#include "common/byte_budget.h"
#include "common/limits.h"
#include "common/metrics.h"
#include "http/stream_server.h"
#include "knobs/knobs.h"
#include "router/registry_client.h"
#include "s3/front/bucket_config_cache.h"
#include "s3/front/digest_pool.h"
#include "s3/front/object_index.h"
#include "s3/front/read_ahead_budget.h"

namespace tessera::s3::front {

struct S3FrontOptions {
  std::string region{knobs::kRouterS3Region.default_value};
  // Virtual-hosted-style addressing: requests to <bucket>.<base_domain>.
  // Empty: path-style only.
  std::string base_domain;
  size_t inline_bytes_max = knobs::kRouterS3InlineBytesMax.default_value;
  size_t blob_bytes = knobs::kRouterS3BlobBytes.default_value;
  uint64_t object_bytes_max = limits::kS3ObjectBytesMax;
  // Smallest part CompleteMultipartUpload accepts except the last (S3: 5 MiB).
  uint64_t min_part_bytes = knobs::kRouterS3MinPartBytes.default_value;
  // Per-bucket and per-user request budgets, charged once per authenticated
  // request before any partition or blob work; empty -> 503 SlowDown.
  admission::S3AdmissionOptions admission;
  // Threads digesting large request bodies (digest_pool.h), 1..
  // kDigestThreadsMax; 0: the cores left beside one io thread (at least 1,
  // at most 4).
  size_t digest_threads = 0;
  // Body pieces up to this size are digested on the io thread: a hop to the
  // pool and back costs more than hashing a small body.
  size_t digest_inline_bytes_max = 64 << 10;
  // How long a bucket's configuration record is cached (bucket_config_cache.h);
  // 0: read on every use.
  uint32_t bucket_config_ttl_ms = knobs::kRouterS3BucketConfigTtlMs.default_value;
};

// A random salt for request ids, so that ids do not reveal how many
// requests a front served: IOError when the random source fails (the front
// then must not start; a fixed salt would make ids predictable).
Result<uint64_t> NewRequestIdSalt();

class S3Front {
 public:
  // `request_id_salt`: from NewRequestIdSalt.
  S3Front(ObjectIndex& index, router::RegistryClient& registry, blob::BlobClient& blobs,
          metrics::Registry& metrics, S3FrontOptions options, uint64_t request_id_salt);
  S3Front(const S3Front&) = delete;
  S3Front& operator=(const S3Front&) = delete;

  void Handle(std::shared_ptr<http::Exchange> exchange);

  // What the server answers on its own (malformed requests, huge headers),
  // as S3 error documents.
  http::ProtocolErrorResponse RenderProtocolError(unsigned status, std::string_view reason);

  ObjectIndex& index() { return index_; }
  router::RegistryClient& registry() { return registry_; }
  // The admission policy (GAC seam: admission().SetBucketRate).
  admission::S3Admission& admission() { return admission_; }
  // The router's GAC client (nullptr: none, nothing charged). Buckets with
  // a capacity are charged to this router's share of it (s3_charge.h);
  // set before the front serves.
  void set_gac(gac::GacClient* gac) { gac_ = gac; }
  gac::GacClient* gac() const { return gac_; }
  blob::BlobClient& blobs() { return blobs_; }
  const S3FrontOptions& options() const { return options_; }
  DigestPool& digests() { return digests_; }
  ReadAheadBudget& read_ahead() { return read_ahead_; }
  // Where every request's buffered aws-chunked chunks lease their bytes
  // (auth::AwsChunkedOptions::buffer_budget).
  const std::shared_ptr<ByteBudget>& chunk_buffers() const { return chunk_buffers_; }
  std::string NextRequestId();
  // The configuration record of bucket `bucket` (id `bucket_id`; an empty
  // record when it has none) and its policy facts: this router's copy when
  // younger than bucket_config_ttl_ms, else a strong read of the record
  // (ObjectIndex::ReadBucketConfig).
  void BucketConfigOf(uint64_t bucket_id, std::string_view bucket,
                      std::function<void(Result<BucketConfigCache::Cached>)> done);
  // Applies `op` (one SetBucketConfigOp) and drops this router's copy of
  // the bucket's configuration, whatever the outcome.
  void SetBucketConfig(pb::SetBucketConfigOp op, ObjectIndex::Callback<pb::S3OpResult> done);
  // Counts `blobs` written for an op that failed without an outcome (an
  // error, not a refusal: it may have committed, so its blobs are kept; if
  // it did not, they are orphans for the sweeper):
  // tessera_s3_unknown_outcome_blobs_total. Its sum bounds the orphan
  // files a run without router crashes may leave (3 copies each).
  void KeepBlobsOfUnknownOutcome(size_t blobs) { unknown_outcome_blobs_->Increment(blobs); }

 private:
  ObjectIndex& index_;
  router::RegistryClient& registry_;
  blob::BlobClient& blobs_;
  const S3FrontOptions options_;
  admission::S3Admission admission_;
  gac::GacClient* gac_ = nullptr;
  metrics::Counter* requests_ = nullptr;
  metrics::Counter* unknown_outcome_blobs_ = nullptr;
  ReadAheadBudget read_ahead_{limits::kS3ReadAheadBytesMax};
  const std::shared_ptr<ByteBudget> chunk_buffers_ =
      std::make_shared<ByteBudget>(limits::kRouterAwsChunkBufferBytesMax);
  BucketConfigCache bucket_configs_;
  std::atomic<uint64_t> request_counter_{0};
  const uint64_t request_id_salt_;
  // Last: destroyed first, so its queued digests finish while everything
  // they use still exists.
  DigestPool digests_;
};

}  // namespace tessera::s3::front
