// VerifiedTokenCache: bearer tokens the router has already verified, so a
// client's every request does not pay an HMAC-SHA256 (7% of the router's
// CPU with KV writes at 64 clients).
//
// Sound because a token's verdict depends only on the credential store,
// which is immutable for the router's life (router/token.h), and on the
// clock, which is checked again on every hit: an entry answers only while
// now_unix < its expiry. Only tokens that verified enter the cache, so a
// forged or malformed token is checked (and refused) every time.
//
// Bounded: at most `capacity` entries; a verified token that finds the cache
// full empties it first (clients re-verify once each; no eviction order to
// maintain on the hot path).
//
// Thread safety: Verify may be called from any thread (one mutex).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/result.h"
#include "router/token.h"

namespace tessera::router {

class VerifiedTokenCache {
 public:
  static constexpr size_t kCapacityDefault = 4096;

  explicit VerifiedTokenCache(size_t capacity = kCapacityDefault);

  // As VerifyToken(store, token, now_unix); `store` must be the same store
  // on every call.
  Result<VerifiedToken> Verify(const CredentialStore& store, std::string_view token,
                               int64_t now_unix);

  size_t size() const;

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  const size_t capacity_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, VerifiedToken, Hash, std::equal_to<>> verified_;
};

}  // namespace tessera::router
