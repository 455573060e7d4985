// Goal: with TLS credentials, the transport speaks TLS 1.3 with
// certificates both ways: calls of every size round-trip (large payloads
// still arrive as views of their receive buffer); the server sees the role
// and id the caller's certificate names; a certificate of another CA, a
// plain TCP peer, and a Hello that claims another identity than the
// certificate are refused and counted; an access policy refuses a role the
// method does not allow, with PermissionDenied, and a method without a rule
// cannot be registered.
#include <gtest/gtest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>
#include <filesystem>

#include "common/crc32c.h"
#include "pki/certificates.h"
#include "rpc/auth.h"
#include "rpc/envelope.h"
#include "rpc/frame.h"
#include "rpc/rpc_test_util.h"
#include "rpc/tls.h"

namespace tessera::rpc::testing {
namespace {

// A cluster CA, and a certificate per (role, id) issued on demand.
class TestPki {
 public:
  explicit TestPki(const std::string& name) {
    dir_ = std::filesystem::temp_directory_path() /
           ("tessera_rpc_tls_" + std::to_string(::getpid()) + "_" + name);
    std::filesystem::create_directories(dir_);
    ca_ = {(dir_ / "ca.pem").string(), (dir_ / "ca.key").string()};
    EXPECT_TRUE(pki::GenerateAuthority(ca_, "test cluster CA", 2).ok());
  }
  ~TestPki() { std::filesystem::remove_all(dir_); }

  std::shared_ptr<const TlsCredentials> For(const std::string& role, uint32_t id) {
    const std::string stem = (dir_ / (role + "-" + std::to_string(id))).string();
    const pki::KeyPairFiles files{stem + ".pem", stem + ".key"};
    pki::CertificateSpec spec;
    spec.organizational_unit = role;
    spec.common_name = std::to_string(id);
    spec.ip_addresses = {"127.0.0.1"};
    spec.client_auth = true;
    EXPECT_TRUE(pki::Issue(ca_, files, spec, 2).ok());
    auto loaded = TlsCredentials::Load(ca_.cert_path, files.cert_path, files.key_path);
    EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
    return loaded.ok() ? *loaded : nullptr;
  }
  Identity IdentityFor(const std::string& role, uint32_t id) {
    Identity identity = MakeIdentity(id, role);
    identity.tls = For(role, id);
    return identity;
  }
  const pki::KeyPairFiles& ca() const { return ca_; }

