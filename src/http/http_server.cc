#include "http/http_server.h"

#include <spdlog/spdlog.h>

#include <array>
#include <atomic>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "common/check.h"
#include "http/connection_executor.h"
#include "common/maybe_tls_stream.h"
#include "http/response_wire.h"
#include "http/tls_context.h"

namespace tessera::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

namespace {

// After a rejection (400/413/431) the client may still be sending: read and
// discard for at most this long before closing, so that closing with unread
// bytes (a TCP reset) does not destroy the response before the client reads
// it.
constexpr auto kLingerDrain = std::chrono::milliseconds(500);
constexpr size_t kLingerDrainBytesMax = 1 << 20;

std::string_view ToStd(boost::beast::string_view s) { return {s.data(), s.size()}; }

}  // namespace

std::optional<std::string_view> Request::Header(std::string_view name) const {
  return FindHeader(headers, name);
}

Response Response::Text(unsigned status, std::string body) {
  Response r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

Response Response::Json(unsigned status, std::string body) {
  Response r = Text(status, std::move(body));
  r.content_type = "application/json";
  return r;
}

namespace internal {

class Connection;

// Shared by the server, its connections and their Responds.
class HttpServerCore : public std::enable_shared_from_this<HttpServerCore> {
 public:
  HttpServerCore(asio::io_context& io, HttpServerOptions options, Handler handler)
      : io_(io),
        options_(std::move(options)),
        handler_(std::move(handler)),
        acceptor_strand_(asio::make_strand(io)),
        acceptor_(acceptor_strand_) {}

  Status Listen();
  void Accept();
  void Stop();
  void OnConnectionGone(uint64_t id);

  asio::io_context& io_;
  const HttpServerOptions options_;
  const Handler handler_;
  asio::strand<asio::io_context::executor_type> acceptor_strand_;
  tcp::acceptor acceptor_;
  std::unique_ptr<asio::ssl::context> tls_context_;  // set by Listen when options_.tls
  std::atomic<uint16_t> port_{0};
  std::atomic<bool> started_{false};

  std::atomic<uint64_t> accepted_{0}, refused_{0}, requests_{0}, rejected_{0}, refused_at_head_{0};

  std::mutex mu_;  // guards stopped_, connections_, next_id_, accepting_
  std::condition_variable changed_;
  bool stopped_ = false;
  bool accepting_ = false;  // an accept is outstanding
  uint64_t next_id_ = 1;
  std::map<uint64_t, std::weak_ptr<Connection>> connections_;
};

// One accepted connection. Everything runs on its strand (the stream's
// executor); Respond posts there.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  // `tls`: the listener's context when it is TLS, else null.
  Connection(std::shared_ptr<HttpServerCore> server, uint64_t id, tcp::socket socket,
             asio::ssl::context* tls)
      : server_(std::move(server)), id_(id), stream_(MakeStream(std::move(socket), tls)) {
    boost::system::error_code ec;
    const tcp::endpoint remote = stream_.next_layer().socket().remote_endpoint(ec);
    if (!ec) remote_address_ = remote.address().to_string() + ":" + std::to_string(remote.port());
  }
  ~Connection() { server_->OnConnectionGone(id_); }

  // A TLS connection completes its handshake (within idle_timeout_ms)
  // before the first request is read.
  void Start() {
    asio::dispatch(stream_.next_layer().get_executor(), [self = shared_from_this()] {
      if (!self->stream_.is_tls()) return self->ReadHeader();
      self->stream_.next_layer().expires_after(
          std::chrono::milliseconds(self->server_->options_.idle_timeout_ms));
      self->stream_.tls()->async_handshake(asio::ssl::stream_base::server,
                                           [self](const boost::system::error_code& ec) {
                                             if (ec) return self->Close();
                                             self->ReadHeader();
                                           });
    });
  }
  // From any thread.
  void PostClose() {
    asio::post(stream_.next_layer().get_executor(), [self = shared_from_this()] { self->Close(); });
  }
  // From any thread: the answer to the request being handled.
  void PostResponse(Response response) {
    asio::post(stream_.next_layer().get_executor(), [self = shared_from_this(), r = std::move(response)]() mutable {
      self->WriteResponse(std::move(r));
    });
  }

 private:
  void ReadHeader();
  void OnHeader(const boost::system::error_code& ec);
  void ReadBody();
  void OnBody(const boost::system::error_code& ec);
  void OnReadError(const boost::system::error_code& ec);
  void Dispatch();
  // The request's method, target, headers and peer (no body).
  Request HeadOf(const bhttp::request<bhttp::string_body>& message) const;
  void WriteResponse(Response response);
  void Reject(unsigned status, std::string body);
  // Sends a serialized response (SerializeResponse), then reads the next
  // request or closes.
  void WriteWire(std::shared_ptr<const std::string> wire, bool keep_alive);
  void OnWritten(const boost::system::error_code& ec, bool keep_alive);
  void LingerAndClose();
  void Drain();
  void Close();

  using Stream = MaybeTlsStream<beast::tcp_stream>;
  static Stream MakeStream(tcp::socket socket, asio::ssl::context* tls) {
    if (tls == nullptr) return Stream(beast::tcp_stream(std::move(socket)));
    return Stream(beast::tcp_stream(std::move(socket)), *tls);
  }

  const std::shared_ptr<HttpServerCore> server_;
  const uint64_t id_;
  Stream stream_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  std::string remote_address_;
  bool closed_ = false;
  bool awaiting_response_ = false;
  // Of the request being handled.
  unsigned version_ = 11;
  bool keep_alive_ = true;
  bool head_ = false;
  std::chrono::steady_clock::time_point drain_deadline_;
  size_t drained_bytes_ = 0;
  std::array<char, 4096> drain_buffer_{};
};

namespace {

// The answer slot of one request, shared by the copies of its Respond.
// It keeps the connection object alive until the answer (a closed
// connection ignores it); only the first Respond call gets past `answered`
// and takes the pointer.
struct Pending {
  std::shared_ptr<Connection> connection;
  std::atomic<bool> answered{false};
  ~Pending() {
    if (answered.load()) return;
    connection->PostResponse(Response::Text(500, "internal error: request dropped unanswered\n"));
  }
};

}  // namespace

void Connection::ReadHeader() {
  if (closed_) return;
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(server_->options_.header_bytes_max));
  parser_->body_limit(server_->options_.body_bytes_max);
  stream_.next_layer().expires_after(std::chrono::milliseconds(server_->options_.idle_timeout_ms));
  stream_.With([&](auto& stream) {
    bhttp::async_read_header(stream, buffer_, *parser_,
                             [self = shared_from_this()](const boost::system::error_code& ec, size_t) {
                               self->OnHeader(ec);
                             });
  });
}

