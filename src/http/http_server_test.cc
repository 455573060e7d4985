// Goal: HttpServer answers over real sockets with keep-alive, lets handlers
// answer later from other threads, enforces its header/body/parse bounds
// with 431/413/400 while staying up, and stops cleanly; all of it with one
// io thread (no strands) and with two.
#include "http/http_server.h"

#include <gtest/gtest.h>

#include <atomic>

#include <boost/asio/connect.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <typeinfo>
#include <vector>

#include "http/connection_executor.h"
#include "http/stream_test_client.h"
#include "pki/certificates.h"

namespace tessera::http {
namespace {

namespace asio = boost::asio;
namespace bhttp = boost::beast::http;
using namespace std::chrono_literals;

// A blocking HTTP client on its own io_context; every read waits at most 3 s.
class Client {
 public:
  explicit Client(uint16_t port) : socket_(io_) {
    socket_.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  }
  void Write(const std::string& bytes) {
    boost::system::error_code ignored;
    asio::write(socket_, asio::buffer(bytes), ignored);
  }
  // The next response, or nullopt on close or timeout.
  std::optional<bhttp::response<bhttp::string_body>> Read(bool head = false) {
    bhttp::response_parser<bhttp::string_body> parser;
    parser.skip(head);
    bool done = false;
    boost::system::error_code result;
    bhttp::async_read(socket_, buffer_, parser, [&](const boost::system::error_code& e, size_t) {
      result = e;
      done = true;
    });
    io_.restart();
    io_.run_for(3s);
    if (!done) {
      socket_.cancel();
      io_.restart();
      io_.run();
      return std::nullopt;
    }
    if (result) return std::nullopt;
    return parser.release();
  }
  std::optional<bhttp::response<bhttp::string_body>> Get(const std::string& target) {
    Write("GET " + target + " HTTP/1.1\r\nHost: x\r\n\r\n");
    return Read();
  }
  // True when the server closed the connection within 3 s.
  bool WaitClosed() {
    char sink[1024];
    for (;;) {
      bool done = false;
      boost::system::error_code result;
      socket_.async_read_some(asio::buffer(sink), [&](const boost::system::error_code& e, size_t) {
        result = e;
        done = true;
      });
      io_.restart();
      io_.run_for(3s);
      if (!done) {
        socket_.cancel();
        io_.restart();
        io_.run();
        return false;
      }
      if (result) return true;
    }
  }

 private:
  asio::io_context io_;
  asio::ip::tcp::socket socket_;
  boost::beast::flat_buffer buffer_;
};

// Parameter: how many threads run the io_context. One thread lets each
// connection use the io_context's executor (HttpServerOptions::io_threads);
// two need a strand per connection.
class HttpServerTest : public ::testing::TestWithParam<unsigned> {
 protected:
  HttpServerTest() : guard_(asio::make_work_guard(io_)) {
    for (unsigned i = 0; i < GetParam(); ++i) threads_.emplace_back([this] { io_.run(); });
  }
  ~HttpServerTest() override {
    server_.reset();
    guard_.reset();
    io_.stop();
    for (auto& t : threads_) t.join();
  }

  void StartServer(Handler handler, HttpServerOptions options = {}) {
    options.io_threads = GetParam();
    server_ = std::make_unique<HttpServer>(io_, options, std::move(handler));
    const Status started = server_->Start();
    ASSERT_TRUE(started.ok()) << started.ToString();
    ASSERT_NE(server_->port(), 0);
  }

