// Goal: three real `tessera node` processes replicate one partition end to
// end over the rpc transport: create the group, elect a leader, write and
// read (strong on the leader, eventual on a follower), survive kill -9 of
// the leader with writes resuming on a new one, catch the restarted node
// up, shrug off bad frames and unauthenticated peers, serve /metrics and
// /health, and exit 0 on SIGTERM.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cluster/cluster_client.h"
#include "cluster/cluster_pki.h"
#include "cluster/layout.h"
#include "rpc/rpc_test_util.h"
#include "tessera/cluster_rpc.pb.h"
#include "tessera/kv.pb.h"

namespace tessera::node {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using rpc::testing::CallSync;
using rpc::testing::kSecret;

constexpr uint64_t kGroup = 1;

// A free loopback port: bound, read back, released (a small race with other
// processes is accepted for tests). Never the same port twice in this test:
// the kernel may hand a just-released port out again.
uint16_t FreePort() {
  static std::set<uint16_t> taken;
  asio::io_context io;
  for (;;) {
    asio::ip::tcp::acceptor acceptor(io, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    const uint16_t port = acceptor.local_endpoint().port();
    if (taken.insert(port).second) return port;
  }
}

// GET over a fresh connection; the whole response (head and body).
std::string HttpGet(uint16_t port, const std::string& path) {
  asio::io_context io;
  asio::ip::tcp::socket socket(io);
  boost::system::error_code ec;
  socket.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), ec);
  if (ec) return "";
  const std::string request = "GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  asio::write(socket, asio::buffer(request), ec);
  std::string response;
  char buffer[4096];
  for (;;) {
    const size_t n = socket.read_some(asio::buffer(buffer), ec);
    response.append(buffer, n);
    if (ec) return response;
  }
}

class NodeProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/tessera-np-XXXXXX";
    dir_ = ::mkdtemp(pattern);
    std::ofstream(dir_ + "/secret") << kSecret << "\n";
    std::string layout = "name: \"test\"\nazs: [\"az1\", \"az2\", \"az3\"]\n";
    for (uint32_t id = 1; id <= 3; ++id) {
      peer_port_[id] = FreePort();
      http_port_[id] = FreePort();
      layout += "nodes { name: \"n" + std::to_string(id) + "\" az: \"az" + std::to_string(id) +
                "\" host: \"127.0.0.1\" peer_port: " + std::to_string(peer_port_[id]) +
                " http_port: " + std::to_string(http_port_[id]) + " }\n";
    }
    for (int az = 1; az <= 3; ++az) {
      layout += "meta { name: \"m" + std::to_string(az) + "\" az: \"az" + std::to_string(az) +
                "\" host: \"127.0.0.1\" peer_port: " + std::to_string(FreePort()) +
                " http_port: " + std::to_string(FreePort()) + " }\n";
    }
    layout += "routers { name: \"r1\" az: \"az1\" host: \"127.0.0.1\" kv_port: " +
              std::to_string(FreePort()) + " http_port: " + std::to_string(FreePort()) +
              " s3_port: " + std::to_string(FreePort()) + " s3_tls_port: " +
              std::to_string(FreePort()) + " }\n";
    std::ofstream(dir_ + "/layout.textproto") << layout;
    // Certificates as `tessera cluster up` issues them; the test calls as
    // the operator (admin.faults, admin.create_group are the operator's).
    auto loaded = cluster::LoadLayout(dir_ + "/layout.textproto");
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    ASSERT_TRUE(cluster::EnsureClusterPki(dir_, cluster::ProcessTable(*loaded)).ok());
    auto operator_identity = cluster::LoadIdentity(dir_, "cli", cluster::kCliPeerId, "cli");
    ASSERT_TRUE(operator_identity.ok()) << operator_identity.status().ToString();
    for (uint32_t id = 1; id <= 3; ++id) {
      StartNode(id);
      rpc::ChannelOptions options;
      options.identity = *operator_identity;
      options.host = "127.0.0.1";
      options.port = peer_port_[id];
      options.remote_peer_id = id;
      options.backoff_max_ms = 200;
      auto channel = rpc::Channel::Create(process_.context(threads_.io), options);
      ASSERT_TRUE(channel.ok());
      channels_[id] = std::move(channel).value();
    }
  }

  void TearDown() override {
    for (auto& [id, pid] : pids_) {
      if (pid > 0) ::kill(pid, SIGKILL), ::waitpid(pid, nullptr, 0);
    }
    for (auto& [id, channel] : channels_) channel->Close();
    if (::testing::Test::HasFailure()) {
      for (uint32_t id = 1; id <= 3; ++id) {
        std::ifstream log(dir_ + "/logs/n" + std::to_string(id) + ".log");
        std::string line;
        std::vector<std::string> lines;
        while (std::getline(log, line)) lines.push_back(line);
        std::cerr << "--- n" << id << " log (tail) ---\n";
        for (size_t i = lines.size() > 30 ? lines.size() - 30 : 0; i < lines.size(); ++i) {
          std::cerr << lines[i] << "\n";
        }
      }
    } else {
      std::filesystem::remove_all(dir_);
    }
  }

  void StartNode(uint32_t id) {
    const std::string name = "n" + std::to_string(id);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      const std::string err = dir_ + "/" + name + ".stderr";
      (void)!::freopen(err.c_str(), "a", stderr);
      const std::string layout = dir_ + "/layout.textproto";
      ::execl(TESSERA_BINARY, TESSERA_BINARY, "node", "--layout", layout.c_str(), "--name",
              name.c_str(), "--dir", dir_.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    pids_[id] = pid;
  }

  // Sends `signal` and waits for the exit; the exit status.
  int StopNode(uint32_t id, int signal) {
    ::kill(pids_[id], signal);
    int status = 0;
    ::waitpid(pids_[id], &status, 0);
    pids_[id] = 0;
    return status;
  }

  Result<std::string> Call(uint32_t id, const std::string& method, const std::string& payload,
                           std::chrono::milliseconds timeout = 2s) {
    return CallSync(*channels_[id], method, payload, timeout);
  }

  // Retries `method` until it succeeds or `deadline` passes.
  Result<std::string> CallUntilOk(uint32_t id, const std::string& method, const std::string& payload,
                                  std::chrono::milliseconds within = 15s) {
    const auto deadline = std::chrono::steady_clock::now() + within;
    for (;;) {
      Result<std::string> r = Call(id, method, payload);
      if (r.ok() || std::chrono::steady_clock::now() >= deadline) return r;
      std::this_thread::sleep_for(50ms);
    }
  }

  std::optional<pb::NodeStatus> NodeStatusOf(uint32_t id) {
    auto r = Call(id, "admin.status", pb::StatusRequest().SerializeAsString(), 1s);
    if (!r.ok()) return std::nullopt;
    pb::NodeStatus status;
    if (!status.ParseFromString(*r)) return std::nullopt;
    return status;
  }

  // The node among `candidates` that leads kGroup with a lease; 0 on timeout.
  uint32_t WaitForLeader(const std::vector<uint32_t>& candidates, std::chrono::milliseconds within = 15s,
                         uint64_t group = kGroup) {
    const auto deadline = std::chrono::steady_clock::now() + within;
    while (std::chrono::steady_clock::now() < deadline) {
      for (uint32_t id : candidates) {
        auto status = NodeStatusOf(id);
        if (!status) continue;
        for (const auto& g : status->groups()) {
          if (g.group_id() == group && g.role() == "leader" && g.holds_lease()) return id;
        }
      }
      std::this_thread::sleep_for(50ms);
    }
    return 0;
  }

  void CreateGroup(uint32_t id) {
    pb::CreateGroupRequest request;
    pb::PartitionDescriptor* d = request.mutable_partition();
    d->set_table("t");
    d->set_group_id(kGroup);
    d->set_end_key("x");  // every key the tests write sorts below
    for (uint32_t n = 1; n <= 3; ++n) {
      pb::ReplicaPlacement* r = d->add_replicas();
      r->set_node_id(n);
      r->set_az("az" + std::to_string(n));
    }
    auto r = CallUntilOk(id, "admin.create_group", request.SerializeAsString());
    ASSERT_TRUE(r.ok()) << "node " << id << ": " << r.status().ToString();
  }

  Result<pb::KvWriteResponse> Put(uint32_t id, const std::string& key, const std::string& value,
                                  uint64_t group = kGroup) {
    pb::KvWriteRequest request;
    request.set_group_id(group);
    pb::KvWrite* w = request.mutable_batch()->add_writes();
    w->set_key(key);
    w->set_value(value);
    auto r = Call(id, "kv.write", request.SerializeAsString(), 5s);
    if (!r.ok()) return r.status();
    pb::KvWriteResponse response;
    if (!response.ParseFromString(*r)) return Status::Corruption("bad KvWriteResponse");
    return response;
  }

  Result<pb::KvGetResponse> Get(uint32_t id, const std::string& key, pb::Consistency consistency,
                                uint64_t group = kGroup) {
    pb::KvGetRequest request;
    request.set_group_id(group);
    request.set_key(key);
    request.set_consistency(consistency);
    auto r = Call(id, "kv.get", request.SerializeAsString());
    if (!r.ok()) return r.status();
    pb::KvGetResponse response;
    if (!response.ParseFromString(*r)) return Status::Corruption("bad KvGetResponse");
    return response;
  }

  // Polls an eventual read on `id` until `key` holds `value`.
  bool WaitForValue(uint32_t id, const std::string& key, const std::string& value,
                    std::chrono::milliseconds within = 15s, uint64_t group = kGroup) {
    const auto deadline = std::chrono::steady_clock::now() + within;
    while (std::chrono::steady_clock::now() < deadline) {
      auto r = Get(id, key, pb::CONSISTENCY_EVENTUAL, group);
      if (r.ok() && r->found() && r->value() == value) return true;
      std::this_thread::sleep_for(50ms);
    }
    return false;
  }

  // Writes to whichever node leads, following NotLeader hints; the leader.
  uint32_t PutOnLeader(const std::string& key, const std::string& value, std::vector<uint32_t> alive) {
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    uint32_t target = alive.front();
    size_t next = 0;
    while (std::chrono::steady_clock::now() < deadline) {
      auto r = Put(target, key, value);
      if (r.ok() && r->result().applied()) return target;
      const uint32_t hint = r.ok() ? 0 : r.status().leader_hint();
      if (hint != 0 && std::find(alive.begin(), alive.end(), hint) != alive.end()) {
        target = hint;
      } else {
        target = alive[++next % alive.size()];
        std::this_thread::sleep_for(50ms);
      }
    }
    return 0;
  }

  std::string dir_;
  std::map<uint32_t, uint16_t> peer_port_, http_port_;
  std::map<uint32_t, pid_t> pids_;
  rpc::testing::Process process_{7};
  rpc::testing::IoThreads threads_;
  std::map<uint32_t, std::unique_ptr<rpc::Channel>> channels_;
};

