// Goal: a node can tell a request whose keys left its group's range (after
// a split) from one it may serve, for KV batches and S3 ops alike.
#include "node/partition_range.h"

#include <gtest/gtest.h>

#include "node/split_key.h"
#include "s3/model/s3_keys.h"

namespace tessera::node {
namespace {

namespace s3m = tessera::s3::model;

pb::PartitionDescriptor Range(std::string start, std::string end) {
  pb::PartitionDescriptor d;
  d.set_start_key(std::move(start));
  d.set_end_key(std::move(end));
  return d;
}

TEST(KeyInRange, StartInclusiveEndExclusiveEmptyEndUnbounded) {
  const auto d = Range("b", "m");
  EXPECT_FALSE(KeyInRange(d, "a"));
  EXPECT_TRUE(KeyInRange(d, "b"));
  EXPECT_TRUE(KeyInRange(d, "lzzz"));
  EXPECT_FALSE(KeyInRange(d, "m"));
  EXPECT_TRUE(KeyInRange(Range("", ""), ""));
  EXPECT_TRUE(KeyInRange(Range("m", ""), "\xff\xff"));
}

TEST(ScanInRange, AScanMustStartAndEndInsideTheRange) {
  auto scan = [](std::string start, std::string end) {
    pb::KvScanRequest s;
    s.set_start_key(std::move(start));
    s.set_end_key(std::move(end));
    return s;
  };
  const auto d = Range("b", "m");
  EXPECT_TRUE(ScanInRange(d, scan("b", "m")));
  EXPECT_TRUE(ScanInRange(d, scan("c", "d")));
  EXPECT_FALSE(ScanInRange(d, scan("a", "m")));
  // A stale route's wider end (the parent's range before the split).
  EXPECT_FALSE(ScanInRange(d, scan("c", "z")));
  EXPECT_FALSE(ScanInRange(d, scan("c", "")));
  EXPECT_TRUE(ScanInRange(Range("m", ""), scan("m", "")));
  EXPECT_TRUE(ScanInRange(Range("m", ""), scan("x", "y")));
}

TEST(CommandInRange, EveryKeyOfABatchMustBeInRange) {
  const auto d = Range("b", "m");
  pb::KvCommand command;
  command.mutable_batch()->add_writes()->set_key("c");
  command.mutable_batch()->add_conditions()->set_key("d");
  EXPECT_TRUE(CommandInRange(d, command));
  command.mutable_batch()->add_conditions()->set_key("x");
  EXPECT_FALSE(CommandInRange(d, command));
  command.mutable_batch()->mutable_conditions()->RemoveLast();
  command.mutable_batch()->add_writes()->set_key("m");
  EXPECT_FALSE(CommandInRange(d, command));
}

TEST(CommandInRange, S3OpsCountTheirObjectAndGcDoneNone) {
  const auto d = Range(s3m::ObjectPrefix(7, "k"), s3m::BucketPrefix(8));
  pb::KvCommand put;
  put.mutable_s3()->mutable_put_object()->set_bucket_id(7);
  put.mutable_s3()->mutable_put_object()->set_key("k");
  EXPECT_TRUE(CommandInRange(d, put));
  put.mutable_s3()->mutable_put_object()->set_key("j");
  EXPECT_FALSE(CommandInRange(d, put));
  pb::KvCommand part;
  part.mutable_s3()->mutable_upload_part()->set_bucket_id(8);
  part.mutable_s3()->mutable_upload_part()->set_key("a");
  EXPECT_FALSE(CommandInRange(d, part));
  pb::KvCommand gc;
  gc.mutable_s3()->mutable_gc_done()->set_gc_slot(3);
  EXPECT_TRUE(CommandInRange(d, gc));
  // A kv.write request counts the command it proposes.
  pb::KvWriteRequest write;
  *write.mutable_s3() = part.s3();
  write.mutable_batch()->add_writes()->set_key(s3m::ObjectPrefix(7, "z"));
  EXPECT_FALSE(WriteInRange(d, write));
  write.clear_s3();
  EXPECT_TRUE(WriteInRange(d, write));
}

TEST(S3ReadsInRange, GetCountsTheObjectListTheEnd) {
  const auto d = Range(s3m::ObjectPrefix(7, "k"), s3m::BucketPrefix(8));
  pb::S3GetRequest get;
  get.set_bucket_id(7);
  get.set_key("k");
  EXPECT_TRUE(S3GetInRange(d, get));
  get.set_key("a");
  EXPECT_FALSE(S3GetInRange(d, get));
  pb::S3ListRequest list;
  list.set_bucket_id(7);
  list.set_end_key(s3m::BucketPrefix(8));
  EXPECT_TRUE(S3ListInRange(d, list));
  list.set_end_key(s3m::BucketPrefix(9));  // a stale route's wider end
  EXPECT_FALSE(S3ListInRange(d, list));
  list.clear_end_key();
  EXPECT_FALSE(S3ListInRange(d, list));
  EXPECT_TRUE(S3ListInRange(Range(s3m::BucketPrefix(8), ""), list));
}

// The load split finder's key of an S3 request is always a split point the
// `_s3` table allows: the object's prefix `B K`, never a record key.
TEST(S3LoadKey, ObjectRequestsSampleTheObjectPrefixOthersNothing) {
  const SplitKeyRules s3_table{s3m::BucketPrefix(1), "", /*whole_objects=*/true};
  pb::S3Op put;
  put.mutable_put_object()->set_bucket_id(7);
  put.mutable_put_object()->set_key("photos/a");
  ASSERT_TRUE(S3LoadKey(put).has_value());
  EXPECT_EQ(*S3LoadKey(put), s3m::ObjectPrefix(7, "photos/a"));
  EXPECT_TRUE(SplitKeyAllowed(*S3LoadKey(put), s3_table));
  pb::S3Op del;
  del.mutable_delete_object()->set_bucket_id(7);
  del.mutable_delete_object()->set_key("b");
  EXPECT_EQ(S3LoadKey(del), s3m::ObjectPrefix(7, "b"));
  pb::S3Op config;
  config.mutable_set_bucket_config()->set_bucket_id(7);
  EXPECT_FALSE(S3LoadKey(config).has_value());
  pb::S3Op gc;
  gc.mutable_gc_done()->set_gc_slot(3);
  EXPECT_FALSE(S3LoadKey(gc).has_value());

  pb::S3GetRequest get;
  get.set_bucket_id(7);
  get.set_key("photos/a");
  EXPECT_EQ(S3LoadKey(get), s3m::ObjectPrefix(7, "photos/a"));
  pb::S3ListRequest list;
  list.set_bucket_id(7);
  EXPECT_EQ(S3LoadKey(list), s3m::BucketPrefix(7));
  list.set_prefix("photos/");
  EXPECT_EQ(S3LoadKey(list), s3m::ObjectPrefix(7, "photos/"));
  list.set_start_after("photos/m");
  EXPECT_EQ(S3LoadKey(list), s3m::ObjectPrefix(7, "photos/m"));
  list.set_start_after(std::string("q\0\x02", 3));  // cut at the 0x00
  EXPECT_EQ(S3LoadKey(list), s3m::ObjectPrefix(7, "q"));
  EXPECT_TRUE(SplitKeyAllowed(S3LoadKey(list), s3_table));
}

}  // namespace
}  // namespace tessera::node
