// Credentials, bearer tokens and signed requests of the router's KV APIs
// (docs/formats/credentials.md is the specification of all three).
//
//   token = "tk1." + access_key + "." + expiry_unix + "." +
//           hex(HMAC-SHA256(secret_key, access_key + "." + expiry_unix))
//   token = "tk2." + access_key + "." + expiry_unix + "." + grant + "." +
//           hex(HMAC-SHA256(secret_key, access_key + "." + expiry_unix + "." + grant))
//
// A credential carries a KvGrant (its tables, read-only or not); a tk1
// token grants what its credential does, a tk2 token the narrower grant it
// names (never more than its credential's). Tokens are verified
// statelessly: the router needs only the credentials file. Signatures are
// compared in constant time. No token is valid for longer than
// limits::kRouterTokenLifetimeSecondsMax.
//
// Thread safety: pure functions, except CreateCredentialsFile (file I/O);
// a CredentialStore is immutable after loading.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "router/kv_grant.h"

namespace tessera::router {

struct Credential {
  std::string access_key;  // [A-Za-z0-9_-]{1,64}
  std::string secret_key;  // 16 to 256 printable bytes without spaces
  KvGrant grant = KvGrant();  // what requests made with it may do
};

class CredentialStore {
 public:
  CredentialStore() = default;
  // InvalidArgument for a malformed pair or a duplicate access key.
  Status Add(Credential credential);
  // The secret of `access_key`, or nullptr.
  const std::string* SecretOf(std::string_view access_key) const;
  // The grant of `access_key`, or nullptr.
  const KvGrant* GrantOf(std::string_view access_key) const;
  size_t size() const { return entries_.size(); }
  // The first credential in access-key order (the one `tessera kv token` uses
  // by default). The store must not be empty.
  Credential First() const;

 private:
  struct Entry {
    std::string secret;
    KvGrant grant;
  };
  std::map<std::string, Entry, std::less<>> entries_;
};

// Parses the credentials file text: '#' comments and blank lines, then one
// "<access_key> <secret_key> [tables=T1,T2,...] [read-only]" per line.
// InvalidArgument on anything else (an internal table in tables= too).
Result<CredentialStore> ParseCredentials(std::string_view text);
// IOError when unreadable; otherwise as ParseCredentials.
Result<CredentialStore> LoadCredentials(const std::string& path);

// A new credential with random keys (OpenSSL RAND_bytes).
Result<Credential> GenerateCredential();
// Creates `path` (mode 0600) holding one new credential and returns it.
// Conflict when the file already exists (it is never overwritten).
Result<Credential> CreateCredentialsFile(const std::string& path);

// The first credential of `path`, creating the file (as
// CreateCredentialsFile) when it does not exist. For `tessera cluster up`.
Result<Credential> EnsureCredentialsFile(const std::string& path);

// A token from the first credential of DIR/credentials (or of
// `access_key`'s, when given), valid for `ttl_seconds` from `now_unix`,
// granting `narrowed` within the credential's grant when given (a tk2
// token), else the credential's (tk1). For `tessera kv token`. NotFound for
// an unknown access key; InvalidArgument for a lifetime outside
// 1..kRouterTokenLifetimeSecondsMax or a narrowing that leaves no table.
Result<std::string> IssueTokenFromDir(const std::string& dir, int64_t ttl_seconds,
                                      int64_t now_unix, const std::string& access_key = "",
                                      const std::optional<KvGrant>& narrowed = std::nullopt);

// The token for `credential`, valid until `expiry_unix` (seconds): tk1, or
// tk2 naming `grant` (which must not allow nothing; CHECKed).
std::string IssueToken(const Credential& credential, int64_t expiry_unix,
                       const std::optional<KvGrant>& grant = std::nullopt);

struct VerifiedToken {
  std::string access_key;
  int64_t expiry_unix = 0;  // the token is valid while now_unix < expiry_unix
  KvGrant grant;            // the credential's, narrowed by a tk2 token's
};

// Why a token was refused; the HTTP layer answers 403 for all of them.
// InvalidArgument: malformed, or valid for longer than
// kRouterTokenLifetimeSecondsMax from now; NotFound: unknown access key;
// Conflict: bad signature; Timeout: expired (expiry_unix <= now_unix).
Result<VerifiedToken> VerifyToken(const CredentialStore& store, std::string_view token,
                                  int64_t now_unix);

// --- signed HTTP requests (docs/formats/credentials.md, "Signed requests") ---
//
//   Authorization: TK1-HMAC-SHA256 Credential=<access_key>, Timestamp=<unix>,
//                  Signature=<hex HMAC-SHA256(secret_key, string to sign)>

inline constexpr std::string_view kSignedRequestScheme = "TK1-HMAC-SHA256";

// One HTTP request as the signature covers it: `path` and `query` exactly
// as sent on the request line (percent-encoded, query without '?'), and
// the headers that change what a request does (trimmed; empty when
// absent), so none can be added, changed or stripped on replay.
struct SignedParts {
  std::string_view method;
  std::string_view path;
  std::string_view query;
  std::string_view body;
  std::string_view content_type = {};   // raw value vs {"value": ...} JSON
  std::string_view if_match = {};       // conditional writes
  std::string_view if_none_match = {};
};

// "TK1-HMAC-SHA256\n" timestamp "\n" method "\n" path "\n" query "\n"
// "content-type:" v "\n" "if-match:" v "\n" "if-none-match:" v "\n"
// lowercase-hex SHA-256 of the body.
std::string StringToSign(const SignedParts& request, int64_t timestamp_unix);

// The Authorization header value signing `request` at `timestamp_unix`.
std::string SignRequest(const Credential& credential, const SignedParts& request, int64_t timestamp_unix);

// What can be checked of a signed request before its body arrives: the
// header's form, a known access key, a timestamp within the window. On
// success returns the access key; errors as VerifySignedRequest's. The
// signature itself covers the body: VerifySignedRequest checks it.
Result<std::string> CheckSignedRequestHead(const CredentialStore& store, std::string_view authorization,
                                           int64_t now_unix);

// Verifies an Authorization value of the TK1-HMAC-SHA256 scheme; on success
// returns the access key. InvalidArgument: malformed; NotFound: unknown
// access key; Conflict: bad signature; Timeout: timestamp more than
// limits::kRouterSignatureSkewSecondsMax away from now_unix.
Result<std::string> VerifySignedRequest(const CredentialStore& store, std::string_view authorization,
                                        const SignedParts& request, int64_t now_unix);

}  // namespace tessera::router
