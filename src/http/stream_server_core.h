// Internal to StreamServer: the state shared by the server object, its
// listeners and its connections (stream_connection.h). Not for other
// modules.
//
// Thread safety: the options, handler and TLS context are immutable after
// Listen; counters are atomics; mu_ guards the connection registry and the
// stop/accept flags. Each acceptor is used on its own strand only.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/strand.hpp>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>

#include "common/status.h"
#include "http/stream_server.h"

namespace tessera::http::internal {

// What the core needs of a connection, whatever its stream type.
class ConnectionBase {
 public:
  virtual ~ConnectionBase() = default;
  // Starts the TLS handshake or the first read, on the connection's strand.
  virtual void Start() = 0;
  // Closes the connection on its strand; from any thread.
  virtual void PostClose() = 0;
};

class StreamServerCore : public std::enable_shared_from_this<StreamServerCore> {
 public:
  using Strand = boost::asio::strand<boost::asio::io_context::executor_type>;

  StreamServerCore(boost::asio::io_context& io, StreamServerOptions options, StreamHandler handler);

  Status Listen();
  void Stop();
  // A connection closed (or was destroyed before closing): forget it.
  void OnConnectionGone(uint64_t id);
  bool stopping() const { return stopping_.load(std::memory_order_acquire); }
  // The body and headers of a server-made error response (contract 6).
  ProtocolErrorResponse RenderProtocolError(unsigned status, std::string_view reason) const;

  boost::asio::io_context& io_;
  const StreamServerOptions options_;
  const StreamHandler handler_;
  std::unique_ptr<boost::asio::ssl::context> ssl_context_;  // set when https is on

  std::atomic<uint16_t> http_port_{0}, https_port_{0};
  std::atomic<uint64_t> accepted_{0}, refused_{0}, tls_failed_{0}, requests_{0},
      protocol_errors_{0};

  std::mutex mu_;  // guards the members below
  std::condition_variable changed_;
  int accepts_outstanding_ = 0;
  uint64_t next_id_ = 1;
  std::map<uint64_t, std::weak_ptr<ConnectionBase>> connections_;

 private:
  struct Listener {
    explicit Listener(Strand strand) : strand(strand), acceptor(strand) {}
    Strand strand;
    boost::asio::ip::tcp::acceptor acceptor;
    bool tls = false;
  };

  Status ValidateOptions() const;
  Status LoadTls();
  Status Bind(Listener& listener, uint16_t port);
  void Accept(Listener* listener);
  void OnAccepted(Listener* listener, boost::asio::ip::tcp::socket socket);

  std::atomic<bool> started_{false};
  std::atomic<bool> stopping_{false};
  std::optional<Listener> plain_, secure_;
};

}  // namespace tessera::http::internal