void Connection::OnHeader(const boost::system::error_code& ec) {
  if (ec) return OnReadError(ec);
  const auto& header = parser_->get();
  if (server_->options_.head_check) {
    if (std::optional<Response> refused = server_->options_.head_check(HeadOf(header))) {
      server_->refused_at_head_.fetch_add(1, std::memory_order_relaxed);
      version_ = header.version();
      keep_alive_ = false;  // the body stays unread
      head_ = header.method() == bhttp::verb::head;
      awaiting_response_ = true;
      return WriteResponse(std::move(*refused));
    }
  }
  if (EqualsIgnoreCase(ToStd(header[bhttp::field::expect]), "100-continue") && !parser_->is_done()) {
    auto cont = std::make_shared<bhttp::response<bhttp::empty_body>>(bhttp::status::continue_,
                                                                    header.version());
    stream_.next_layer().expires_after(std::chrono::milliseconds(server_->options_.write_timeout_ms));
    stream_.With([&](auto& stream) {
      bhttp::async_write(stream, *cont,
                         [self = shared_from_this(), cont](const boost::system::error_code& e, size_t) {
                           if (e) return self->Close();
                           self->ReadBody();
                         });
    });
    return;
  }
  ReadBody();
}

void Connection::ReadBody() {
  if (closed_) return;
  stream_.next_layer().expires_after(std::chrono::milliseconds(server_->options_.idle_timeout_ms));
  stream_.With([&](auto& stream) {
    bhttp::async_read(stream, buffer_, *parser_,
                      [self = shared_from_this()](const boost::system::error_code& ec, size_t) {
                        self->OnBody(ec);
                      });
  });
}

void Connection::OnBody(const boost::system::error_code& ec) {
  if (ec) return OnReadError(ec);
  Dispatch();
}

void Connection::OnReadError(const boost::system::error_code& ec) {
  if (ec == bhttp::error::header_limit) return Reject(431, "request header too large\n");
  if (ec == bhttp::error::body_limit) return Reject(413, "request body too large\n");
  if (ec.category() == bhttp::make_error_code(bhttp::error::bad_method).category() &&
      ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message) {
    return Reject(400, "bad request\n");
  }
  // EOF, timeout, reset, cancellation: nothing to answer.
  Close();
}

