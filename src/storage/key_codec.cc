#include "storage/key_codec.h"

#include "common/check.h"

namespace tessera::storage {
namespace {

std::string TaggedKey(GroupId group, uint8_t tag) {
  std::string key;
  key.reserve(kGroupIdBytes + 1);
  AppendBigEndian64(&key, group);
  key.push_back(static_cast<char>(tag));
  return key;
}

uint8_t TagOf(LogKeyTag tag) { return static_cast<uint8_t>(tag); }
uint8_t TagOf(StateKeyTag tag) { return static_cast<uint8_t>(tag); }

// True when `key` starts with `group`'s id followed by `tag`.
bool HasPrefix(GroupId group, uint8_t tag, std::string_view key) {
  return key.size() > kGroupIdBytes && ReadBigEndian64(key) == group &&
         static_cast<uint8_t>(key[kGroupIdBytes]) == tag;
}

}  // namespace

std::string HardStateKey(GroupId group) { return TaggedKey(group, TagOf(LogKeyTag::kHardState)); }
std::string LogBaseKey(GroupId group) { return TaggedKey(group, TagOf(LogKeyTag::kLogBase)); }

std::string LogEntryKey(GroupId group, Slot slot) {
  std::string key = TaggedKey(group, TagOf(LogKeyTag::kEntry));
  AppendBigEndian64(&key, slot);
  return key;
}

std::string LogEntriesBegin(GroupId group) { return TaggedKey(group, TagOf(LogKeyTag::kEntry)); }
std::string LogEntriesEnd(GroupId group) { return TaggedKey(group, TagOf(LogKeyTag::kEntry) + 1); }

std::string LogEntriesFrom(GroupId group, Slot slot) {
  if (slot == 0) return LogEntriesBegin(group);
  // The successor of entry slot-1's key: nothing sorts between it and entry slot.
  std::string key = LogEntryKey(group, slot - 1);
  key.push_back('\0');
  return key;
}

std::string AppliedKey(GroupId group) { return TaggedKey(group, TagOf(StateKeyTag::kApplied)); }

std::string UserKey(GroupId group, std::string_view user_key) {
  std::string key = TaggedKey(group, TagOf(StateKeyTag::kUser));
  key.append(user_key);
  return key;
}

std::string UserKeysBegin(GroupId group) { return TaggedKey(group, TagOf(StateKeyTag::kUser)); }
std::string UserKeysEnd(GroupId group) { return TaggedKey(group, TagOf(StateKeyTag::kUser) + 1); }

std::string GroupBegin(GroupId group) {
  std::string key;
  AppendBigEndian64(&key, group);
  return key;
}

std::string GroupEnd(GroupId group) { return TaggedKey(group, kGroupEndTag); }

std::optional<GroupId> DecodeGroup(std::string_view key) {
  if (key.size() <= kGroupIdBytes) return std::nullopt;
  return ReadBigEndian64(key);
}

std::optional<Slot> DecodeLogEntrySlot(GroupId group, std::string_view key) {
  if (key.size() != kLogEntryKeyBytes || !HasPrefix(group, TagOf(LogKeyTag::kEntry), key)) {
    return std::nullopt;
  }
  return ReadBigEndian64(key.substr(kGroupIdBytes + 1));
}

std::optional<std::string_view> DecodeUserKey(GroupId group, std::string_view key) {
  if (!HasPrefix(group, TagOf(StateKeyTag::kUser), key)) return std::nullopt;
  return key.substr(kGroupIdBytes + 1);
}

std::string HexForMessage(std::string_view bytes, size_t bytes_max) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out = "0x";
  for (size_t i = 0; i < bytes.size() && i < bytes_max; ++i) {
    auto b = static_cast<uint8_t>(bytes[i]);
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 0xF]);
  }
  if (bytes.size() > bytes_max) out += "...";
  return out;
}

}  // namespace tessera::storage
