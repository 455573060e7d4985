// Goal: a message parsed around one bytes field gets every other field as
// the generated parser would, and the field as a view into the input, in
// any field order; malformed input is refused.
#include "rpc/bytes_field.h"

#include <gtest/gtest.h>

#include "rpc/frame.h"
#include "tessera/rpc.pb.h"

namespace tessera::rpc {
namespace {

TEST(BytesField, ViewsTheFieldAndParsesTheRest) {
  pb::Envelope others;
  others.set_call_id(77);
  others.set_method("blob.put");
  const std::string payload(100'000, 'p');
  // The field last (as split payloads put it), then first (generated order).
  std::string last = others.SerializeAsString();
  AppendLengthDelimitedFieldHeader(&last, pb::Envelope::kPayloadFieldNumber, payload.size());
  last += payload;
  pb::Envelope whole = others;
  whole.set_payload(payload);
  for (const std::string& bytes : {last, whole.SerializeAsString()}) {
    pb::Envelope parsed;
    std::string_view field;
    ASSERT_TRUE(ParseAroundBytesField(bytes, pb::Envelope::kPayloadFieldNumber, &parsed, &field));
    EXPECT_EQ(field, payload);
    EXPECT_GE(field.data(), bytes.data());
    EXPECT_LE(field.data() + field.size(), bytes.data() + bytes.size()) << "a view into the input";
    EXPECT_EQ(parsed.call_id(), 77u);
    EXPECT_EQ(parsed.method(), "blob.put");
    EXPECT_TRUE(parsed.payload().empty());
  }
}

TEST(BytesField, LastOccurrenceWinsAndAbsentIsEmpty) {
  std::string bytes;
  AppendLengthDelimitedFieldHeader(&bytes, pb::Envelope::kPayloadFieldNumber, 3);
  bytes += "one";
  AppendLengthDelimitedFieldHeader(&bytes, pb::Envelope::kPayloadFieldNumber, 3);
  bytes += "two";
  pb::Envelope parsed;
  std::string_view field;
  ASSERT_TRUE(ParseAroundBytesField(bytes, pb::Envelope::kPayloadFieldNumber, &parsed, &field));
  EXPECT_EQ(field, "two");
  ASSERT_TRUE(ParseAroundBytesField("", pb::Envelope::kPayloadFieldNumber, &parsed, &field));
  EXPECT_TRUE(field.empty());
}

TEST(BytesField, MalformedInputIsRefused) {
  pb::Envelope parsed;
  std::string_view field;
  const int f = pb::Envelope::kPayloadFieldNumber;
  EXPECT_FALSE(ParseAroundBytesField(std::string("\x22\x05" "abc", 5), f, &parsed, &field)) << "short field";
  EXPECT_FALSE(ParseAroundBytesField(std::string("\x22\xff\xff\xff\xff\x0f", 6), f, &parsed, &field));
  EXPECT_FALSE(ParseAroundBytesField(std::string("\x08\x80", 2), f, &parsed, &field)) << "truncated varint";
  EXPECT_FALSE(ParseAroundBytesField(std::string("\x0c", 1), f, &parsed, &field)) << "end-group tag";
}

}  // namespace
}  // namespace tessera::rpc
