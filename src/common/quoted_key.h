// A key for humans (logs, status lines, CLI output): in double quotes,
// printable ASCII as is, every other byte (and '"', '\\') as \xHH, so a
// binary key never breaks a line or a terminal.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace tessera {

inline std::string QuotedKey(std::string_view key) {
  std::string out = "\"";
  for (unsigned char c : key) {
    if (c >= 0x20 && c < 0x7f && c != '\\' && c != '"') {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    }
  }
  return out + "\"";
}

}  // namespace tessera
