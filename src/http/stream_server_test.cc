// Goal: StreamServer streams request and response bodies in bounded memory
// over plain HTTP and TLS (64 MiB each way, pieces with backpressure),
// decodes chunked requests, sends 100 Continue only at the first ReadBody,
// never parses an unread body as a request (drain or close), answers HEAD,
// keeps connections alive, enforces its bounds with the caller's error
// renderer, and survives clients vanishing mid-body / mid-response and Stop
// with requests in flight (callbacks end with errors, nothing leaks); all
// of it with one io thread (no strands) and with two.
#include "http/stream_server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include "common/crc32c.h"
#include "http/stream_test_client.h"
#include "pki/certificates.h"

// --- live heap bytes of the process (to bound the server's memory) ------------
namespace {
std::atomic<int64_t> g_live_bytes{0};
std::atomic<int64_t> g_peak_bytes{0};
constexpr size_t kPrefixBytes = alignof(std::max_align_t);

void* CountedAlloc(size_t size) {
  void* raw = std::malloc(size + kPrefixBytes);
  if (raw == nullptr) throw std::bad_alloc();
  *static_cast<size_t*>(raw) = size;
  const int64_t live = g_live_bytes.fetch_add(static_cast<int64_t>(size)) + static_cast<int64_t>(size);
  int64_t peak = g_peak_bytes.load(std::memory_order_relaxed);
  while (live > peak && !g_peak_bytes.compare_exchange_weak(peak, live)) {
  }
  return static_cast<char*>(raw) + kPrefixBytes;
}

void CountedFree(void* p) {
  if (p == nullptr) return;
  void* raw = static_cast<char*>(p) - kPrefixBytes;
  g_live_bytes.fetch_sub(static_cast<int64_t>(*static_cast<size_t*>(raw)));
  std::free(raw);
}
}  // namespace

void* operator new(size_t size) { return CountedAlloc(size); }
void* operator new[](size_t size) { return CountedAlloc(size); }
void operator delete(void* p) noexcept { CountedFree(p); }
void operator delete[](void* p) noexcept { CountedFree(p); }
void operator delete(void* p, size_t) noexcept { CountedFree(p); }
void operator delete[](void* p, size_t) noexcept { CountedFree(p); }

namespace tessera::http {
namespace {

using namespace std::chrono_literals;
using testing::StringResponse;
using testing::TestClient;
namespace asio = boost::asio;
namespace bhttp = boost::beast::http;

constexpr size_t kMiB = 1 << 20;

// Byte `i` of every test body: position dependent, so a lost, duplicated
// or reordered piece changes the checksum.
char PatternByte(uint64_t i) { return static_cast<char>((i ^ (i >> 11) ^ (i >> 19)) * 131u); }

void FillPattern(uint64_t offset, std::string* out) {
  for (size_t j = 0; j < out->size(); ++j) (*out)[j] = PatternByte(offset + j);
}

uint32_t PatternCrc(uint64_t size) {
  std::string chunk;
  uint32_t crc = 0;
  for (uint64_t offset = 0; offset < size; offset += chunk.size()) {
    chunk.resize(static_cast<size_t>(std::min<uint64_t>(256 << 10, size - offset)));
    FillPattern(offset, &chunk);
    crc = Crc32c(chunk, crc);
  }
  return crc;
}

// Waits up to 10 s for `condition`.
template <class F>
bool Eventually(F condition) {
  for (int i = 0; i < 1000; ++i) {
    if (condition()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return condition();
}

// Parameter: how many threads run the io_context (StreamServerOptions::io_threads:
// one thread lets connections skip their strands).
class StreamServerTest : public ::testing::TestWithParam<unsigned> {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::filesystem::path(std::filesystem::temp_directory_path() /
                                     ("tessera_stream_test_" + std::to_string(::getpid())));
    std::filesystem::create_directories(*dir_);
    const pki::KeyPairFiles ca{ca_cert(), (*dir_ / "ca.key").string()};
    ASSERT_TRUE(pki::GenerateAuthority(ca, "test CA", 2).ok());
    pki::CertificateSpec spec;
    spec.common_name = "localhost";
    spec.dns_names = {"localhost", "*.s3.localhost"};
    spec.ip_addresses = {"127.0.0.1", "::1"};
    ASSERT_TRUE(pki::Issue(ca, {cert(), key()}, spec, 2).ok());
  }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*dir_);
    delete dir_;
  }
  // The clients' trust anchor: the CA that issued cert().
  static std::string ca_cert() { return (*dir_ / "ca.pem").string(); }
  static std::string cert() { return (*dir_ / "cert.pem").string(); }
  static std::string key() { return (*dir_ / "key.pem").string(); }

  void SetUp() override {
    for (unsigned i = 0; i < GetParam(); ++i) threads_.emplace_back([this] { io_.run(); });
  }
  void TearDown() override {
    if (server_) server_->Stop();
    server_.reset();
    work_.reset();
    for (auto& t : threads_) t.join();
  }

  StreamServerOptions DefaultOptions() {
    StreamServerOptions options;
    options.http_port = 0;
    options.https_port = 0;
    options.tls = {cert(), key()};
    options.idle_timeout_ms = 5'000;
    options.io_threads = GetParam();
    return options;
  }