TEST_F(NodeProcessTest, ReplicatesFailsOverCatchesUpAndStaysUpUnderBadInput) {
  for (uint32_t id = 1; id <= 3; ++id) CreateGroup(id);
  CreateGroup(1);  // idempotent

  const uint32_t leader = WaitForLeader({1, 2, 3});
  ASSERT_NE(leader, 0u) << "no leader elected";
  auto put = Put(leader, "k1", "v1");
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  EXPECT_TRUE(put->result().applied());
  auto strong = Get(leader, "k1", pb::CONSISTENCY_STRONG);
  ASSERT_TRUE(strong.ok()) << strong.status().ToString();
  EXPECT_TRUE(strong->found());
  EXPECT_EQ(strong->value(), "v1");
  const uint32_t follower = leader % 3 + 1;
  EXPECT_TRUE(WaitForValue(follower, "k1", "v1"));
  // The node's own threads carry names (ps, top -H, perf tell them apart).
  {
    std::set<std::string> names;
    for (const auto& task : std::filesystem::directory_iterator(
             "/proc/" + std::to_string(pids_[leader]) + "/task")) {
      std::ifstream comm(task.path() / "comm");
      std::string name;
      if (std::getline(comm, name)) names.insert(name);
    }
    for (const char* expected : {"io-0", "log-writer", "snapshot", "blob-0"}) {
      EXPECT_TRUE(names.count(expected)) << "no thread named " << expected;
    }
  }
  // A follower refuses writes with a hint naming the leader.
  auto refused = Put(follower, "k-follower", "x");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kNotLeader);
  EXPECT_EQ(refused.status().leader_hint(), leader);
  // Keys outside the group's range ["", "x") are refused before anything
  // is proposed or read, as a typed WrongPartition.
  EXPECT_EQ(Put(leader, "y", "out").status().code(), StatusCode::kWrongPartition);
  EXPECT_EQ(Get(leader, "x", pb::CONSISTENCY_STRONG).status().code(), StatusCode::kWrongPartition);
  EXPECT_EQ(Get(follower, "zz", pb::CONSISTENCY_EVENTUAL).status().code(), StatusCode::kWrongPartition);
  pb::KvScanRequest wide;
  wide.set_group_id(kGroup);
  wide.set_start_key("k");
  wide.set_limit(10);  // to the end of the key space: past the range's end
  EXPECT_EQ(Call(leader, "kv.scan", wide.SerializeAsString()).status().code(),
            StatusCode::kWrongPartition);
  wide.set_end_key("x");
  EXPECT_TRUE(Call(leader, "kv.scan", wide.SerializeAsString()).ok());
  // A group this node does not host.
  pb::KvGetRequest missing;
  missing.set_group_id(99);
  EXPECT_EQ(Call(leader, "kv.get", missing.SerializeAsString()).status().code(), StatusCode::kNotFound);

  // kill -9 the leader: the other two elect a new one and writes resume.
  EXPECT_TRUE(WIFSIGNALED(StopNode(leader, SIGKILL)));
  std::vector<uint32_t> survivors;
  for (uint32_t id = 1; id <= 3; ++id) {
    if (id != leader) survivors.push_back(id);
  }
  const uint32_t new_leader = PutOnLeader("k2", "v2", survivors);
  ASSERT_NE(new_leader, 0u) << "writes did not resume after the leader was killed";
  EXPECT_NE(new_leader, leader);

  // Restart the killed node: it re-hosts the group from its stored
  // descriptor and catches up.
  StartNode(leader);
  EXPECT_TRUE(WaitForValue(leader, "k2", "v2", 20s)) << "restarted node did not catch up";
  EXPECT_TRUE(WaitForValue(leader, "k1", "v1"));

  // Bad input (plain TCP, not even TLS) on the new leader's port leaves it
  // serving.
  {
    rpc::testing::RawClient bad_crc(peer_port_[new_leader]);
    bad_crc.Write(std::string("\x00\x00\x00\x04\xde\xad\xbe\xef" "abcd", 12));
    EXPECT_TRUE(bad_crc.WaitClosed());
  }
  {
    rpc::testing::RawClient too_large(peer_port_[new_leader]);
    too_large.Write(std::string("\x7f\xff\xff\xff\x00\x00\x00\x00", 8));
    EXPECT_TRUE(too_large.WaitClosed());
  }
  {
    rpc::testing::RawClient no_handshake(peer_port_[new_leader]);
    no_handshake.WriteEnvelope(rpc::MakeRequest(1, "admin.status", ""));
    EXPECT_TRUE(no_handshake.WaitClosed());
  }
  {
    rpc::testing::RawClient wrong_secret(peer_port_[new_leader]);
    EXPECT_FALSE(wrong_secret.Handshake("another-secret-of-enough-bytes"));
  }
  const uint32_t final_leader = PutOnLeader("k3", "v3", {1, 2, 3});
  ASSERT_NE(final_leader, 0u);
  EXPECT_TRUE(WaitForValue(new_leader, "k3", "v3"));

  // Metrics and health over HTTP.
  const std::string metrics = HttpGet(http_port_[new_leader], "/metrics");
  EXPECT_NE(metrics.find("200 OK"), std::string::npos);
  EXPECT_NE(metrics.find("tessera_group_role{group=\"1\"}"), std::string::npos) << metrics.substr(0, 2000);
  EXPECT_NE(metrics.find("tessera_group_applied_index{group=\"1\"}"), std::string::npos);
  EXPECT_NE(metrics.find("tessera_rpc_"), std::string::npos);
  // The bad input above was not TLS: refused at the TLS handshake.
  EXPECT_NE(metrics.find("reason=\"tls_handshake\""), std::string::npos) << metrics;
  const std::string health = HttpGet(http_port_[new_leader], "/health");
  EXPECT_NE(health.find("200 OK"), std::string::npos);
  EXPECT_NE(health.find("\"status\":\"ok\""), std::string::npos);

  // Fault injection through admin.faults answers the rules in force.
  pb::FaultRules rules;
  pb::PeerFault* p = rules.add_peers();
  p->set_peer_id(final_leader % 3 + 1);
  p->set_delay_ms(5);
  {
    // A router's certificate reads status but may not inject faults.
    auto router = cluster::LoadIdentity(dir_, "r1", cluster::kFirstRouterId, "router");
    ASSERT_TRUE(router.ok()) << router.status().ToString();
    rpc::ChannelOptions options;
    options.identity = *router;
    options.host = "127.0.0.1";
    options.port = peer_port_[final_leader];
    options.remote_peer_id = final_leader;
    auto channel = rpc::Channel::Create(process_.context(threads_.io), options);
    ASSERT_TRUE(channel.ok());
    EXPECT_TRUE(rpc::testing::CallSync(**channel, "admin.status",
                                       pb::StatusRequest().SerializeAsString()).ok());
    EXPECT_EQ(rpc::testing::CallSync(**channel, "admin.faults", rules.SerializeAsString()).status().code(),
              StatusCode::kPermissionDenied);
    (*channel)->Close();
  }
  auto in_force = Call(final_leader, "admin.faults", rules.SerializeAsString());
  ASSERT_TRUE(in_force.ok()) << in_force.status().ToString();
  pb::FaultRules answered;
  ASSERT_TRUE(answered.ParseFromString(*in_force));
  ASSERT_EQ(answered.peers_size(), 1);
  EXPECT_EQ(answered.peers(0).delay_ms(), 5u);
  pb::FaultRules clear;
  clear.set_replace(true);
  EXPECT_TRUE(Call(final_leader, "admin.faults", clear.SerializeAsString()).ok());

  // SIGTERM: every node exits 0.
  for (uint32_t id = 1; id <= 3; ++id) {
    const int status = StopNode(id, SIGTERM);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "node " << id << " status " << status;
  }
}

