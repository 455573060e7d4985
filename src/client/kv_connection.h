// KvConnection: the client side of one native KV API connection
// (docs/formats/kv-api.md): TCP connect, the challenge-response handshake,
// then pipelined requests matched to responses by request id, with a
// per-request deadline. The machinery behind tessera::KvClient.
//
// Invariants:
//  1. Every socket operation, the pending-request table and the write queue
//     belong to the connection's own I/O thread; public methods post to it.
//  2. Every submitted request's callback runs exactly once, on the I/O
//     thread: with its response, kTimeout at its deadline, kIOError when the
//     connection is lost, or kAborted at Shutdown.
//
// Thread safety: Connect once, then Submit and connected from any thread;
// Shutdown (also run by the destructor) from any thread but the I/O thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "common/maybe_tls_stream.h"
#include "rpc/frame.h"
#include "tessera/kv_api.pb.h"
#include "tessera/kv_client.h"

namespace tessera::kvapi {

class KvConnection {
 public:
  using Callback = KvClient::Callback;

  explicit KvConnection(KvClientOptions options);
  ~KvConnection();
  KvConnection(const KvConnection&) = delete;
  KvConnection& operator=(const KvConnection&) = delete;

  // Blocks until authenticated or failed (see KvClient::Connect).
  KvStatus Connect(const std::string& host, uint16_t port, const std::string& access_key,
                   const std::string& secret_key);
  void Submit(KvRequest request, Callback done);
  bool connected() const { return open_.load(); }
  // Whether the caller runs on this connection's I/O thread (its callbacks).
  bool OnIoThread() const { return std::this_thread::get_id() == thread_.get_id(); }
  // Closes the connection, fails what is pending with kAborted, joins the
  // I/O thread. Idempotent.
  void Shutdown();

 private:
  enum class Phase { kConnecting, kAwaitChallenge, kAwaitWelcome, kOpen, kClosed };
  struct Pending {
    KvRequest::Op op;
    Callback done;
    std::chrono::steady_clock::time_point deadline;
  };

  void StartConnect(const std::string& host, uint16_t port);
  // After the TCP connect: the TLS handshake (when TLS), then the native
  // handshake's reads.
  void OnTcpConnected(const std::string& host);
  void FinishConnect(KvStatus status);
  void Read();
  void OnRead(const boost::system::error_code& ec, size_t n);
  void OnFrame(std::string_view payload);
  void OnChallenge(const pb::KvApiChallenge& challenge);
  void OnWelcome(const pb::KvApiWelcome& welcome);
  void OnResponse(const pb::KvApiResponse& response);
  void Send(const google::protobuf::MessageLite& message, size_t frame_bytes_max);
  void Write();
  // Ends the connection: every pending request fails with `status`.
  void Fail(KvStatus status);
  void StartSweep();
  void SubmitOnIoThread(KvRequest request, Callback done);

  const KvClientOptions options_;
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  // TLS when options_.tls_ca_file is set (made by Connect).
  std::unique_ptr<boost::asio::ssl::context> tls_context_;
  std::unique_ptr<MaybeTlsStream<boost::asio::ip::tcp::socket>> stream_;  // made by StartConnect
  boost::asio::steady_timer timer_;  // connect deadline, then the request sweep
  std::thread thread_;
  std::atomic<bool> open_{false};
  bool shut_down_ = false;  // caller's thread only

  // I/O thread only:
  Phase phase_ = Phase::kConnecting;
  rpc::FrameDecoder decoder_;
  std::deque<std::string> out_;
  bool writing_ = false;
  std::map<uint64_t, Pending> pending_;
  uint64_t next_request_id_ = 1;
  KvStatus lost_;  // why the connection ended
  std::string access_key_, secret_key_, server_nonce_, client_nonce_;
  std::optional<std::promise<KvStatus>> connect_done_;
};

}  // namespace tessera::kvapi
