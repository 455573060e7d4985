// Goal: blob ids round-trip through their text form, reject every malformed
// text, and order like their text.
#include "blob/blob_id.h"

#include <gtest/gtest.h>

#include <set>

#include "common/limits.h"

namespace tessera::blob {
namespace {

TEST(BlobIdTest, TextFormRoundTrips) {
  BlobId id;
  id.slot = 0xa3;
  for (size_t i = 0; i < id.unique.size(); ++i) id.unique[i] = static_cast<uint8_t>(0x10 * i + i);
  EXPECT_EQ(id.ToString(), "00a3-00112233445566778899aabbccddeeff");
  auto parsed = BlobId::Parse(id.ToString());
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, id);
}

TEST(BlobIdTest, GenerateIsUniqueAndKeepsSlot) {
  std::set<BlobId> ids;
  for (int i = 0; i < 1000; ++i) {
    const BlobId id = BlobId::Generate(limits::kBlobSlots - 1);
    EXPECT_EQ(id.slot, limits::kBlobSlots - 1);
    EXPECT_EQ(id.ToString().size(), BlobId::kTextBytes);
    ids.insert(id);
  }
  EXPECT_EQ(ids.size(), 1000u);
}

TEST(BlobIdTest, ParseRejectsMalformedText) {
  const std::string good = BlobId::Generate(7).ToString();
  for (const std::string& bad :
       {std::string(), good.substr(1), good + "0", std::string("0007x") + good.substr(5),
        std::string("000G") + good.substr(4), std::string("000A") + good.substr(4),
        good.substr(0, 5) + "Z" + good.substr(6), good.substr(0, 36) + "F",
        std::string("1000-") + good.substr(5) /* slot 4096 */, std::string("ffff-") + good.substr(5)}) {
    auto parsed = BlobId::Parse(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(BlobIdTest, OrderMatchesTextOrder) {
  std::vector<BlobId> ids;
  for (uint32_t slot : {0u, 1u, 255u, 256u, 4095u}) {
    for (int i = 0; i < 5; ++i) ids.push_back(BlobId::Generate(slot));
  }
  for (const BlobId& a : ids) {
    for (const BlobId& b : ids) {
      EXPECT_EQ(a < b, a.ToString() < b.ToString());
      EXPECT_EQ(a == b, a.ToString() == b.ToString());
    }
  }
}

}  // namespace
}  // namespace tessera::blob