  void StartServer(StreamHandler handler, StreamServerOptions options) {
    server_ = std::make_unique<StreamServer>(io_, std::move(options), std::move(handler));
    ASSERT_TRUE(server_->Start().ok());
  }
  void StartServer(StreamHandler handler) { StartServer(std::move(handler), DefaultOptions()); }

  TestClient Client(bool tls = false) {
    return TestClient(tls ? server_->https_port() : server_->http_port(), tls, ca_cert());
  }

  static std::filesystem::path* dir_;
  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_{io_.get_executor()};
  std::vector<std::thread> threads_;
  std::unique_ptr<StreamServer> server_;
};

std::filesystem::path* StreamServerTest::dir_ = nullptr;

// Reads the whole body in pieces of `piece_bytes`, holding the previous
// piece until the next arrives (as a pipelined writer would), and answers
// "<pieces> <crc> <short pieces before the last>".
struct PieceReader : std::enable_shared_from_this<PieceReader> {
  std::shared_ptr<Exchange> exchange;
  size_t piece_bytes = kMiB;
  std::string previous;
  uint32_t crc = 0;
  int pieces = 0;
  int short_pieces = 0;  // pieces shorter than asked that were not the last
  std::atomic<int>* errors = nullptr;

  void Next() {
    exchange->ReadBody(piece_bytes, [self = shared_from_this()](Result<std::string> piece, bool end) {
      if (!piece.ok()) {
        if (self->errors) self->errors->fetch_add(1);
        self->exchange->Respond(400, {}, piece.status().ToString(), nullptr);
        return;
      }
      self->previous = std::move(*piece);
      self->crc = Crc32c(self->previous, self->crc);
      if (!self->previous.empty()) ++self->pieces;
      if (!end && self->previous.size() < self->piece_bytes) ++self->short_pieces;
      if (!end) return self->Next();
      self->exchange->Respond(200, {{"Content-Type", "text/plain"}},
                              std::to_string(self->pieces) + " " + std::to_string(self->crc) +
                                  " " + std::to_string(self->short_pieces),
                              nullptr);
    });
  }
};

void ReadPieces(std::shared_ptr<Exchange> exchange, size_t piece_bytes,
                std::atomic<int>* errors = nullptr) {
  auto reader = std::make_shared<PieceReader>();
  reader->exchange = std::move(exchange);
  reader->piece_bytes = piece_bytes;
  reader->errors = errors;
  reader->Next();
}

// Sends a PUT of `size` pattern bytes in 256 KiB writes.
void SendPatternPut(TestClient& client, uint64_t size, const std::string& extra_headers = "") {
  ASSERT_FALSE(client.Write("PUT /object HTTP/1.1\r\nHost: localhost\r\nContent-Length: " +
                            std::to_string(size) + "\r\n" + extra_headers + "\r\n"));
  std::string chunk;
  for (uint64_t offset = 0; offset < size; offset += chunk.size()) {
    chunk.resize(static_cast<size_t>(std::min<uint64_t>(256 << 10, size - offset)));
    FillPattern(offset, &chunk);
    ASSERT_FALSE(client.Write(chunk)) << offset;
  }
}

void UploadInBoundedMemory(TestClient client, uint64_t size) {
  ASSERT_FALSE(client.Connect());
  const uint32_t want_crc = PatternCrc(size);
  g_peak_bytes.store(g_live_bytes.load());
  const int64_t baseline = g_live_bytes.load();
  SendPatternPut(client, size);
  auto response = client.Read();
  const int64_t peak = g_peak_bytes.load() - baseline;
  ASSERT_TRUE(response) << client.last_error().message();
  EXPECT_EQ(response->result_int(), 200u);
  EXPECT_EQ(response->body(), std::to_string(size / kMiB) + " " + std::to_string(want_crc) + " 0");
  // Two 1 MiB pieces (the one filling, the one the handler holds), the
  // client's 256 KiB chunk, read buffers: far below the 64 MiB body.
  EXPECT_LT(peak, static_cast<int64_t>(4 * kMiB)) << "peak live heap bytes during the upload";
}

TEST_P(StreamServerTest, Upload64MiBIsReadInBoundedPieces) {
  StartServer([](std::shared_ptr<Exchange> exchange) { ReadPieces(std::move(exchange), kMiB); });
  UploadInBoundedMemory(Client(false), 64 * kMiB);
}

TEST_P(StreamServerTest, Upload64MiBOverTlsIsReadInBoundedPieces) {
  StartServer([](std::shared_ptr<Exchange> exchange) { ReadPieces(std::move(exchange), kMiB); });
  UploadInBoundedMemory(Client(true), 64 * kMiB);
}

TEST_P(StreamServerTest, PiecesAreCappedByBodyReadChunkBytes) {
  StreamServerOptions options = DefaultOptions();
  options.body_read_chunk_bytes = 64 << 10;
  StartServer([](std::shared_ptr<Exchange> exchange) { ReadPieces(std::move(exchange), 16 * kMiB); },
              options);
  TestClient client = Client();
  ASSERT_FALSE(client.Connect());
  SendPatternPut(client, kMiB);
  auto response = client.Read();
  ASSERT_TRUE(response);
  // 16 pieces of 64 KiB; the reader counts them "short" against its 16 MiB ask.
  EXPECT_EQ(response->body(), "16 " + std::to_string(PatternCrc(kMiB)) + " 15");
}

TEST_P(StreamServerTest, ChunkedRequestBodyIsDecoded) {
  StartServer([](std::shared_ptr<Exchange> exchange) {
    EXPECT_TRUE(exchange->head().chunked);
    EXPECT_FALSE(exchange->head().content_length);
    ReadWholeBody(exchange, kMiB, [exchange](Result<std::string> body) {
      ASSERT_TRUE(body.ok()) << body.status().ToString();
      exchange->Respond(200, {}, "got:" + *body, nullptr);
    });
  });
  TestClient client = Client();
  ASSERT_FALSE(client.Connect());
  ASSERT_FALSE(client.Write(
      "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5\r\nhello\r\n1;ext=1\r\n \r\n"
      "6\r\nworld!\r\n0\r\nX-Trailer: t\r\n\r\n"));
  auto response = client.Read();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->body(), "got:hello world!");

