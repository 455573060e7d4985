#include "experiment/s3_workload.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "experiment/experiment_limits.h"
#include "experiment/s3_object_body.h"
#include "router/http_client.h"
#include "sim/prng.h"

namespace tessera::experiment {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

// Stream label of the S3 clients' choices (bank clients use 10,000 + ...).
constexpr uint64_t kStreamS3Clients = 20'000;
constexpr int kS3FinalReadAttempts = 5;
constexpr char kWriteIdHeader[] = "x-amz-meta-write-id";

int64_t NowUnixS() { return static_cast<int64_t>(std::time(nullptr)); }

// One connection to one router, signing every request.
class S3Connection {
 public:
  S3Connection(const S3Endpoint& endpoint, uint32_t timeout_ms)
      : endpoint_(endpoint),
        http_(endpoint.host, endpoint.port, milliseconds(timeout_ms)) {}

  Result<router::HttpReply> Send(const std::string& method, const std::string& target,
                                 S3Headers extra = {}, const std::string& body = "") {
    const S3Headers headers = SignS3Request(endpoint_, method, target, std::move(extra), NowUnixS());
    return http_.Request(method, target, headers, body);
  }

 private:
  const S3Endpoint endpoint_;
  router::HttpClient http_;
};

std::string Describe(const router::HttpReply& reply) {
  std::string body = reply.body.substr(0, 300);
  std::replace(body.begin(), body.end(), '\n', ' ');
  return "HTTP " + std::to_string(reply.status) + " " + body;
}

// Contract 2 for PUT and DELETE: a request the router never saw (a
// refused connection: SendOutcome::kNotSent) failed for sure.
void SetWriteOutcome(OpRecord& op, const Result<router::HttpReply>& reply) {
  if (!reply.ok()) {
    op.outcome = reply.status().send_outcome() == SendOutcome::kNotSent ? OpOutcome::kFail
                                                                          : OpOutcome::kInfo;
    op.error = reply.status().ToString();
  } else if (reply->status / 100 == 2) {
    op.outcome = OpOutcome::kOk;
  } else {
    op.outcome = reply->status / 100 == 4 ? OpOutcome::kFail : OpOutcome::kInfo;
    op.error = Describe(*reply);
  }
}

class S3Client {
 public:
  S3Client(const S3WorkloadConfig& config, uint32_t client, uint32_t prefixes,
           uint32_t min_bytes, uint32_t max_bytes)
      : config_(config),
        client_(client),
        prefixes_(prefixes),
        min_bytes_(min_bytes),
        max_bytes_(max_bytes),
        connection_(config.routers[client % config.routers.size()], Timeout(config)),
        prng_(sim::DeriveSeed(config.seed, kStreamS3Clients +
                                               uint64_t{config.workload_index} * kClientsMax +
                                               client)) {}

  static uint32_t Timeout(const S3WorkloadConfig& config) {
    return config.spec.timeout_ms() == 0 ? kOpTimeoutMsDefault : config.spec.timeout_ms();
  }

  uint32_t process() const { return config_.workload_index * kClientsMax + client_; }

  void RunOne(OpRecord& op, const RunClock& clock) {
    const pb::S3ObjectWorkload& w = config_.spec;
    const uint32_t j = static_cast<uint32_t>(prng_.Below(prefixes_));
    const uint32_t i = static_cast<uint32_t>(prng_.Below(w.keys()));
    const uint64_t roll = prng_.Below(100);
    op.process = process();
    const std::string key = S3Key(config_.key_prefix, config_.workload_index, j, i);
    uint64_t bound = w.get_percent();
    if (roll < bound) return Get(op, key, OpKind::kS3Get, clock);
    if (roll < (bound += w.head_percent())) return Get(op, key, OpKind::kS3Head, clock);
    if (roll < (bound += w.delete_percent())) return Delete(op, key, clock);
    if (roll < (bound += w.list_percent())) {
      return List(op, S3Prefix(config_.key_prefix, config_.workload_index, j), clock);
    }
    if (roll < (bound += w.version_percent())) return Versioned(op, key, clock);
    // One draw picks the kind of PUT (a file without copies draws as before).
    const uint64_t put_roll = prng_.Below(100);
    if (put_roll < w.multipart_percent()) return MultipartPut(op, key, clock);
    if (put_roll < uint64_t{w.multipart_percent()} + w.copy_percent()) return Copy(op, key, clock);
    Put(op, key, clock);
  }

