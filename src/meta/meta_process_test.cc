// Goal: three real `tessera meta` processes form the meta group, create
// tables (in-process fake storage nodes acknowledge admin.create_group),
// answer lookups from memory on EVERY replica including followers, survive
// kill -9 of the leader, and a restarted replica serves the new map after
// catching up.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <boost/asio/ip/tcp.hpp>
#include <csignal>
#include <filesystem>
#include <functional>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "cluster/cluster_pki.h"
#include "common/fault_clock.h"
#include "common/limits.h"
#include "meta/meta_process_fixture.h"
#include "rpc/rpc_test_util.h"
#include "tessera/cluster_rpc.pb.h"

namespace tessera::meta {
namespace {

using namespace std::chrono_literals;
using rpc::testing::CallSync;
using rpc::testing::WaitFor;

const std::string kSecret = "meta-process-test-secret-0123456789";
using testing::kMetas;

// A blocking HTTP/1.1 GET; the whole response (status line, headers, body).
std::string HttpGet(uint16_t port, const std::string& path) {
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket socket(io);
  boost::system::error_code ec;
  socket.connect({boost::asio::ip::make_address("127.0.0.1"), port}, ec);
  if (ec) return "";
  const std::string request =
      "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  boost::asio::write(socket, boost::asio::buffer(request), ec);
  std::string response;
  char buf[4096];
  for (;;) {
    const size_t n = socket.read_some(boost::asio::buffer(buf), ec);
    response.append(buf, n);
    if (ec) break;
  }
  return response;
}

class MetaProcessTest : public testing::MetaProcessFixture {
 protected:
  void SetUp() override { StartMetas("tessera-meta", kSecret); }

  // Node 1 refuses its first two calls, to exercise the retries.
  Status OnCreateGroup(uint32_t node_id, const rpc::PeerInfo& peer,
                       const pb::CreateGroupRequest& request) override {
    EXPECT_EQ(peer.role, "meta");
    std::lock_guard lock(mu_);
    if (node_id == 1 && refusals_left_ > 0) {
      --refusals_left_;
      return Status::Unavailable("warming up");
    }
    groups_[node_id].insert(request.partition().group_id());
    return Status::Ok();
  }

  template <typename Response>
  Result<Response> Call(uint32_t meta, const std::string& method, const std::string& payload,
                        std::chrono::milliseconds timeout = 2s) {
    return MetaProcessFixture::Call<Response>(meta, method, payload, timeout);
  }

  Result<pb::LookupResponse> Lookup(uint32_t meta, const std::string& table,
                                    const std::string& key) {
    pb::LookupRequest r;
    r.set_table(table);
    r.set_key(key);
    return Call<pb::LookupResponse>(meta, "meta.lookup", r.SerializeAsString());
  }

  // Retries across `metas` (any replica forwards to the leader) until OK
  // or a non-retryable answer.
  Result<pb::CreateTableResponse> CreateTable(const pb::CreateTableRequest& request,
                                              const std::vector<uint32_t>& metas) {
    Status last = Status::Timeout("never tried");
    const auto deadline = std::chrono::steady_clock::now() + 25s;
    for (size_t i = 0; std::chrono::steady_clock::now() < deadline; ++i) {
      auto r = Call<pb::CreateTableResponse>(metas[i % metas.size()], "meta.create_table",
                                             request.SerializeAsString(), 25s);
      if (r.ok() || r.status().code() == StatusCode::kConflict ||
          r.status().code() == StatusCode::kInvalidArgument) {
        return r;
      }
      last = r.status();
      std::this_thread::sleep_for(100ms);
    }
    return last;
  }

  // The replica holding the lease, among `metas`; 0 if none within 15 s.
  uint32_t WaitForLeader(const std::vector<uint32_t>& metas) {
    uint32_t leader = 0;
    WaitFor(
        [&] {
          for (uint32_t id : metas) {
            auto s = Call<pb::NodeStatus>(id, "admin.status", "", 500ms);
            if (s.ok() && s->groups(0).role() == "leader" && s->groups(0).holds_lease()) {
              leader = id;
              return true;
            }
          }
          return false;
        },
        15s);
    return leader;
  }