 private:
  std::filesystem::path dir_;
  pki::KeyPairFiles ca_;
};

class RpcTlsTest : public RpcTest {
 protected:
  std::unique_ptr<RpcServer> StartTlsServer(const std::vector<std::pair<std::string, Handler>>& handlers,
                                            std::shared_ptr<const AccessPolicy> access = nullptr) {
    ServerOptions options;
    options.identity = pki_.IdentityFor("node", 1);
    options.access = std::move(access);
    return StartServer(1, handlers, 0, options);
  }
  std::unique_ptr<Channel> TlsChannel(const std::string& role, uint32_t id, uint16_t port) {
    ChannelOptions options;
    options.identity = pki_.IdentityFor(role, id);
    options.connect_timeout_ms = 2000;
    return MakeChannel(id, port, 1, options);
  }
  static Handler WhoAmI() {
    return [](const PeerInfo& peer, const pb::Envelope&, Responder responder) {
      responder.Reply(peer.role + "/" + std::to_string(peer.peer_id));
    };
  }
  const RpcMetrics server_metrics{process.registry, "server"};
  TestPki pki_{::testing::UnitTest::GetInstance()->current_test_info()->name()};
};

TEST_F(RpcTlsTest, CallsOfEverySizeRoundTripAndTheCertificateNamesTheCaller) {
  auto server = StartTlsServer({{"echo", Echo()}, {"whoami", WhoAmI()}});
  auto channel = TlsChannel("router", 100, server->port());
  EXPECT_EQ(*CallSync(*channel, "whoami", ""), "router/100");
  for (size_t size : {size_t{0}, size_t{1}, size_t{70'000}, size_t{300'000}, size_t{4 << 20}}) {
    std::string payload(size, '\0');
    for (size_t i = 0; i < size; ++i) payload[i] = static_cast<char>(i * 131 + size);
    Result<std::string> echoed = CallSync(*channel, "echo", payload);
    ASSERT_TRUE(echoed.ok()) << size << ": " << echoed.status().ToString();
    EXPECT_EQ(Crc32c(*echoed), Crc32c(payload)) << size;
  }
  // Many small calls at once leave batched.
  std::vector<std::unique_ptr<std::promise<Result<std::string>>>> pending;
  std::vector<std::future<Result<std::string>>> answers;
  for (int i = 0; i < 200; ++i) {
    auto promise = std::make_unique<std::promise<Result<std::string>>>();
    answers.push_back(promise->get_future());
    auto* raw = promise.get();
    pending.push_back(std::move(promise));
    ASSERT_TRUE(channel->Call("echo", std::to_string(i), 5s, [raw](Result<std::string> r) {
      raw->set_value(std::move(r));
    }).ok());
  }
  for (int i = 0; i < 200; ++i) EXPECT_EQ(*answers[i].get(), std::to_string(i));
  // The server counts a write when it completes, which may be after the
  // client read it: wait for every response (1 + 5 + 200) to be counted.
  EXPECT_TRUE(WaitFor([&] { return server_metrics.frames_sent.value() >= 206; }));
  EXPECT_LT(server_metrics.writes.value(), server_metrics.frames_sent.value());
}

TEST_F(RpcTlsTest, ACertificateOfAnotherCaIsRefused) {
  auto server = StartTlsServer({{"echo", Echo()}});
  TestPki other("other-ca");
  ChannelOptions options;
  options.identity = other.IdentityFor("node", 2);
  options.connect_timeout_ms = 2000;
  auto intruder = MakeChannel(2, server->port(), 1, options);
  EXPECT_EQ(CallSync(*intruder, "echo", "x").status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(WaitFor([&] { return server_metrics.auth_failures("tls_handshake").value() >= 1; }));
  EXPECT_EQ(server->stats().connections_authenticated, 0u);
  // The cluster's own peers still get in.
  auto good = TlsChannel("node", 3, server->port());
  EXPECT_EQ(*CallSync(*good, "echo", "hi"), "hi");
}

TEST_F(RpcTlsTest, PlainAndTlsPeersDoNotMix) {
  auto server = StartTlsServer({{"echo", Echo()}});
  ChannelOptions plain;
  plain.identity = MakeIdentity(5, "node");
  plain.connect_timeout_ms = 1000;
  auto plain_channel = MakeChannel(5, server->port(), 1, plain);
  EXPECT_EQ(CallSync(*plain_channel, "echo", "x").status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(server->stats().connections_authenticated, 0u);

  auto plain_server = StartServer(7, {{"echo", Echo()}});
  ChannelOptions tls;
  tls.identity = pki_.IdentityFor("node", 6);
  tls.connect_timeout_ms = 1000;
  auto tls_channel = MakeChannel(6, plain_server->port(), 7, tls);
  EXPECT_EQ(CallSync(*tls_channel, "echo", "x").status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(plain_server->stats().connections_authenticated, 0u);
}

TEST_F(RpcTlsTest, AnIdentityOtherThanTheCertificatesIsRefused) {
  // The process itself cannot be configured so.
  Identity mismatched = MakeIdentity(1, "node");
  mismatched.tls = pki_.For("router", 100);
  EXPECT_EQ(ValidateIdentity(mismatched).code(), StatusCode::kInvalidArgument);

  // A client with a router's certificate (and the cluster secret) whose
  // Hello claims to be node 2.
  auto server = StartTlsServer({{"echo", Echo()}});
  auto credentials = pki_.For("router", 100);
  asio::io_context io;
  asio::ssl::stream<asio::ip::tcp::socket> stream(io, credentials->client_context());
  asio::ip::tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), server->port());
  stream.next_layer().connect(endpoint);
  stream.handshake(asio::ssl::stream_base::client);
  const auto read_envelope = [&]() -> std::optional<pb::Envelope> {
    char header[8];
    boost::system::error_code error;
    asio::read(stream, asio::buffer(header), error);
    if (error) return std::nullopt;
    const uint32_t size = (uint32_t(uint8_t(header[0])) << 24) | (uint32_t(uint8_t(header[1])) << 16) |
                          (uint32_t(uint8_t(header[2])) << 8) | uint32_t(uint8_t(header[3]));
    std::string payload(size, '\0');
    asio::read(stream, asio::buffer(payload), error);
    pb::Envelope envelope;
    if (error || !envelope.ParseFromString(payload)) return std::nullopt;
    return envelope;
  };
  std::optional<pb::Envelope> challenge_envelope = read_envelope();
  ASSERT_TRUE(challenge_envelope.has_value());
  pb::Challenge challenge;
  ASSERT_TRUE(challenge.ParseFromString(challenge_envelope->payload()));
  const std::string client_nonce = RandomNonce();
  pb::Hello hello;
  hello.set_protocol_version(kProtocolVersion);
  hello.set_peer_id(2);
  hello.set_role("node");
  hello.set_client_nonce(client_nonce);
  hello.set_mac(HelloMac(kSecret, challenge.server_nonce(), client_nonce, 2, "node"));
  Result<std::string> frame = EncodeFrame(MakeRequest(0, kHelloMethod, hello.SerializeAsString()), 4096);
  ASSERT_TRUE(frame.ok());
  asio::write(stream, asio::buffer(*frame));
  EXPECT_FALSE(read_envelope().has_value()) << "the server welcomed a false identity";
  EXPECT_EQ(server_metrics.auth_failures("certificate_mismatch").value(), 1u);
  EXPECT_EQ(server->stats().connections_authenticated, 0u);
}

TEST_F(RpcTlsTest, TheAccessPolicyRefusesARoleTheMethodDoesNotAllow) {
  auto policy = std::make_shared<AccessPolicy>();
  policy->Allow("echo", {"router", "node"}).Allow("admin.faults", {"cli"});
  std::atomic<int> faults_handled{0};
  Handler faults = [&](const PeerInfo&, const pb::Envelope&, Responder responder) {
    ++faults_handled;
    responder.Reply("done");
  };
  auto server = StartTlsServer({{"echo", Echo()}, {"admin.faults", faults}}, policy);
  auto router = TlsChannel("router", 100, server->port());
  EXPECT_EQ(*CallSync(*router, "echo", "ok"), "ok");
  const Result<std::string> refused = CallSync(*router, "admin.faults", "drop everything");
  EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied) << refused.status().ToString();
  EXPECT_EQ(faults_handled.load(), 0);
  EXPECT_EQ(server_metrics.permission_denied("admin.faults").value(), 1u);
  auto cli = TlsChannel("cli", 999, server->port());
  EXPECT_EQ(*CallSync(*cli, "admin.faults", ""), "done");
  EXPECT_EQ(faults_handled.load(), 1);
  // A method without a rule cannot be registered.
  ServerOptions options;
  options.identity = pki_.IdentityFor("node", 4);
  options.access = policy;
  RpcServer unruled(context(), options);
  EXPECT_EQ(unruled.RegisterHandler("admin.create_group", Echo()).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tessera::rpc::testing
