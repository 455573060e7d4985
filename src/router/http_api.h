// KvHttpApi: the router's HTTP/JSON KV API, metrics and health, as one
// http::Handler (docs/router.md, "HTTP KV API", is the specification).
//
//   PUT    /kv/{table}/{key}              body = value, or {"value": "..."}
//                                         with Content-Type application/json;
//                                         If-Match: <version> | *,
//                                         If-None-Match: *  -> 412 on failure
//   GET    /kv/{table}/{key}[?consistency=eventual|strong]
//                                         200 value + ETag/X-Tessera-Version, 404
//   DELETE /kv/{table}/{key}              (If-Match as PUT)
//   GET    /kv/{table}?start=&end=&limit= {"items":[{key,value,version}],"next":...}
//   GET    /metrics, /health
//
// Every /kv request needs "Authorization: Bearer <token>" or a signed
// request "Authorization: TK1-HMAC-SHA256 Credential=..., Timestamp=...,
// Signature=..." (router/token.h): none -> 401, refused -> 403; a table or
// an access (a write with a read-only grant) its grant does not allow ->
// 403 PermissionDenied, and an internal table ('_s3') always (KvGrant).
// Errors are JSON {"error","code"}.
//
// Thread safety: Handle may be called from any thread; the router, store
// and registry must outlive every request in flight.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <variant>

#include "common/metrics.h"
#include "http/http_server.h"
#include "router/kv_router.h"
#include "router/token.h"
#include "router/token_revocations.h"
#include "router/verified_token_cache.h"

namespace tessera::router {

// The HTTP status for a failed KV operation's status.
unsigned HttpStatusFor(const Status& status);

// PUT and DELETE write; everything else reads.
KvAccess AccessOf(const http::Request& request);

// A scan page as the HTTP API answers it (and `tessera kv scan` prints it):
// {"items":[{"key","value","version"}],"next":"<key>"|null}, non-UTF-8
// keys and values as key_base64 / value_base64 (next as next_base64).
std::string ScanJson(const ScanPage& page);

class KvHttpApi {
 public:
  using NowUnix = std::function<int64_t()>;  // seconds since the epoch

  // `revocations`: bearer tokens it names are refused (null: none are).
  KvHttpApi(KvRouter& router, const CredentialStore& credentials, metrics::Registry& metrics,
            NowUnix now_unix = {}, std::shared_ptr<TokenRevocations> revocations = nullptr);

  void Handle(http::Request request, http::Respond respond);
  // The HttpServer's head_check (http_server.h, contract 7): the answer to
  // a /kv request whose head already shows it is refused (no credentials,
  // a bad or expired token, a signed request whose key is unknown or whose
  // timestamp is outside the window, a table or access outside the grant),
  // so its body is never read; nullopt to read it and Handle the request
  // (which checks everything again, a signature against the body).
  std::optional<http::Response> CheckHead(const http::Request& head);

 private:
  void HandleKv(const http::Request& request, http::Respond respond);
  // The grant of the request's valid token or signature, or the 401/403
  // answer. `with_body`: verify a signature against the body; otherwise
  // only what the head shows (CheckSignedRequestHead).
  std::variant<KvGrant, http::Response> Credentials(const http::Request& request, bool with_body);
  void Put(const http::Request& request, const std::string& table, const std::string& key,
           http::Respond respond);
  void Delete(const http::Request& request, const std::string& table, const std::string& key,
              http::Respond respond);

  KvRouter& router_;
  const CredentialStore& credentials_;
  VerifiedTokenCache verified_tokens_;
  const std::shared_ptr<TokenRevocations> revocations_;
  metrics::Registry& metrics_;
  const NowUnix now_unix_;
  metrics::Counter& auth_missing_;
  metrics::Counter& auth_refused_;
  metrics::Counter& auth_denied_;
};

}  // namespace tessera::router
