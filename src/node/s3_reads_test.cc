// Goal: "s3.get" (ReadS3Object) answers the head's latest version or a
// version by id with its inline bytes from the data record in one read,
// metadata only when not asked for bytes, found=false / NotFound /
// InvalidArgument like kv.get, and strong reads fail on a replica that is
// not the leader exactly as kv.get's do while eventual reads succeed.
#include "node/s3_reads.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <filesystem>
#include <future>
#include <thread>

#include "common/metrics.h"
#include "s3/model/s3_keys.h"

namespace tessera::node {
namespace {

constexpr uint64_t kGroup = 11;     // replicas {1}: leads itself
constexpr uint64_t kFollower = 12;  // replicas {1, 2, 3}: never elected here
constexpr uint64_t kBucket = 3;

pb::PartitionDescriptor Descriptor(uint64_t group, std::vector<uint32_t> nodes) {
  pb::PartitionDescriptor d;
  d.set_table("_s3");
  d.set_group_id(group);
  for (uint32_t n : nodes) d.add_replicas()->set_node_id(n);
  return d;
}

class S3ReadsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/tessera-s3r-XXXXXX";
    dir_ = ::mkdtemp(pattern);
    for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { io_.run(); });
    ReplicationHostOptions options;
    options.self_id = 1;
    options.store.path = dir_ + "/rocksdb";
    options.send_batch = [](uint32_t, std::string) { return Status::Ok(); };
    consensus::Options& c = options.group_defaults.consensus;
    c.tick_interval_us = 2'000;
    c.heartbeat_interval_us = 20'000;
    c.lease_duration_us = 200'000;
    c.election_timeout_min_us = 250'000;
    c.election_timeout_max_us = 500'000;
    c.check_quorum_timeout_us = 250'000;
    host_ = std::move(ReplicationHost::Open(io_, registry_, options)).value();
    for (const auto& d : {Descriptor(kGroup, {1}), Descriptor(kFollower, {1, 2, 3})}) {
      const Status created = host_->CreateGroup(d);
      ASSERT_TRUE(created.ok()) << created.ToString();
    }
  }
  void TearDown() override {
    host_->Stop();
    work_.reset();
    io_.stop();
    for (auto& t : threads_) t.join();
    host_.reset();
    std::filesystem::remove_all(dir_);
  }

  // Applies `op` in kGroup, retrying until the group has elected itself.
  pb::S3OpResult Apply(const pb::S3Op& op) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (true) {
      pb::KvCommand command;
      *command.mutable_s3() = op;
      std::promise<Result<pb::KvApplyResult>> done;
      host_->Find(kGroup)->Write(command, [&done](Result<pb::KvApplyResult> r) {
        done.set_value(std::move(r));
      });
      auto r = done.get_future().get();
      if (r.ok()) return r->s3();
      if (std::chrono::steady_clock::now() > deadline) {
        ADD_FAILURE() << r.status().ToString();
        return {};
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  pb::S3OpResult Put(const std::string& key, const std::string& bytes,
                     pb::BucketVersioning versioning) {
    pb::S3Op op;
    auto* put = op.mutable_put_object();
    put->set_bucket_id(kBucket);
    put->set_key(key);
    put->mutable_object()->set_size(bytes.size());
    put->mutable_object()->set_etag("e-" + bytes);
    put->mutable_object()->set_inline_data(bytes);
    put->set_versioning(versioning);
    return Apply(op);
  }

  Result<pb::S3GetResponse> Get(const std::string& key, const std::string& version_id,
                                bool with_data, uint64_t group = kGroup,
                                pb::Consistency consistency = pb::CONSISTENCY_STRONG) {
    pb::S3GetRequest request;
    request.set_group_id(group);
    request.set_bucket_id(kBucket);
    request.set_key(key);
    request.set_version_id(version_id);
    request.set_with_data(with_data);
    request.set_consistency(consistency);
    std::promise<Result<pb::S3GetResponse>> done;
    ReadS3Object(*host_, request, [&done](Result<pb::S3GetResponse> r) {
      done.set_value(std::move(r));
    });
    return done.get_future().get();
  }

  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_ =
      boost::asio::make_work_guard(io_);
  std::vector<std::thread> threads_;
  metrics::Registry registry_;
  std::string dir_;
  std::unique_ptr<ReplicationHost> host_;
};

TEST_F(S3ReadsTest, ServesHeadAndBytesInOneAnswer) {
  Put("plain", "unversioned bytes", pb::VERSIONING_UNSET);
  auto v1 = Put("ver", "first", pb::VERSIONING_ENABLED);
  auto v2 = Put("ver", "second", pb::VERSIONING_ENABLED);
  ASSERT_EQ(v1.outcome(), pb::S3_OK);

  auto plain = Get("plain", "", /*with_data=*/true);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_TRUE(plain->found());
  EXPECT_EQ(plain->version().inline_data(), "unversioned bytes");
  EXPECT_EQ(plain->version().etag(), "e-unversioned bytes");
  EXPECT_FALSE(plain->version().bytes_in_data_record());

  auto meta = Get("plain", "", /*with_data=*/false);
  ASSERT_TRUE(meta.ok());
  EXPECT_TRUE(meta->version().inline_data().empty());
  EXPECT_TRUE(meta->version().bytes_in_data_record());
  EXPECT_EQ(meta->version().size(), 17u);

  EXPECT_EQ(Get("ver", "", true)->version().inline_data(), "second");
  EXPECT_EQ(Get("ver", v1.version_id(), true)->version().inline_data(), "first");
  EXPECT_EQ(Get("ver", v2.version_id(), true)->version().inline_data(), "second");
  EXPECT_EQ(Get("plain", "null", true)->version().inline_data(), "unversioned bytes");
  // Eventual reads of the leader's state see the same.
  auto eventual = Get("ver", v1.version_id(), true, kGroup, pb::CONSISTENCY_EVENTUAL);
  ASSERT_TRUE(eventual.ok());
  EXPECT_EQ(eventual->version().inline_data(), "first");
}

TEST_F(S3ReadsTest, ReadsHeadsWrittenBeforeDataRecordsExisted) {
  // Written as the state machine stored it before this change: the bytes
  // inside the head's latest version, no data record.
  pb::ObjectHead old;
  old.mutable_latest()->set_version_id("null");
  old.mutable_latest()->set_size(9);
  old.mutable_latest()->set_etag("old-etag");
  old.mutable_latest()->set_inline_data("old bytes");
  pb::KvCommand command;
  pb::KvWrite* write = command.mutable_batch()->add_writes();
  write->set_key(s3::model::HeadKey(kBucket, "old"));
  write->set_value(old.SerializeAsString());
  Put("warm-up", "", pb::VERSIONING_UNSET);  // waits for the group's leader
  std::promise<Result<pb::KvApplyResult>> done;
  host_->Find(kGroup)->Write(command, [&done](Result<pb::KvApplyResult> r) {
    done.set_value(std::move(r));
  });
  ASSERT_TRUE(done.get_future().get().ok());

  auto get = Get("old", "", /*with_data=*/true);
  ASSERT_TRUE(get.ok()) << get.status().ToString();
  EXPECT_EQ(get->version().inline_data(), "old bytes");
  EXPECT_EQ(get->version().etag(), "old-etag");
  auto head = Get("old", "", /*with_data=*/false);
  ASSERT_TRUE(head.ok());
  EXPECT_TRUE(head->version().inline_data().empty());
  EXPECT_EQ(head->version().size(), 9u);
  EXPECT_EQ(Get("old", "null", true)->version().inline_data(), "old bytes");
}

TEST_F(S3ReadsTest, AbsentKeysVersionsAndGroups) {
  Put("k", "x", pb::VERSIONING_UNSET);
  auto absent = Get("other", "", true);
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(absent->found());
  auto no_version = Get("k", "00000000000000070000000000000001", true);
  ASSERT_TRUE(no_version.ok());
  EXPECT_FALSE(no_version->found());
  EXPECT_EQ(Get("k", "garbage", true).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Get("k", "", true, /*group=*/99).status().code(), StatusCode::kNotFound);
}

TEST_F(S3ReadsTest, StrongReadsNeedTheLeaseLikeKvGet) {
  std::promise<Result<std::optional<pb::KvRecord>>> kv;
  host_->Find(kFollower)->Read(s3::model::HeadKey(kBucket, "k"), pb::CONSISTENCY_STRONG,
                               [&kv](Result<std::optional<pb::KvRecord>> r) {
                                 kv.set_value(std::move(r));
                               });
  const Status kv_status = kv.get_future().get().status();
  ASSERT_FALSE(kv_status.ok());
  auto strong = Get("k", "", true, kFollower, pb::CONSISTENCY_STRONG);
  EXPECT_EQ(strong.status().code(), kv_status.code()) << strong.status().ToString();
  auto eventual = Get("k", "", true, kFollower, pb::CONSISTENCY_EVENTUAL);
  ASSERT_TRUE(eventual.ok()) << eventual.status().ToString();
  EXPECT_FALSE(eventual->found());
}

}  // namespace
}  // namespace tessera::node