  // Create, the parts one after the other (multipart_parts, each
  // body/parts bytes and the last the rest), complete. Until the complete
  // the object is untouched, so a create or part that did not succeed is
  // kFail whatever happened to it; the complete's outcome is as a PUT's
  // (contract 2; a 200 carrying an <Error> is unknown).
  void MultipartPut(OpRecord& op, const std::string& key, const RunClock& clock) {
    op.kind = OpKind::kS3MultipartPut;
    op.key = key;
    op.value = NextWriteId();
    const std::string body = ObjectBody(key, op.value, min_bytes_, max_bytes_);
    op.bytes = body.size();
    op.invoke_us = clock.NowUs();
    op.outcome = OpOutcome::kFail;
    auto created = connection_.Send("POST", CreateUploadTarget(config_.bucket, key),
                                    {{kWriteIdHeader, op.value}});
    std::optional<std::string> upload_id;
    if (created.ok() && created->status == 200) upload_id = XmlElement(created->body, "UploadId");
    if (!upload_id) {
      op.error = "create: " + (created.ok() ? Describe(*created) : created.status().ToString());
      op.complete_us = clock.NowUs();
      return;
    }
    const uint32_t parts = std::max<uint32_t>(1, config_.spec.multipart_parts());
    const size_t part_bytes = body.size() / parts;
    std::vector<std::string> etags;
    for (uint32_t n = 1; n <= parts; ++n) {
      const size_t offset = (n - 1) * part_bytes;
      const size_t length = n < parts ? part_bytes : body.size() - offset;
      auto part = connection_.Send("PUT", PartTarget(config_.bucket, key, *upload_id, n), {},
                                   body.substr(offset, length));
      if (!part.ok() || part->status != 200 || part->Header("ETag").empty()) {
        op.error = "part " + std::to_string(n) + ": " +
                   (part.ok() ? Describe(*part) : part.status().ToString());
        op.complete_us = clock.NowUs();
        return;
      }
      etags.push_back(part->Header("ETag"));
    }
    auto done = connection_.Send("POST", CompleteTarget(config_.bucket, key, *upload_id), {},
                                 CompleteBody(etags));
    op.complete_us = clock.NowUs();
    SetWriteOutcome(op, done);
    if (op.outcome == OpOutcome::kOk && XmlElement(done->body, "Code")) {
      op.outcome = OpOutcome::kInfo;
      op.error = "complete: " + Describe(*done);
    }
  }

  // PUT a fresh source object, then CopyObject it onto `key` (contract 6).
  // Until the copy the object is untouched, so a source PUT that did not
  // succeed is kFail; the copy's outcome is as a PUT's (a 200 carrying an
  // <Error> is unknown).
  void Copy(OpRecord& op, const std::string& key, const RunClock& clock) {
    op.kind = OpKind::kS3Copy;
    op.key = key;
    op.value = NextWriteId() + kCopySourceMark;
    const std::string source = CopySourceKey(sources_prefix(), op.value);
    const std::string body = ObjectBody(source, op.value, min_bytes_, max_bytes_);
    op.bytes = body.size();
    op.invoke_us = clock.NowUs();
    op.outcome = OpOutcome::kFail;
    auto put = connection_.Send("PUT", ObjectTarget(config_.bucket, source),
                                {{kWriteIdHeader, op.value}}, body);
    if (!put.ok() || put->status != 200) {
      op.error = "source: " + (put.ok() ? Describe(*put) : put.status().ToString());
      op.complete_us = clock.NowUs();
      return;
    }
    auto copied = connection_.Send("PUT", ObjectTarget(config_.bucket, key),
                                   {{"x-amz-copy-source", config_.bucket + "/" + source}});
    op.complete_us = clock.NowUs();
    SetWriteOutcome(op, copied);
    if (op.outcome == OpOutcome::kOk && XmlElement(copied->body, "Code")) {
      op.outcome = OpOutcome::kInfo;
      op.error = "copy: " + Describe(*copied);
    }
  }