Request Connection::HeadOf(const bhttp::request<bhttp::string_body>& message) const {
  Request request;
  request.method = std::string(message.method_string());
  request.target = std::string(message.target());
  const size_t question = request.target.find('?');
  request.path = request.target.substr(0, question);
  if (question != std::string::npos) request.query = request.target.substr(question + 1);
  for (const auto& field : message) {
    request.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  request.remote_address = remote_address_;
  return request;
}

void Connection::Dispatch() {
  if (closed_) return;
  bhttp::request<bhttp::string_body> message = parser_->release();
  Request request = HeadOf(message);
  request.body = std::move(message.body());
  version_ = message.version();
  keep_alive_ = message.keep_alive();
  head_ = message.method() == bhttp::verb::head;
  awaiting_response_ = true;
  server_->requests_.fetch_add(1, std::memory_order_relaxed);

  auto pending = std::make_shared<Pending>();
  pending->connection = shared_from_this();
  Respond respond = [pending](Response response) {
    TESSERA_CHECK(!pending->answered.exchange(true));
    std::shared_ptr<Connection> connection = std::move(pending->connection);
    connection->PostResponse(std::move(response));
  };
  server_->handler_(std::move(request), std::move(respond));
}

void Connection::WriteResponse(Response response) {
  if (closed_ || !awaiting_response_) return;
  awaiting_response_ = false;
  bool keep_alive = keep_alive_ && !response.close;
  {
    std::lock_guard lock(server_->mu_);
    if (server_->stopped_) keep_alive = false;
  }
  const ResponseFraming framing{version_, keep_alive, head_, server_->options_.server_name};
  size_t dropped = 0;
  auto wire = std::make_shared<std::string>(SerializeResponse(response, framing, &dropped));
  if (dropped > 0) {
    spdlog::error("http.response_headers_dropped peer={} status={} count={} (could split the response)",
                  remote_address_, response.status, dropped);
  }
  WriteWire(std::move(wire), keep_alive);
}

void Connection::Reject(unsigned status, std::string body) {
  server_->rejected_.fetch_add(1, std::memory_order_relaxed);
  spdlog::warn("http.request_rejected peer={} status={}", remote_address_, status);
  Response response = Response::Text(status, std::move(body));
  const ResponseFraming framing{11, false, false, server_->options_.server_name};
  WriteWire(std::make_shared<std::string>(SerializeResponse(response, framing)), false);
}

void Connection::WriteWire(std::shared_ptr<const std::string> wire, bool keep_alive) {
  if (closed_) return;
  stream_.next_layer().expires_after(std::chrono::milliseconds(server_->options_.write_timeout_ms));
  stream_.With([&](auto& stream) {
    asio::async_write(stream, asio::buffer(*wire),
                      [self = shared_from_this(), wire, keep_alive](
                          const boost::system::error_code& ec, size_t) { self->OnWritten(ec, keep_alive); });
  });
}

void Connection::OnWritten(const boost::system::error_code& ec, bool keep_alive) {
  if (ec) return Close();
  if (!keep_alive) return LingerAndClose();
  ReadHeader();
}

void Connection::LingerAndClose() {
  if (closed_) return;
  boost::system::error_code ignored;
  stream_.next_layer().socket().shutdown(tcp::socket::shutdown_send, ignored);
  drain_deadline_ = std::chrono::steady_clock::now() + kLingerDrain;
  Drain();
}

void Connection::Drain() {
  if (closed_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now >= drain_deadline_ || drained_bytes_ >= kLingerDrainBytesMax) return Close();
  stream_.next_layer().expires_at(drain_deadline_);
  stream_.With([&](auto& stream) {
    stream.async_read_some(asio::buffer(drain_buffer_),
                           [self = shared_from_this()](const boost::system::error_code& ec, size_t n) {
                             if (ec) return self->Close();
                             self->drained_bytes_ += n;
                             self->Drain();
                           });
  });
}

void Connection::Close() {
  if (closed_) return;
  closed_ = true;
  boost::system::error_code ignored;
  stream_.next_layer().socket().shutdown(tcp::socket::shutdown_both, ignored);
  stream_.next_layer().close();
  server_->OnConnectionGone(id_);  // closed counts as gone, even if a Respond holds us
}

// --- server ------------------------------------------------------------------

Status HttpServerCore::Listen() {
  if (started_.exchange(true)) return Status::InvalidArgument("http server: Start called twice");
  if (!handler_) return Status::InvalidArgument("http server: empty handler");
  if (options_.header_bytes_max == 0 || options_.header_bytes_max > limits::kHttpHeaderBytesMax ||
      options_.body_bytes_max > limits::kHttpBodyBytesMax || options_.connections_max == 0 ||
      options_.connections_max > limits::kHttpConnectionsMax || options_.idle_timeout_ms == 0 ||
      options_.write_timeout_ms == 0) {
    return Status::InvalidArgument("http server: a bound is 0 or above its limit");
  }
  if (options_.tls) {
    auto context = MakeServerTlsContext(*options_.tls);
    if (!context.ok()) return Status::IOError("http server: " + context.status().message());
    tls_context_ = std::move(context).value();
  }
  boost::system::error_code ec;
  const asio::ip::address address = asio::ip::make_address(options_.host, ec);
  if (ec) return Status::InvalidArgument("http server: host is not an IP address: " + options_.host);
  const tcp::endpoint endpoint(address, options_.port);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Status::IOError("http server: cannot listen on " + options_.host + ":" +
                           std::to_string(options_.port) + ": " + ec.message());
  }
  port_ = acceptor_.local_endpoint().port();
  spdlog::info("http.listening addr={}:{} tls={}", options_.host, port_.load(), options_.tls.has_value());
  {
    std::lock_guard lock(mu_);
    accepting_ = true;
  }
  asio::post(acceptor_strand_, [self = shared_from_this()] { self->Accept(); });
  return Status::Ok();
}

