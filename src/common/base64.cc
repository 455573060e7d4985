#include "common/base64.h"

#include <cstdint>

namespace tessera {
namespace {

constexpr std::string_view kBase64Alphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}


}  // namespace

std::string Base64Encode(std::string_view raw) {
  std::string out;
  out.reserve((raw.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= raw.size(); i += 3) {
    const uint32_t v = uint32_t{static_cast<unsigned char>(raw[i])} << 16 |
                       uint32_t{static_cast<unsigned char>(raw[i + 1])} << 8 |
                       uint32_t{static_cast<unsigned char>(raw[i + 2])};
    for (int s = 18; s >= 0; s -= 6) out.push_back(kBase64Alphabet[(v >> s) & 63]);
  }
  const size_t rest = raw.size() - i;
  if (rest > 0) {
    uint32_t v = uint32_t{static_cast<unsigned char>(raw[i])} << 16;
    if (rest == 2) v |= uint32_t{static_cast<unsigned char>(raw[i + 1])} << 8;
    out.push_back(kBase64Alphabet[(v >> 18) & 63]);
    out.push_back(kBase64Alphabet[(v >> 12) & 63]);
    out.push_back(rest == 2 ? kBase64Alphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

Result<std::string> Base64Decode(std::string_view text) {
  if (text.size() % 4 != 0) return Status::InvalidArgument("base64 length is not a multiple of 4");
  size_t pad = 0;
  if (!text.empty() && text.back() == '=') pad = text.size() >= 2 && text[text.size() - 2] == '=' ? 2 : 1;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    uint32_t v = 0;
    for (size_t k = 0; k < 4; ++k) {
      const bool is_pad = last && k >= 4 - pad;
      const int d = is_pad ? 0 : Base64Value(text[i + k]);
      if (d < 0) return Status::InvalidArgument("not base64");
      v = v << 6 | static_cast<uint32_t>(d);
    }
    out.push_back(static_cast<char>(v >> 16));
    if (!(last && pad == 2)) out.push_back(static_cast<char>((v >> 8) & 0xFF));
    if (!(last && pad >= 1)) out.push_back(static_cast<char>(v & 0xFF));
    // Unused bits of the last group must be zero (canonical encoding).
    if (last && pad == 2 && (v & 0xFFFF) != 0) return Status::InvalidArgument("non-canonical base64");
    if (last && pad == 1 && (v & 0xFF) != 0) return Status::InvalidArgument("non-canonical base64");
  }
  return out;
}

}  // namespace tessera
