#include "http/stream_server.h"

#include <openssl/ssl.h>
#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <exception>
#include <vector>

#include "common/check.h"
#include "http/connection_executor.h"
#include "http/stream_connection.h"

namespace tessera::http {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace internal {

StreamServerCore::StreamServerCore(asio::io_context& io, StreamServerOptions options,
                                   StreamHandler handler)
    : io_(io), options_(std::move(options)), handler_(std::move(handler)) {}

ProtocolErrorResponse StreamServerCore::RenderProtocolError(unsigned status,
                                                            std::string_view reason) const {
  if (options_.on_protocol_error) return options_.on_protocol_error(status, reason);
  ProtocolErrorResponse response;
  response.headers.emplace_back("Content-Type", "text/plain; charset=utf-8");
  response.body = std::string(reason) + "\n";
  return response;
}

Status StreamServerCore::ValidateOptions() const {
  const auto& o = options_;
  if (!handler_) return Status::InvalidArgument("stream server: empty handler");
  if (!o.http_port && !o.https_port) return Status::InvalidArgument("stream server: no listener enabled");
  if (o.https_port && (o.tls.cert_pem_path.empty() || o.tls.key_pem_path.empty())) {
    return Status::InvalidArgument("stream server: https needs a certificate and a key file");
  }
  if (o.header_bytes_max == 0 || o.header_bytes_max > limits::kHttpHeaderBytesMax ||
      o.body_bytes_max > limits::kHttpStreamBodyBytesMax || o.connections_max == 0 ||
      o.connections_max > limits::kHttpStreamConnectionsMax || o.body_read_chunk_bytes == 0 ||
      o.body_read_chunk_bytes > limits::kHttpStreamBodyPieceBytesMax ||
      o.drain_bytes_max > limits::kHttpStreamDrainBytesMax || o.idle_timeout_ms == 0) {
    return Status::InvalidArgument("stream server: a bound is 0 or above its limit");
  }
  return Status::Ok();
}

Status StreamServerCore::LoadTls() {
  auto context = MakeServerTlsContext(options_.tls);
  if (!context.ok()) return Status::IOError("stream server: " + context.status().message());
  ssl_context_ = std::move(context).value();
  return Status::Ok();
}

Status StreamServerCore::Bind(Listener& listener, uint16_t port) {
  boost::system::error_code ec;
  const asio::ip::address address = asio::ip::make_address(options_.host, ec);
  if (ec) return Status::InvalidArgument("stream server: host is not an IP address: " + options_.host);
  const tcp::endpoint endpoint(address, port);
  listener.acceptor.open(endpoint.protocol(), ec);
  if (!ec) listener.acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) listener.acceptor.bind(endpoint, ec);
  if (!ec) listener.acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Status::IOError("stream server: cannot listen on " + options_.host + ":" +
                           std::to_string(port) + ": " + ec.message());
  }
  return Status::Ok();
}

Status StreamServerCore::Listen() {
  if (started_.exchange(true)) return Status::InvalidArgument("stream server: Start called twice");
  TESSERA_RETURN_IF_ERROR(ValidateOptions());
  if (options_.https_port) TESSERA_RETURN_IF_ERROR(LoadTls());
  if (options_.http_port) {
    plain_.emplace(asio::make_strand(io_));
    TESSERA_RETURN_IF_ERROR(Bind(*plain_, *options_.http_port));
    http_port_ = plain_->acceptor.local_endpoint().port();
  }
  if (options_.https_port) {
    secure_.emplace(asio::make_strand(io_));
    secure_->tls = true;
    TESSERA_RETURN_IF_ERROR(Bind(*secure_, *options_.https_port));
    https_port_ = secure_->acceptor.local_endpoint().port();
  }
  spdlog::info("http.stream_listening host={} http_port={} https_port={}", options_.host,
               http_port_.load(), https_port_.load());
  for (Listener* listener : {plain_ ? &*plain_ : nullptr, secure_ ? &*secure_ : nullptr}) {
    if (listener == nullptr) continue;
    {
      std::lock_guard lock(mu_);
      ++accepts_outstanding_;
    }
    asio::post(listener->strand, [self = shared_from_this(), listener] { self->Accept(listener); });
  }
  return Status::Ok();
}

void StreamServerCore::Accept(Listener* listener) {
  listener->acceptor.async_accept(
      ConnectionExecutor(io_, options_.io_threads),
      [self = shared_from_this(), listener](const boost::system::error_code& ec, tcp::socket socket) {
        const bool done = self->stopping() || ec == asio::error::operation_aborted ||
                          !listener->acceptor.is_open();
        if (done) {
          std::lock_guard lock(self->mu_);
          --self->accepts_outstanding_;
          self->changed_.notify_all();
          return;
        }
        if (!ec) {
          self->OnAccepted(listener, std::move(socket));
          return self->Accept(listener);
        }
        // E.g. out of file descriptors: retry a little later, not in a spin.
        spdlog::warn("http.accept_failed error={}", ec.message());
        auto timer =
            std::make_shared<asio::steady_timer>(listener->strand, std::chrono::milliseconds(100));
        timer->async_wait([self, listener, timer](const boost::system::error_code&) {
          self->Accept(listener);
        });
      });
}