void HttpServerCore::Accept() {
  acceptor_.async_accept(ConnectionExecutor(io_, options_.io_threads), [self = shared_from_this()](
                                                     const boost::system::error_code& ec, tcp::socket socket) {
    std::unique_lock lock(self->mu_);
    if (self->stopped_ || ec == asio::error::operation_aborted || !self->acceptor_.is_open()) {
      self->accepting_ = false;
      self->changed_.notify_all();
      return;
    }
    if (!ec) {
      self->accepted_.fetch_add(1, std::memory_order_relaxed);
      if (self->connections_.size() >= self->options_.connections_max) {
        self->refused_.fetch_add(1, std::memory_order_relaxed);
        boost::system::error_code ignored;
        socket.close(ignored);
      } else {
        const uint64_t id = self->next_id_++;
        auto connection = std::make_shared<Connection>(self, id, std::move(socket),
                                                       self->tls_context_.get());
        self->connections_.emplace(id, connection);
        lock.unlock();
        connection->Start();
      }
    }
    if (lock.owns_lock()) lock.unlock();
    self->Accept();
  });
}

void HttpServerCore::OnConnectionGone(uint64_t id) {
  std::lock_guard lock(mu_);
  connections_.erase(id);
  changed_.notify_all();
}

void HttpServerCore::Stop() {
  std::vector<std::shared_ptr<Connection>> open;
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    stopped_ = true;
    for (auto& [id, weak] : connections_) {
      if (auto c = weak.lock()) open.push_back(std::move(c));
    }
  }
  asio::post(acceptor_strand_, [self = shared_from_this()] {
    boost::system::error_code ignored;
    self->acceptor_.close(ignored);
  });
  for (auto& c : open) c->PostClose();
  open.clear();
  std::unique_lock lock(mu_);
  while (!(connections_.empty() && !accepting_)) {
    if (io_.stopped()) break;  // nothing will run the closes
    changed_.wait_for(lock, std::chrono::milliseconds(10));
  }
  if (started_) spdlog::info("http.stopped port={}", port_.load());
}

}  // namespace internal

HttpServer::HttpServer(asio::io_context& io, HttpServerOptions options, Handler handler)
    : impl_(std::make_shared<internal::HttpServerCore>(io, std::move(options), std::move(handler))) {}

HttpServer::~HttpServer() { Stop(); }

Status HttpServer::Start() { return impl_->Listen(); }

uint16_t HttpServer::port() const { return impl_->port_.load(); }

HttpServerStats HttpServer::stats() const {
  HttpServerStats s;
  s.connections_accepted = impl_->accepted_.load();
  s.connections_refused = impl_->refused_.load();
  s.requests = impl_->requests_.load();
  s.rejected = impl_->rejected_.load();
  s.refused_at_head = impl_->refused_at_head_.load();
  std::lock_guard lock(impl_->mu_);
  s.connections_open = impl_->connections_.size();
  return s;
}

void HttpServer::Stop() { impl_->Stop(); }

}  // namespace tessera::http