  // Every key's lookup on `meta` lands in the partition `expected` says.
  void ExpectServes(uint32_t meta, const pb::CreateTableResponse& expected,
                    const std::vector<std::string>& keys) {
    const std::string& table = expected.table().name();
    ASSERT_TRUE(WaitFor([&] { return Lookup(meta, table, keys.front()).ok(); }, 15s))
        << "meta " << meta << " never served table " << table;
    for (const std::string& key : keys) {
      auto r = Lookup(meta, table, key);
      ASSERT_TRUE(r.ok()) << "meta " << meta << ": " << r.status().ToString();
      const pb::PartitionDescriptor& p = r->partition();
      EXPECT_LE(p.start_key(), key);
      EXPECT_TRUE(p.end_key().empty() || key < p.end_key());
      bool known = false;
      for (const auto& d : expected.partitions()) {
        known |= d.SerializeAsString() == p.SerializeAsString();
      }
      EXPECT_TRUE(known) << "meta " << meta << " served an unknown descriptor";
      EXPECT_GT(r->map_version(), 0u);
    }
  }

  std::mutex mu_;  // guards groups_, refusals_left_
  std::map<uint32_t, std::set<uint64_t>> groups_;
  int refusals_left_ = 2;
};

TEST_F(MetaProcessTest, CreateLookupFailoverAndCatchUp) {
  // 1. Create a table of four even partitions through any replica.
  pb::CreateTableRequest users;
  users.set_name("users");
  users.set_partitions(4);
  auto created = CreateTable(users, kMetas);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  ASSERT_EQ(created->partitions_size(), 4);
  std::map<uint32_t, int> per_node;
  for (const auto& p : created->partitions()) {
    ASSERT_EQ(p.replicas_size(), 3);
    std::set<std::string> azs;
    for (const auto& r : p.replicas()) {
      azs.insert(r.az());
      ++per_node[r.node_id()];
      std::lock_guard lock(mu_);
      EXPECT_TRUE(groups_[r.node_id()].count(p.group_id()))
          << "node " << r.node_id() << " never acknowledged group " << p.group_id();
    }
    EXPECT_EQ(azs.size(), 3u);
  }
  for (uint32_t node = 1; node <= 6; ++node) EXPECT_EQ(per_node[node], 2) << "node " << node;

  // 2. Every replica, leader or follower, serves lookups from memory.
  const std::vector<std::string> keys = {"", "\x01", std::string("\x3f\xff", 2), "\x40",
                                         "\x7f", "\x80", "\xbf\xff\xff", "\xc0",
                                         std::string(8, '\xff')};
  for (uint32_t id : kMetas) {
    ExpectServes(id, *created, keys);
    EXPECT_EQ(Lookup(id, "nope", "k").status().code(), StatusCode::kNotFound);
  }
  EXPECT_EQ(Lookup(101, "users", "\x40")->partition().group_id(),
            created->partitions(1).group_id());

  // A batch answers each lookup in order, a failure only for its own.
  pb::LookupBatchRequest batch;
  for (const std::string& key : keys) {
    pb::LookupRequest* one = batch.add_lookups();
    one->set_table("users");
    one->set_key(key);
  }
  batch.add_lookups()->set_table("nope");
  auto answered = Call<pb::LookupBatchResponse>(102, "meta.lookup_batch", batch.SerializeAsString());
  ASSERT_TRUE(answered.ok()) << answered.status().ToString();
  ASSERT_EQ(answered->results_size(), static_cast<int>(keys.size()) + 1);
  for (size_t i = 0; i < keys.size(); ++i) {
    const pb::LookupResult& result = answered->results(static_cast<int>(i));
    EXPECT_EQ(result.status_code(), 0u) << i;
    EXPECT_EQ(result.partition().group_id(), Lookup(102, "users", keys[i])->partition().group_id())
        << i;
  }
  EXPECT_EQ(answered->results(static_cast<int>(keys.size())).status_code(),
            static_cast<uint32_t>(StatusCode::kNotFound));
  pb::LookupBatchRequest too_many;
  for (size_t i = 0; i <= limits::kMetaLookupBatchMax; ++i) *too_many.add_lookups() = batch.lookups(0);
  EXPECT_EQ(Call<pb::LookupBatchResponse>(102, "meta.lookup_batch", too_many.SerializeAsString())
                .status()
                .code(),
            StatusCode::kInvalidArgument);

  // Lookups are counted for the router's MemDS request rate.
  const uint16_t http_port = static_cast<uint16_t>(table_->ById(102)->http_port);
  EXPECT_NE(HttpGet(http_port, "/health").find("200 OK"), std::string::npos);
  const std::string metrics = HttpGet(http_port, "/metrics");
  const size_t at = metrics.find("\ntessera_meta_lookups_total ");
  ASSERT_NE(at, std::string::npos) << metrics;
  EXPECT_GE(std::stoull(metrics.substr(at + 28)), keys.size());

  // 3. Creating it again is idempotent; another spec is a conflict.
  auto again = CreateTable(users, {103});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->SerializeAsString(), created->SerializeAsString());
  pb::CreateTableRequest other = users;
  other.set_partitions(2);
  EXPECT_EQ(CreateTable(other, {102}).status().code(), StatusCode::kConflict);

