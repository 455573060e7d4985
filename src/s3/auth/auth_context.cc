#include "s3/auth/auth_context.h"

#include "s3/auth/request_parts.h"

namespace tessera::s3::auth {

bool IsStreaming(PayloadMode mode) {
  return mode == PayloadMode::kStreamingSigned || mode == PayloadMode::kStreamingSignedTrailer ||
         mode == PayloadMode::kStreamingUnsignedTrailer;
}

std::optional<std::string_view> FindHeader(const HeaderList& headers, std::string_view name) {
  for (const auto& [n, v] : headers) {
    if (EqualsIgnoreCase(n, name)) return std::string_view(v);
  }
  return std::nullopt;
}

}  // namespace tessera::s3::auth
