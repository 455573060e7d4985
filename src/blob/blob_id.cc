#include "blob/blob_id.h"

#include <openssl/rand.h>

#include "common/check.h"
#include "common/limits.h"

namespace tessera::blob {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

// The value of a lowercase hex digit, or -1.
int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

BlobId BlobId::Generate(uint32_t slot) {
  TESSERA_CHECK(slot < limits::kBlobSlots);
  BlobId id;
  id.slot = slot;
  TESSERA_CHECK(RAND_bytes(id.unique.data(), static_cast<int>(id.unique.size())) == 1);
  return id;
}

std::string BlobId::ToString() const {
  std::string text(kTextBytes, '-');
  for (int i = 0; i < 4; ++i) text[static_cast<size_t>(i)] = kHexDigits[(slot >> (12 - 4 * i)) & 0xf];
  for (size_t i = 0; i < unique.size(); ++i) {
    text[5 + 2 * i] = kHexDigits[unique[i] >> 4];
    text[6 + 2 * i] = kHexDigits[unique[i] & 0xf];
  }
  return text;
}

Result<BlobId> BlobId::Parse(std::string_view text) {
  const auto bad = [&text](const char* why) {
    return Status::InvalidArgument("bad blob id '" + std::string(text.substr(0, 64)) + "': " + why);
  };
  if (text.size() != kTextBytes) return bad("wrong length");
  if (text[4] != '-') return bad("no '-' after the slot");
  BlobId id;
  for (size_t i = 0; i < 4; ++i) {
    const int v = HexValue(text[i]);
    if (v < 0) return bad("slot is not lowercase hex");
    id.slot = (id.slot << 4) | static_cast<uint32_t>(v);
  }
  if (id.slot >= limits::kBlobSlots) return bad("slot out of range");
  for (size_t i = 0; i < id.unique.size(); ++i) {
    const int hi = HexValue(text[5 + 2 * i]);
    const int lo = HexValue(text[6 + 2 * i]);
    if (hi < 0 || lo < 0) return bad("unique part is not lowercase hex");
    id.unique[i] = static_cast<uint8_t>((hi << 4) | lo);
  }
  return id;
}

}  // namespace tessera::blob
