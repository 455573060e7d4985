// Goal: records round-trip, the header matches the format doc, and every
// flipped byte, truncation or extension of a record is reported as Corruption.
#include "storage/record_codec.h"

#include <gtest/gtest.h>

#include <string>

#include "common/crc32c.h"
#include "tessera/consensus.pb.h"

namespace tessera::storage {
namespace {

using namespace std::string_literals;

// Goal: The record header is exactly that of docs/formats/storage.md.
TEST(RecordCodec, HeaderMatchesFormatDoc) {
  const std::string record = EncodeRecord("abc");
  ASSERT_EQ(record.size(), kRecordHeaderBytes + 3);
  EXPECT_EQ(record.substr(0, 5), "\x01\x03\0\0\0"s);
  const uint32_t crc = Crc32c("abc");
  std::string crc_le;
  for (int shift = 0; shift < 32; shift += 8) crc_le.push_back(static_cast<char>(crc >> shift));
  EXPECT_EQ(record.substr(5, 4), crc_le);
  EXPECT_EQ(record.substr(9), "abc");
}

// Goal: Records of any size decode back to their payload.
TEST(RecordCodec, RoundTrip) {
  for (const std::string& payload : {""s, "x"s, std::string(100'000, '\xa5')}) {
    const std::string record = EncodeRecord(payload);
    Result<std::string_view> decoded = DecodeRecord(record, "test");
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    EXPECT_EQ(*decoded, payload);
  }
}

// Goal: Flipping any byte of a record is detected as Corruption carrying the context.
TEST(RecordCodec, EveryFlippedByteIsCorruption) {
  pb::Entry entry;
  entry.set_slot(12);
  entry.set_command("some command bytes");
  const std::string record = EncodeProtoRecord(entry);
  for (size_t i = 0; i < record.size(); ++i) {
    for (uint8_t mask : {0x01, 0x80, 0xFF}) {
      std::string bad = record;
      bad[i] = static_cast<char>(bad[i] ^ mask);
      pb::Entry out;
      Status s = DecodeProtoRecord(bad, "log entry group=7 slot=12", &out);
      ASSERT_EQ(s.code(), StatusCode::kCorruption) << "byte " << i << " mask " << int(mask);
      EXPECT_NE(s.message().find("group=7 slot=12"), std::string::npos) << s.message();
    }
  }
}

// Goal: Every truncation or extension of a record is Corruption.
TEST(RecordCodec, TruncationAndExtensionAreCorruption) {
  const std::string record = EncodeRecord("payload of some length");
  for (size_t n = 0; n < record.size(); ++n) {
    EXPECT_EQ(DecodeRecord(record.substr(0, n), "r").status().code(), StatusCode::kCorruption) << n;
  }
  EXPECT_EQ(DecodeRecord(record + "x", "r").status().code(), StatusCode::kCorruption);
}

// Goal: A payload that passes its CRC but does not parse is Corruption.
TEST(RecordCodec, ValidChecksumOverGarbageIsCorruption) {
  pb::Entry out;
  Status s = DecodeProtoRecord(EncodeRecord("\xff\xff\xff"), "log entry", &out);
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_NE(s.message().find("does not parse"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace tessera::storage
