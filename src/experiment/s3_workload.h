// The S3 object workload: `clients` concurrent clients, each with its own
// keep-alive HTTP connection (router::HttpClient on Boost.Beast) to a
// router's S3 port, issue SigV4-signed (s3_request.h) PUTs (new objects and
// overwrites), GETs, HEADs, DELETEs and ListObjectsV2 of a prefix on
// `keys` hot keys under each of `prefixes` prefixes of one bucket, at
// `rate_per_s` operations per second over all clients; `multipart_percent`
// of the PUTs are multipart uploads of `multipart_parts` parts,
// `copy_percent` copies.
//
// Contract:
//  1. Every PUT writes a write id unique in the run ("w<workload>-c<client>-
//     <n>") as the x-amz-meta-write-id metadata and a body derived from
//     (key, write id) (s3_object_body.h), so every byte a GET returns is
//     checked: a body that does not verify, or whose header names another
//     write id than the metadata, is recorded as the read's `anomaly`; so
//     is a HEAD whose Content-Length is not the size of its write id's body.
//  2. Outcomes: 2xx ok; a write answered 4xx is kFail (refused: no
//     effect); so is a write the router never saw (a refused connection:
//     SendOutcome::kNotSent of router::HttpClient); a write answered 5xx, timed out or
//     cut off is kInfo (it may still take effect). A read that did not get a 200 or a 404 NoSuchKey
//     is kFail; a 404 NoSuchKey is an ok read of absence.
//  3. Start creates the bucket (an existing one of the same owner is
//     fine), retried for at most kS3BucketTimeout; the clients start only
//     once it exists.
//  4. Choices (operation, key, prefix) come from a sim::Prng stream per
//     client derived from the run's seed; timing depends on the cluster.
//  5. A list follows continuation tokens for at most kS3ListPagesMax pages;
//     it is ok only when every page answered.
//  6. `copy_percent` of the PUTs are copies: a fresh source object with a
//     copy write id (s3_object_body.h, kCopySourceMark) PUT under
//     S3SourcesPrefix, then CopyObject onto the hot key; the object then
//     holds the source's body and write id, and reads verify the body
//     against the source key (BodyKeyOf). Every copy's write id is unique,
//     so a copy is a write of that id like a PUT.
//  7. `version_percent` of the operations go to the same keys in a second
//     bucket with versioning enabled (Start enables it): half PUTs, which
//     record the x-amz-version-id they got (a 200 without one is an
//     anomaly), a third GETs and a sixth DELETEs by id of one of the last
//     kS3KnownVersionsMax versions the client's own acknowledged PUTs
//     created (a PUT while it knows none). Which versions exist depends on
//     the outcomes, so those choices depend on the cluster too.
//
// Thread safety: as Workload (workload.h); clients record into the OpLog
// from their own threads.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "experiment/experiment_limits.h"
#include "experiment/op_log.h"
#include "experiment/paced_clients.h"
#include "experiment/s3_request.h"
#include "experiment/workload.h"
#include "tessera/experiment.pb.h"

namespace tessera::experiment {

inline constexpr auto kS3BucketTimeout = std::chrono::seconds(30);
inline constexpr int kS3ListPagesMax = 10;
// Versions a client remembers for its GETs and DELETEs by id (the oldest
// is forgotten first).
inline constexpr size_t kS3KnownVersionsMax = 32;
// The versioned bucket: the workload's bucket name plus this.
inline constexpr char kS3VersionedBucketSuffix[] = "-versioned";

struct S3WorkloadConfig {
  pb::S3ObjectWorkload spec;
  uint32_t workload_index = 0;
  uint64_t seed = 0;
  std::string bucket;
  std::string key_prefix;  // unique per run, so every object starts absent
  std::vector<S3Endpoint> routers;  // at least one
};

// The j-th prefix of a workload and the i-th hot key under it.
std::string S3Prefix(const std::string& key_prefix, uint32_t workload_index, uint32_t j);
std::string S3Key(const std::string& key_prefix, uint32_t workload_index, uint32_t j, uint32_t i);
// Where a workload's copy sources live ("<key_prefix>w0-src/"): outside
// every listed prefix, never read.
std::string S3SourcesPrefix(const std::string& key_prefix, uint32_t workload_index);

class S3Workload : public Workload {
 public:
  S3Workload(S3WorkloadConfig config, OpLog& log, const RunClock& clock);
  ~S3Workload() override { Stop(); }

  void Start() override;
  void Stop() override;
  // A GET of every hot key and a list of every prefix, each retried (every
  // attempt recorded) until it answers, at most 5 times.
  void FinalReads(uint32_t process) override;

 private:

  const S3WorkloadConfig config_;
  const uint32_t prefixes_, min_bytes_, max_bytes_;
  OpLog& log_;
  const RunClock& clock_;
  PacedClients clients_;  // last: stopped before the members its clients use go
};

}  // namespace tessera::experiment
