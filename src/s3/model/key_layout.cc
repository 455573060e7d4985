#include "s3/model/key_layout.h"

#include <charconv>

#include "common/check.h"
#include "common/limits.h"
#include "common/splitmix64.h"

namespace tessera::s3::model {

KeyLayout KeyLayoutOf(const pb::BucketDescriptor& bucket) {
  if (bucket.key_layout() != pb::BUCKET_KEY_LAYOUT_HASHED) return KeyLayout{};
  TESSERA_CHECK(bucket.hash_ranges() >= limits::kS3HashRangesMin &&
                bucket.hash_ranges() <= limits::kS3HashRangesMax);
  return KeyLayout{bucket.hash_ranges()};
}

Status ValidateKeyLayout(pb::BucketKeyLayout layout, uint32_t hash_ranges) {
  switch (layout) {
    case pb::BUCKET_KEY_LAYOUT_ORDERED:
      if (hash_ranges == 0) return Status::Ok();
      return Status::InvalidArgument("the ordered key layout has no hash ranges");
    case pb::BUCKET_KEY_LAYOUT_HASHED:
      if (hash_ranges >= limits::kS3HashRangesMin && hash_ranges <= limits::kS3HashRangesMax) {
        return Status::Ok();
      }
      return Status::InvalidArgument("a hashed key layout has " +
                                     std::to_string(limits::kS3HashRangesMin) + " to " +
                                     std::to_string(limits::kS3HashRangesMax) + " hash ranges");
    default:
      return Status::InvalidArgument("unknown bucket key layout");
  }
}

Result<KeyLayout> ParseKeyLayout(std::string_view text) {
  if (text == "ordered") return KeyLayout{};
  constexpr std::string_view kHashed = "hashed:";
  const auto bad = [text] {
    return Status::InvalidArgument("bad key layout '" + std::string(text) +
                                   "': expected 'ordered' or 'hashed:N' with N in " +
                                   std::to_string(limits::kS3HashRangesMin) + ".." +
                                   std::to_string(limits::kS3HashRangesMax));
  };
  if (!text.starts_with(kHashed)) return bad();
  const std::string_view digits = text.substr(kHashed.size());
  uint32_t n = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) return bad();
  if (!ValidateKeyLayout(pb::BUCKET_KEY_LAYOUT_HASHED, n).ok()) return bad();
  return KeyLayout{n};
}

std::string KeyLayoutName(const KeyLayout& layout) {
  if (!layout.hashed()) return "ordered";
  return "hashed:" + std::to_string(layout.hash_ranges);
}

uint64_t ObjectKeyHash(std::string_view key) {
  uint64_t h = 0xCBF29CE484222325ull;  // FNV-1a 64 offset basis
  for (const char c : key) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001B3ull;  // FNV-1a 64 prime
  }
  return SplitMix64Finalize(h);
}

uint8_t HashRangeOf(const KeyLayout& layout, std::string_view key) {
  TESSERA_CHECK(layout.hashed());
  return static_cast<uint8_t>(1 + ObjectKeyHash(key) % layout.hash_ranges);
}

std::string RangeStoredKey(uint8_t range, std::string_view prefix) {
  TESSERA_CHECK(range != 0);
  std::string out;
  out.reserve(1 + prefix.size());
  out.push_back(static_cast<char>(range));
  out.append(prefix);
  return out;
}

std::string StoredKey(const KeyLayout& layout, std::string_view key) {
  if (!layout.hashed()) return std::string(key);
  return RangeStoredKey(HashRangeOf(layout, key), key);
}

std::string_view UserKey(const KeyLayout& layout, std::string_view stored_key) {
  if (!layout.hashed()) return stored_key;
  TESSERA_CHECK(stored_key.size() >= limits::kS3HashRangeBytes);
  return stored_key.substr(limits::kS3HashRangeBytes);
}

}  // namespace tessera::s3::model
