#include "s3/front/s3_front.h"

#include <openssl/rand.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <thread>

#include "common/check.h"
#include "s3/auth/authenticate.h"
#include "s3/auth/request_parts.h"
#include "s3/front/s3_call.h"
#include "s3/front/s3_charge.h"
#include "s3/model/op_context.h"
#include "s3/model/version_id.h"
#include "s3/protocol/names.h"
#include "s3/protocol/xml_documents.h"

namespace tessera::s3::front {
namespace {

bool IsObjectScope(authz::Action action) {
  return authz::RuleOf(action).scope == authz::Scope::kObject;
}

// S3FrontOptions.digest_threads: 0 means the cores beside one io thread,
// clamped to 1..4.
size_t DigestThreads(size_t configured) {
  if (configured != 0) return std::min(configured, kDigestThreadsMax);
  const size_t cores = std::thread::hardware_concurrency();
  return std::clamp<size_t>(cores > 1 ? cores - 1 : 1, 1, 4);
}

std::string_view HostWithoutPort(std::string_view host) {
  if (!host.empty() && host.front() == '[') return host;  // IPv6 literal: no buckets there
  const size_t colon = host.rfind(':');
  return colon == std::string_view::npos ? host : host.substr(0, colon);
}

// Splits the request into bucket and key: virtual-hosted style when the
// Host is <bucket>.<base_domain>, else path style /<bucket>/<key>.
S3Status ParseTarget(S3Call& call, const std::string& base_domain) {
  const http::RequestHead& head = call.head();
  auto query = ParseQuery(head.query);
  if (!query.ok()) return query.error();
  call.query = std::move(query).value();
  call.resource = head.path;
  auto path = PercentDecode(head.path, /*plus_as_space=*/false);
  if (!path.ok()) return path.error();
  std::string_view rest = *path;
  if (rest.empty() || rest.front() != '/') return S3Error(S3ErrorCode::kInvalidURI);
  rest.remove_prefix(1);
  const std::string_view host = HostWithoutPort(call.Header("host").value_or(""));
  if (!base_domain.empty() && host.size() > base_domain.size() + 1 &&
      host.substr(host.size() - base_domain.size()) == base_domain &&
      host[host.size() - base_domain.size() - 1] == '.') {
    call.bucket = std::string(host.substr(0, host.size() - base_domain.size() - 1));
    call.key = std::string(rest);
    call.virtual_hosted = true;
    return S3Status::Ok();
  }
  const size_t slash = rest.find('/');
  call.bucket = std::string(rest.substr(0, slash));
  if (slash != std::string_view::npos) call.key = std::string(rest.substr(slash + 1));
  return S3Status::Ok();
}

// See S3Call::query_headers.
void HoistSigV2QueryHeaders(S3Call& call) {
  if (call.Param("AWSAccessKeyId") == nullptr) return;
  for (const QueryParam& p : call.query) {
    std::string name = p.name;
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const bool header_like =
        name.starts_with("x-amz-") || name == "content-md5" || name == "content-type";
    if (header_like && !call.head().Header(name) && !http::FindHeader(call.query_headers, name)) {
      call.query_headers.emplace_back(std::move(name), p.value);
    }
  }
}

// PUT ?partNumber=N&uploadId=U.
void UploadPartRequest(CallPtr call) {
  const QueryParam* number = call->Param("partNumber");
  const QueryParam* upload = call->Param("uploadId");
  uint32_t n = 0;
  if (!number || number->value.empty() ||
      std::from_chars(number->value.data(), number->value.data() + number->value.size(), n).ec !=
          std::errc() ||
      n < 1 || n > limits::kS3PartNumberMax) {
    return call->Fail(PartNumberArgumentError(number ? number->value : std::string()));
  }
  if (call->Header("x-amz-copy-source")) return UploadPartCopy(call, PartTarget{upload->value, n});
  UploadPart(call, PartTarget{upload->value, n});
}

// What an anonymous request would do, for its first authorization (before
// dispatch: only a request some ACL may grant is dispatched): the action
// of the operation the request names, by its shape.
authz::Action AnonymousAction(const S3Call& call) {
  const std::string& method = call.head().method;
  if (call.bucket.empty()) return authz::Action::kListAllMyBuckets;
  if (call.key.empty()) {
    if (method == "PUT" && call.query.empty()) return authz::Action::kCreateBucket;
    if (method == "PUT") return authz::Action::kPutBucketAcl;
    if (method == "DELETE") return authz::Action::kDeleteBucket;
    if (method == "POST") return authz::Action::kDeleteObject;
    return authz::Action::kListBucket;
  }
  // The object's own ACL and owner decide these: dispatched undecided.
  if (call.HasParam("acl")) return authz::Action::kPutObjectAcl;
  if (call.HasParam("tagging")) return authz::Action::kPutObjectTagging;
  if (method == "PUT" || method == "POST") return authz::Action::kPutObject;
  if (method == "DELETE") return authz::Action::kDeleteObject;
  return authz::Action::kGetObject;
}

// An anonymous request: like S3, one for a bucket that does not exist
// learns that (NoSuchBucket) before the access decision.
void Dispatch(CallPtr call);
void DispatchAnonymous(CallPtr call);
bool ChargeBucketShare(S3Call& call, std::string_view method);

void AuthorizeAnonymous(CallPtr call) {
  const authz::Action action = AnonymousAction(*call);
  if (call->bucket.empty() || action == authz::Action::kCreateBucket) {
    if (!Authorized(*call, action, call->bucket, "", "")) return;
    TESSERA_CHECK(false);  // nothing grants anonymous access yet
  }
  call->front.registry().GetBucket(call->bucket, [call, action](Result<pb::BucketDescriptor> bucket) {
    if (!bucket.ok() && bucket.status().code() == StatusCode::kNotFound) {
      return call->Fail(S3Error(S3ErrorCode::kNoSuchBucket));
    }
    if (!bucket.ok()) return call->Fail(bucket.status());
    // An object action: the object's ACL (or the bucket's policy) may
    // grant it, which its handler learns when it reads the version (it
    // decides there).
    if (IsObjectScope(action)) return DispatchAnonymous(call);
    const std::string owner = bucket->owner();
    call->front.BucketConfigOf(
        bucket->bucket_id(), call->bucket,
        [call, action, owner](Result<BucketConfigCache::Cached> config) {
          if (!config.ok()) return call->Fail(config.status());
          // A bucket ACL or policy may grant anonymous access, writes too
          // (public-read-write): what anonymous writes is owned by the
          // anonymous principal. The policy's Deny statements and the
          // public access block apply.
          if (!Authorized(*call, action, call->bucket, call->key, owner,
                          "x-amz-expected-bucket-owner", GrantsOf(*config->record),
                          config->facts.get())) {
            return;
          }
          // Granted: dispatched like any request; its handler decides its
          // own action again (the same ACL, from the cache).
          DispatchAnonymous(call);
        });
  });
}

void DispatchAnonymous(CallPtr call) {
  if (Status admitted = call->front.admission().Admit("", call->bucket); !admitted.ok()) {
    return call->Fail(S3Error(S3ErrorCode::kSlowDown));
  }
  // Charged to the bucket's capacity like a signed request (anonymous
  // writes reach the partitions too).
  if (!ChargeBucketShare(*call, call->head().method)) {
    return call->Fail(S3Error(S3ErrorCode::kSlowDown), {{"Retry-After", "1"}});
  }
  WithCorsHeaders(call, [call] { Dispatch(call); });
}

void Dispatch(CallPtr call) {
  const std::string& method = call->head().method;
  if (call->bucket.empty()) {
    if (method == "GET") return ListBuckets(call);
    return call->Fail(MethodNotAllowedError(method, "SERVICE"));
  }
  if (call->key.empty()) {
    if (method == "PUT") {
      if (call->query.empty()) return CreateBucket(call);
      if (call->HasParam("versioning")) return PutBucketVersioning(call);
      if (call->HasParam("acl")) return PutAcl(call);
      if (call->HasParam("cors")) return PutBucketCors(call);
      if (call->HasParam("ownershipControls")) return PutBucketOwnershipControls(call);
      if (call->HasParam("policy")) return PutBucketPolicy(call);
      if (call->HasParam("publicAccessBlock")) return PutPublicAccessBlock(call);
      return call->Fail(S3Error(S3ErrorCode::kNotImplemented));
    }
    if (method == "DELETE") {
      if (call->query.empty()) return DeleteBucket(call);
      if (call->HasParam("cors")) return DeleteBucketCors(call);
      if (call->HasParam("ownershipControls")) return DeleteBucketOwnershipControls(call);
      if (call->HasParam("policy")) return DeleteBucketPolicy(call);
      if (call->HasParam("publicAccessBlock")) return DeletePublicAccessBlock(call);
      return call->Fail(S3Error(S3ErrorCode::kNotImplemented));
    }
    if (method == "HEAD") return HeadBucket(call);
    if (method == "POST" && call->HasParam("delete")) return DeleteObjects(call);
    // POST ?metadataTable and the like: operations Tessera does not implement.
    if (method == "POST" && !call->query.empty()) {
      return call->Fail(S3Error(S3ErrorCode::kNotImplemented));
    }
    if (method == "GET") {
      if (call->HasParam("cors")) return GetBucketCors(call);
      if (call->HasParam("ownershipControls")) return GetBucketOwnershipControls(call);
      if (call->HasParam("policy")) return GetBucketPolicy(call);
      if (call->HasParam("policyStatus")) return GetBucketPolicyStatus(call);
      if (call->HasParam("publicAccessBlock")) return GetPublicAccessBlock(call);
      for (const char* sub : {"location", "acl", "policy", "versioning", "tagging",
                              "lifecycle", "encryption", "logging", "website", "replication",
                              "ownershipControls", "publicAccessBlock", "object-lock",
                              "notification", "requestPayment", "accelerate", "analytics",
                              "inventory", "metrics", "intelligent-tiering", "policyStatus",
                              "session", "abac", "metadataConfiguration", "metadataTable"}) {
        if (call->HasParam(sub)) return GetBucketSubresource(call);
      }
      if (call->HasParam("versions")) return ListObjectVersions(call);
      if (call->HasParam("uploads")) return ListMultipartUploads(call);
      return ListObjects(call);
    }
    return call->Fail(MethodNotAllowedError(method, "BUCKET"));
  }
  if (auto valid = ValidateObjectKey(call->key); !valid.ok()) return call->Fail(valid.error());
  // Object sub-resources of operations Tessera does not implement: refused,
  // never served as (or written over) the object itself.
  for (const char* sub : {"retention", "legal-hold", "torrent", "renameObject", "encryption",
                          "restore", "select"}) {
    if (call->HasParam(sub)) return call->Fail(S3Error(S3ErrorCode::kNotImplemented));
  }
  if (method == "PUT") {
    if (call->HasParam("acl")) return PutAcl(call);
    if (call->HasParam("tagging")) return SetObjectTagging(call);
    if (call->HasParam("uploadId")) return UploadPartRequest(call);
    if (call->Header("x-amz-copy-source")) return CopyObject(call);
    return PutObject(call);
  }
  if (method == "GET" || method == "HEAD") {
    if (call->HasParam("acl") || call->HasParam("tagging")) return GetObjectSubresource(call);
    if (method == "GET" && call->HasParam("attributes")) return GetObjectAttributes(call);
    if (call->HasParam("uploadId")) return ListParts(call);
    return GetObject(call);
  }
  if (method == "DELETE") {
    if (call->HasParam("tagging")) return SetObjectTagging(call);
    if (call->HasParam("uploadId")) return AbortMultipartUpload(call);
    return DeleteObject(call);
  }
  if (method == "POST") {
    if (call->HasParam("uploads")) return CreateMultipartUpload(call);
    if (call->HasParam("uploadId")) return CompleteMultipartUpload(call);
    return call->Fail(S3Error(S3ErrorCode::kNotImplemented));
  }
  call->Fail(MethodNotAllowedError(method, "OBJECT"));
}

// Charges the request to this router's share of its bucket's capacity
// (s3_charge.h; GAC knows the bucket as BucketGacName). False: the share
// cannot pay (the request is refused and never reaches a partition). A
// bucket without a capacity, or a router without GAC, is not charged.
bool ChargeBucketShare(S3Call& call, std::string_view method) {
  gac::GacClient* gac = call.front.gac();
  if (gac == nullptr || call.bucket.empty()) return true;
  const http::Headers headers = call.AllHeaders();
  S3RequestShape shape;
  shape.method = method;
  shape.has_bucket = true;
  shape.key = call.key;
  shape.query = call.query;
  shape.headers = &headers;
  const admission::S3Charge charge = S3RequestCharge(shape);
  const std::string name = admission::BucketGacName(call.bucket);
  if (charge.write_units > 0 &&
      !gac->Admit(name, admission::CapacityKind::kWrite, charge.write_units).admitted) {
    return false;
  }
  if (charge.read_units > 0 &&
      !gac->Admit(name, admission::CapacityKind::kRead, charge.read_units).admitted) {
    return false;
  }
  return true;
}

// POST /bucket without a sub-resource or credentials in its headers: a
// browser upload, whose form carries its credentials (PostObject).
bool IsPostUpload(const S3Call& call) {
  return call.head().method == "POST" && !call.bucket.empty() && call.key.empty() &&
         call.query.empty() && !call.head().Header("authorization");
}

}  // namespace

bool AdmitAsPutObject(S3Call& call) {
  if (Status admitted = call.front.admission().Admit(call.user, call.bucket); !admitted.ok()) {
    call.Fail(S3Error(S3ErrorCode::kSlowDown), {{"Retry-After", "1"}});
    return false;
  }
  if (!ChargeBucketShare(call, "PUT")) {
    call.Fail(S3Error(S3ErrorCode::kSlowDown), {{"Retry-After", "1"}});
    return false;
  }
  return true;
}

Result<uint64_t> NewRequestIdSalt() {
  uint64_t salt = 0;
  if (RAND_bytes(reinterpret_cast<unsigned char*>(&salt), sizeof(salt)) != 1) {
    return Status::IOError("the S3 front cannot start: OpenSSL RAND_bytes failed (no random source)");
  }
  return salt;
}

S3Front::S3Front(ObjectIndex& index, router::RegistryClient& registry, blob::BlobClient& blobs,
                 metrics::Registry& metrics, S3FrontOptions options, uint64_t request_id_salt)
    : index_(index),
      registry_(registry),
      blobs_(blobs),
      options_(std::move(options)),
      admission_(options_.admission, metrics),
      bucket_configs_(limits::kS3BucketConfigCacheEntriesMax,
                      std::chrono::milliseconds(options_.bucket_config_ttl_ms)),
      request_id_salt_(request_id_salt),
      digests_(DigestThreads(options_.digest_threads)) {
  requests_ = &metrics.GetCounter("tessera_s3_requests_total", "S3 requests received", {});
  unknown_outcome_blobs_ = &metrics.GetCounter(
      "tessera_s3_unknown_outcome_blobs_total",
      "Blobs kept for an op whose outcome is unknown (orphans for the sweeper if it did not commit)", {});
}

void S3Front::BucketConfigOf(uint64_t bucket_id, std::string_view bucket,
                             std::function<void(Result<BucketConfigCache::Cached>)> done) {
  if (auto cached = bucket_configs_.Find(bucket_id, BucketConfigCache::Clock::now())) {
    return done(std::move(*cached));
  }
  const uint64_t token = bucket_configs_.FetchToken();
  index_.ReadBucketConfig(bucket_id, [this, bucket_id, bucket = std::string(bucket), token,
                                      done = std::move(done)](Result<pb::BucketConfig> read) {
    if (!read.ok()) return done(read.status());
    auto config = std::make_shared<const pb::BucketConfig>(std::move(read).value());
    done(bucket_configs_.Put(bucket_id, bucket, std::move(config), token,
                             BucketConfigCache::Clock::now()));
  });
}

void S3Front::SetBucketConfig(pb::SetBucketConfigOp op, ObjectIndex::Callback<pb::S3OpResult> done) {
  const uint64_t bucket_id = op.bucket_id();
  bucket_configs_.Invalidate(bucket_id);
  pb::S3Op s3_op;
  *s3_op.mutable_set_bucket_config() = std::move(op);
  index_.Apply(std::move(s3_op),
               [this, bucket_id, done = std::move(done)](Result<pb::S3OpResult> result) {
                 bucket_configs_.Invalidate(bucket_id);
                 done(std::move(result));
               });
}

std::string S3Front::NextRequestId() {
  const uint64_t n = request_counter_.fetch_add(1) + 1;
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016" PRIX64, n ^ request_id_salt_);
  return buf;
}

http::ProtocolErrorResponse S3Front::RenderProtocolError(unsigned status, std::string_view reason) {
  S3ErrorCode code = S3ErrorCode::kInvalidRequest;
  if (status == 431) code = S3ErrorCode::kRequestHeaderSectionTooLarge;
  if (status == 413) code = S3ErrorCode::kEntityTooLarge;
  if (status == 501) code = S3ErrorCode::kNotImplemented;
  if (status == 503) code = S3ErrorCode::kServiceUnavailable;
  const std::string id = NextRequestId();
  http::ProtocolErrorResponse out;
  out.status = HttpStatus(code);  // S3's, e.g. 400 for an oversized header section
  out.headers = {{"Content-Type", "application/xml"},
                 {"Date", FormatHttpDate(NowMs())},
                 {"x-amz-request-id", id}};
  out.body = ErrorXml(S3Error(code, std::string(reason)), "", id);
  return out;
}

void S3Front::Handle(std::shared_ptr<http::Exchange> exchange) {
  requests_->Increment();
  auto call = std::make_shared<S3Call>(*this, std::move(exchange), NextRequestId());
  if (auto parsed = ParseTarget(*call, options_.base_domain); !parsed.ok()) {
    return call->Fail(parsed.error());
  }
  HoistSigV2QueryHeaders(*call);
  // A CORS preflight carries no credentials: answered from the bucket's rules.
  if (call->head().method == "OPTIONS") return AnswerPreflight(call);
  // Nothing that could split a response later (stored metadata, response-*
  // overrides) gets in.
  const http::Headers all_headers = call->AllHeaders();
  if (auto fields = CheckFieldCharacters(all_headers, call->query); !fields.ok()) {
    return call->Fail(fields.error());
  }
  if (IsPostUpload(*call)) return WithCorsHeaders(call, [call] { PostObject(call); });
  // Authenticate twice: once to learn the access key (the lookup records it
  // and knows no secret), then with the secret from the registry.
  auth::AuthConfig config;
  config.region = options_.region;
  config.now_unix_s = static_cast<int64_t>(std::time(nullptr));
  const auth::RequestHead auth_head = call->AuthHead();
  const std::string vhost_bucket = call->virtual_hosted ? call->bucket : "";
  std::string access_key;
  auto first = auth::Authenticate(auth_head, vhost_bucket, config,
                                  [&access_key](std::string_view ak) -> std::optional<std::string> {
                                    access_key = std::string(ak);
                                    return std::nullopt;
                                  });
  if (first.ok()) {
    TESSERA_CHECK(first->anonymous);
    return AuthorizeAnonymous(call);
  }
  if (access_key.empty()) return call->Fail(first.error());  // malformed before any lookup
  registry_.SecretOf(access_key, [call, auth_head, vhost_bucket, config,
                                  access_key](Result<router::UserSecret> secret) {
    if (!secret.ok()) {
      if (secret.status().code() == StatusCode::kNotFound) {
        return call->Fail(InvalidAccessKeyIdError(access_key));
      }
      return call->Fail(secret.status());
    }
    auto verified = auth::Authenticate(
        auth_head, vhost_bucket, config,
        [&secret, &access_key](std::string_view ak) -> std::optional<std::string> {
          if (ak != access_key) return std::nullopt;
          return secret->secret_key;
        });
    if (!verified.ok()) return call->Fail(verified.error());
    call->auth = std::move(verified).value();
    call->user = secret->user;
    call->principal = authz::Principal{false, secret->user, secret->canonical_id};
    call->user_display_name = secret->display_name;
    // --- admission: charged before any partition or blob work.
    if (Status admitted = call->front.admission().Admit(call->user, call->bucket);
        !admitted.ok()) {
      return call->Fail(S3Error(S3ErrorCode::kSlowDown), {{"Retry-After", "1"}});
    }
    if (!ChargeBucketShare(*call, call->head().method)) {
      return call->Fail(S3Error(S3ErrorCode::kSlowDown), {{"Retry-After", "1"}});
    }
    WithCorsHeaders(call, [call] { Dispatch(call); });
  });
}

// --- S3Call -------------------------------------------------------------------

bool S3Call::IsFormDefinedHeader(std::string_view name) {
  const std::string lower = auth::ToLowerAscii(name);
  if (lower.starts_with("x-amz-")) return true;
  for (std::string_view defined : {"content-type", "cache-control", "content-disposition",
                                   "content-encoding", "content-language", "expires",
                                   "content-md5"}) {
    if (lower == defined) return true;
  }
  return false;
}

http::Headers S3Call::AllHeaders() const {
  http::Headers all = head().headers;
  all.insert(all.end(), query_headers.begin(), query_headers.end());
  if (form_headers) {
    std::erase_if(all, [](const auto& h) { return IsFormDefinedHeader(h.first); });
    all.insert(all.end(), form_headers->begin(), form_headers->end());
  }
  return all;
}

auth::RequestHead S3Call::AuthHead() const {
  auth::RequestHead out;
  out.method = head().method;
  out.target = head().target;
  const http::Headers all = AllHeaders();
  out.headers.assign(all.begin(), all.end());
  return out;
}

const QueryParam* S3Call::Param(std::string_view name) const {
  return FindQueryParam(query, name);
}

S3Result<uint32_t> ParseListLimit(const S3Call& call, std::string_view name, uint32_t cap) {
  const QueryParam* p = call.Param(name);
  if (!p) return cap;
  int64_t value = -1;
  auto [end, ec] = std::from_chars(p->value.data(), p->value.data() + p->value.size(), value);
  if (ec != std::errc() || end != p->value.data() + p->value.size() || value < 0) {
    return InvalidArgumentError(
        "Provided " + std::string(name) + " not an integer or within integer range",
        std::string(name), p->value);
  }
  return static_cast<uint32_t>(std::min<int64_t>(value, cap));
}

S3Result<bool> ParseEncodingType(const S3Call& call) {
  const QueryParam* e = call.Param("encoding-type");
  if (!e) return false;
  if (e->value != "url") {
    std::optional<std::string> value;
    if (!e->value.empty()) value = e->value;
    return InvalidArgumentError("Invalid Encoding Method specified in Request", "encoding-type",
                                std::move(value));
  }
  return true;
}

void S3Call::MarkAnswered() {
  TESSERA_CHECK(!answered_);
  answered_ = true;
}

http::Headers S3Call::StandardHeaders() const {
  // Date: HTTP requires it of a server with a clock, and SDKs correct their
  // clock skew from it after RequestTimeTooSkewed.
  http::Headers headers = {{"Date", FormatHttpDate(NowMs())},
                           {"x-amz-request-id", request_id},
                           {"x-amz-id-2", request_id}};
  headers.insert(headers.end(), cors_headers.begin(), cors_headers.end());
  return headers;
}

void S3Call::Respond(unsigned status, http::Headers headers, std::string body) {
  MarkAnswered();
  http::Headers all = StandardHeaders();
  for (auto& h : headers) all.push_back(std::move(h));
  exchange->Respond(status, std::move(all), std::move(body), nullptr);
}

void S3Call::RespondXml(unsigned status, std::string xml, http::Headers headers) {
  headers.emplace_back("Content-Type", "application/xml");
  Respond(status, std::move(headers), std::move(xml));
}

void S3Call::Fail(const S3Error& error, http::Headers headers) {
  const unsigned status = HttpStatus(error.code);
  if (is_head() || status == 304) {
    headers.emplace_back("Content-Length", "0");
    return Respond(status, std::move(headers), "");
  }
  // The bucket and key errors name their subject unless the handler did.
  std::vector<ErrorField> extra;
  if ((error.code == S3ErrorCode::kNoSuchBucket || error.code == S3ErrorCode::kBucketNotEmpty ||
       error.code == S3ErrorCode::kBucketAlreadyExists ||
       error.code == S3ErrorCode::kBucketAlreadyOwnedByYou) &&
      !error.HasDetail("BucketName")) {
    extra.push_back({"BucketName", bucket});
  }
  if (error.code == S3ErrorCode::kNoSuchKey && !error.HasDetail("Key")) {
    extra.push_back({"Key", key});
  }
  for (const auto& [name, value] : error.details) extra.push_back({name, value});
  RespondXml(status, ErrorXml(error, resource, request_id, extra), std::move(headers));
}

void S3Call::Fail(const Status& status) { Fail(FromStatus(status)); }


void WithAuthorizedBucket(CallPtr call, authz::Action action, std::function<void()> next) {
  call->front.registry().GetBucket(
      call->bucket, [call, action, next = std::move(next)](Result<pb::BucketDescriptor> bucket) {
        if (!bucket.ok()) {
          if (bucket.status().code() == StatusCode::kNotFound) {
            return call->Fail(S3Error(S3ErrorCode::kNoSuchBucket));
          }
          return call->Fail(bucket.status());
        }
        call->bucket_info = std::move(bucket).value();
        // Object actions are decided on the version the handler reads.
        if (IsObjectScope(action)) call->pending_object_action = action;
        // Every decision reads the configuration (cached): the bucket
        // policy may decide any action.
        call->front.BucketConfigOf(
            call->bucket_info.bucket_id(), call->bucket,
            [call, action, next](Result<BucketConfigCache::Cached> config) {
              if (!config.ok()) return call->Fail(config.status());
              call->bucket_config = config->record;
              call->bucket_facts = config->facts;
              if (!IsObjectScope(action) &&
                  !Authorized(*call, action, call->bucket, call->key, call->bucket_info.owner(),
                              "x-amz-expected-bucket-owner", GrantsOf(*config->record),
                              call->bucket_facts.get())) {
                return;
              }
              next();
            });
      });
}

namespace {

// Decides `request` (its principal and expected owner filled in here, and
// the bucket's policy facts when not null), logs it and answers
// AccessDenied (405 MethodNotAllowed: a policy call granted to another
// user) when denied. `version`: the object version decided on (its tags
// are s3:ExistingObjectTag/<key>); null for bucket decisions.
bool Decide(S3Call& call, authz::Request request, std::string_view expected_owner_header,
            const PolicyFacts* facts, const pb::ObjectVersion* version = nullptr) {
  request.principal = call.principal;
  if (!expected_owner_header.empty()) {
    if (auto expected = call.Header(expected_owner_header)) {
      request.expected_bucket_owner = std::string(*expected);
    }
  }
  if (facts != nullptr && !request.bucket.empty()) {
    request.bucket_policy = facts->policy;
    request.bucket_policy_public = facts->policy_public;
    request.public_access_block = facts->public_access_block;
    if (request.bucket_policy) {
      request.policy_values = PolicyConditionValues(call, request.action);
      if (version != nullptr) AddExistingObjectTags(*version, request.policy_values);
    }
  }
  const authz::Decision decision = authz::Authorize(request);
  if (spdlog::should_log(spdlog::level::debug)) {
    spdlog::debug("{} request_id={}", authz::DecisionLogLine(request, decision), call.request_id);
  }
  if (decision.allowed) return true;
  if (decision.reason == authz::Reason::kNotOwnerAccount) {
    call.Fail(MethodNotAllowedError(std::string(call.head().method), "BUCKET"));
    return false;
  }
  call.Fail(S3Error(S3ErrorCode::kAccessDenied));
  return false;
}

}  // namespace

bool Authorized(S3Call& call, authz::Action action, const std::string& bucket,
                const std::string& key, const std::string& bucket_owner,
                std::string_view expected_owner_header,
                std::optional<std::vector<authz::Grant>> bucket_acl,
                const PolicyFacts* facts) {
  authz::Request request;
  request.action = action;
  request.bucket = bucket;
  request.key = key;
  request.bucket_owner = bucket_owner;
  request.bucket_acl = std::move(bucket_acl);
  return Decide(call, std::move(request), expected_owner_header, facts);
}

bool AuthorizedOnObject(S3Call& call, const ObjectTarget& target, const pb::ObjectVersion* v,
                        std::string_view expected_owner_header) {
  authz::Request request;
  request.bucket = target.bucket;
  request.key = target.key;
  request.bucket_owner = target.bucket_owner;
  const pb::BucketConfig* config = target.config;
  if (v == nullptr) {
    // Nothing to serve: only who may list the bucket learns it (S3 answers
    // 404 to holders of s3:ListBucket, 403 to anyone else).
    request.action = authz::Action::kListBucket;
    if (config != nullptr) request.bucket_acl = GrantsOf(*config);
    return Decide(call, std::move(request), expected_owner_header, target.facts);
  }
  request.action = target.action;
  const ObjectAccess access = ObjectAccessOf(target.bucket_owner, config, *v);
  request.object_owner = access.owner;
  request.object_acl = access.acl;
  return Decide(call, std::move(request), expected_owner_header, target.facts, v);
}

bool AuthorizedOnPendingObject(S3Call& call, const pb::ObjectVersion* v) {
  if (!call.pending_object_action) return true;
  ObjectTarget target;
  target.action = *call.pending_object_action;
  target.bucket = call.bucket;
  target.key = call.key;
  target.bucket_owner = call.bucket_info.owner();
  target.config = call.bucket_config.get();
  target.facts = call.bucket_facts.get();
  call.pending_object_action.reset();
  return AuthorizedOnObject(call, target, v, "x-amz-expected-bucket-owner");
}

Owner OwnerOfUser(const S3Call& call, const std::string& user) {
  if (user.empty()) {
    return Owner{std::string(authz::kAnonymousCanonicalId), std::string(authz::kAnonymousDisplayName)};
  }
  if (user == call.user && !call.principal.canonical_id.empty()) {
    return Owner{call.principal.canonical_id, call.user_display_name};
  }
  return Owner{CanonicalUserId(user), user};
}

bool IsVersionIdSyntax(std::string_view version_id) {
  return version_id == model::kNullVersionId || model::ParseVersionSeq(version_id).has_value();
}

void AddWrittenVersionHeader(const pb::BucketDescriptor& bucket, const std::string& version_id,
                             http::Headers& headers) {
  if (bucket.versioning() == pb::VERSIONING_UNSET || version_id == model::kNullVersionId) return;
  headers.emplace_back("x-amz-version-id", version_id);
}

}  // namespace tessera::s3::front
