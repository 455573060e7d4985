#include "storage/memtable_insert_hints.h"

#include "storage/key_codec.h"

namespace tessera::storage {
namespace {

constexpr size_t kGroupTagBytes = kGroupIdBytes + 1;

uint8_t TagByte(std::string_view key) { return static_cast<uint8_t>(key[kGroupIdBytes]); }

bool HasShape(std::string_view key, size_t size, uint8_t tag) {
  return key.size() == size && TagByte(key) == tag;
}

template <typename Tag>
uint8_t Byte(Tag tag) {
  return static_cast<uint8_t>(tag);
}

class LogPrefix final : public rocksdb::SliceTransform {
 public:
  const char* Name() const override { return "tessera.LogFamilyInsertHintPrefix"; }
  // Entries share a hint per group; the others are a whole key.
  rocksdb::Slice Transform(const rocksdb::Slice& key) const override {
    return rocksdb::Slice(key.data(), kGroupTagBytes);
  }
  bool InDomain(const rocksdb::Slice& key) const override {
    return HintedInLogFamily(std::string_view(key.data(), key.size()));
  }
};

class StatePrefix final : public rocksdb::SliceTransform {
 public:
  const char* Name() const override { return "tessera.StateFamilyInsertHintPrefix"; }
  rocksdb::Slice Transform(const rocksdb::Slice& key) const override { return key; }
  bool InDomain(const rocksdb::Slice& key) const override {
    return HintedInStateFamily(std::string_view(key.data(), key.size()));
  }
};

}  // namespace

bool HintedInLogFamily(std::string_view key) {
  return HasShape(key, kLogEntryKeyBytes, Byte(LogKeyTag::kEntry)) ||
         HasShape(key, kGroupTagBytes, Byte(LogKeyTag::kHardState)) ||
         HasShape(key, kGroupTagBytes, Byte(LogKeyTag::kLogBase));
}

bool HintedInStateFamily(std::string_view key) {
  return HasShape(key, kGroupTagBytes, Byte(StateKeyTag::kApplied));
}

std::shared_ptr<const rocksdb::SliceTransform> LogFamilyInsertHintPrefix() {
  static const auto prefix = std::make_shared<const LogPrefix>();
  return prefix;
}

std::shared_ptr<const rocksdb::SliceTransform> StateFamilyInsertHintPrefix() {
  static const auto prefix = std::make_shared<const StatePrefix>();
  return prefix;
}

}  // namespace tessera::storage
