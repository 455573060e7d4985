// Goal: the refresher installs only newer, valid blob slot assignments from
// a real meta.blob_slots endpoint, and keeps the map in use otherwise.
#include "blob/slot_map_refresher.h"

#include <gtest/gtest.h>

#include <mutex>

#include "blob/blob_nodes_fixture.h"

namespace tessera::blob {
namespace {

using testing::BlobNodesTest;
using testing::kSecret;
using testing::SeriesValue;
using namespace std::chrono_literals;

constexpr uint32_t kMetaId = 101;

class SlotMapRefresherTest : public BlobNodesTest {
 protected:
  void SetUp() override {
    BlobNodesTest::SetUp();
    rpc::ServerOptions options;
    options.identity = rpc::Identity{kMetaId, "meta", kSecret};
    meta_ = std::make_unique<rpc::RpcServer>(rpc::RpcContext{io_, node_registry_, node_faults_}, options);
    ASSERT_TRUE(meta_->RegisterHandler("meta.blob_slots", [this](const rpc::PeerInfo&, const pb::Envelope&,
                                                                 rpc::Responder responder) {
                       std::lock_guard lock(mu_);
                       ++calls_;
                       responder.Reply(served_.SerializeAsString());
                     }).ok());
    ASSERT_TRUE(meta_->Start().ok());
    ASSERT_TRUE(pool_->SetPeerAddress(kMetaId, "127.0.0.1", meta_->port()).ok());
  }
  void TearDown() override {
    refresher_.reset();
    if (meta_) meta_->Stop();
    BlobNodesTest::TearDown();
  }

  void Serve(uint64_t version, uint32_t slot, std::vector<uint32_t> nodes) {
    pb::BlobSlotAssignments a;
    a.set_version(version);
    pb::BlobSlotReplicas* r = a.add_slots();
    r->set_slot(slot);
    for (uint32_t n : nodes) r->add_node_ids(n);
    std::lock_guard lock(mu_);
    served_ = a;
  }

  SlotMapRefresher& Refresher() {
    if (!refresher_) {
      refresher_ = std::make_unique<SlotMapRefresher>(*pool_, std::vector<uint32_t>{kMetaId},
                                                      *client_->slot_map(), *client_,
                                                      client_registry_, 0);
    }
    return *refresher_;
  }

  std::unique_ptr<rpc::RpcServer> meta_;
  std::mutex mu_;  // guards served_, calls_
  pb::BlobSlotAssignments served_;
  int calls_ = 0;
  std::unique_ptr<SlotMapRefresher> refresher_;
};

TEST_F(SlotMapRefresherTest, InstallsNewerValidVersionsOnly) {
  // Nothing assigned yet: the layout's map stays.
  auto v = Refresher().RefreshOnce();
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(*v, 0u);
  EXPECT_EQ(client_->slot_map()->version(), 0u);

  Serve(2, 5, {3, 1, 2});
  v = Refresher().RefreshOnce();
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(*v, 2u);
  EXPECT_EQ(client_->slot_map()->version(), 2u);
  EXPECT_EQ(client_->slot_map()->ReplicasOf(5), (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_EQ(SeriesValue(client_registry_, "tessera_blob_slot_map_version"), 2u);

  // A lagging replica's older version moves nothing back.
  Serve(1, 5, {1, 2, 3});
  EXPECT_EQ(Refresher().RefreshOnce().value(), 2u);
  EXPECT_EQ(client_->slot_map()->version(), 2u);

  // An assignment naming a node the layout does not have is refused.
  Serve(3, 5, {1, 2, 99});
  EXPECT_EQ(Refresher().RefreshOnce().status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(client_->slot_map()->version(), 2u);
  EXPECT_GE(SeriesValue(client_registry_, "tessera_blob_slot_map_refresh_errors_total"), 1u);

  // No meta replica answers: an error, the map in use stays.
  meta_->Stop();
  EXPECT_FALSE(Refresher().RefreshOnce().ok());
  EXPECT_EQ(client_->slot_map()->version(), 2u);
}

TEST_F(SlotMapRefresherTest, PollsOnItsOwnThreadOncePerInterval) {
  Serve(4, 9, {1, 2, 3});
  SlotMapRefresher refresher(*pool_, {kMetaId}, *client_->slot_map(), *client_, client_registry_, 50);
  refresher.Start();
  for (int i = 0; i < 200 && client_->slot_map()->version() != 4; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(client_->slot_map()->version(), 4u);
  refresher.Stop();
  std::lock_guard lock(mu_);
  EXPECT_GE(calls_, 1);
}

}  // namespace
}  // namespace tessera::blob