  // A large chunked body through Beast's serializer, on the same connection.
  bhttp::request<bhttp::string_body> request(bhttp::verb::put, "/big", 11);
  request.set(bhttp::field::host, "x");
  request.body() = std::string(300'000, 'z');
  request.chunked(true);
  ASSERT_FALSE(client.Write(request));
  response = client.Read();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->body(), "got:" + std::string(300'000, 'z'));
}

TEST_P(StreamServerTest, ChunkedBodyAboveTheBoundFailsReadBody) {
  StreamServerOptions options = DefaultOptions();
  options.body_bytes_max = 1000;
  std::atomic<int> errors{0};
  StartServer([&](std::shared_ptr<Exchange> exchange) { ReadPieces(exchange, 100, &errors); },
              options);
  TestClient client = Client();
  ASSERT_FALSE(client.Connect());
  ASSERT_FALSE(client.Write("PUT /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
                            std::string("7D0\r\n") + std::string(2000, 'a') + "\r\n0\r\n\r\n"));
  auto response = client.Read();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->result_int(), 400u);
  EXPECT_NE(response->body().find("too large"), std::string::npos);
  EXPECT_FALSE(response->keep_alive());
  EXPECT_EQ(errors.load(), 1);

  // By Content-Length: 413 from the server, before any handler.
  TestClient second = Client();
  ASSERT_FALSE(second.Connect());
  ASSERT_FALSE(second.Write("PUT /c HTTP/1.1\r\nHost: x\r\nContent-Length: 1001\r\n\r\n"));
  response = second.Read();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->result_int(), 413u);
}

TEST_P(StreamServerTest, ContinueIsSentOnlyAtTheFirstReadBody) {
  std::promise<std::shared_ptr<Exchange>> handed;
  StartServer([&](std::shared_ptr<Exchange> exchange) {
    EXPECT_TRUE(exchange->head().expect_continue);
    handed.set_value(std::move(exchange));  // authentication would run now
  });
  TestClient client = Client();
  ASSERT_FALSE(client.Connect());
  ASSERT_FALSE(client.Write(
      "PUT /o HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n"));
  auto future = handed.get_future();
  ASSERT_EQ(future.wait_for(10s), std::future_status::ready);
  std::shared_ptr<Exchange> exchange = future.get();
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(client.Available(), 0u) << "100 Continue came before the handler's first ReadBody";
  ReadWholeBody(exchange, kMiB, [exchange](Result<std::string> body) {
    exchange->Respond(200, {}, body.ok() ? *body : body.status().ToString(), nullptr);
  });
  auto interim = client.Read();
  ASSERT_TRUE(interim);
  EXPECT_EQ(interim->result_int(), 100u);
  ASSERT_FALSE(client.Write("hello"));
  auto response = client.Read();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->result_int(), 200u);
  EXPECT_EQ(response->body(), "hello");
  EXPECT_TRUE(response->keep_alive());
}