  // Contract 7.
  void Versioned(OpRecord& op, const std::string& key, const RunClock& clock) {
    const uint64_t roll = prng_.Below(6);
    if (roll < 3 || versions_.empty()) return VersionPut(op, key, clock);
    const auto& [known_key, version] = versions_[prng_.Below(versions_.size())];
    op.key = known_key;
    op.version_id = version;
    const std::string target = VersionTarget(versioned_bucket(), op.key, op.version_id);
    op.invoke_us = clock.NowUs();
    if (roll == 5) {
      op.kind = OpKind::kS3VersionDelete;
      auto reply = connection_.Send("DELETE", target);
      op.complete_us = clock.NowUs();
      return SetWriteOutcome(op, reply);
    }
    op.kind = OpKind::kS3VersionGet;
    auto reply = connection_.Send("GET", target);
    op.complete_us = clock.NowUs();
    op.outcome = OpOutcome::kFail;
    if (!reply.ok()) {
      op.error = reply.status().ToString();
    } else if (reply->status == 404) {
      op.outcome = OpOutcome::kOk;  // the version is gone
    } else if (reply->status != 200) {
      op.error = Describe(*reply);
    } else {
      op.outcome = OpOutcome::kOk;
      op.read = reply->Header(kWriteIdHeader);
      op.bytes = reply->body.size();
      auto id = VerifyObjectBody(op.key, reply->body);
      if (!id.ok()) op.anomaly = id.status().message();
      if (id.ok() && *id != *op.read) {
        op.anomaly = "the body is write " + *id + "'s, the metadata says " + *op.read;
      }
    }
  }

  void VersionPut(OpRecord& op, const std::string& key, const RunClock& clock) {
    op.kind = OpKind::kS3VersionPut;
    op.key = key;
    op.value = NextWriteId();
    const std::string body = ObjectBody(key, op.value, min_bytes_, max_bytes_);
    op.bytes = body.size();
    op.invoke_us = clock.NowUs();
    auto reply = connection_.Send("PUT", ObjectTarget(versioned_bucket(), key),
                                  {{kWriteIdHeader, op.value}}, body);
    op.complete_us = clock.NowUs();
    SetWriteOutcome(op, reply);
    if (op.outcome != OpOutcome::kOk) return;
    op.version_id = reply->Header("x-amz-version-id");
    if (op.version_id.empty()) {
      op.anomaly = "a PUT to the versioned bucket answered without x-amz-version-id";
      return;
    }
    if (versions_.size() == kS3KnownVersionsMax) versions_.erase(versions_.begin());
    versions_.emplace_back(key, op.version_id);
  }

  void Put(OpRecord& op, const std::string& key, const RunClock& clock) {
    op.kind = OpKind::kS3Put;
    op.key = key;
    op.value = NextWriteId();
    const std::string body = ObjectBody(key, op.value, min_bytes_, max_bytes_);
    op.bytes = body.size();
    op.invoke_us = clock.NowUs();
    auto reply = connection_.Send("PUT", ObjectTarget(config_.bucket, key),
                                  {{kWriteIdHeader, op.value}}, body);
    op.complete_us = clock.NowUs();
    SetWriteOutcome(op, reply);
  }

  void Delete(OpRecord& op, const std::string& key, const RunClock& clock) {
    op.kind = OpKind::kS3Delete;
    op.key = key;
    op.invoke_us = clock.NowUs();
    auto reply = connection_.Send("DELETE", ObjectTarget(config_.bucket, key));
    op.complete_us = clock.NowUs();
    SetWriteOutcome(op, reply);
  }

