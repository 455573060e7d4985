#include "rpc/server.h"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <future>

#include "common/check.h"
#include "rpc/envelope.h"
#include "rpc/server_internal.h"

namespace tessera::rpc {
namespace internal {
namespace {

// Pause after an accept error (EMFILE, ENFILE...) so it does not spin.
constexpr auto kAcceptRetryDelay = std::chrono::milliseconds(100);

Status ValidateServerOptions(const ServerOptions& options) {
  TESSERA_RETURN_IF_ERROR(ValidateIdentity(options.identity));
  if (options.handshake_timeout_ms == 0 || options.handshake_timeout_ms > limits::kRpcCallTimeoutMsMax) {
    return Status::InvalidArgument("rpc server: handshake_timeout_ms out of range");
  }
  if (options.connections_max == 0 || options.connections_max > limits::kRpcServerConnectionsMax ||
      options.handshakes_max == 0 || options.handshakes_max > limits::kRpcServerHandshakesMax ||
      options.inflight_requests_max == 0 ||
      options.inflight_requests_max > limits::kRpcServerInflightRequestsMax ||
      options.queue_bytes_max == 0 || options.queue_bytes_max > limits::kRpcServerQueueBytesMax) {
    return Status::InvalidArgument("rpc server: a bound is 0 or above its limit");
  }
  return Status::Ok();
}

}  // namespace

ServerCore::ServerCore(RpcContext ctx, ServerOptions opts)
    : context(ctx),
      options(std::move(opts)),
      metrics(std::make_shared<RpcMetrics>(ctx.metrics, "server")),
      acceptor_strand(asio::make_strand(ctx.io)),
      acceptor_(acceptor_strand),
      retry_timer_(acceptor_strand) {}

Status ServerCore::RegisterHandler(std::string_view method, RegisteredHandler handler) {
  TESSERA_RETURN_IF_ERROR(ValidateMethod(method));
  if (started.load()) return Status::InvalidArgument("rpc server: handlers are registered before Start");
  if (!handler.plain && !handler.with_payload) return Status::InvalidArgument("rpc server: empty handler");
  if (options.access != nullptr && !options.access->Covers(method)) {
    return Status::InvalidArgument("rpc server: no access rule for " + std::string(method));
  }
  if (!handlers_.emplace(std::string(method), std::move(handler)).second) {
    return Status::InvalidArgument("rpc server: duplicate handler for " + std::string(method));
  }
  return Status::Ok();
}

const RegisteredHandler* ServerCore::FindHandler(const std::string& method) const {
  const auto it = handlers_.find(method);
  return it == handlers_.end() ? nullptr : &it->second;
}

Status ServerCore::Listen() {
  TESSERA_RETURN_IF_ERROR(ValidateServerOptions(options));
  if (started.exchange(true)) return Status::InvalidArgument("rpc server: Start called twice");
  boost::system::error_code error;
  const asio::ip::address address = asio::ip::make_address(options.host, error);
  if (error) return Status::InvalidArgument("rpc server: host is not an IP address: " + options.host);
  const asio::ip::tcp::endpoint endpoint(address, options.port);
  const std::string where = options.host + ":" + std::to_string(options.port);
  if (acceptor_.open(endpoint.protocol(), error) ||
      acceptor_.set_option(asio::socket_base::reuse_address(true), error) ||
      acceptor_.bind(endpoint, error) ||
      acceptor_.listen(asio::socket_base::max_listen_connections, error)) {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    return Status::IOError("rpc server: cannot listen on " + where + ": " + error.message());
  }
  port.store(acceptor_.local_endpoint(error).port());
  spdlog::info("rpc.listening addr={}:{} peer_id={} role={}", options.host, port.load(),
               options.identity.peer_id, options.identity.role);
  asio::post(acceptor_strand, [self = shared_from_this()] { self->AcceptNext(); });
  return Status::Ok();
}

void ServerCore::AcceptNext() {
  if (stopped.load()) return;
  Strand strand = asio::make_strand(context.io);
  acceptor_.async_accept(
      strand, [self = shared_from_this(), strand](const boost::system::error_code& error,
                                                  auto socket) mutable {
        self->OnAccept(error, std::move(strand), asio::ip::tcp::socket(std::move(socket)));
      });
}

void ServerCore::OnAccept(const boost::system::error_code& error, Strand strand,
                          asio::ip::tcp::socket socket) {
  if (stopped.load() || error == asio::error::operation_aborted) return;
  if (error) {
    spdlog::error("rpc.accept_failed error=\"{}\"", error.message());
    retry_timer_.expires_after(kAcceptRetryDelay);
    retry_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& e) {
      if (!e) self->AcceptNext();
    });
    return;
  }
  connections_accepted.fetch_add(1);
  std::erase_if(connections_, [](const auto& weak) { return weak.expired(); });
  // Contract 6: the newest handshake wins a full table; the oldest goes.
  std::erase_if(handshaking_, [](const auto& weak) {
    auto connection = weak.lock();
    return !connection || !connection->in_handshake();
  });
  if (handshaking_.size() >= options.handshakes_max) {
    if (auto oldest = handshaking_.front().lock()) {
      handshakes_evicted.fetch_add(1);
      asio::post(oldest->strand(), [oldest] { oldest->EvictHandshake(); });
    }
    handshaking_.pop_front();
  }
  handshakes_open.fetch_add(1);
  auto connection = std::make_shared<ServerConnection>(shared_from_this(), strand, std::move(socket));
  connections_.push_back(connection);
  handshaking_.push_back(connection);
  asio::post(strand, [connection] { connection->Start(); });
  AcceptNext();
}

