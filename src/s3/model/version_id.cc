#include "s3/model/version_id.h"

#include <cinttypes>
#include <cstdio>

namespace tessera::s3::model {

std::string FormatVersionId(uint64_t seq, uint64_t slot) {
  char buf[33];
  std::snprintf(buf, sizeof(buf), "%016" PRIx64 "%016" PRIx64, seq, slot);
  return buf;
}

std::optional<uint64_t> ParseVersionSeq(std::string_view version_id) {
  if (version_id.size() != 32) return std::nullopt;
  uint64_t seq = 0;
  for (size_t i = 0; i < 32; ++i) {
    const char c = version_id[i];
    int digit = -1;
    if (c >= '0' && c <= '9') digit = c - '0';
    if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
    if (digit < 0) return std::nullopt;
    if (i < 16) seq = (seq << 4) | static_cast<uint64_t>(digit);
  }
  if (seq == 0) return std::nullopt;
  return seq;
}

}  // namespace tessera::s3::model