TEST_P(StreamServerTest, RejectionWithoutReadingNeverParsesTheBodyAsARequest) {
  std::atomic<int> handled{0};
  StartServer([&](std::shared_ptr<Exchange> exchange) {
    handled++;
    exchange->Respond(403, {{"Content-Type", "application/xml"}}, "<Error>AccessDenied</Error>",
                      nullptr);
  });
  // Expect: 100-continue, never read: 403 without 100, then the connection closes.
  {
    TestClient client = Client();
    ASSERT_FALSE(client.Connect());
    ASSERT_FALSE(client.Write(
        "PUT /o HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\nExpect: 100-continue\r\n\r\n"));
    auto response = client.Read();
    ASSERT_TRUE(response);
    EXPECT_EQ(response->result_int(), 403u);
    EXPECT_FALSE(response->keep_alive());
    EXPECT_TRUE(client.WaitClosed());
  }
  // A small unread body that looks like a request: drained, the next
  // request on the same connection is answered, the body never handled.
  {
    TestClient client = Client();
    ASSERT_FALSE(client.Connect());
    const std::string fake = "GET /fake HTTP/1.1\r\nHost: x\r\n\r\n";
    ASSERT_FALSE(client.Write("PUT /o HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                              std::to_string(fake.size()) + "\r\n\r\n" + fake));
    auto response = client.Read();
    ASSERT_TRUE(response);
    EXPECT_TRUE(response->keep_alive());
    ASSERT_FALSE(client.Write("GET /next HTTP/1.1\r\nHost: x\r\n\r\n"));
    response = client.Read();
    ASSERT_TRUE(response);
    EXPECT_EQ(response->result_int(), 403u);
    EXPECT_EQ(handled.load(), 3);  // PUT, PUT, GET /next; never /fake
  }
  // A large unread body (beyond drain_bytes_max), client still sending:
  // Connection: close, the client reads the whole 403 (no reset).
  {
    TestClient client = Client();
    ASSERT_FALSE(client.Connect());
    const uint64_t size = 32 * kMiB;
    std::thread sender([&] {
      std::string chunk(64 << 10, 'b');
      (void)client.Write("PUT /o HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(size) +
                         "\r\n\r\n");
      for (uint64_t sent = 0; sent < size; sent += chunk.size()) {
        if (client.Write(chunk)) break;  // the server closed
      }
    });
    sender.join();
    auto response = client.Read();
    ASSERT_TRUE(response) << client.last_error().message();
    EXPECT_EQ(response->result_int(), 403u);
    EXPECT_FALSE(response->keep_alive());
  }
}

TEST_P(StreamServerTest, StreamsA64MiBResponseWithBackpressure) {
  constexpr uint64_t kSize = 64 * kMiB;
  std::atomic<uint64_t> written{0};
  std::atomic<int> outstanding{0}, overlaps{0};
  StartServer([&](std::shared_ptr<Exchange> exchange) {
    struct Writer : std::enable_shared_from_this<Writer> {
      std::shared_ptr<Exchange> exchange;
      uint64_t offset = 0;
      std::atomic<uint64_t>* written;
      std::atomic<int>*outstanding, *overlaps;
      void Next() {
        if (offset == kSize) return exchange->FinishResponse(nullptr);
        std::string piece(static_cast<size_t>(std::min<uint64_t>(256 << 10, kSize - offset)), '\0');
        FillPattern(offset, &piece);
        offset += piece.size();
        if (outstanding->fetch_add(1) != 0) overlaps->fetch_add(1);
        exchange->WriteBody(std::move(piece), [self = shared_from_this()](Status status) {
          self->outstanding->fetch_sub(1);
          if (!status.ok()) return;
          self->written->store(self->offset);
          self->Next();
        });
      }
    };
    auto writer = std::make_shared<Writer>();
    writer->exchange = exchange;
    writer->written = &written;
    writer->outstanding = &outstanding;
    writer->overlaps = &overlaps;
    exchange->StartResponse(200, {{"Content-Type", "application/octet-stream"}}, kSize,
                            [writer](Status status) {
                              if (status.ok()) writer->Next();
                            });
  });
  TestClient client = Client();
  ASSERT_FALSE(client.Connect());
  g_peak_bytes.store(g_live_bytes.load());
  const int64_t baseline = g_live_bytes.load();
  ASSERT_FALSE(client.Write("GET /object HTTP/1.1\r\nHost: x\r\n\r\n"));
  std::this_thread::sleep_for(500ms);  // not reading: the writer must stall
  const uint64_t stalled_at = written.load();
  EXPECT_LT(stalled_at, 24 * kMiB) << "the writer ran ahead of the client";
  uint32_t crc = 0;
  uint64_t received = 0;
  auto head = client.ReadStreaming([&](std::string_view bytes) {
    crc = Crc32c(bytes, crc);
    received += bytes.size();
  });
  ASSERT_TRUE(head) << client.last_error().message();
  EXPECT_EQ(head->result_int(), 200u);
  EXPECT_EQ((*head)[bhttp::field::content_length], std::to_string(kSize));
  EXPECT_EQ(received, kSize);
  EXPECT_EQ(crc, PatternCrc(kSize));
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_LT(g_peak_bytes.load() - baseline, static_cast<int64_t>(4 * kMiB));
}

// A chunked streamed response (no length), over TLS, then keep-alive.
TEST_P(StreamServerTest, StreamsAChunkedResponseOverTls) {
  StartServer([](std::shared_ptr<Exchange> exchange) {
    exchange->StartResponse(200, {}, std::nullopt, [exchange](Status status) {
      ASSERT_TRUE(status.ok());
      exchange->WriteBody("abc", [exchange](Status s1) {
        ASSERT_TRUE(s1.ok());
        exchange->WriteBody("", [exchange](Status s2) {  // empty: no-op, not the last chunk
          ASSERT_TRUE(s2.ok());
          exchange->WriteBody("defg", [exchange](Status s3) {
            ASSERT_TRUE(s3.ok());
            exchange->FinishResponse([](Status s4) { EXPECT_TRUE(s4.ok()); });
          });
        });
      });
    });
  });
  TestClient client = Client(true);
  ASSERT_FALSE(client.Connect());
  for (int i = 0; i < 2; ++i) {
    ASSERT_FALSE(client.Write("GET /c HTTP/1.1\r\nHost: localhost\r\n\r\n"));
    auto response = client.Read();
    ASSERT_TRUE(response) << client.last_error().message();
    EXPECT_TRUE(response->chunked());
    EXPECT_EQ(response->body(), "abcdefg");
  }
}

TEST_P(StreamServerTest, HeadCarriesTheGivenLengthAndNoBody) {
  StartServer([](std::shared_ptr<Exchange> exchange) {
    EXPECT_EQ(exchange->head().method, "HEAD");
    if (exchange->head().path == "/small") {
      return exchange->Respond(200, {{"Content-Length", "12345"}, {"ETag", "\"e\""}}, "", nullptr);
    }
    exchange->StartResponse(200, {}, 5 * kMiB, [exchange](Status status) {
      ASSERT_TRUE(status.ok());
      exchange->WriteBody("ignored for HEAD", [exchange](Status s) {
        ASSERT_TRUE(s.ok());
        exchange->FinishResponse(nullptr);
      });
    });
  });
  TestClient client = Client();
  ASSERT_FALSE(client.Connect());
  ASSERT_FALSE(client.Write("HEAD /small HTTP/1.1\r\nHost: x\r\n\r\n"));
  auto response = client.Read(/*head_request=*/true);
  ASSERT_TRUE(response);
  EXPECT_EQ((*response)[bhttp::field::content_length], "12345");
  EXPECT_EQ((*response)[bhttp::field::etag], "\"e\"");
  ASSERT_FALSE(client.Write("HEAD /streamed HTTP/1.1\r\nHost: x\r\n\r\n"));
  response = client.Read(true);
  ASSERT_TRUE(response);
  EXPECT_EQ((*response)[bhttp::field::content_length], std::to_string(5 * kMiB));
  // Nothing else arrived: a third exchange parses cleanly.
  ASSERT_FALSE(client.Write("HEAD /small HTTP/1.1\r\nHost: x\r\n\r\n"));
  response = client.Read(true);
  ASSERT_TRUE(response);
  EXPECT_EQ(response->result_int(), 200u);
}

TEST_P(StreamServerTest, KeepAliveServesManyRequestsOnOneConnection) {
  StartServer([](std::shared_ptr<Exchange> exchange) {
    ReadWholeBody(exchange, kMiB, [exchange](Result<std::string> body) {
      ASSERT_TRUE(body.ok());
      exchange->Respond(200, {{"X-Path", exchange->head().path}}, *body + "!", nullptr);
    });
  });
  TestClient client = Client();
  ASSERT_FALSE(client.Connect());
  for (int i = 0; i < 5; ++i) {
    bhttp::request<bhttp::string_body> request(bhttp::verb::post, "/r" + std::to_string(i) + "?q=1", 11);
    request.set(bhttp::field::host, "x");
    request.body() = std::string(static_cast<size_t>(i) * 1000, 'a');
    ASSERT_FALSE(client.Write(request));
    auto response = client.Read();
    ASSERT_TRUE(response);
    EXPECT_EQ((*response)["X-Path"], "/r" + std::to_string(i));
    EXPECT_EQ(response->body(), std::string(static_cast<size_t>(i) * 1000, 'a') + "!");
  }
  EXPECT_EQ(server_->stats().connections_accepted, 1u);
  EXPECT_EQ(server_->stats().requests, 5u);
}

// Goal: over TLS 1.2 the server agrees only to forward-secret AEAD suites:
// a client offering only CBC suites with SHA-1 MACs (what OpenSSL's default
// list would still accept) fails the handshake; one offering ECDHE-ECDSA
// with AES-GCM connects, and so does a client with default settings.
TEST_P(StreamServerTest, Tls12AcceptsOnlyForwardSecretAeadSuites) {
  StartServer([](std::shared_ptr<Exchange> exchange) { exchange->Respond(200, {}, "ok", nullptr); });
  for (const char* weak : {"ECDHE-ECDSA-AES128-SHA", "AES128-SHA", "ECDHE-ECDSA-AES256-SHA384"}) {
    TestClient client = Client(true);
    ASSERT_EQ(SSL_CTX_set_max_proto_version(client.native_tls_context(), TLS1_2_VERSION), 1);
    ASSERT_EQ(SSL_CTX_set_cipher_list(client.native_tls_context(), weak), 1) << weak;
    EXPECT_TRUE(client.Connect()) << weak << " was accepted";
  }
  TestClient strong = Client(true);
  ASSERT_EQ(SSL_CTX_set_max_proto_version(strong.native_tls_context(), TLS1_2_VERSION), 1);
  ASSERT_EQ(SSL_CTX_set_cipher_list(strong.native_tls_context(), "ECDHE-ECDSA-AES128-GCM-SHA256"), 1);
  ASSERT_FALSE(strong.Connect());
  TestClient modern = Client(true);
  ASSERT_FALSE(modern.Connect());
  ASSERT_FALSE(modern.Write("GET /x HTTP/1.1\r\nHost: localhost\r\n\r\n"));
  auto response = modern.Read();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->body(), "ok");
}

// Goal: the last check before bytes go out: a response field whose name or
// value could split the response (CR/LF, NUL, other control characters)
// is left out; the others are written.
TEST_P(StreamServerTest, ResponseFieldsThatWouldSplitTheResponseAreLeftOut) {
  StartServer([](std::shared_ptr<Exchange> exchange) {
    exchange->Respond(200,
                      {{"X-Good", "fine"},
                       {"X-Bad", "a\r\nSet-Cookie: x=1"},
                       {"X-Lf", "a\nX-Injected: 1"},
                       {"X-Nul", std::string("a\0b", 3)},
                       {"X Bad", "space in name"},
                       {"Content-Type", "text/plain\r\nX-Injected: 2"}},
                      "ok", nullptr);
  });
  TestClient client = Client(true);
  ASSERT_FALSE(client.Connect());
  ASSERT_FALSE(client.Write("GET /x HTTP/1.1\r\nHost: localhost\r\n\r\n"));
  auto response = client.Read();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->result_int(), 200u);
  EXPECT_EQ((*response)["X-Good"], "fine");
  for (const char* name : {"X-Bad", "Set-Cookie", "X-Lf", "X-Injected", "X-Nul", "Content-Type"}) {
    EXPECT_EQ(response->count(name), 0u) << name;
  }
  EXPECT_EQ(response->body(), "ok");
}