  // 4. kill -9 the leader; the others elect a new one and create a table.
  const uint32_t leader = WaitForLeader(kMetas);
  ASSERT_NE(leader, 0u);
  const std::string leader_name = table_->ById(leader)->name;
  ASSERT_TRUE(supervisor_->Signal(leader_name, SIGKILL).ok());
  std::vector<uint32_t> survivors;
  for (uint32_t id : kMetas) {
    if (id != leader) survivors.push_back(id);
  }
  const uint32_t new_leader = WaitForLeader(survivors);
  ASSERT_NE(new_leader, 0u);
  pb::CreateTableRequest orders;
  orders.set_name("orders");
  orders.add_split_points("m");
  auto created2 = CreateTable(orders, survivors);
  ASSERT_TRUE(created2.ok()) << created2.status().ToString();
  ASSERT_EQ(created2->partitions_size(), 2);
  EXPECT_GT(created2->partitions(0).group_id(), created->partitions(3).group_id());
  for (uint32_t id : survivors) ExpectServes(id, *created2, {"", "a", "m", "zz"});

  // 5. The killed replica restarts, catches up and serves the new map.
  Launch(leader);
  ExpectServes(leader, *created2, {"", "l", "m", "\xff"});
  ExpectServes(leader, *created, keys);
  auto tables = Call<pb::TablesResponse>(leader, "meta.tables", "");
  ASSERT_TRUE(tables.ok());
  EXPECT_EQ(tables->tables_size(), 2);
  EXPECT_EQ(tables->partitions_size(), 6);
}


// The autoadmin's blob slot moves: fenced by the lease epoch, conditioned on
// the version read, validated, and served by every replica from memory.
class BlobSlotsTest : public MetaProcessTest {
 protected:
  void SetUp() override {
    std::set<uint16_t> taken;
    extra_layout_ = "autoadmin { name: \"autoadmin-az1\" az: \"az1\" host: \"127.0.0.1\" http_port: " +
                    std::to_string(testing::FreePort(taken)) + " }\n";
    StartMetas("tessera-blob-slots", kSecret);
    const auto entry = table_->OfRole(cluster::ProcessRole::kAutoadmin).front();
    auto identity = cluster::LoadIdentity(dir_, entry.name, entry.id, "autoadmin");
    ASSERT_TRUE(identity.ok()) << identity.status().ToString();
    rpc::ChannelOptions options;
    options.identity = *identity;
    options.backoff_max_ms = 200;
    autoadmin_pool_ = std::make_unique<rpc::ChannelPool>(process_.context(threads_.io), options);
    for (uint32_t id : kMetas) {
      auto e = table_->ById(id);
      ASSERT_TRUE(autoadmin_pool_->SetPeerAddress(id, e->host, static_cast<uint16_t>(e->peer_port)).ok());
    }
    autoadmin_id_ = entry.id;
  }
  void TearDown() override {
    autoadmin_pool_.reset();
    MetaProcessTest::TearDown();
  }

  // `method` as the autoadmin, on any replica (followers forward), retried
  // while the group elects.
  template <typename Response>
  Result<Response> AsAutoadmin(const std::string& method, const std::string& payload) {
    Result<Response> last = Status::Timeout("never tried");
    for (int attempt = 0; attempt < 100; ++attempt) {
      auto channel = autoadmin_pool_->Get(kMetas[attempt % kMetas.size()]);
      if (!channel.ok()) return channel.status();
      auto raw = CallSync(**channel, method, payload, 5s);
      if (raw.ok()) {
        Response r;
        if (!r.ParseFromString(*raw)) return Status::Corruption("bad response");
        return r;
      }
      last = raw.status();
      const StatusCode c = raw.status().code();
      if (c != StatusCode::kUnavailable && c != StatusCode::kNotLeader && c != StatusCode::kTimeout) {
        return last;
      }
      std::this_thread::sleep_for(100ms);
    }
    return last;
  }

