// KvSession: the reconnecting heart of tessera::KvClient. It holds one
// KvConnection at a time to one of the client's routers and replaces it
// when it is lost.
//
// Contract:
//  1. Submit uses the current connection while it is open. When it was lost
//     (or never opened), Submit first connects anew, blocking the calling
//     thread for at most connect_timeout_ms, to the router after the one
//     last tried (round robin over the endpoints). A failed attempt starts a
//     backoff (limits::kNativeClientReconnectBackoffMsInitial, doubling per
//     consecutive failure up to ..Max) during which Submit answers kIOError
//     at once, naming the last failure: a caller never waits on a dead
//     cluster for more than one connect timeout per backoff period.
//  2. Requests in flight when a connection is lost end with kIOError (a
//     write among them may or may not have happened); nothing is resent.
//  3. kPermissionDenied from a router ends reconnecting: every later call
//     answers it at once (a bad credential does not become good by retry).
//  4. A lost connection is shut down (its I/O thread joined) by a later
//     Submit or by the destructor, never from its own I/O thread and never
//     with the session's lock held (its callbacks may be calling Submit);
//     at most one lost connection waits for that.
//
// Thread safety: every method may be called from any thread, Submit also
// from a request's callback.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "client/kv_connection.h"
#include "tessera/kv_client.h"

namespace tessera::kvapi {

class KvSession {
 public:
  KvSession(std::vector<KvEndpoint> routers, std::string access_key, std::string secret_key,
            KvClientOptions options);
  ~KvSession();
  KvSession(const KvSession&) = delete;
  KvSession& operator=(const KvSession&) = delete;

  // The first connection (KvClient::Connect): tries each router once, in
  // order; the first failure's status when none accepts.
  KvStatus Open();
  void Submit(KvRequest request, KvClient::Callback done);
  bool connected() const;
  // Connections opened after the first (tests, monitoring).
  uint64_t reconnects() const;

 private:
  using Clock = std::chrono::steady_clock;
  // The open connection, reconnecting when allowed (mu_ held); null with
  // *why set when there is none. *retired: a connection the caller must
  // shut down once mu_ is released.
  std::shared_ptr<KvConnection> UsableLocked(KvStatus* why, std::shared_ptr<KvConnection>* retired);
  // One attempt at routers_[next_router_], advancing it (mu_ held).
  KvStatus ConnectNextLocked();
  // lost_, for shutting down, unless this is its own I/O thread.
  std::shared_ptr<KvConnection> TakeLostLocked();

  const std::vector<KvEndpoint> routers_;
  const std::string access_key_, secret_key_;
  const KvClientOptions options_;

  mutable std::mutex mu_;
  std::shared_ptr<KvConnection> current_;
  std::shared_ptr<KvConnection> lost_;  // replaced, not yet shut down
  size_t next_router_ = 0;
  KvStatus last_failure_;
  Clock::time_point retry_at_{};
  uint32_t backoff_ms_ = 0;
  bool refused_ = false;  // kPermissionDenied seen: no more attempts
  uint64_t reconnects_ = 0;
};

}  // namespace tessera::kvapi