// The autoadmin's membership RPCs on real processes: a learner created with
// itself a learner joins, catches up, is promoted; a voter is removed and
// its replica dropped; every step is idempotent and fenced by the epoch,
// which a node remembers across a restart.
TEST_F(NodeProcessTest, MembershipStepsJoinALearnerAndAreFenced) {
  auto create = [&](uint32_t on, bool third_is_learner) {
    pb::CreateGroupRequest request;
    pb::PartitionDescriptor* d = request.mutable_partition();
    d->set_table("t");
    d->set_group_id(kGroup);
    for (uint32_t n = 1; n <= 3; ++n) {
      if (n == 3 && !third_is_learner) continue;
      pb::ReplicaPlacement* r = d->add_replicas();
      r->set_node_id(n);
      r->set_az("az" + std::to_string(n));
      if (n == 3) r->set_role(pb::REPLICA_LEARNER);
    }
    auto r = CallUntilOk(on, "admin.create_group", request.SerializeAsString());
    ASSERT_TRUE(r.ok()) << "node " << on << ": " << r.status().ToString();
  };
  auto change = [&](uint32_t leader, pb::MembershipChangeKind kind, uint32_t replica,
                    uint64_t epoch) -> Result<pb::ChangeMembershipResponse> {
    pb::ChangeMembershipRequest request;
    request.set_group_id(kGroup);
    request.set_kind(kind);
    request.set_replica_id(replica);
    request.set_autoadmin_epoch(epoch);
    auto r = Call(leader, "admin.change_membership", request.SerializeAsString(), 10s);
    if (!r.ok()) return r.status();
    pb::ChangeMembershipResponse response;
    EXPECT_TRUE(response.ParseFromString(*r));
    return response;
  };
  auto drop = [&](uint32_t on, uint64_t epoch) -> Result<bool> {
    pb::DropGroupRequest request;
    request.set_group_id(kGroup);
    request.set_autoadmin_epoch(epoch);
    auto r = Call(on, "admin.drop_group", request.SerializeAsString(), 10s);
    if (!r.ok()) return r.status();
    pb::DropGroupResponse response;
    EXPECT_TRUE(response.ParseFromString(*r));
    return response.dropped();
  };

  create(1, false);
  create(2, false);
  const uint32_t leader = WaitForLeader({1, 2});
  ASSERT_NE(leader, 0u);
  const uint32_t other = 3 - leader;
  ASSERT_TRUE(Put(leader, "k1", "v1").ok());
  create(3, true);  // a learner in its own bootstrap: it never campaigns

  auto added = change(leader, pb::MEMBERSHIP_ADD_LEARNER, 3, 5);
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_TRUE(added->changed());
  EXPECT_EQ(added->learners_size(), 1);
  EXPECT_TRUE(WaitForValue(3, "k1", "v1")) << "the learner caught up";
  EXPECT_EQ(change(other, pb::MEMBERSHIP_PROMOTE, 3, 5).status().code(), StatusCode::kNotLeader);
  auto promoted = change(leader, pb::MEMBERSHIP_PROMOTE, 3, 5);
  ASSERT_TRUE(promoted.ok()) << promoted.status().ToString();
  EXPECT_EQ(promoted->voters_size(), 3);
  auto again = change(leader, pb::MEMBERSHIP_PROMOTE, 3, 5);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->changed()) << "a repeated step changes nothing";
  EXPECT_EQ(change(leader, pb::MEMBERSHIP_ADD_LEARNER, 3, 5).status().code(),
            StatusCode::kInvalidArgument)
      << "a voter cannot become a learner";

  // A stale epoch is refused and changes nothing.
  EXPECT_EQ(change(leader, pb::MEMBERSHIP_REMOVE, other, 4).status().code(), StatusCode::kStaleEpoch);
  auto status = NodeStatusOf(leader);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->groups(0).voters_size(), 3);

  auto removed = change(leader, pb::MEMBERSHIP_REMOVE, other, 6);
  ASSERT_TRUE(removed.ok()) << removed.status().ToString();
  EXPECT_EQ(removed->voters_size(), 2);
  auto dropped = drop(other, 6);
  ASSERT_TRUE(dropped.ok()) << dropped.status().ToString();
  EXPECT_TRUE(*dropped);
  auto dropped_again = drop(other, 6);
  ASSERT_TRUE(dropped_again.ok());
  EXPECT_FALSE(*dropped_again);
  auto other_status = NodeStatusOf(other);
  ASSERT_TRUE(other_status.has_value());
  EXPECT_EQ(other_status->groups_size(), 0);

  // The group goes on with {leader, 3}.
  ASSERT_TRUE(Put(leader, "k2", "v2").ok());
  EXPECT_TRUE(WaitForValue(3, "k2", "v2"));

  // The highest epoch survives a restart: the dropped group stays dropped
  // and a stale epoch is still refused.
  EXPECT_EQ(StopNode(other, SIGTERM), 0);
  StartNode(other);
  auto restarted = CallUntilOk(other, "admin.status", pb::StatusRequest().SerializeAsString());
  ASSERT_TRUE(restarted.ok());
  EXPECT_EQ(drop(other, 5).status().code(), StatusCode::kStaleEpoch);
  other_status = NodeStatusOf(other);
  ASSERT_TRUE(other_status.has_value());
  EXPECT_EQ(other_status->groups_size(), 0);
}

