#include "router/http_api.h"

#include <strings.h>

#include <chrono>
#include <optional>

#include "router/json.h"
#include "router/kv_ops.h"
#include "router/uri.h"

namespace tessera::router {
namespace {

constexpr uint32_t kScanLimitDefault = 100;

http::Response Error(unsigned http_status, std::string_view message, std::string_view code) {
  return http::Response::Json(http_status, JsonError(message, code));
}

http::Response ErrorFor(const Status& status) {
  // WrongPartition is the router's to handle (kv_router.h); should one
  // still get here, the client sees what it means: retry later.
  const StatusCode shown =
      status.code() == StatusCode::kWrongPartition ? StatusCode::kUnavailable : status.code();
  http::Response r = Error(HttpStatusFor(status), status.message(), StatusCodeName(shown));
  if (status.code() == StatusCode::kThrottled || shown == StatusCode::kUnavailable ||
      status.code() == StatusCode::kThroughputExceeded) {
    r.headers.emplace_back("Retry-After", "1");
  }
  return r;
}

bool StartsWithIgnoreCase(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && ::strncasecmp(text.data(), prefix.data(), prefix.size()) == 0;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

Result<uint64_t> ParseUint(std::string_view text) {
  if (text.empty() || text.size() > 19) return Status::InvalidArgument("expected a number");
  uint64_t v = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return Status::InvalidArgument("expected a number");
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

// The precondition of If-Match / If-None-Match on `key`, if any.
Result<std::optional<pb::KvCondition>> ConditionOf(const http::Request& request, const std::string& key) {
  const std::optional<std::string_view> if_match = request.Header("If-Match");
  const std::optional<std::string_view> if_none_match = request.Header("If-None-Match");
  if (if_match && if_none_match) return Status::InvalidArgument("If-Match and If-None-Match together");
  pb::KvCondition condition;
  condition.set_key(key);
  if (if_none_match) {
    if (Trim(*if_none_match) != "*") return Status::InvalidArgument("If-None-Match supports only *");
    condition.set_absent(true);
    return std::optional<pb::KvCondition>(condition);
  }
  if (!if_match) return std::optional<pb::KvCondition>();
  std::string_view tag = Trim(*if_match);
  if (tag == "*") {
    condition.set_present(true);
    return std::optional<pb::KvCondition>(condition);
  }
  if (tag.size() >= 2 && tag.front() == '"' && tag.back() == '"') tag = tag.substr(1, tag.size() - 2);
  Result<uint64_t> version = ParseUint(tag);
  if (!version.ok()) return Status::InvalidArgument("If-Match must be * or a version");
  condition.set_version(*version);
  return std::optional<pb::KvCondition>(condition);
}

Result<pb::Consistency> ConsistencyOf(const std::map<std::string, std::string>& query) {
  const auto it = query.find("consistency");
  if (it == query.end() || it->second == "strong") return pb::CONSISTENCY_STRONG;
  if (it->second == "eventual") return pb::CONSISTENCY_EVENTUAL;
  return Status::InvalidArgument("consistency must be strong or eventual");
}

void AddVersionHeaders(http::Response& r, uint64_t version) {
  r.headers.emplace_back("ETag", "\"" + std::to_string(version) + "\"");
  r.headers.emplace_back("X-Tessera-Version", std::to_string(version));
}

http::Response WriteAnswer(const Result<pb::KvApplyResult>& result, bool is_delete) {
  if (!result.ok()) return ErrorFor(result.status());
  if (!result->applied()) return Error(412, "precondition failed", "Conflict");
  http::Response r = http::Response::Json(
      200, std::string("{") + (is_delete ? "\"deleted\":true," : "") +
               "\"version\":" + std::to_string(result->version()) + "}\n");
  AddVersionHeaders(r, result->version());
  return r;
}

}  // namespace

std::string ScanJson(const ScanPage& page) {
  std::string out = "{\"items\":[";
  for (size_t i = 0; i < page.items.size(); ++i) {
    const pb::KvItem& item = page.items[i];
    if (i > 0) out += ",";
    out += "{" + JsonBytesMember("key", item.key()) + "," + JsonBytesMember("value", item.value()) +
           ",\"version\":" + std::to_string(item.version()) + "}";
  }
  out += "],";
  out += page.next ? JsonBytesMember("next", *page.next) : std::string("\"next\":null");
  out += "}\n";
  return out;
}

KvAccess AccessOf(const http::Request& request) {
  return request.method == "PUT" || request.method == "DELETE" ? KvAccess::kWrite : KvAccess::kRead;
}

unsigned HttpStatusFor(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk: return 200;
    case StatusCode::kNotFound: return 404;
    case StatusCode::kInvalidArgument: return 400;
    case StatusCode::kConflict: return 409;
    case StatusCode::kThrottled: return 503;
    case StatusCode::kUnavailable: return 503;
    case StatusCode::kTimeout: return 504;
    case StatusCode::kNotLeader:
    case StatusCode::kStaleEpoch:
    case StatusCode::kAborted: return 503;
    case StatusCode::kCorruption:
    case StatusCode::kIOError: return 500;
    case StatusCode::kPermissionDenied: return 403;
    case StatusCode::kThroughputExceeded: return 429;
    case StatusCode::kWrongPartition: return 503;
  }
  return 500;
}

KvHttpApi::KvHttpApi(KvRouter& router, const CredentialStore& credentials, metrics::Registry& metrics,
                     NowUnix now_unix, std::shared_ptr<TokenRevocations> revocations)
    : router_(router),
      credentials_(credentials),
      revocations_(std::move(revocations)),
      metrics_(metrics),
      now_unix_(now_unix ? std::move(now_unix)
                         : NowUnix([] {
                             return static_cast<int64_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                                             std::chrono::system_clock::now().time_since_epoch())
                                                             .count());
                           })),
      auth_missing_(metrics.GetCounter("tessera_router_auth_failures_total",
                                       "KV requests refused by authentication", {{"reason", "missing"}})),
      auth_refused_(metrics.GetCounter("tessera_router_auth_failures_total",
                                       "KV requests refused by authentication", {{"reason", "refused"}})),
      auth_denied_(metrics.GetCounter("tessera_router_auth_failures_total",
                                      "KV requests refused by authentication", {{"reason", "denied"}})) {}