TEST_P(StreamServerTest, RequestHeadIsReportedAsSent) {
  std::promise<RequestHead> seen;
  StartServer([&](std::shared_ptr<Exchange> exchange) {
    seen.set_value(exchange->head());
    exchange->Respond(204, {}, "", nullptr);
  });
  TestClient client = Client(true);
  ASSERT_FALSE(client.Connect());
  ASSERT_FALSE(client.Write(
      "GET /bucket/key%20x?list-type=2&prefix=a HTTP/1.1\r\nHost: localhost\r\n"
      "X-Amz-Meta-One: 1\r\nx-amz-date: d\r\n\r\n"));
  auto response = client.Read();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->result_int(), 204u);
  const RequestHead head = seen.get_future().get();
  EXPECT_EQ(head.method, "GET");
  EXPECT_EQ(head.path, "/bucket/key%20x");
  EXPECT_EQ(head.query, "list-type=2&prefix=a");
  ASSERT_EQ(head.headers.size(), 3u);
  EXPECT_EQ(head.headers[1].first, "X-Amz-Meta-One");
  EXPECT_EQ(head.headers[2].first, "x-amz-date");
  EXPECT_EQ(head.Header("X-AMZ-DATE"), "d");
  EXPECT_TRUE(head.tls);
  EXPECT_FALSE(head.has_body());
  EXPECT_EQ(head.remote_address.rfind("127.0.0.1:", 0), 0u);
}

