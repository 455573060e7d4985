// KvSession: a KV workload client's connection (ConnectKv) and the client
// state built on it, owned together so that the connection outlives the state that
// refers to it (register_workload.cc, bank_workload.cc).
//
// Thread safety: one client thread owns a session.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "experiment/experiment_limits.h"
#include "experiment/paced_clients.h"
#include "tessera/kv_client.h"

namespace tessera::experiment {

// A KV connection for a workload whose `config` names the routers, the
// credentials and spec.timeout_ms (0: kOpTimeoutMsDefault), the bound of
// connecting and of every request.
template <typename Config>
KvResult<std::unique_ptr<KvClient>> ConnectKv(const Config& config) {
  KvClientOptions options;
  options.request_timeout_ms =
      config.spec.timeout_ms() == 0 ? kOpTimeoutMsDefault : config.spec.timeout_ms();
  options.connect_timeout_ms = options.request_timeout_ms;
  return KvClient::Connect(config.routers, config.access_key, config.secret_key, options);
}

template <typename State>
struct KvSession {
  std::unique_ptr<KvClient> kv;
  std::unique_ptr<State> state;  // State(config, client, *kv)
};

// Connects (ConnectKv, retried every 200 ms until `stop`) and builds the
// client's state on the connection; null when stopped first.
template <typename State, typename Config>
std::shared_ptr<KvSession<State>> OpenKvSession(const Config& config, uint32_t client,
                                                const std::atomic<bool>& stop) {
  auto kv = RetryUntilStopped([&config] { return ConnectKv(config); }, stop);
  if (!kv.ok()) return nullptr;
  auto session = std::make_shared<KvSession<State>>();
  session->kv = std::move(*kv);
  session->state = std::make_unique<State>(config, client, *session->kv);
  return session;
}

}  // namespace tessera::experiment
