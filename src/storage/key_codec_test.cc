// Goal: keys follow docs/formats/storage.md byte for byte, sort numerically
// by (group, tag, slot), keep groups apart, and decode back only when well-formed.
#include "storage/key_codec.h"

#include <gtest/gtest.h>

#include <string>

namespace tessera::storage {
namespace {

using namespace std::string_literals;

// Goal: Key bytes are exactly those of docs/formats/storage.md.
TEST(KeyCodec, LayoutMatchesFormatDoc) {
  EXPECT_EQ(LogEntryKey(0x0102, 0x0304), "\0\0\0\0\0\0\x01\x02\x03\0\0\0\0\0\0\x03\x04"s);
  EXPECT_EQ(HardStateKey(5), "\0\0\0\0\0\0\0\x05\x01"s);
  EXPECT_EQ(LogBaseKey(5), "\0\0\0\0\0\0\0\x05\x02"s);
  EXPECT_EQ(AppliedKey(5), "\0\0\0\0\0\0\0\x05\x01"s);
  EXPECT_EQ(UserKey(5, "ab"),
            "\0\0\0\0\0\0\0\x05\x02"
            "ab"s);
  EXPECT_EQ(LogEntryKey(1, 1).size(), kLogEntryKeyBytes);
}

// Goal: Big-endian encoding makes byte order the numeric (group, tag, slot) order.
TEST(KeyCodec, LogKeysSortByGroupThenTagThenSlot) {
  EXPECT_LT(HardStateKey(1), LogBaseKey(1));
  EXPECT_LT(LogBaseKey(1), LogEntriesBegin(1));
  EXPECT_LE(LogEntriesBegin(1), LogEntryKey(1, 0));
  EXPECT_LT(LogEntryKey(1, 255), LogEntryKey(1, 256));
  EXPECT_LT(LogEntryKey(1, 0xFFFF'FFFF), LogEntryKey(1, 0x1'0000'0000));
  EXPECT_LT(LogEntryKey(1, UINT64_MAX), LogEntriesEnd(1));
  EXPECT_LT(LogEntriesEnd(1), GroupEnd(1));
  EXPECT_LT(GroupEnd(1), GroupBegin(2));
  EXPECT_LT(GroupEnd(255), HardStateKey(256));
}

// Goal: LogEntriesFrom(slot) bounds exactly the entries at slot and above,
// without being an entry key itself.
TEST(KeyCodec, LogEntriesFromSitsJustBelowItsSlot) {
  for (Slot slot : {Slot{1}, Slot{2}, Slot{256}, Slot{0x1'0000'0000}, Slot{UINT64_MAX}}) {
    const std::string from = LogEntriesFrom(7, slot);
    EXPECT_LT(LogEntryKey(7, slot - 1), from) << slot;
    EXPECT_LE(from, LogEntryKey(7, slot)) << slot;
    EXPECT_NE(from.size(), kLogEntryKeyBytes) << slot;
  }
  EXPECT_EQ(LogEntriesFrom(7, 0), LogEntriesBegin(7));
}

// Goal: Any user key, even all 0xFF, sorts inside its group's user-key range.
TEST(KeyCodec, UserKeysStayInsideTheirGroupRange) {
  const std::string high = "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"s;
  EXPECT_LT(AppliedKey(3), UserKeysBegin(3));
  EXPECT_LE(UserKeysBegin(3), UserKey(3, ""));
  EXPECT_LT(UserKey(3, "a"), UserKey(3, "b"));
  EXPECT_LT(UserKey(3, "a"), UserKey(3, "a\0"s));
  EXPECT_LT(UserKey(3, high), UserKeysEnd(3));
  EXPECT_LT(UserKeysEnd(3), GroupEnd(3));
  EXPECT_LT(GroupEnd(3), UserKey(4, ""));
}

// Goal: Decoders invert encoders and reject keys of another group, tag or length.
TEST(KeyCodec, DecodeRoundTripsAndRejectsForeignKeys) {
  EXPECT_EQ(DecodeLogEntrySlot(9, LogEntryKey(9, 77)), Slot{77});
  EXPECT_EQ(DecodeLogEntrySlot(9, LogEntryKey(9, UINT64_MAX)), UINT64_MAX);
  EXPECT_FALSE(DecodeLogEntrySlot(8, LogEntryKey(9, 77)));                // other group
  EXPECT_FALSE(DecodeLogEntrySlot(9, HardStateKey(9)));                   // other tag
  EXPECT_FALSE(DecodeLogEntrySlot(9, LogEntryKey(9, 77).substr(0, 16)));  // truncated
  EXPECT_FALSE(DecodeLogEntrySlot(9, LogEntryKey(9, 77) + "x"));          // extended

  EXPECT_EQ(DecodeUserKey(9, UserKey(9, "k\0z"s)), "k\0z"s);
  EXPECT_FALSE(DecodeUserKey(9, AppliedKey(9)));
  EXPECT_FALSE(DecodeUserKey(10, UserKey(9, "k")));

  EXPECT_EQ(DecodeGroup(UserKey(UINT64_MAX, "k")), UINT64_MAX);
  EXPECT_FALSE(DecodeGroup(GroupBegin(1)));  // a bare prefix is not a record key
}

// Goal: Error messages show keys as bounded hex.
TEST(KeyCodec, HexForMessageIsBounded) {
  EXPECT_EQ(HexForMessage("\x01\xab"s), "0x01ab");
  EXPECT_EQ(HexForMessage(std::string(40, 'a'), 2), "0x6161...");
}

}  // namespace
}  // namespace tessera::storage