  // GET or HEAD (contract 1 and 2).
  void Get(OpRecord& op, const std::string& key, OpKind kind, const RunClock& clock) {
    op.kind = kind;
    op.key = key;
    const bool head = kind == OpKind::kS3Head;
    op.invoke_us = clock.NowUs();
    auto reply = connection_.Send(head ? "HEAD" : "GET", ObjectTarget(config_.bucket, key));
    op.complete_us = clock.NowUs();
    op.outcome = OpOutcome::kFail;
    if (!reply.ok()) {
      op.error = reply.status().ToString();
      return;
    }
    if (reply->status == 404 && (head || reply->body.find("NoSuchKey") != std::string::npos)) {
      op.outcome = OpOutcome::kOk;  // absent
      return;
    }
    if (reply->status != 200) {
      op.error = Describe(*reply);
      return;
    }
    op.outcome = OpOutcome::kOk;
    const std::string meta = reply->Header(kWriteIdHeader);
    op.read = meta;
    if (head) {
      const std::string length = reply->Header("Content-Length");
      const uint64_t expected =
          ObjectBodySize(BodyKeyOf(key, meta, sources_prefix()), meta, min_bytes_, max_bytes_);
      if (length != std::to_string(expected)) {
        op.anomaly = "HEAD of write " + meta + ": Content-Length " + length + ", its body has " +
                     std::to_string(expected) + " bytes";
      }
      return;
    }
    op.bytes = reply->body.size();
    auto id = VerifyObjectBody(BodyKeyOf(key, meta, sources_prefix()), reply->body);
    if (!id.ok()) {
      op.anomaly = id.status().message();
    } else if (*id != meta) {
      op.anomaly = "the body is write " + *id + "'s, the metadata says " + meta;
    }
  }

  void List(OpRecord& op, const std::string& prefix, const RunClock& clock) {
    op.kind = OpKind::kS3List;
    op.key = prefix;
    op.invoke_us = clock.NowUs();
    op.outcome = OpOutcome::kFail;
    std::string token;
    for (int page = 0; page < kS3ListPagesMax; ++page) {
      auto reply = connection_.Send("GET", ListTarget(config_.bucket, prefix, token));
      if (!reply.ok() || reply->status != 200) {
        op.error = reply.ok() ? Describe(*reply) : reply.status().ToString();
        break;
      }
      auto parsed = ParseListObjectsV2(reply->body);
      if (!parsed.ok()) {
        op.error = parsed.status().ToString();
        break;
      }
      op.listed.insert(op.listed.end(), parsed->keys.begin(), parsed->keys.end());
      if (!parsed->next_token) {
        op.outcome = OpOutcome::kOk;
        break;
      }
      token = *parsed->next_token;
    }
    if (op.outcome != OpOutcome::kOk) {
      op.listed.clear();
      if (op.error.empty()) op.error = "more than " + std::to_string(kS3ListPagesMax) + " pages";
    }
    op.complete_us = clock.NowUs();
  }

 private:
  std::string versioned_bucket() const { return config_.bucket + kS3VersionedBucketSuffix; }

  std::string sources_prefix() const {
    return S3SourcesPrefix(config_.key_prefix, config_.workload_index);
  }

  std::string NextWriteId() {
    return "w" + std::to_string(config_.workload_index) + "-c" + std::to_string(client_) + "-" +
           std::to_string(++writes_);
  }

  const S3WorkloadConfig& config_;
  const uint32_t client_, prefixes_, min_bytes_, max_bytes_;
  S3Connection connection_;
  sim::Prng prng_;
  uint64_t writes_ = 0;
  std::vector<std::pair<std::string, std::string>> versions_;  // (key, version id), contract 7
};

}  // namespace

std::string S3Prefix(const std::string& key_prefix, uint32_t workload_index, uint32_t j) {
  return key_prefix + "w" + std::to_string(workload_index) + "-p" + std::to_string(j) + "/";
}

std::string S3SourcesPrefix(const std::string& key_prefix, uint32_t workload_index) {
  return key_prefix + "w" + std::to_string(workload_index) + "-src/";
}

std::string S3Key(const std::string& key_prefix, uint32_t workload_index, uint32_t j, uint32_t i) {
  char n[8];
  std::snprintf(n, sizeof n, "k%02u", i);
  return S3Prefix(key_prefix, workload_index, j) + n;
}

