// Goal: against three real blob nodes, a BlobWriter cuts whatever pieces it
// is given into blobs of exactly blob_bytes (the last one shorter), in
// object order, each holding the right bytes with the right size and
// CRC-32C, whether the caller's expected size is exact, unknown, too small
// or too large; and it never has more blobs in flight than its window.
#include "s3/front/blob_writer.h"

#include <gtest/gtest.h>

#include <future>
#include <random>

#include "blob/blob_id.h"
#include "blob/blob_nodes_fixture.h"
#include "common/crc32c.h"
#include "common/limits.h"

namespace tessera::s3::front {
namespace {

using blob::testing::TestData;

constexpr size_t kBlobBytes = 1000;

class BlobWriterTest : public blob::testing::BlobNodesTest {
 protected:
  // Writes `data` in pieces of the given sizes (cycled), waiting for each
  // Write's ready, then finishes; returns the refs.
  std::vector<pb::BlobRef> WriteAll(const std::string& data, const std::vector<size_t>& pieces,
                                    uint64_t expected_bytes) {
    auto writer = BlobWriter::Create(*client_, kBlobBytes, "owner-prefix", expected_bytes);
    size_t at = 0;
    for (size_t i = 0; at < data.size(); ++i) {
      const size_t n = std::min(pieces[i % pieces.size()], data.size() - at);
      std::promise<Status> ready;
      writer->Write(data.substr(at, n), [&ready](Status st) { ready.set_value(st); });
      EXPECT_TRUE(ready.get_future().get().ok());
      at += n;
    }
    std::promise<Result<std::vector<pb::BlobRef>>> done;
    writer->Finish([&done](Result<std::vector<pb::BlobRef>> refs) { done.set_value(std::move(refs)); });
    auto refs = done.get_future().get();
    EXPECT_TRUE(refs.ok()) << refs.status().ToString();
    EXPECT_EQ(writer->bytes_written(), data.size());
    EXPECT_LE(writer->max_in_flight_seen(), limits::kS3BlobWritesInFlightMax);
    return refs.ok() ? std::move(refs).value() : std::vector<pb::BlobRef>{};
  }

  // Every blob has kBlobBytes but the last, and together they hold `data`.
  void ExpectBlobsHold(const std::vector<pb::BlobRef>& refs, const std::string& data) {
    ASSERT_EQ(refs.size(), (data.size() + kBlobBytes - 1) / kBlobBytes);
    std::string joined;
    for (size_t i = 0; i < refs.size(); ++i) {
      const uint64_t want = i + 1 < refs.size() ? kBlobBytes : data.size() - i * kBlobBytes;
      EXPECT_EQ(refs[i].size(), want) << "blob " << i;
      auto id = blob::BlobId::Parse(refs[i].blob_id());
      ASSERT_TRUE(id.ok());
      auto bytes = Read(*id);
      ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
      EXPECT_EQ(refs[i].crc32c(), Crc32c(*bytes)) << "blob " << i;
      joined += *bytes;
    }
    EXPECT_TRUE(joined == data);
  }
};

TEST_F(BlobWriterTest, PiecesOfEveryShapeBecomeWholeBlobsInOrder) {
  const std::string data = TestData(5432, 9);
  const std::vector<std::vector<size_t>> shapes = {
      {1}, {7, 993}, {999}, {1000}, {1001}, {2500}, {5432}, {10'000}, {3, 1000, 17, 2048}};
  for (const auto& shape : shapes) {
    SCOPED_TRACE(testing::Message() << "first piece " << shape.front());
    ExpectBlobsHold(WriteAll(data, shape, data.size()), data);
  }
}

TEST_F(BlobWriterTest, ExpectedSizeOnlySizesBuffers) {
  const std::string data = TestData(3333, 4);
  for (uint64_t expected : {uint64_t{0}, uint64_t{1}, uint64_t{2000}, uint64_t{3333}, uint64_t{1'000'000}}) {
    for (size_t piece : {size_t{400}, size_t{1000}, size_t{3333}}) {
      SCOPED_TRACE(testing::Message() << "expected " << expected << " piece " << piece);
      ExpectBlobsHold(WriteAll(data, {piece}, expected), data);
    }
  }
}

TEST_F(BlobWriterTest, EmptyBodyWritesNoBlob) {
  auto writer = BlobWriter::Create(*client_, kBlobBytes, "owner-prefix", 0);
  std::promise<Result<std::vector<pb::BlobRef>>> done;
  writer->Finish([&done](Result<std::vector<pb::BlobRef>> refs) { done.set_value(std::move(refs)); });
  auto refs = done.get_future().get();
  ASSERT_TRUE(refs.ok());
  EXPECT_TRUE(refs->empty());
}

}  // namespace
}  // namespace tessera::s3::front