// Leadership transfer on real processes: the leader hands over at once
// (well within one lease), the new leader serves reads and writes, a
// repeated request is harmless, a stale epoch and bad targets are refused
// and change nothing. admin.status reports the disk's synced writes.
TEST_F(NodeProcessTest, LeadershipTransferMovesTheLeaderAndIsFenced) {
  for (uint32_t id = 1; id <= 3; ++id) CreateGroup(id);
  const uint32_t leader = WaitForLeader({1, 2, 3});
  ASSERT_NE(leader, 0u);
  ASSERT_TRUE(Put(leader, "k1", "v1").ok());
  const uint32_t target = leader % 3 + 1;
  auto transfer = [&](uint32_t on, uint32_t to, uint64_t epoch) -> Result<pb::TransferLeadershipResponse> {
    pb::TransferLeadershipRequest request;
    request.set_group_id(kGroup);
    request.set_to_replica(to);
    request.set_autoadmin_epoch(epoch);
    auto r = Call(on, "admin.transfer_leadership", request.SerializeAsString(), 10s);
    if (!r.ok()) return r.status();
    pb::TransferLeadershipResponse response;
    EXPECT_TRUE(response.ParseFromString(*r));
    return response;
  };
  EXPECT_EQ(transfer(leader, 0, 5).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(transfer(leader, 9, 5).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(transfer(leader, leader, 5).status().code(), StatusCode::kInvalidArgument);
  const uint32_t third = 6 - leader - target;
  EXPECT_EQ(transfer(target, third, 5).status().code(), StatusCode::kNotLeader);
  auto known = transfer(target, leader, 5);  // a follower that knows `leader` leads
  ASSERT_TRUE(known.ok()) << known.status().ToString();
  EXPECT_TRUE(known->already_leader());

  const auto started = std::chrono::steady_clock::now();
  auto moved = transfer(leader, target, 5);
  ASSERT_TRUE(moved.ok()) << moved.status().ToString();
  EXPECT_FALSE(moved->already_leader());
  EXPECT_EQ(WaitForLeader({target}, 5s), target);
  const auto took = std::chrono::steady_clock::now() - started;
  std::cerr << "[transfer: the target leads with a lease after "
            << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms]\n";
  ASSERT_TRUE(Put(target, "k2", "v2").ok());
  auto read = Get(target, "k1", pb::CONSISTENCY_STRONG);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->value(), "v1");
  auto again = transfer(leader, target, 5);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(again->already_leader());

  // A stale epoch is refused: the leadership stays.
  EXPECT_EQ(transfer(target, leader, 4).status().code(), StatusCode::kStaleEpoch);
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(WaitForLeader({1, 2, 3}, 2s), target);

  auto status = NodeStatusOf(target);
  ASSERT_TRUE(status.has_value());
  EXPECT_GT(status->disk().sync_samples(), 0u);
  EXPECT_GT(status->disk().free_bytes(), 0u);
  EXPECT_GE(status->disk().sync_max_us(), status->disk().sync_p99_us());
}