void KvHttpApi::Handle(http::Request request, http::Respond respond) {
  if (request.path == "/health") {
    if (request.method != "GET" && request.method != "HEAD") return respond(Error(405, "method not allowed", "InvalidArgument"));
    return respond(http::Response::Text(200, "ok\n"));
  }
  if (request.path == "/metrics") {
    http::Response r = http::Response::Text(200, metrics_.RenderText());
    r.content_type = "text/plain; version=0.0.4";
    return respond(std::move(r));
  }
  if (request.path.rfind("/kv/", 0) == 0) return HandleKv(request, std::move(respond));
  respond(Error(404, "no such endpoint", "NotFound"));
}

std::variant<KvGrant, http::Response> KvHttpApi::Credentials(const http::Request& request, bool with_body) {
  const std::optional<std::string_view> header = request.Header("Authorization");
  const std::string_view value = header ? Trim(*header) : std::string_view();
  const bool bearer = StartsWithIgnoreCase(value, "Bearer ");
  const bool signed_request = value.substr(0, kSignedRequestScheme.size()) == kSignedRequestScheme &&
                              (value.size() == kSignedRequestScheme.size() ||
                               value[kSignedRequestScheme.size()] == ' ');
  if (!bearer && !signed_request) {
    auth_missing_.Increment();
    http::Response r = Error(401,
                             "missing credentials (Authorization: Bearer <token>, or a TK1-HMAC-SHA256 "
                             "signature)",
                             "Unauthenticated");
    r.headers.emplace_back("WWW-Authenticate", "Bearer");
    r.headers.emplace_back("WWW-Authenticate", std::string(kSignedRequestScheme));
    return r;
  }
  Result<KvGrant> grant = Status::Unavailable("unset");
  if (bearer) {
    const std::string_view text = Trim(value.substr(7));
    auto token = verified_tokens_.Verify(credentials_, text, now_unix_());
    grant = token.ok() ? Result<KvGrant>(token->grant) : Result<KvGrant>(token.status());
    if (grant.ok() && revocations_ != nullptr && revocations_->Revoked(TokenSignature(text))) {
      grant = Status::PermissionDenied("token revoked");
    }
  } else {
    const auto field = [&request](std::string_view name) {
      const std::optional<std::string_view> v = request.Header(name);
      return v ? Trim(*v) : std::string_view();
    };
    auto access_key =
        with_body ? VerifySignedRequest(credentials_, value,
                                        SignedParts{request.method, request.path, request.query, request.body,
                                                    field("Content-Type"), field("If-Match"),
                                                    field("If-None-Match")},
                                        now_unix_())
                  : CheckSignedRequestHead(credentials_, value, now_unix_());
    grant = access_key.ok() ? Result<KvGrant>(*credentials_.GrantOf(*access_key))
                            : Result<KvGrant>(access_key.status());
  }
  if (!grant.ok()) {
    auth_refused_.Increment();
    return Error(403, std::string(bearer ? "token" : "signature") + " refused: " + grant.status().message(),
                 "Forbidden");
  }
  return std::move(grant).value();
}