TEST_P(StreamServerTest, ProtocolErrorsUseTheCallersRenderer) {
  StreamServerOptions options = DefaultOptions();
  options.on_protocol_error = [](unsigned status, std::string_view reason) {
    ProtocolErrorResponse r;
    r.headers = {{"Content-Type", "application/xml"}};
    r.body = "<Error><Code>" +
             std::string(status == 431 ? "RequestHeaderSectionTooLarge" : "Other") +
             "</Code><Message>" + std::string(reason) + "</Message></Error>";
    return r;
  };
  std::atomic<int> handled{0};
  StartServer([&](std::shared_ptr<Exchange> exchange) {
    handled++;
    exchange->Respond(200, {}, "ok", nullptr);
  },
              options);
  const auto expect = [&](const std::string& request, unsigned status) {
    TestClient client = Client();
    ASSERT_FALSE(client.Connect());
    ASSERT_FALSE(client.Write(request));
    auto response = client.Read();
    ASSERT_TRUE(response) << request.substr(0, 40);
    EXPECT_EQ(response->result_int(), status);
    EXPECT_FALSE(response->keep_alive());
    EXPECT_EQ((*response)[bhttp::field::content_type], "application/xml");
    if (status == 431) {
      EXPECT_NE(response->body().find("RequestHeaderSectionTooLarge"), std::string::npos);
    }
    EXPECT_TRUE(client.WaitClosed());
  };
  expect("GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(70 << 10, 'h') + "\r\n\r\n", 431);
  expect("GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501);
  expect("GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400);
  expect("NOT A REQUEST\r\n\r\n", 400);
  EXPECT_EQ(handled.load(), 0);
  EXPECT_EQ(server_->stats().protocol_errors, 4u);
}

TEST_P(StreamServerTest, DroppedExchangeAnswers500) {
  StartServer([](std::shared_ptr<Exchange>) {});
  TestClient client = Client();
  ASSERT_FALSE(client.Connect());
  ASSERT_FALSE(client.Write("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
  auto response = client.Read();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->result_int(), 500u);
}

TEST_P(StreamServerTest, ClientVanishingMidBodyFailsReadBodyAndLeaksNothing) {
  std::promise<Status> failure;
  std::weak_ptr<Exchange> weak;
  StartServer([&](std::shared_ptr<Exchange> exchange) {
    weak = exchange;
    struct Loop : std::enable_shared_from_this<Loop> {
      std::shared_ptr<Exchange> exchange;
      std::promise<Status>* failure;
      void Next() {
        exchange->ReadBody(kMiB, [self = shared_from_this()](Result<std::string> piece, bool end) {
          if (!piece.ok()) {
            self->failure->set_value(piece.status());
            // A response to a gone client: its callback reports the failure.
            return self->exchange->Respond(500, {}, "x", [](Status) {});
          }
          if (!end) self->Next();
        });
      }
    };
    auto loop = std::make_shared<Loop>();
    loop->exchange = std::move(exchange);
    loop->failure = &failure;
    loop->Next();
  });
  {
    TestClient client = Client();
    ASSERT_FALSE(client.Connect());
    ASSERT_FALSE(client.Write("PUT /o HTTP/1.1\r\nHost: x\r\nContent-Length: 10000000\r\n\r\n" +
                              std::string(kMiB, 'a')));
    std::this_thread::sleep_for(100ms);
    client.Close();
  }
  auto future = failure.get_future();
  ASSERT_EQ(future.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(future.get().code(), StatusCode::kIOError);
  EXPECT_TRUE(Eventually([&] { return server_->stats().connections_open == 0 && weak.expired(); }));
}

TEST_P(StreamServerTest, ClientVanishingMidResponseFailsWriteBody) {
  std::promise<Status> failure;
  std::promise<Status> after;
  std::weak_ptr<Exchange> weak;
  StartServer([&](std::shared_ptr<Exchange> exchange) {
    weak = exchange;
    struct Writer : std::enable_shared_from_this<Writer> {
      std::shared_ptr<Exchange> exchange;
      std::promise<Status>*failure, *after;
      void Next() {
        exchange->WriteBody(std::string(256 << 10, 'w'), [self = shared_from_this()](Status status) {
          if (status.ok()) return self->Next();
          self->failure->set_value(status);
          // The exchange is dead: further calls fail fast.
          self->exchange->WriteBody("more", [self](Status again) { self->after->set_value(again); });
        });
      }
    };
    auto writer = std::make_shared<Writer>();
    writer->exchange = exchange;
    writer->failure = &failure;
    writer->after = &after;
    exchange->StartResponse(200, {}, uint64_t{1} << 34, [writer](Status status) {
      if (status.ok()) writer->Next();
    });
  });
  {
    TestClient client = Client(true);
    ASSERT_FALSE(client.Connect());
    ASSERT_FALSE(client.Write("GET /o HTTP/1.1\r\nHost: localhost\r\n\r\n"));
    std::string some;
    ASSERT_FALSE(client.ReadRaw(kMiB, &some));
    client.Reset();
  }
  auto future = failure.get_future();
  ASSERT_EQ(future.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(future.get().code(), StatusCode::kIOError);
  auto again = after.get_future();
  ASSERT_EQ(again.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(again.get().code(), StatusCode::kAborted);
  EXPECT_TRUE(Eventually([&] { return server_->stats().connections_open == 0 && weak.expired(); }));
}

TEST_P(StreamServerTest, IdleClientsAreCut) {
  StreamServerOptions options = DefaultOptions();
  options.idle_timeout_ms = 300;
  std::promise<Status> write_failure;
  StartServer([&](std::shared_ptr<Exchange> exchange) {
    struct Writer : std::enable_shared_from_this<Writer> {
      std::shared_ptr<Exchange> exchange;
      std::promise<Status>* failure;
      void Next() {
        exchange->WriteBody(std::string(256 << 10, 'w'), [self = shared_from_this()](Status status) {
          if (status.ok()) return self->Next();
          self->failure->set_value(status);
        });
      }
    };
    auto writer = std::make_shared<Writer>();
    writer->exchange = exchange;
    writer->failure = &write_failure;
    exchange->StartResponse(200, {}, std::nullopt, [writer](Status s) {
      if (s.ok()) writer->Next();
    });
  },
              options);
  // Half a request head, then silence: closed.
  TestClient half = Client();
  ASSERT_FALSE(half.Connect());
  ASSERT_FALSE(half.Write("GET / HTTP/1.1\r\nHo"));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(half.WaitClosed());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
  // A client that stops reading a streamed response: the write times out.
  TestClient stalled = Client();
  ASSERT_FALSE(stalled.Connect());
  ASSERT_FALSE(stalled.Write("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
  auto future = write_failure.get_future();
  ASSERT_EQ(future.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(future.get().code(), StatusCode::kTimeout);
}

TEST_P(StreamServerTest, ConnectionsBeyondTheBoundAreClosed) {
  StreamServerOptions options = DefaultOptions();
  options.connections_max = 2;
  StartServer([](std::shared_ptr<Exchange> exchange) { exchange->Respond(200, {}, "ok", nullptr); },
              options);
  TestClient a = Client(), b = Client(), c = Client();
  ASSERT_FALSE(a.Connect());
  ASSERT_FALSE(b.Connect());
  ASSERT_TRUE(Eventually([&] { return server_->stats().connections_open == 2; }));
  ASSERT_FALSE(c.Connect());
  EXPECT_TRUE(c.WaitClosed());
  EXPECT_EQ(server_->stats().connections_refused, 1u);
  ASSERT_FALSE(a.Write("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_TRUE(a.Read());
}

TEST_P(StreamServerTest, StopFailsPendingCallbacksAndStartsNoHandler) {
  std::promise<void> both_pending;
  std::atomic<int> pending{0};
  std::atomic<int> failed{0};
  std::atomic<int> handlers{0};
  std::shared_ptr<Exchange> reading, writing;
  std::mutex mu;
  StartServer([&](std::shared_ptr<Exchange> exchange) {
    handlers++;
    std::lock_guard lock(mu);
    if (exchange->head().path == "/read") {
      reading = exchange;
      exchange->ReadBody(kMiB, [&](Result<std::string> piece, bool) {
        if (!piece.ok()) failed++;
      });
      if (++pending == 2) both_pending.set_value();
    } else {
      writing = exchange;
      exchange->StartResponse(200, {}, std::nullopt, [&, exchange](Status) {
        // One write the stalled client never takes: its callback pends.
        // Counted once it is issued (the head's write completes first,
        // which under a loaded sanitizer run can take a while).
        exchange->WriteBody(std::string(32 * kMiB, 'w'), [&](Status s) {
          if (!s.ok()) failed++;
        });
        if (++pending == 2) both_pending.set_value();
      });
    }
  });
  TestClient reader = Client(), writer = Client(true);
  ASSERT_FALSE(reader.Connect());
  ASSERT_FALSE(writer.Connect());
  ASSERT_FALSE(reader.Write("PUT /read HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc"));
  ASSERT_FALSE(writer.Write("GET /write HTTP/1.1\r\nHost: localhost\r\n\r\n"));
  ASSERT_EQ(both_pending.get_future().wait_for(10s), std::future_status::ready);
  std::this_thread::sleep_for(200ms);  // let the big write block on the socket
  server_->Stop();
  EXPECT_EQ(failed.load(), 2) << "pending callbacks completed before Stop returned";
  EXPECT_EQ(server_->stats().connections_open, 0u);
  // Calls on old exchanges fail with Aborted.
  std::promise<Status> late;
  reading->Respond(200, {}, "late", [&](Status s) { late.set_value(s); });
  auto late_future = late.get_future();
  ASSERT_EQ(late_future.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(late_future.get().code(), StatusCode::kAborted);
  // No new handler: a new connection is refused.
  TestClient after = Client();
  if (!after.Connect()) {
    (void)after.Write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_FALSE(after.Read());
  }
  EXPECT_EQ(handlers.load(), 2);
  std::lock_guard lock(mu);
  reading.reset();
  writing.reset();
}

TEST_P(StreamServerTest, RefusesBadOptions) {
  const auto start = [&](StreamServerOptions options) {
    StreamServer server(io_, std::move(options), [](std::shared_ptr<Exchange>) {});
    return server.Start();
  };
  StreamServerOptions none = DefaultOptions();
  none.http_port.reset();
  none.https_port.reset();
  EXPECT_EQ(start(none).code(), StatusCode::kInvalidArgument);
  StreamServerOptions no_cert = DefaultOptions();
  no_cert.tls = {};
  EXPECT_EQ(start(no_cert).code(), StatusCode::kInvalidArgument);
  StreamServerOptions bad_cert = DefaultOptions();
  bad_cert.tls.cert_pem_path = (*dir_ / "missing.pem").string();
  EXPECT_EQ(start(bad_cert).code(), StatusCode::kIOError);
  StreamServerOptions swapped = DefaultOptions();
  swapped.tls = {key(), cert()};
  EXPECT_EQ(start(swapped).code(), StatusCode::kIOError);
  StreamServerOptions big = DefaultOptions();
  big.body_read_chunk_bytes = limits::kHttpStreamBodyPieceBytesMax + 1;
  EXPECT_EQ(start(big).code(), StatusCode::kInvalidArgument);
}

TEST_P(StreamServerTest, TlsClientRejectsAnUntrustedOrMisnamedServer) {
  StartServer([](std::shared_ptr<Exchange> exchange) { exchange->Respond(200, {}, "ok", nullptr); });
  TestClient untrusted(server_->https_port(), true, "", "localhost");
  EXPECT_TRUE(untrusted.Connect());
  TestClient misnamed(server_->https_port(), true, ca_cert(), "example.com");
  EXPECT_TRUE(misnamed.Connect());
  TestClient good(server_->https_port(), true, ca_cert(), "bucket.s3.localhost");
  EXPECT_FALSE(good.Connect());
  EXPECT_TRUE(Eventually([&] { return server_->stats().tls_handshakes_failed >= 2; }));
}

// Python's ssl + http.client (what urllib3 / the aws CLI build on) trusts
// the generated certificate as its CA file, for a DNS name and an IP, also
// with VERIFY_X509_STRICT; without the CA file it refuses.
TEST_P(StreamServerTest, PythonClientTrustsTheGeneratedCertificate) {
  if (std::system("python3 -c 'import ssl' >/dev/null 2>&1") != 0) GTEST_SKIP() << "no python3";
  StartServer([](std::shared_ptr<Exchange> exchange) {
    exchange->Respond(200, {}, "hello " + exchange->head().path, nullptr);
  });
  const std::string script = R"(
import http.client, ssl, sys
port, cafile = int(sys.argv[1]), sys.argv[2]
for host in ("localhost", "127.0.0.1"):
    for strict in (False, True):
        ctx = ssl.create_default_context(cafile=cafile)
        if strict:
            ctx.verify_flags |= ssl.VERIFY_X509_STRICT
        conn = http.client.HTTPSConnection(host, port, context=ctx, timeout=10)
        conn.request("GET", "/py")
        r = conn.getresponse()
        body = r.read()
        assert r.status == 200 and body == b"hello /py", (r.status, body)
        conn.close()
try:
    conn = http.client.HTTPSConnection("localhost", port, context=ssl.create_default_context(), timeout=10)
    conn.request("GET", "/py")
    print("UNTRUSTED ACCEPTED")
    sys.exit(1)
except ssl.SSLCertVerificationError:
    pass
print("PYTHON OK")
)";
  const std::string script_path = (*dir_ / "client.py").string();
  {
    FILE* f = std::fopen(script_path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(script.c_str(), f);
    std::fclose(f);
  }
  const std::string command = "python3 " + script_path + " " +
                              std::to_string(server_->https_port()) + " " + ca_cert() + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char line[512];
  while (std::fgets(line, sizeof(line), pipe) != nullptr) output += line;
  const int rc = ::pclose(pipe);
  EXPECT_EQ(rc, 0) << output;
  EXPECT_NE(output.find("PYTHON OK"), std::string::npos) << output;
}

INSTANTIATE_TEST_SUITE_P(IoThreads, StreamServerTest, ::testing::Values(1u, 2u),
                         [](const ::testing::TestParamInfo<unsigned>& param) {
                           return std::to_string(param.param) + "Threads";
                         });

}  // namespace
}  // namespace tessera::http