  static pb::UpdateBlobSlotsRequest Move(uint64_t epoch, uint64_t expected, uint32_t slot,
                                         std::vector<uint32_t> nodes) {
    pb::UpdateBlobSlotsRequest r;
    r.set_autoadmin_epoch(epoch);
    r.set_expected_version(expected);
    pb::BlobSlotReplicas* s = r.add_slots();
    s->set_slot(slot);
    for (uint32_t n : nodes) s->add_node_ids(n);
    return r;
  }

  std::unique_ptr<rpc::ChannelPool> autoadmin_pool_;
  uint32_t autoadmin_id_ = 0;
};

TEST_F(BlobSlotsTest, MovesAreFencedVersionedAndServedByEveryReplica) {
  pb::AutoadminLeaseRequest lease_request;
  lease_request.set_holder(autoadmin_id_);
  lease_request.set_duration_ms(10'000);
  auto lease = AsAutoadmin<pb::AutoadminLeaseResponse>("meta.autoadmin_lease",
                                                       lease_request.SerializeAsString());
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  ASSERT_TRUE(lease->granted());
  const uint64_t epoch = lease->lease().epoch();

  // Nothing written yet: version 0 everywhere.
  for (uint32_t id : kMetas) {
    auto slots = Call<pb::BlobSlotAssignments>(id, "meta.blob_slots", "");
    ASSERT_TRUE(slots.ok()) << slots.status().ToString();
    EXPECT_EQ(slots->version(), 0u);
  }
  // Bad input and a stale epoch change nothing.
  struct Refused {
    pb::UpdateBlobSlotsRequest request;
    StatusCode code;
  };
  const Refused refused[] = {
      {Move(epoch, 0, limits::kBlobSlots, {1, 3, 5}), StatusCode::kInvalidArgument},
      {Move(epoch, 0, 7, {1, 1, 5}), StatusCode::kInvalidArgument},
      {Move(epoch, 0, 7, {1, 3, 999}), StatusCode::kInvalidArgument},
      {Move(epoch, 0, 7, {}), StatusCode::kInvalidArgument},
      {pb::UpdateBlobSlotsRequest(), StatusCode::kInvalidArgument},
      {Move(epoch + 1, 0, 7, {1, 3, 5}), StatusCode::kStaleEpoch},
      {Move(epoch, 4, 7, {1, 3, 5}), StatusCode::kConflict},
  };
  for (const Refused& r : refused) {
    auto answer = AsAutoadmin<pb::BlobSlotAssignments>("meta.update_blob_slots",
                                                       r.request.SerializeAsString());
    EXPECT_EQ(answer.status().code(), r.code) << r.request.ShortDebugString() << ": "
                                              << answer.status().ToString();
  }
  // The operator may not move slots.
  auto as_cli = Call<pb::BlobSlotAssignments>(kMetas[0], "meta.update_blob_slots",
                                              Move(epoch, 0, 7, {1, 3, 5}).SerializeAsString());
  EXPECT_EQ(as_cli.status().code(), StatusCode::kPermissionDenied);

  auto first = AsAutoadmin<pb::BlobSlotAssignments>("meta.update_blob_slots",
                                                    Move(epoch, 0, 7, {1, 3, 5}).SerializeAsString());
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->version(), 1u);
  // A second move keeps the first; the same expected version again conflicts.
  auto second = AsAutoadmin<pb::BlobSlotAssignments>("meta.update_blob_slots",
                                                     Move(epoch, 1, 9, {2, 4, 6}).SerializeAsString());
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->version(), 2u);
  ASSERT_EQ(second->slots_size(), 2);
  EXPECT_EQ(second->slots(0).slot(), 7u);
  EXPECT_EQ(second->slots(1).slot(), 9u);
  auto again = AsAutoadmin<pb::BlobSlotAssignments>("meta.update_blob_slots",
                                                    Move(epoch, 1, 9, {1, 4, 6}).SerializeAsString());
  EXPECT_EQ(again.status().code(), StatusCode::kConflict);
  for (uint32_t id : kMetas) {
    EXPECT_TRUE(WaitFor(
        [&] {
          auto slots = Call<pb::BlobSlotAssignments>(id, "meta.blob_slots", "");
          return slots.ok() && slots->SerializeAsString() == second->SerializeAsString();
        },
        10s))
        << "meta " << id << " does not serve version 2";
  }
}