  // Echoes method, path, query and body.
  static Handler Echo() {
    return [](Request request, Respond respond) {
      respond(Response::Text(200, request.method + " " + request.path + " " + request.query + " " +
                                      request.body));
    };
  }

  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> guard_;
  std::vector<std::thread> threads_;
  std::unique_ptr<HttpServer> server_;
};

TEST_P(HttpServerTest, AnswersManyRequestsOnOneKeepAliveConnection) {
  StartServer(Echo());
  Client client(server_->port());
  for (int i = 0; i < 3; ++i) {
    auto response = client.Get("/metrics?x=" + std::to_string(i));
    ASSERT_TRUE(response);
    EXPECT_EQ(response->result_int(), 200u);
    EXPECT_EQ(response->body(), "GET /metrics x=" + std::to_string(i) + " ");
    EXPECT_EQ((*response)[bhttp::field::server], "tessera");
  }
  client.Write("PUT /k HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello");
  auto put = client.Read();
  ASSERT_TRUE(put);
  EXPECT_EQ(put->body(), "PUT /k  hello");
  EXPECT_EQ(server_->stats().connections_accepted, 1u);
  EXPECT_EQ(server_->stats().requests, 4u);
}

TEST_P(HttpServerTest, HandlerMayAnswerLaterFromAnotherThread) {
  std::mutex mu;
  std::vector<std::thread> answerers;
  StartServer([&](Request request, Respond respond) {
    std::lock_guard lock(mu);
    answerers.emplace_back([request = std::move(request), respond = std::move(respond)] {
      std::this_thread::sleep_for(50ms);
      Response r = Response::Json(201, "{\"path\":\"" + request.path + "\"}");
      r.headers.emplace_back("X-Test", "yes");
      respond(std::move(r));
    });
  });
  Client client(server_->port());
  auto response = client.Get("/later");
  ASSERT_TRUE(response);
  EXPECT_EQ(response->result_int(), 201u);
  EXPECT_EQ(response->body(), "{\"path\":\"/later\"}");
  EXPECT_EQ((*response)[bhttp::field::content_type], "application/json");
  EXPECT_EQ((*response)["X-Test"], "yes");
  std::lock_guard lock(mu);
  for (auto& t : answerers) t.join();
}

TEST_P(HttpServerTest, DroppedRespondAnswers500) {
  StartServer([](Request, Respond) {});
  Client client(server_->port());
  auto response = client.Get("/");
  ASSERT_TRUE(response);
  EXPECT_EQ(response->result_int(), 500u);
}

TEST_P(HttpServerTest, OversizedHeaderGets431AndServerKeepsServing) {
  HttpServerOptions options;
  options.header_bytes_max = 1024;
  StartServer(Echo(), options);
  Client bad(server_->port());
  bad.Write("GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(4096, 'a') + "\r\n\r\n");
  auto response = bad.Read();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->result_int(), 431u);
  EXPECT_TRUE(bad.WaitClosed());
  Client good(server_->port());
  auto ok = good.Get("/ok");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->result_int(), 200u);
  EXPECT_EQ(server_->stats().rejected, 1u);
}

TEST_P(HttpServerTest, OversizedBodyGets413ByLengthAndByChunks) {
  HttpServerOptions options;
  options.body_bytes_max = 100;
  StartServer(Echo(), options);
  {
    Client client(server_->port());
    client.Write("PUT /k HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n" + std::string(500, 'b'));
    auto response = client.Read();
    ASSERT_TRUE(response);
    EXPECT_EQ(response->result_int(), 413u);
  }
  {
    Client client(server_->port());
    std::string chunked = "PUT /k HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
    for (int i = 0; i < 5; ++i) chunked += "40\r\n" + std::string(64, 'c') + "\r\n";
    chunked += "0\r\n\r\n";
    client.Write(chunked);
    auto response = client.Read();
    ASSERT_TRUE(response);
    EXPECT_EQ(response->result_int(), 413u);
  }
  Client good(server_->port());
  good.Write("PUT /k HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n" + std::string(100, 'd'));
  auto ok = good.Read();
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->result_int(), 200u);
}

