// Test fixture: three real `tessera meta` processes (the binary under test,
// TESSERA_BINARY) on free loopback ports, with in-process fake storage
// nodes that acknowledge admin.create_group, and a channel pool (identity:
// a router) to call the replicas. Each test file derives its fixture from it.
//
// Contract: the derived SetUp calls StartMetas(prefix, secret) first; the
// base TearDown stops the replicas (expecting a clean exit when asked) and
// removes the directory unless the test failed or TESSERA_KEEP_TEST_DIR is
// set.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cluster/cluster_client.h"
#include "cluster/cluster_pki.h"
#include "cluster/layout.h"
#include "cluster/process_table.h"
#include "cluster/supervisor.h"
#include "rpc/channel_pool.h"
#include "rpc/rpc_test_util.h"
#include "tessera/cluster_rpc.pb.h"

namespace tessera::meta::testing {

inline const std::vector<uint32_t> kMetas = {101, 102, 103};

// A loopback port free now and not in `taken` (which it joins).
inline uint16_t FreePort(std::set<uint16_t>& taken) {
  boost::asio::io_context io;
  for (;;) {
    boost::asio::ip::tcp::acceptor a(
        io, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
    const uint16_t port = a.local_endpoint().port();
    if (taken.insert(port).second) return port;
  }
}

class MetaProcessFixture : public ::testing::Test {
 protected:
  // Appended to the layout StartMetas writes (e.g. meta_settings); set it
  // before StartMetas.
  std::string extra_layout_;

  // Writes the secret and layout (6 nodes, 3 metas, 1 router) into a fresh
  // /tmp/<prefix>-XXXXXX, starts the fake nodes and the three replicas.
  void StartMetas(const std::string& prefix, const std::string& secret) {
    std::string pattern = "/tmp/" + prefix + "-XXXXXX";
    dir_ = ::mkdtemp(pattern.data());
    std::ofstream(dir_ + "/secret") << secret << "\n";
    WriteLayout();
    table_ = std::make_unique<cluster::ProcessTable>(*cluster::LoadLayout(layout_path_));
    // Certificates as `tessera cluster up` issues them; the tests call as
    // the operator.
    ASSERT_TRUE(cluster::EnsureClusterPki(dir_, *table_).ok());
    StartFakeNodes();
    auto operator_identity = cluster::LoadIdentity(dir_, "cli", cluster::kCliPeerId, "cli");
    ASSERT_TRUE(operator_identity.ok()) << operator_identity.status().ToString();
    rpc::ChannelOptions defaults;
    defaults.identity = *operator_identity;
    defaults.backoff_max_ms = 200;
    pool_ = std::make_unique<rpc::ChannelPool>(process_.context(threads_.io), defaults);
    for (uint32_t id : kMetas) {
      auto e = table_->ById(id);
      ASSERT_TRUE(pool_->SetPeerAddress(id, e->host, static_cast<uint16_t>(e->peer_port)).ok());
    }
    supervisor_ = std::make_unique<cluster::Supervisor>(*cluster::Supervisor::Open(dir_));
    for (uint32_t id : kMetas) Launch(id);
  }

  void TearDown() override {
    if (supervisor_) {
      supervisor_->ReapExited();
      for (uint32_t id : kMetas) {
        const std::string name = table_->ById(id)->name;
        if (!supervisor_->LivePid(name).ok()) continue;
        EXPECT_TRUE(supervisor_->Stop(name, 10'000).ok());
        if (expect_clean_exit_) {
          EXPECT_NE(ReadLog(name).find("meta.exit code=0"), std::string::npos)
              << name << " did not shut down cleanly";
        }
      }
    }
    pool_.reset();
    nodes_.clear();
    if (dir_.empty()) return;
    if (HasFailure() || std::getenv("TESSERA_KEEP_TEST_DIR")) {
      std::cerr << "cluster directory kept: " << dir_ << "\n";
    } else {
      std::filesystem::remove_all(dir_);
    }
  }

  // A fake node's answer to admin.create_group (called on an io thread).
  virtual Status OnCreateGroup(uint32_t /*node_id*/, const rpc::PeerInfo& /*peer*/,
                               const pb::CreateGroupRequest& /*request*/) {
    return Status::Ok();
  }

  void Launch(uint32_t id) {
    const std::string name = table_->ById(id)->name;
    supervisor_->ReapExited();
    auto pid = supervisor_->Launch(
        {name, {TESSERA_BINARY, "meta", "--layout", layout_path_, "--name", name, "--dir", dir_}, ""});
    ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  }

  std::string ReadLog(const std::string& name) {
    std::ifstream in(dir_ + "/logs/" + name + ".log");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  template <typename Response>
  Result<Response> Call(uint32_t meta, const std::string& method, const std::string& payload,
                        std::chrono::milliseconds timeout) {
    auto channel = pool_->Get(meta);
    if (!channel.ok()) return channel.status();
    auto raw = rpc::testing::CallSync(**channel, method, payload, timeout);
    if (!raw.ok()) return raw.status();
    Response r;
    if (!r.ParseFromString(*raw)) return Status::Corruption("bad response");
    return r;
  }

  std::string dir_;
  std::string layout_path_;
  std::unique_ptr<cluster::ProcessTable> table_;
  std::unique_ptr<cluster::Supervisor> supervisor_;
  rpc::testing::Process process_{7};
  rpc::testing::IoThreads threads_;
  std::vector<std::unique_ptr<rpc::RpcServer>> nodes_;
  std::unique_ptr<rpc::ChannelPool> pool_;
  bool expect_clean_exit_ = true;  // TearDown checks each replica logged exit code 0

 private:
  void WriteLayout() {
    std::set<uint16_t> taken;
    std::ostringstream out;
    out << "name: \"test\"\nazs: [\"az1\", \"az2\", \"az3\"]\n";
    for (int az = 1; az <= 3; ++az) {
      for (int n = 1; n <= 2; ++n) {
        out << "nodes { name: \"az" << az << "-n" << n << "\" az: \"az" << az
            << "\" host: \"127.0.0.1\" peer_port: " << FreePort(taken)
            << " http_port: " << FreePort(taken) << " }\n";
      }
    }
    for (int az = 1; az <= 3; ++az) {
      out << "meta { name: \"meta-az" << az << "\" az: \"az" << az
          << "\" host: \"127.0.0.1\" peer_port: " << FreePort(taken)
          << " http_port: " << FreePort(taken) << " }\n";
    }
    out << "routers { name: \"router-1\" az: \"az1\" host: \"127.0.0.1\" kv_port: "
        << FreePort(taken) << " http_port: " << FreePort(taken) << " s3_port: " << FreePort(taken)
        << " s3_tls_port: " << FreePort(taken) << " }\n";
    out << extra_layout_;
    layout_path_ = dir_ + "/layout.textproto";
    std::ofstream(layout_path_) << out.str();
  }

  void StartFakeNodes() {
    for (const auto& e : table_->OfRole(cluster::ProcessRole::kNode)) {
      rpc::ServerOptions o;
      auto identity = cluster::LoadIdentity(dir_, e.name, e.id, "node");
      ASSERT_TRUE(identity.ok()) << identity.status().ToString();
      o.identity = *identity;
      o.port = static_cast<uint16_t>(e.peer_port);
      auto server = std::make_unique<rpc::RpcServer>(process_.context(threads_.io), o);
      const uint32_t id = e.id;
      auto handler = [this, id](const rpc::PeerInfo& peer, const pb::Envelope& request,
                                rpc::Responder responder) {
        pb::CreateGroupRequest r;
        if (!r.ParseFromString(request.payload())) {
          ADD_FAILURE() << "bad CreateGroupRequest";
          return responder.Fail(Status::InvalidArgument("bad CreateGroupRequest"));
        }
        const Status answer = OnCreateGroup(id, peer, r);
        if (!answer.ok()) return responder.Fail(answer);
        responder.Reply(pb::CreateGroupResponse().SerializeAsString());
      };
      ASSERT_TRUE(server->RegisterHandler("admin.create_group", handler).ok());
      ASSERT_TRUE(server->Start().ok());
      nodes_.push_back(std::move(server));
    }
  }
};

}  // namespace tessera::meta::testing