void StreamServerCore::OnAccepted(Listener* listener, tcp::socket socket) {
  accepted_.fetch_add(1, std::memory_order_relaxed);
  std::shared_ptr<ConnectionBase> connection;
  {
    std::lock_guard lock(mu_);
    if (stopping() || connections_.size() >= options_.connections_max) {
      refused_.fetch_add(1, std::memory_order_relaxed);
      boost::system::error_code ignored;
      socket.close(ignored);
      return;
    }
    const uint64_t id = next_id_++;
    connection = listener->tls ? MakeTlsConnection(shared_from_this(), id, std::move(socket))
                               : MakePlainConnection(shared_from_this(), id, std::move(socket));
    connections_.emplace(id, connection);
  }
  connection->Start();
}

void StreamServerCore::OnConnectionGone(uint64_t id) {
  std::lock_guard lock(mu_);
  connections_.erase(id);
  changed_.notify_all();
}

void StreamServerCore::Stop() {
  std::vector<std::shared_ptr<ConnectionBase>> open;
  {
    std::lock_guard lock(mu_);
    if (stopping_.exchange(true, std::memory_order_acq_rel)) return;
    for (auto& [id, weak] : connections_) {
      if (auto c = weak.lock()) open.push_back(std::move(c));
    }
  }
  for (Listener* listener : {plain_ ? &*plain_ : nullptr, secure_ ? &*secure_ : nullptr}) {
    if (listener == nullptr) continue;
    asio::post(listener->strand, [self = shared_from_this(), listener] {
      boost::system::error_code ignored;
      listener->acceptor.close(ignored);
    });
  }
  for (auto& c : open) c->PostClose();
  open.clear();
  std::unique_lock lock(mu_);
  while (!(connections_.empty() && accepts_outstanding_ == 0)) {
    if (io_.stopped()) break;  // nothing will run the closes
    changed_.wait_for(lock, std::chrono::milliseconds(10));
  }
  if (started_) spdlog::info("http.stream_stopped http_port={} https_port={}", http_port_.load(),
                             https_port_.load());
}

}  // namespace internal

StreamServer::StreamServer(asio::io_context& io, StreamServerOptions options, StreamHandler handler)
    : impl_(std::make_shared<internal::StreamServerCore>(io, std::move(options), std::move(handler))) {}

StreamServer::~StreamServer() { Stop(); }

Status StreamServer::Start() { return impl_->Listen(); }

uint16_t StreamServer::http_port() const { return impl_->http_port_.load(); }

uint16_t StreamServer::https_port() const { return impl_->https_port_.load(); }

StreamServerStats StreamServer::stats() const {
  StreamServerStats s;
  s.connections_accepted = impl_->accepted_.load();
  s.connections_refused = impl_->refused_.load();
  s.tls_handshakes_failed = impl_->tls_failed_.load();
  s.requests = impl_->requests_.load();
  s.protocol_errors = impl_->protocol_errors_.load();
  std::lock_guard lock(impl_->mu_);
  s.connections_open = impl_->connections_.size();
  return s;
}

void StreamServer::Stop() { impl_->Stop(); }

// --- ReadWholeBody ---------------------------------------------------------------

namespace {

struct WholeBodyRead : std::enable_shared_from_this<WholeBodyRead> {
  std::shared_ptr<Exchange> exchange;
  size_t bytes_max = 0;
  std::function<void(Result<std::string>)> done;
  std::string body;

  void Next() {
    // Ask for one byte beyond the bound so that an oversized body shows.
    size_t want = bytes_max - body.size();
    if (want < SIZE_MAX) ++want;
    exchange->ReadBody(want, [self = shared_from_this()](Result<std::string> piece, bool end) {
      if (!piece.ok()) return self->done(piece.status());
      if (self->body.size() + piece->size() > self->bytes_max) {
        return self->done(Status::InvalidArgument("http: request body above " +
                                                  std::to_string(self->bytes_max) + " bytes"));
      }
      self->body += *piece;
      if (end) return self->done(std::move(self->body));
      self->Next();
    });
  }
};

}  // namespace

void ReadWholeBody(std::shared_ptr<Exchange> exchange, size_t bytes_max,
                   std::function<void(Result<std::string>)> done) {
  TESSERA_CHECK(exchange && done);
  auto read = std::make_shared<WholeBodyRead>();
  read->exchange = std::move(exchange);
  read->bytes_max = bytes_max;
  read->done = std::move(done);
  read->Next();
}

}  // namespace tessera::http
