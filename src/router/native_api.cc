#include "router/native_api.h"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <chrono>
#include <future>

#include "common/check.h"
#include "router/native_connection.h"

namespace tessera::router {

namespace asio = boost::asio;

Status ValidateNativeApiOptions(const NativeApiOptions& o) {
  if (o.handshake_timeout_ms < 1 || o.handshake_timeout_ms > limits::kNativeClientTimeoutMsMax) {
    return Status::InvalidArgument("native API: handshake_timeout_ms out of range");
  }
  if (o.connections_max < 1 || o.connections_max > limits::kNativeConnectionsMax) {
    return Status::InvalidArgument("native API: connections_max must be 1..kNativeConnectionsMax");
  }
  if (o.inflight_requests_max < 1 || o.inflight_requests_max > limits::kNativeInflightRequestsMax) {
    return Status::InvalidArgument("native API: inflight_requests_max must be 1..kNativeInflightRequestsMax");
  }
  if (o.queue_bytes_max < limits::kNativeResponseFrameBytesMax ||
      o.queue_bytes_max > limits::kNativeQueueBytesMax) {
    return Status::InvalidArgument(
        "native API: queue_bytes_max must hold one response frame, at most kNativeQueueBytesMax");
  }
  return Status::Ok();
}

namespace native_internal {
namespace {

constexpr auto kAcceptRetryDelay = std::chrono::milliseconds(100);
constexpr const char* kAuthHelp = "native KV API connections refused by authentication";
constexpr const char* kMalformedHelp = "native KV API connections closed for a malformed frame";

}  // namespace

NativeMetrics::NativeMetrics(metrics::Registry& registry)
    : connections(registry.GetCounter("tessera_router_native_connections_total",
                                      "native KV API connections accepted")),
      connections_open(registry.GetGauge("tessera_router_native_connections_open",
                                         "native KV API connections open")),
      requests(registry.GetCounter("tessera_router_native_requests_total",
                                   "native KV API requests received after authentication")),
      throttled(registry.GetCounter("tessera_router_native_throttled_total",
                                    "native KV API requests refused beyond the per-connection in-flight bound")),
      registry_(registry) {}

metrics::Counter& NativeMetrics::AuthFailure(const char* reason) {
  return registry_.GetCounter("tessera_router_native_auth_failures_total", kAuthHelp, {{"reason", reason}});
}

metrics::Counter& NativeMetrics::Malformed(const char* reason) {
  return registry_.GetCounter("tessera_router_native_malformed_frames_total", kMalformedHelp,
                              {{"reason", reason}});
}

ServerState::ServerState(asio::io_context& io_context, NativeKvHandler& kv_handler,
                         const CredentialStore& credential_store, metrics::Registry& registry,
                         NativeApiOptions opts)
    : io(io_context),
      handler(kv_handler),
      credentials(credential_store),
      options(std::move(opts)),
      metrics(registry),
      acceptor_strand(asio::make_strand(io_context)),
      acceptor_(acceptor_strand) {}

Status ServerState::Listen() {
  TESSERA_RETURN_IF_ERROR(ValidateNativeApiOptions(options));
  if (started.exchange(true)) return Status::InvalidArgument("native API: Start called twice");
  if (options.tls) {
    auto context = http::MakeServerTlsContext(*options.tls);
    if (!context.ok()) return Status::IOError("native API: " + context.status().message());
    tls_context_ = std::move(context).value();
  }
  boost::system::error_code error;
  const asio::ip::address address = asio::ip::make_address(options.host, error);
  if (error) return Status::InvalidArgument("native API: host is not an IP address: " + options.host);
  const asio::ip::tcp::endpoint endpoint(address, options.port);
  if (acceptor_.open(endpoint.protocol(), error) ||
      acceptor_.set_option(asio::socket_base::reuse_address(true), error) || acceptor_.bind(endpoint, error) ||
      acceptor_.listen(asio::socket_base::max_listen_connections, error)) {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    return Status::IOError("native API: cannot listen on " + options.host + ":" + std::to_string(options.port) +
                           ": " + error.message());
  }
  port.store(acceptor_.local_endpoint(error).port());
  asio::post(acceptor_strand, [self = shared_from_this()] { self->AcceptNext(); });
  return Status::Ok();
}

void ServerState::AcceptNext() {
  if (stopped.load()) return;
  Strand strand = asio::make_strand(io);
  acceptor_.async_accept(strand, [self = shared_from_this(), strand](const boost::system::error_code& error,
                                                                     auto socket) mutable {
    self->OnAccept(error, std::move(strand), asio::ip::tcp::socket(std::move(socket)));
  });
}

void ServerState::OnAccept(const boost::system::error_code& error, Strand strand, asio::ip::tcp::socket socket) {
  if (stopped.load() || error == asio::error::operation_aborted) return;
  if (error) {
    spdlog::error("router.native_accept_failed error=\"{}\"", error.message());
    auto timer = std::make_shared<asio::steady_timer>(acceptor_strand, kAcceptRetryDelay);
    timer->async_wait([self = shared_from_this(), timer](const boost::system::error_code& e) {
      if (!e) self->AcceptNext();
    });
    return;
  }
  metrics.connections.Increment();
  std::erase_if(connections_, [](const auto& weak) { return weak.expired(); });
  if (connections_open.load() >= options.connections_max) {
    spdlog::warn("router.native_connection_refused reason=too_many_connections open={}", connections_open.load());
    boost::system::error_code ignored;
    socket.close(ignored);
  } else {
    connections_open.fetch_add(1);
    metrics.connections_open.Add(1);
    auto connection =
        std::make_shared<Connection>(shared_from_this(), strand, std::move(socket), tls_context_.get());
    connections_.push_back(connection);
    asio::post(strand, [connection] { connection->Start(); });
  }
  AcceptNext();
}

void ServerState::StopOnStrand(std::function<void()> done) {
  stopped.store(true);
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  for (const auto& weak : connections_) {
    if (auto connection = weak.lock()) {
      asio::post(connection->strand(), [connection] { connection->Close(); });
    }
  }
  connections_.clear();
  done();
}

}  // namespace native_internal

NativeKvServer::NativeKvServer(asio::io_context& io, NativeKvHandler& handler, const CredentialStore& credentials,
                               metrics::Registry& metrics, NativeApiOptions options)
    : state_(std::make_shared<native_internal::ServerState>(io, handler, credentials, metrics,
                                                            std::move(options))) {}

NativeKvServer::~NativeKvServer() { Stop(); }

Status NativeKvServer::Start() {
  Status listening = state_->Listen();
  if (listening.ok()) {
    spdlog::info("router.native_listening addr={}:{}", state_->options.host, state_->port.load());
  }
  return listening;
}

uint16_t NativeKvServer::port() const { return state_->port.load(); }

void NativeKvServer::Stop() {
  if (!state_->started.load() || state_->stopped.load()) return;
  TESSERA_CHECK(!state_->io.get_executor().running_in_this_thread());
  std::promise<void> stopped;
  std::future<void> done = stopped.get_future();
  asio::post(state_->acceptor_strand, [state = state_, &stopped] {
    state->StopOnStrand([&stopped] { stopped.set_value(); });
  });
  done.wait();
}

}  // namespace tessera::router
