#include "common/http_field_chars.h"

namespace tessera {

bool IsWritableFieldName(std::string_view name) {
  if (name.empty()) return false;
  for (const char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f || c == ':') return false;
  }
  return true;
}

bool IsWritableFieldValue(std::string_view value) {
  for (const char c : value) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7f) return false;
  }
  return true;
}

}  // namespace tessera