// Goal: a head_check sees each request's head before its body is read: a
// refusal is answered without waiting for (or reading) the body, even when
// the client promised one and sends nothing, and the connection then
// closes; requests it lets through are handled with their bodies.
TEST_P(HttpServerTest, HeadCheckRefusesBeforeTheBodyIsRead) {
  HttpServerOptions options;
  std::atomic<int> handled{0};
  options.head_check = [](const Request& head) -> std::optional<Response> {
    EXPECT_TRUE(head.body.empty());
    if (head.Header("Authorization") == std::optional<std::string_view>("let-me-in")) return std::nullopt;
    return Response::Text(401, "who are you\n");
  };
  StartServer([&handled](Request request, Respond respond) {
    ++handled;
    respond(Response::Text(200, "got " + std::to_string(request.body.size())));
  }, options);
  Client refused(server_->port());
  refused.Write("PUT /k HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\nExpect: 100-continue\r\n\r\n");
  auto response = refused.Read();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->result_int(), 401u);
  EXPECT_TRUE(refused.WaitClosed());
  Client allowed(server_->port());
  allowed.Write("PUT /k HTTP/1.1\r\nHost: x\r\nAuthorization: let-me-in\r\nContent-Length: 3\r\n\r\nabc");
  auto ok = allowed.Read();
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->result_int(), 200u);
  EXPECT_EQ(ok->body(), "got 3");
  EXPECT_EQ(handled.load(), 1);
  EXPECT_EQ(server_->stats().refused_at_head, 1u);
}

TEST_P(HttpServerTest, GarbageGets400) {
  StartServer(Echo());
  Client client(server_->port());
  client.Write("THIS IS NOT HTTP\r\n\r\n");
  auto response = client.Read();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->result_int(), 400u);
  EXPECT_TRUE(client.WaitClosed());
}

TEST_P(HttpServerTest, ExpectContinueAndHead) {
  StartServer(Echo());
  Client client(server_->port());
  client.Write("PUT /k HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n");
  auto interim = client.Read();
  ASSERT_TRUE(interim);
  EXPECT_EQ(interim->result_int(), 100u);
  client.Write("abc");
  auto final_response = client.Read();
  ASSERT_TRUE(final_response);
  EXPECT_EQ(final_response->body(), "PUT /k  abc");

  client.Write("HEAD /h HTTP/1.1\r\nHost: x\r\n\r\n");
  auto head = client.Read(/*head=*/true);
  ASSERT_TRUE(head);
  EXPECT_EQ(head->result_int(), 200u);
  EXPECT_EQ((*head)[bhttp::field::content_length], "9");  // "HEAD /h  "
  EXPECT_TRUE(head->body().empty());
  auto after = client.Get("/after");  // the HEAD left no body bytes behind
  ASSERT_TRUE(after);
  EXPECT_EQ(after->body(), "GET /after  ");
}

