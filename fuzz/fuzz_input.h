// FuzzInput: a fuzz target's bytes taken apart into the values it needs, the
// same way on every run (a libFuzzer input or a file of a seed corpus).
// Every method returns something whatever is left: zero or empty once the
// bytes run out, so a target never has to check lengths.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tessera::fuzz {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : rest_(reinterpret_cast<const char*>(data), size) {}

  // One byte, 0 when none is left.
  uint8_t Byte() {
    if (rest_.empty()) return 0;
    const auto b = static_cast<uint8_t>(rest_.front());
    rest_.remove_prefix(1);
    return b;
  }
  // A little-endian integer of `bytes` bytes (at most 8).
  uint64_t Number(size_t bytes) {
    uint64_t v = 0;
    for (size_t i = 0; i < bytes && i < 8; ++i) v |= uint64_t{Byte()} << (8 * i);
    return v;
  }
  // Bytes up to the next `delimiter` (consumed, not returned), or the rest.
  std::string_view Until(char delimiter) {
    const size_t at = rest_.find(delimiter);
    const std::string_view out = rest_.substr(0, at);
    rest_ = at == std::string_view::npos ? std::string_view() : rest_.substr(at + 1);
    return out;
  }
  // Everything left.
  std::string_view Rest() {
    const std::string_view out = rest_;
    rest_ = {};
    return out;
  }
  bool empty() const { return rest_.empty(); }

 private:
  std::string_view rest_;
};

}  // namespace tessera::fuzz
