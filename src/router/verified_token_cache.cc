#include "router/verified_token_cache.h"

#include "common/check.h"

namespace tessera::router {

VerifiedTokenCache::VerifiedTokenCache(size_t capacity) : capacity_(capacity) {
  TESSERA_CHECK(capacity_ > 0);
}

Result<VerifiedToken> VerifiedTokenCache::Verify(const CredentialStore& store,
                                                 std::string_view token, int64_t now_unix) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = verified_.find(token); it != verified_.end()) {
      if (now_unix < it->second.expiry_unix) return it->second;
      verified_.erase(it);
      return Status::Timeout("token expired");
    }
  }
  Result<VerifiedToken> verified = VerifyToken(store, token, now_unix);
  if (!verified.ok()) return verified;
  std::lock_guard<std::mutex> lock(mu_);
  if (verified_.size() >= capacity_) verified_.clear();
  verified_.emplace(std::string(token), *verified);
  return verified;
}

size_t VerifiedTokenCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return verified_.size();
}

}  // namespace tessera::router