void ServerCore::StopOnStrand(std::function<void()> done) {
  stopped.store(true);
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  retry_timer_.cancel();
  std::vector<std::shared_ptr<ServerConnection>> live;
  for (const auto& weak : connections_) {
    if (auto connection = weak.lock()) live.push_back(std::move(connection));
  }
  connections_.clear();
  if (live.empty()) {
    done();
    return;
  }
  auto remaining = std::make_shared<std::atomic<size_t>>(live.size());
  auto shared_done = std::make_shared<std::function<void()>>(std::move(done));
  for (auto& connection : live) {
    asio::post(connection->strand(), [connection, remaining, shared_done] {
      connection->Close();
      if (remaining->fetch_sub(1) == 1) (*shared_done)();
    });
  }
}

}  // namespace internal

RpcServer::RpcServer(RpcContext context, ServerOptions options)
    : core_(std::make_shared<internal::ServerCore>(context, std::move(options))) {}

RpcServer::~RpcServer() { Stop(); }

Status RpcServer::RegisterHandler(std::string_view method, Handler handler) {
  return core_->RegisterHandler(method, {.plain = std::move(handler), .with_payload = nullptr});
}

Status RpcServer::RegisterPayloadHandler(std::string_view method, PayloadHandler handler) {
  return core_->RegisterHandler(method, {.plain = nullptr, .with_payload = std::move(handler)});
}

Status RpcServer::Start() { return core_->Listen(); }

uint16_t RpcServer::port() const { return core_->port.load(); }

ServerStats RpcServer::stats() const {
  ServerStats s;
  s.connections_accepted = core_->connections_accepted.load();
  s.connections_authenticated = core_->connections_authenticated.load();
  s.connections_open = core_->connections_open.load();
  s.handshakes_open = core_->handshakes_open.load();
  s.handshakes_evicted = core_->handshakes_evicted.load();
  s.requests = core_->requests.load();
  return s;
}

void RpcServer::Stop() {
  if (!core_->started.load() || core_->stopped.load()) return;
  TESSERA_CHECK(!core_->context.io.get_executor().running_in_this_thread());
  std::promise<void> stopped;
  std::future<void> done = stopped.get_future();
  boost::asio::post(core_->acceptor_strand, [core = core_, &stopped] {
    core->StopOnStrand([&stopped] { stopped.set_value(); });
  });
  done.wait();
  spdlog::info("rpc.server_stopped peer_id={} port={}", core_->options.identity.peer_id,
               core_->port.load());
}

}  // namespace tessera::rpc