// admin.split_group on real processes: the split entry applies on all
// three replicas and each starts the child with the right half; the child
// elects a leader and takes writes; the parent answers moved keys
// WrongPartition; a repeated request answers already_split and a stale
// epoch is refused; a follower killed -9 right after the split comes back
// with both groups and every key.
TEST_F(NodeProcessTest, SplitGroupStartsTheChildOnEveryReplica) {
  constexpr uint64_t kChild = 2;
  for (uint32_t id = 1; id <= 3; ++id) CreateGroup(id);
  const uint32_t leader = WaitForLeader({1, 2, 3});
  ASSERT_NE(leader, 0u);
  for (char c = 'a'; c <= 'j'; ++c) {
    auto put = Put(leader, std::string(1, c), std::string("v") + c);
    ASSERT_TRUE(put.ok() && put->result().applied()) << c;
  }
  auto split = [&](uint32_t on, const std::string& key, uint64_t child,
                   uint64_t epoch) -> Result<pb::SplitGroupResponse> {
    pb::SplitGroupRequest request;
    request.set_group_id(kGroup);
    request.set_split_key(key);
    request.set_child_group_id(child);
    request.set_autoadmin_epoch(epoch);
    auto r = Call(on, "admin.split_group", request.SerializeAsString(), 10s);
    if (!r.ok()) return r.status();
    pb::SplitGroupResponse response;
    EXPECT_TRUE(response.ParseFromString(*r));
    return response;
  };
  EXPECT_EQ(split(leader, "", kChild, 5).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(split(leader, "y", kChild, 5).status().code(), StatusCode::kInvalidArgument);
  auto done = split(leader, "f", kChild, 5);
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_GT(done->split_slot(), 0u);
  const uint32_t follower = leader % 3 + 1;
  EXPECT_EQ(StopNode(follower, SIGKILL), SIGKILL);
  StartNode(follower);
  auto again = split(leader, "f", kChild, 5);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(again->already_split());
  EXPECT_EQ(split(leader, "c", 3, 4).status().code(), StatusCode::kStaleEpoch);

  const uint32_t child_leader = WaitForLeader({1, 2, 3}, 15s, kChild);
  ASSERT_NE(child_leader, 0u);
  auto moved = Put(leader, "g", "new", kGroup);
  EXPECT_EQ(moved.status().code(), StatusCode::kWrongPartition);
  auto on_child = Put(child_leader, "g", "new", kChild);
  ASSERT_TRUE(on_child.ok() && on_child->result().applied()) << on_child.status().ToString();
  EXPECT_EQ(Get(leader, "h", pb::CONSISTENCY_EVENTUAL, kGroup).status().code(),
            StatusCode::kWrongPartition);
  for (uint32_t id = 1; id <= 3; ++id) {
    EXPECT_TRUE(WaitForValue(id, "a", "va", 15s, kGroup)) << id;
    EXPECT_TRUE(WaitForValue(id, "e", "ve", 15s, kGroup)) << id;
    EXPECT_TRUE(WaitForValue(id, "f", "vf", 15s, kChild)) << id;
    EXPECT_TRUE(WaitForValue(id, "j", "vj", 15s, kChild)) << id;
    EXPECT_TRUE(WaitForValue(id, "g", "new", 15s, kChild)) << id;
  }
}

}  // namespace
}  // namespace tessera::node
