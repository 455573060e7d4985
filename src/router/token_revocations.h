// Revoked bearer tokens of the KV HTTP API (docs/formats/credentials.md,
// "Revoking a token"): DIR/revoked_tokens names each revoked token by its
// signature, until the token would have expired anyway.
//
//   # comments and blank lines
//   <token signature: 64 lowercase hex> <expiry_unix>
//
// `tessera kv revoke TOKEN` adds a line (RevokeToken); every router reads
// the file again within TokenRevocations' recheck interval of a change, so
// a revoked token is refused (403) by every router of the cluster directory
// within about a second, while every other token keeps working.
//
// Bounds: at most kRevokedTokensMax live entries (expired ones are dropped
// on every change); the file is read whole, at most
// kRevokedTokensFileBytesMax.
//
// Thread safety: RevokeToken is not safe against itself in two processes at
// once (the operator runs it); TokenRevocations::Revoked from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_set>

#include "common/result.h"
#include "router/token.h"

namespace tessera::router {

// Revoked tokens still within their lifetime, and the size of the file
// that lists them (about 80 bytes a line).
inline constexpr size_t kRevokedTokensMax = 100'000;
inline constexpr size_t kRevokedTokensFileBytesMax = 16 << 20;

// The signature of a token (the text after its last dot; empty if none):
// what the revocation list names it by.
std::string_view TokenSignature(std::string_view token);

// Adds `token` (which must be a token of `store`, valid at `now_unix`) to
// the file at `path` (created mode 0600; rewritten atomically, expired
// entries dropped). InvalidArgument for a token that does not verify (the
// reason), Throttled beyond the entry bound, IOError when the file cannot
// be written. Revoking a revoked token again is OK.
Status RevokeToken(const std::string& path, const CredentialStore& store, std::string_view token,
                   int64_t now_unix);

class TokenRevocations {
 public:
  // Watches `path` (absent: nothing revoked).
  explicit TokenRevocations(std::string path,
                            std::chrono::milliseconds recheck = std::chrono::milliseconds(1000));

  // Whether the token with this signature is revoked. Re-reads the file
  // first when `recheck` has passed since the last look and the file
  // changed (size or modification time). A file that does not parse keeps
  // the previous list (logged).
  bool Revoked(std::string_view signature);

 private:
  void ReloadIfChanged();  // under mu_

  const std::string path_;
  const std::chrono::milliseconds recheck_;
  std::mutex mu_;
  std::chrono::steady_clock::time_point next_check_;  // under mu_
  int64_t seen_mtime_ns_ = -1;                        // under mu_; -1: absent
  int64_t seen_size_ = -1;                            // under mu_
  std::shared_ptr<const std::unordered_set<std::string>> revoked_;  // under mu_
};

}  // namespace tessera::router