S3Workload::S3Workload(S3WorkloadConfig config, OpLog& log, const RunClock& clock)
    : config_(std::move(config)),
      prefixes_(config_.spec.prefixes() == 0 ? kS3PrefixesDefault : config_.spec.prefixes()),
      min_bytes_(config_.spec.min_bytes() == 0 ? kS3MinBytesDefault : config_.spec.min_bytes()),
      max_bytes_(config_.spec.max_bytes() == 0 ? kS3MaxBytesDefault : config_.spec.max_bytes()),
      log_(log),
      clock_(clock),
      clients_(PaceOf(config_.spec), log) {}

namespace {

// The versioned bucket of contract 7, created and versioning enabled
// before `deadline`.
bool CreateVersionedBucket(S3Connection& connection, const std::string& bucket,
                           steady_clock::time_point deadline) {
  bool created = false, enabled = false;
  while (!enabled && steady_clock::now() < deadline) {
    if (!created) {
      auto reply = connection.Send("PUT", BucketTarget(bucket));
      created = reply.ok() && (reply->status == 200 ||
                               reply->body.find("BucketAlreadyOwnedByYou") != std::string::npos);
    }
    if (created) {
      auto reply = connection.Send("PUT", VersioningTarget(bucket), {}, VersioningEnabledBody());
      enabled = reply.ok() && reply->status == 200;
    }
    if (!enabled) std::this_thread::sleep_for(milliseconds(200));
  }
  return enabled;
}

}  // namespace

void S3Workload::Start() {
  if (config_.routers.empty()) return;
  S3Connection connection(config_.routers[0], S3Client::Timeout(config_));
  const auto deadline = steady_clock::now() + kS3BucketTimeout;
  bool created = false;
  while (!created && steady_clock::now() < deadline) {
    auto reply = connection.Send("PUT", BucketTarget(config_.bucket));
    created = reply.ok() && (reply->status == 200 ||
                             reply->body.find("BucketAlreadyOwnedByYou") != std::string::npos);
    if (!created) std::this_thread::sleep_for(milliseconds(200));
  }
  if (!created) return;  // no acknowledged PUT: the S3 checker fails
  if (config_.spec.version_percent() > 0 &&
      !CreateVersionedBucket(connection, config_.bucket + kS3VersionedBucketSuffix, deadline)) {
    return;
  }
  clients_.Start([this](uint32_t client, const std::atomic<bool>&) -> PacedClients::OneOperation {
    auto state = std::make_shared<S3Client>(config_, client, prefixes_, min_bytes_, max_bytes_);
    return [this, state](uint64_t index) {
      OpRecord op;
      op.index = index;
      state->RunOne(op, clock_);
      log_.Add(std::move(op));
    };
  });
}

void S3Workload::Stop() { clients_.Stop(); }

void S3Workload::FinalReads(uint32_t process) {
  if (config_.routers.empty()) return;
  S3Client reader(config_, 0, prefixes_, min_bytes_, max_bytes_);
  auto attempt = [&](auto&& run) {
    for (int i = 0; i < kS3FinalReadAttempts; ++i) {
      const std::optional<uint64_t> index = log_.Reserve();
      if (!index) return;
      OpRecord op;
      op.index = *index;
      run(op);
      op.process = process;
      op.after_heal = true;
      const bool answered = op.outcome == OpOutcome::kOk;
      log_.Add(std::move(op));
      if (answered) return;
      std::this_thread::sleep_for(milliseconds(500));
    }
  };
  for (uint32_t j = 0; j < prefixes_; ++j) {
    for (uint32_t i = 0; i < config_.spec.keys(); ++i) {
      const std::string key = S3Key(config_.key_prefix, config_.workload_index, j, i);
      attempt([&](OpRecord& op) { reader.Get(op, key, OpKind::kS3Get, clock_); });
    }
    const std::string prefix = S3Prefix(config_.key_prefix, config_.workload_index, j);
    attempt([&](OpRecord& op) { reader.List(op, prefix, clock_); });
  }
}

}  // namespace tessera::experiment
