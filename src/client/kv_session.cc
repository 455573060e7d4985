#include "client/kv_session.h"

#include <algorithm>
#include <utility>

#include "common/check.h"
#include "common/limits.h"

namespace tessera::kvapi {

KvSession::KvSession(std::vector<KvEndpoint> routers, std::string access_key, std::string secret_key,
                     KvClientOptions options)
    : routers_(std::move(routers)),
      access_key_(std::move(access_key)),
      secret_key_(std::move(secret_key)),
      options_(options) {
  TESSERA_CHECK(!routers_.empty() && routers_.size() <= limits::kNativeClientEndpointsMax);
}

KvSession::~KvSession() {
  std::shared_ptr<KvConnection> current, lost;
  {
    std::lock_guard lock(mu_);
    current = std::move(current_);
    lost = std::move(lost_);
  }
  if (current) current->Shutdown();
  if (lost) lost->Shutdown();
}

KvStatus KvSession::Open() {
  std::lock_guard lock(mu_);
  KvStatus first;
  for (size_t i = 0; i < routers_.size(); ++i) {
    KvStatus st = ConnectNextLocked();
    if (st.ok()) return st;
    if (first.ok()) first = st;
    if (st.code() == KvCode::kPermissionDenied) return st;
  }
  return first;
}

bool KvSession::connected() const {
  std::lock_guard lock(mu_);
  return current_ && current_->connected();
}

uint64_t KvSession::reconnects() const {
  std::lock_guard lock(mu_);
  return reconnects_;
}

void KvSession::Submit(KvRequest request, KvClient::Callback done) {
  KvStatus why;
  std::shared_ptr<KvConnection> retired;
  bool submitted = false;
  {
    // Posting under mu_: a connection cannot be shut down between being
    // picked and being handed the request (it then answers kIOError).
    std::lock_guard lock(mu_);
    if (std::shared_ptr<KvConnection> connection = UsableLocked(&why, &retired)) {
      connection->Submit(std::move(request), std::move(done));
      submitted = true;
    }
  }
  if (retired) retired->Shutdown();  // joins its I/O thread: never with mu_ held
  if (!submitted) done(why);
}

std::shared_ptr<KvConnection> KvSession::UsableLocked(KvStatus* why,
                                                      std::shared_ptr<KvConnection>* retired) {
  if (current_ && current_->connected()) return current_;
  if (refused_) {
    *why = last_failure_;
    return nullptr;
  }
  if (current_) {
    *retired = TakeLostLocked();
    // lost_ stays set only when this thread is lost_'s I/O thread, which is
    // then not current_'s: current_ may be shut down from here.
    if (!lost_) {
      lost_ = std::move(current_);
    } else {
      *retired = std::move(current_);
    }
    current_.reset();
  }
  const Clock::time_point now = Clock::now();
  if (now < retry_at_) {
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(retry_at_ - now);
    *why = KvStatus(KvCode::kIOError, "not connected (" + last_failure_.ToString() +
                                          "); next attempt in " + std::to_string(wait.count()) + " ms");
    return nullptr;
  }
  const KvStatus st = ConnectNextLocked();
  if (!st.ok()) {
    *why = st.code() == KvCode::kPermissionDenied
               ? st
               : KvStatus(KvCode::kIOError, "not connected: " + st.ToString());
    return nullptr;
  }
  ++reconnects_;
  if (!*retired) *retired = TakeLostLocked();
  return current_;
}

KvStatus KvSession::ConnectNextLocked() {
  const KvEndpoint& router = routers_[next_router_];
  next_router_ = (next_router_ + 1) % routers_.size();
  auto connection = std::make_shared<KvConnection>(options_);
  KvStatus st = connection->Connect(router.host, router.port, access_key_, secret_key_);
  if (st.ok()) {
    current_ = std::move(connection);
    backoff_ms_ = 0;
    retry_at_ = {};
    return st;
  }
  connection->Shutdown();  // this thread is not its I/O thread
  last_failure_ = KvStatus(st.code(), router.host + ":" + std::to_string(router.port) + ": " +
                                          st.message());
  refused_ = st.code() == KvCode::kPermissionDenied;
  backoff_ms_ = backoff_ms_ == 0 ? limits::kNativeClientReconnectBackoffMsInitial
                                 : std::min(backoff_ms_ * 2, limits::kNativeClientReconnectBackoffMsMax);
  retry_at_ = Clock::now() + std::chrono::milliseconds(backoff_ms_);
  return last_failure_;
}

std::shared_ptr<KvConnection> KvSession::TakeLostLocked() {
  if (!lost_ || lost_->OnIoThread()) return nullptr;
  return std::move(lost_);
}

}  // namespace tessera::kvapi