TEST_P(HttpServerTest, ConnectionCloseIsHonoured) {
  StartServer(Echo());
  Client client(server_->port());
  client.Write("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  ASSERT_TRUE(client.Read());
  EXPECT_TRUE(client.WaitClosed());
}

TEST_P(HttpServerTest, StopClosesConnectionsFreesPortAndMakesRespondANoOp) {
  std::mutex mu;
  std::optional<Respond> held;
  StartServer([&](Request, Respond respond) {
    std::lock_guard lock(mu);
    held = std::move(respond);
  });
  const uint16_t port = server_->port();
  Client idle(port);
  Client waiting(port);
  waiting.Write("GET /wait HTTP/1.1\r\nHost: x\r\n\r\n");
  for (int i = 0; i < 300 && server_->stats().requests == 0; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(server_->stats().requests, 1u);
  server_->Stop();
  EXPECT_EQ(server_->stats().connections_open, 0u);
  EXPECT_TRUE(idle.WaitClosed());
  EXPECT_TRUE(waiting.WaitClosed());
  {
    std::lock_guard lock(mu);
    ASSERT_TRUE(held);
    (*held)(Response::Text(200, "too late"));  // no-op, no crash
  }
  // The port is free again.
  HttpServerOptions options;
  options.port = port;
  HttpServer again(io_, options, Echo());
  EXPECT_TRUE(again.Start().ok());
  Client client(port);
  auto response = client.Get("/again");
  ASSERT_TRUE(response);
  EXPECT_EQ(response->result_int(), 200u);
}

TEST_P(HttpServerTest, RefusesBadOptionsAndBusyPort) {
  HttpServerOptions options;
  options.body_bytes_max = limits::kHttpBodyBytesMax + 1;
  HttpServer bad(io_, options, Echo());
  EXPECT_EQ(bad.Start().code(), StatusCode::kInvalidArgument);

  StartServer(Echo());
  HttpServerOptions same;
  same.port = server_->port();
  HttpServer busy(io_, same, Echo());
  EXPECT_EQ(busy.Start().code(), StatusCode::kIOError);
}

// Goal: a server with tls speaks only TLS: a client trusting the CA gets
// its answers over a verified connection (keep-alive, a body), and a plain
// HTTP request on that port gets no HTTP answer.
TEST_P(HttpServerTest, ATlsServerAnswersOnlyOverTls) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("tessera_http_tls_" + std::to_string(::getpid()) + "_" +
                                     std::to_string(GetParam()));
  std::filesystem::create_directories(dir);
  const pki::KeyPairFiles ca{(dir / "ca.pem").string(), (dir / "ca.key").string()};
  ASSERT_TRUE(pki::GenerateAuthority(ca, "test CA", 2).ok());
  pki::CertificateSpec spec;
  spec.common_name = "localhost";
  spec.dns_names = {"localhost"};
  spec.ip_addresses = {"127.0.0.1"};
  const pki::KeyPairFiles leaf{(dir / "cert.pem").string(), (dir / "key.pem").string()};
  ASSERT_TRUE(pki::Issue(ca, leaf, spec, 2).ok());
  HttpServerOptions options;
  options.tls = TlsFiles{leaf.cert_path, leaf.key_path};
  StartServer(Echo(), options);

  tessera::http::testing::TestClient tls(server_->port(), /*tls=*/true, ca.cert_path);
  ASSERT_FALSE(tls.Connect());
  for (int i = 0; i < 2; ++i) {
    ASSERT_FALSE(tls.Write("PUT /kv/t/k HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n\r\nhello"));
    auto response = tls.Read();
    ASSERT_TRUE(response);
    EXPECT_EQ(response->result_int(), 200u);
    EXPECT_EQ(response->body(), "PUT /kv/t/k  hello");
  }

  tessera::http::testing::TestClient plain(server_->port(), /*tls=*/false);
  ASSERT_FALSE(plain.Connect());
  ASSERT_FALSE(plain.Write("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"));
  std::string answer;
  plain.ReadRaw(64, &answer);
  EXPECT_EQ(answer.find("HTTP/1.1"), std::string::npos) << answer;
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(IoThreads, HttpServerTest, ::testing::Values(1u, 2u),
                         [](const ::testing::TestParamInfo<unsigned>& param) {
                           return std::to_string(param.param) + "Threads";
                         });

TEST(ConnectionExecutorTest, StrandUnlessExactlyOneThreadRunsTheContext) {
  asio::io_context io;
  using Strand = asio::strand<asio::io_context::executor_type>;
  EXPECT_EQ(ConnectionExecutor(io, 0).target_type(), typeid(Strand));
  EXPECT_EQ(ConnectionExecutor(io, 2).target_type(), typeid(Strand));
  const asio::any_io_executor single = ConnectionExecutor(io, 1);
  ASSERT_EQ(single.target_type(), typeid(asio::io_context::executor_type));
  EXPECT_EQ(*single.target<asio::io_context::executor_type>(), io.get_executor());
}

}  // namespace
}  // namespace tessera::http