std::optional<http::Response> KvHttpApi::CheckHead(const http::Request& head) {
  if (head.path.rfind("/kv/", 0) != 0) return std::nullopt;
  std::variant<KvGrant, http::Response> credentials = Credentials(head, /*with_body=*/false);
  if (auto* refused = std::get_if<http::Response>(&credentials)) return std::move(*refused);
  const KvGrant& grant = std::get<KvGrant>(credentials);
  Result<KvTarget> target = ParseKvTarget(head.target);
  if (!target.ok()) return std::nullopt;  // Handle answers it
  const KvAccess access = AccessOf(head);
  if (!grant.Allows(target->table, access)) {
    auth_denied_.Increment();
    return Error(403, DenialMessage(grant, target->table, access), "PermissionDenied");
  }
  return std::nullopt;
}

void KvHttpApi::HandleKv(const http::Request& request, http::Respond respond) {
  std::variant<KvGrant, http::Response> credentials = Credentials(request, /*with_body=*/true);
  if (auto* refused = std::get_if<http::Response>(&credentials)) return respond(std::move(*refused));
  const KvGrant* grant = &std::get<KvGrant>(credentials);
  Result<KvTarget> target = ParseKvTarget(request.target);
  if (!target.ok()) return respond(ErrorFor(target.status()));
  Result<pb::Consistency> consistency = ConsistencyOf(target->query);
  if (!consistency.ok()) return respond(ErrorFor(consistency.status()));
  const std::string& table = target->table;
  const KvAccess access = AccessOf(request);
  if (!grant->Allows(table, access)) {
    auth_denied_.Increment();
    return respond(Error(403, DenialMessage(*grant, table, access), "PermissionDenied"));
  }
  if (target->key) {
    const std::string& key = *target->key;
    if (request.method == "PUT") return Put(request, table, key, std::move(respond));
    if (request.method == "DELETE") return Delete(request, table, key, std::move(respond));
    if (request.method != "GET" && request.method != "HEAD") {
      return respond(Error(405, "method not allowed", "InvalidArgument"));
    }
    return router_.Get(table, key, *consistency, [respond](Result<pb::KvGetResponse> got) {
      if (!got.ok()) return respond(ErrorFor(got.status()));
      if (!got->found()) return respond(Error(404, "key not found", "NotFound"));
      http::Response r;
      r.status = 200;
      r.content_type = "application/octet-stream";
      r.body = std::move(*got->mutable_value());
      AddVersionHeaders(r, got->version());
      respond(std::move(r));
    });
  }
  if (request.method != "GET") return respond(Error(405, "method not allowed", "InvalidArgument"));
  uint32_t limit = kScanLimitDefault;
  if (const auto it = target->query.find("limit"); it != target->query.end()) {
    Result<uint64_t> parsed = ParseUint(it->second);
    if (!parsed.ok() || *parsed < 1 || *parsed > limits::kRouterScanItemsMax) {
      return respond(Error(400, "limit must be 1.." + std::to_string(limits::kRouterScanItemsMax),
                           "InvalidArgument"));
    }
    limit = static_cast<uint32_t>(*parsed);
  }
  router_.Scan(table, target->query["start"], target->query["end"], limit, *consistency,
               [respond](Result<ScanPage> page) {
                 if (!page.ok()) return respond(ErrorFor(page.status()));
                 respond(http::Response::Json(200, ScanJson(*page)));
               });
}

void KvHttpApi::Put(const http::Request& request, const std::string& table, const std::string& key,
                    http::Respond respond) {
  Result<std::optional<pb::KvCondition>> condition = ConditionOf(request, key);
  if (!condition.ok()) return respond(ErrorFor(condition.status()));
  std::string value = request.body;
  const std::optional<std::string_view> content_type = request.Header("Content-Type");
  if (content_type && StartsWithIgnoreCase(Trim(*content_type), "application/json")) {
    Result<std::map<std::string, std::string>> members = ParseJsonStringObject(request.body);
    if (!members.ok()) return respond(ErrorFor(members.status()));
    const auto it = members->find("value");
    if (it == members->end()) return respond(Error(400, "JSON body needs a \"value\" string", "InvalidArgument"));
    value = std::move(it->second);
  }
  if (value.size() > limits::kStateValueBytesMax) {
    return respond(Error(413, "value too large", "InvalidArgument"));
  }
  router_.Write(table, key, SingleKeyBatch(key, std::move(value), *condition), "put",
                [respond](Result<pb::KvApplyResult> result) { respond(WriteAnswer(result, false)); });
}

void KvHttpApi::Delete(const http::Request& request, const std::string& table, const std::string& key,
                       http::Respond respond) {
  Result<std::optional<pb::KvCondition>> condition = ConditionOf(request, key);
  if (!condition.ok()) return respond(ErrorFor(condition.status()));
  router_.Write(table, key, SingleKeyBatch(key, std::nullopt, *condition), "delete",
                [respond](Result<pb::KvApplyResult> result) { respond(WriteAnswer(result, true)); });
}

}  // namespace tessera::router
