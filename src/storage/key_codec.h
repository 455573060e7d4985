// Key encodings of the log and state column families
// (docs/formats/storage.md, "Keys"). Group ids and slots are 8-byte
// big-endian so that byte order is numeric order.
//
// Encoders are total. Decoders take bytes read from disk and return nullopt
// for a key of the wrong shape; the caller reports Corruption with context.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/big_endian.h"
#include "consensus/options.h"

namespace tessera::storage {

using GroupId = uint64_t;
using consensus::Slot;

// The byte after the group id.
enum class LogKeyTag : uint8_t { kHardState = 0x01, kLogBase = 0x02, kEntry = 0x03 };
enum class StateKeyTag : uint8_t { kApplied = 0x01, kUser = 0x02 };
inline constexpr uint8_t kGroupEndTag = 0xFF;  // above every tag in use

inline constexpr size_t kGroupIdBytes = 8;
inline constexpr size_t kLogEntryKeyBytes = kGroupIdBytes + 1 + 8;

// Group ids and slots are written with common/big_endian.h
// (AppendBigEndian64, ReadBigEndian64).

// --- log column family ------------------------------------------------------
std::string HardStateKey(GroupId group);
std::string LogBaseKey(GroupId group);
std::string LogEntryKey(GroupId group, Slot slot);
// [LogEntriesBegin, LogEntriesEnd) holds exactly the group's entries.
std::string LogEntriesBegin(GroupId group);
std::string LogEntriesEnd(GroupId group);
// [LogEntriesFrom(slot), LogEntriesEnd) holds exactly the group's entries at
// `slot` and above. Never itself an entry key: the start of a range deletion
// must stay outside the memtable insert hints (memtable_insert_hints.h).
std::string LogEntriesFrom(GroupId group, Slot slot);

// --- state column family ----------------------------------------------------
std::string AppliedKey(GroupId group);
std::string UserKey(GroupId group, std::string_view user_key);
// [UserKeysBegin, UserKeysEnd) holds exactly the group's user keys.
std::string UserKeysBegin(GroupId group);
std::string UserKeysEnd(GroupId group);

// --- both -------------------------------------------------------------------
// [GroupBegin, GroupEnd) holds every record of the group in either family.
std::string GroupBegin(GroupId group);
std::string GroupEnd(GroupId group);

// The group id that prefixes any log or state key; nullopt when too short.
std::optional<GroupId> DecodeGroup(std::string_view key);
// The slot of `group`'s log entry key; nullopt for any other key.
std::optional<Slot> DecodeLogEntrySlot(GroupId group, std::string_view key);
// The user key of `group`'s state key; nullopt for any other key.
std::optional<std::string_view> DecodeUserKey(GroupId group, std::string_view key);

// "0x" and the bytes in hex, for error messages naming a user key.
std::string HexForMessage(std::string_view bytes, size_t bytes_max = 32);

}  // namespace tessera::storage
