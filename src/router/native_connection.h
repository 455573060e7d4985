// Internals of NativeKvServer (native_api.h): the shared server state and
// one accepted connection. Not for use outside native_api.cc and
// native_connection.cc.
//
// Invariants:
//  1. A connection's socket, timer, decoder and output queue are used on its
//     strand only; answers from the handler (any thread) are posted there.
//  2. Phases only move forward: kHandshake -> kOpen -> kClosing -> kClosed
//     (kHandshake may go straight to kClosing). Frames are processed only
//     in kHandshake and kOpen; in kClosing the queued frames are flushed,
//     the sending side shut down, and incoming bytes discarded for a bounded
//     linger so the client reads the final error instead of a reset.
//  3. inflight_ counts requests handed to the handler and not yet answered.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include "common/maybe_tls_stream.h"
#include "router/native_api.h"
#include "rpc/frame.h"
#include "tessera/kv_api.pb.h"

namespace tessera::router::native_internal {

using Strand = boost::asio::strand<boost::asio::io_context::executor_type>;

struct NativeMetrics {
  explicit NativeMetrics(metrics::Registry& registry);
  metrics::Counter& connections;
  metrics::Gauge& connections_open;
  metrics::Counter& requests;
  metrics::Counter& throttled;
  // Counters labelled by reason, created on first use (reasons are a fixed set).
  metrics::Counter& AuthFailure(const char* reason);
  metrics::Counter& Malformed(const char* reason);

 private:
  metrics::Registry& registry_;
};

class Connection;

class ServerState : public std::enable_shared_from_this<ServerState> {
 public:
  ServerState(boost::asio::io_context& io, NativeKvHandler& handler, const CredentialStore& credentials,
              metrics::Registry& registry, NativeApiOptions options);

  Status Listen();
  void StopOnStrand(std::function<void()> done);

  boost::asio::io_context& io;
  NativeKvHandler& handler;
  const CredentialStore& credentials;
  const NativeApiOptions options;
  NativeMetrics metrics;
  Strand acceptor_strand;
  std::atomic<uint16_t> port{0};
  std::atomic<bool> started{false};
  std::atomic<bool> stopped{false};
  std::atomic<size_t> connections_open{0};

 private:
  void AcceptNext();
  void OnAccept(const boost::system::error_code& error, Strand strand, boost::asio::ip::tcp::socket socket);

  std::unique_ptr<boost::asio::ssl::context> tls_context_;  // set by Listen when options.tls
  boost::asio::ip::tcp::acceptor acceptor_;           // acceptor_strand only
  std::vector<std::weak_ptr<Connection>> connections_;  // acceptor_strand only
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  // `tls`: the listener's context when it is TLS (contract 6), else null.
  Connection(std::shared_ptr<ServerState> server, Strand strand, boost::asio::ip::tcp::socket socket,
             boost::asio::ssl::context* tls);
  ~Connection();

  const Strand& strand() const { return strand_; }
  // On the strand: sends the Challenge and starts reading.
  void Start();
  // On the strand: closes at once.
  void Close();

 private:
  enum class Phase { kHandshake, kOpen, kClosing, kClosed };

  // Sends the Challenge and starts reading (after the TLS handshake).
  void Greet();
  void Read();
  void OnBytes(size_t n);
  void OnFrame(std::string_view payload);
  void OnHello(const pb::KvApiHello& hello);
  void OnRequest(pb::KvApiRequest request);
  void OnAnswer(pb::KvApiResponse response);
  // Queues a frame; false when the connection was closed for a full queue.
  bool Enqueue(const pb::KvApiServerFrame& frame, size_t frame_bytes_max);
  void Write();
  // Sends `last` and closes gracefully (invariant 2).
  void Refuse(const pb::KvApiServerFrame& last);
  void AuthFailed(const char* reason, uint32_t code, const std::string& message);
  void Malformed(const char* reason, const std::string& detail);
  void StartLinger();

  std::shared_ptr<ServerState> server_;
  Strand strand_;
  MaybeTlsStream<boost::asio::ip::tcp::socket> stream_;
  boost::asio::steady_timer timer_;  // handshake deadline, then linger
  const std::string peer_;           // "ip:port"
  Phase phase_ = Phase::kHandshake;
  bool greeted_ = false;  // Greet ran: a TLS handshake, if any, completed
  rpc::FrameDecoder decoder_;
  std::vector<char> discard_;  // kClosing reads
  size_t discarded_bytes_ = 0;
  std::deque<std::string> out_;
  size_t queue_bytes_ = 0;
  bool writing_ = false;
  size_t inflight_ = 0;
  std::string server_nonce_;
  KvGrant grant_;  // the authenticated credential's (set by the Hello)
};

}  // namespace tessera::router::native_internal
