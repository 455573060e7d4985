// Goal: a blob.read response encoded with its data as the frame tail
// parses back to the same fields and bytes, viewed in place; a response
// serialized whole (data first) parses the same; malformed bytes are
// refused rather than misread.
#include "blob/read_response.h"

#include <gtest/gtest.h>

#include "common/crc32c.h"

namespace tessera::blob {
namespace {

BlobReadResult Read(std::string data) {
  BlobReadResult r;
  r.crc32c = Crc32c(data);
  r.total_size = data.size() + 5;
  r.owner = "owner-prefix";
  r.data = SharedBytes(std::move(data));
  return r;
}

TEST(ReadResponse, SplitEncodingParsesWithTheDataInPlace) {
  for (size_t size : {size_t{0}, size_t{1}, size_t{127}, size_t{128}, size_t{300'000}}) {
    const std::string data(size, 'd');
    const rpc::SplitPayload payload = EncodeReadResponse(Read(data));
    EXPECT_EQ(payload.tail.view(), data);
    EXPECT_EQ(payload.tail_crc32c, Crc32c(data));
    const std::string wire = payload.head + std::string(payload.tail.view());
    pb::BlobReadResponse fields;
    std::string_view parsed;
    ASSERT_TRUE(ParseReadResponse(wire, &fields, &parsed)) << size;
    EXPECT_EQ(parsed, data);
    EXPECT_EQ(parsed.data(), wire.data() + payload.head.size()) << "viewed, not copied";
    EXPECT_EQ(fields.crc32c(), Crc32c(data));
    EXPECT_EQ(fields.total_size(), size + 5);
    EXPECT_EQ(fields.owner(), "owner-prefix");
    EXPECT_TRUE(fields.data().empty());
    // The generated parser reads the same message.
    pb::BlobReadResponse whole;
    ASSERT_TRUE(whole.ParseFromString(wire));
    EXPECT_EQ(whole.data(), data);
  }
}

TEST(ReadResponse, WholeSerializationParsesTheSame) {
  pb::BlobReadResponse whole;
  whole.set_data("payload bytes");
  whole.set_total_size(99);
  whole.set_crc32c(7);
  whole.set_owner("o");
  const std::string wire = whole.SerializeAsString();
  pb::BlobReadResponse fields;
  std::string_view data;
  ASSERT_TRUE(ParseReadResponse(wire, &fields, &data));
  EXPECT_EQ(data, "payload bytes");
  EXPECT_EQ(fields.total_size(), 99u);
  EXPECT_EQ(fields.crc32c(), 7u);
  EXPECT_EQ(fields.owner(), "o");
}

TEST(ReadResponse, MalformedBytesAreRefused) {
  const rpc::SplitPayload payload = EncodeReadResponse(Read(std::string(1000, 'x')));
  const std::string wire = payload.head + std::string(payload.tail.view());
  pb::BlobReadResponse fields;
  std::string_view data;
  EXPECT_FALSE(ParseReadResponse(wire.substr(0, wire.size() - 1), &fields, &data)) << "truncated data";
  EXPECT_FALSE(ParseReadResponse(payload.head.substr(0, 2), &fields, &data)) << "truncated varint";
  EXPECT_FALSE(ParseReadResponse(std::string("\xff\xff\xff\xff\xff\xff", 6), &fields, &data));
  EXPECT_FALSE(ParseReadResponse(std::string("\x0c", 1), &fields, &data)) << "end-group tag";
  // A huge declared length must not read past the end.
  EXPECT_FALSE(ParseReadResponse(std::string("\x0a\xff\xff\xff\x0f", 5), &fields, &data));
  EXPECT_TRUE(ParseReadResponse("", &fields, &data));
  EXPECT_TRUE(data.empty());
}

}  // namespace
}  // namespace tessera::blob