// Goal: the autoadmin's placement weights are validated, fenced by the
// lease epoch, refused to the operator, and stored sorted with the
// leader's clock.
TEST_F(BlobSlotsTest, PlacementWeightsAreValidatedAndFenced) {
  pb::AutoadminLeaseRequest lease_request;
  lease_request.set_holder(autoadmin_id_);
  lease_request.set_duration_ms(10'000);
  auto lease = AsAutoadmin<pb::AutoadminLeaseResponse>("meta.autoadmin_lease",
                                                       lease_request.SerializeAsString());
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  ASSERT_TRUE(lease->granted());
  const uint64_t epoch = lease->lease().epoch();
  auto weights = [](uint64_t e, std::vector<std::pair<uint64_t, uint64_t>> groups) {
    pb::SetPlacementWeightsRequest r;
    r.set_autoadmin_epoch(e);
    for (const auto& [group, keys] : groups) {
      pb::PartitionKeys* p = r.add_partitions();
      p->set_group_id(group);
      p->set_keys(keys);
    }
    return r.SerializeAsString();
  };
  struct Refused {
    std::string request;
    StatusCode code;
  };
  const Refused refused[] = {
      {weights(epoch, {}), StatusCode::kInvalidArgument},
      {weights(epoch, {{0, 5}}), StatusCode::kInvalidArgument},
      {weights(epoch, {{1001, 5}, {1001, 6}}), StatusCode::kInvalidArgument},
      {weights(epoch + 1, {{1001, 5}}), StatusCode::kStaleEpoch},
  };
  for (const Refused& r : refused) {
    auto answer = AsAutoadmin<pb::PlacementWeights>("meta.set_placement_weights", r.request);
    EXPECT_EQ(answer.status().code(), r.code) << answer.status().ToString();
  }
  auto as_cli = Call<pb::PlacementWeights>(kMetas[0], "meta.set_placement_weights",
                                           weights(epoch, {{1001, 5}}));
  EXPECT_EQ(as_cli.status().code(), StatusCode::kPermissionDenied);
  const int64_t before_ms = fault_clock::WallNowMs();
  auto written = AsAutoadmin<pb::PlacementWeights>("meta.set_placement_weights",
                                                   weights(epoch, {{1002, 70}, {1001, 5}}));
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  ASSERT_EQ(written->partitions_size(), 2);
  EXPECT_EQ(written->partitions(0).group_id(), 1001u);
  EXPECT_EQ(written->partitions(1).keys(), 70u);
  EXPECT_EQ(written->autoadmin_epoch(), epoch);
  EXPECT_GE(static_cast<int64_t>(written->written_unix_ms()), before_ms - 5'000);
  // A second publication replaces the first.
  auto again = AsAutoadmin<pb::PlacementWeights>("meta.set_placement_weights", weights(epoch, {{1001, 9}}));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->partitions_size(), 1);
}

}  // namespace
}  // namespace tessera::meta

namespace tessera::meta {
namespace {

// Partition splits in meta's map: reserve allocates the child's id and
// records the intent, commit replaces the parent by both halves in one
// step, both idempotent and fenced; every replica then serves the halves.
class PartitionSplitTest : public BlobSlotsTest {
 protected:
  Result<pb::SplitPartitionResponse> Split(const pb::SplitPartitionRequest& r) {
    return AsAutoadmin<pb::SplitPartitionResponse>("meta.split_partition", r.SerializeAsString());
  }
  // Whether meta replica `id` soon answers group `group` for `key`.
  bool Serves(uint32_t id, const std::string& key, uint64_t group) {
    return WaitFor(
        [&] {
          auto found = Lookup(id, "grow", key);
          return found.ok() && found->partition().group_id() == group;
        },
        10s);
  }
};

TEST_F(PartitionSplitTest, ReserveCommitIdempotentFencedAndServed) {
  pb::AutoadminLeaseRequest lease_request;
  lease_request.set_holder(autoadmin_id_);
  lease_request.set_duration_ms(10'000);
  auto lease = AsAutoadmin<pb::AutoadminLeaseResponse>("meta.autoadmin_lease",
                                                       lease_request.SerializeAsString());
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  const uint64_t epoch = lease->lease().epoch();
  pb::CreateTableRequest create;
  create.set_name("grow");
  create.set_partitions(2);
  auto created = CreateTable(create, kMetas);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  const pb::PartitionDescriptor parent = created->partitions(0);  // ["", "\x80")

  pb::SplitPartitionRequest reserve;
  reserve.set_autoadmin_epoch(epoch);
  reserve.set_table("grow");
  reserve.set_parent_group_id(parent.group_id());
  reserve.set_parent_epoch(parent.epoch());
  reserve.set_parent_start_key(parent.start_key());
  reserve.set_split_key("\x40");
  // Refused: a key outside the range, a stale parent epoch, a stale lease.
  for (auto [mutate, code] :
       std::vector<std::pair<std::function<void(pb::SplitPartitionRequest&)>, StatusCode>>{
           {[](auto& r) { r.set_split_key("\x90"); }, StatusCode::kInvalidArgument},
           {[](auto& r) { r.set_split_key(""); }, StatusCode::kInvalidArgument},
           {[](auto& r) { r.set_parent_epoch(r.parent_epoch() + 1); }, StatusCode::kConflict},
           {[](auto& r) { r.set_autoadmin_epoch(r.autoadmin_epoch() + 1); }, StatusCode::kStaleEpoch},
           {[](auto& r) { r.set_parent_group_id(r.parent_group_id() + 1); }, StatusCode::kNotFound},
       }) {
    pb::SplitPartitionRequest bad = reserve;
    mutate(bad);
    EXPECT_EQ(Split(bad).status().code(), code) << bad.ShortDebugString();
  }
  auto reserved = Split(reserve);
  ASSERT_TRUE(reserved.ok()) << reserved.status().ToString();
  const uint64_t child_id = reserved->child().group_id();
  EXPECT_NE(child_id, parent.group_id());
  EXPECT_NE(child_id, created->partitions(1).group_id());
  EXPECT_EQ(reserved->child().start_key(), "\x40");
  EXPECT_EQ(reserved->child().end_key(), parent.end_key());
  EXPECT_EQ(reserved->child().epoch(), parent.epoch() + 1);
  auto again = Split(reserve);  // idempotent: the same child
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->child().group_id(), child_id);
  pb::SplitPartitionRequest other = reserve;
  other.set_split_key("\x20");
  EXPECT_EQ(Split(other).status().code(), StatusCode::kConflict);  // one split at a time
  // Until the commit, lookups still name the parent.
  EXPECT_TRUE(Serves(kMetas[0], "\x50", parent.group_id()));

  pb::SplitPartitionRequest commit = reserve;
  commit.set_child_group_id(child_id);
  auto done = Split(commit);
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(done->parent().end_key(), "\x40");
  EXPECT_EQ(done->parent().epoch(), parent.epoch() + 1);
  EXPECT_EQ(done->child().group_id(), child_id);
  EXPECT_EQ(done->child().replicas_size(), parent.replicas_size());
  auto done_again = Split(commit);  // a retried commit answers the same
  ASSERT_TRUE(done_again.ok()) << done_again.status().ToString();
  EXPECT_EQ(done_again->SerializeAsString(), done->SerializeAsString());
  for (uint32_t id : kMetas) {
    EXPECT_TRUE(WaitFor(
        [&] {
          auto low = Lookup(id, "grow", "\x3f");
          auto high = Lookup(id, "grow", "\x40");
          auto last = Lookup(id, "grow", "\x7f");
          return low.ok() && high.ok() && last.ok() &&
                 low->partition().group_id() == parent.group_id() &&
                 low->partition().epoch() == parent.epoch() + 1 &&
                 high->partition().group_id() == child_id && last->partition().group_id() == child_id;
        },
        10s))
        << "meta " << id << " does not serve both halves";
  }
  // A reserve then abandon leaves the map as it was.
  pb::SplitPartitionRequest second = reserve;
  second.set_parent_epoch(parent.epoch() + 1);
  second.set_split_key("\x10");
  auto second_reserved = Split(second);
  ASSERT_TRUE(second_reserved.ok()) << second_reserved.status().ToString();
  second.set_abandon(true);
  ASSERT_TRUE(Split(second).ok());
  second.set_abandon(false);
  second.set_child_group_id(second_reserved->child().group_id());
  EXPECT_EQ(Split(second).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Serves(kMetas[0], "\x10", parent.group_id()));
}

// Requested splits (`tessera kv partition split`): meta checks them, keeps
// one per partition, lists them with the intents, and the reserve (or an
// abandon) deletes them.
TEST_F(PartitionSplitTest, RequestsAreCheckedListedAndTakenByTheReserve) {
  pb::AutoadminLeaseRequest lease_request;
  lease_request.set_holder(autoadmin_id_);
  lease_request.set_duration_ms(10'000);
  auto lease = AsAutoadmin<pb::AutoadminLeaseResponse>("meta.autoadmin_lease",
                                                       lease_request.SerializeAsString());
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  pb::CreateTableRequest create;
  create.set_name("asked");
  create.set_partitions(2);
  auto created = CreateTable(create, kMetas);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  const pb::PartitionDescriptor low = created->partitions(0);   // ["", "\x80")
  const pb::PartitionDescriptor high = created->partitions(1);  // ["\x80", "")
  ASSERT_TRUE(WaitFor([&] { return Lookup(kMetas[0], "asked", "").ok(); }, 10s));
  auto ask = [&](const std::string& table, const std::string& key, bool auto_key) {
    pb::RequestSplitRequest r;
    r.set_table(table);
    r.set_key(key);
    r.set_auto_key(auto_key);
    return Call<pb::SplitRequestRecord>(kMetas[0], "meta.request_split", r.SerializeAsString(), 10s);
  };
  EXPECT_EQ(ask("nosuch", "a", false).status().code(), StatusCode::kInvalidArgument);
  // `_s3` splits only between objects: not inside the records of key "k".
  EXPECT_EQ(ask("_s3", std::string("\0\0\0\0\0\0\0\x05k\0\x01", 11), false).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ask("asked", "\x80", false).status().code(), StatusCode::kInvalidArgument);  // a start
  EXPECT_EQ(ask("asked", "", false).status().code(), StatusCode::kInvalidArgument);
  auto first = ask("asked", "\x40", false);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->group_id(), low.group_id());
  EXPECT_EQ(first->split_key(), "\x40");
  auto again = ask("asked", "\x40", false);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->SerializeAsString(), first->SerializeAsString());
  EXPECT_EQ(ask("asked", "\x20", false).status().code(), StatusCode::kConflict);
  auto chosen = ask("asked", "\x90", true);
  ASSERT_TRUE(chosen.ok()) << chosen.status().ToString();
  EXPECT_EQ(chosen->group_id(), high.group_id());
  EXPECT_TRUE(chosen->split_key().empty());
  auto listed = AsAutoadmin<pb::SplitsResponse>("meta.splits", "");
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  EXPECT_EQ(listed->requests_size(), 2);
  EXPECT_EQ(listed->intents_size(), 0);

  pb::SplitPartitionRequest reserve;
  reserve.set_autoadmin_epoch(lease->lease().epoch());
  reserve.set_table("asked");
  reserve.set_parent_group_id(low.group_id());
  reserve.set_parent_epoch(low.epoch());
  reserve.set_parent_start_key(low.start_key());
  reserve.set_split_key("\x40");
  ASSERT_TRUE(Split(reserve).ok());
  EXPECT_EQ(ask("asked", "\x40", false).status().code(), StatusCode::kConflict);  // in progress
  pb::SplitPartitionRequest drop;
  drop.set_autoadmin_epoch(lease->lease().epoch());
  drop.set_table("asked");
  drop.set_parent_group_id(high.group_id());
  drop.set_parent_start_key(high.start_key());
  drop.set_abandon(true);
  ASSERT_TRUE(Split(drop).ok());
  listed = AsAutoadmin<pb::SplitsResponse>("meta.splits", "");
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  EXPECT_EQ(listed->requests_size(), 0);
  ASSERT_EQ(listed->intents_size(), 1);
  EXPECT_EQ(listed->intents(0).parent().group_id(), low.group_id());
}

}  // namespace
}  // namespace tessera::meta
