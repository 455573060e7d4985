// KvSession: a KV workload client's connection and the client state built
// on it, owned together so that the connection outlives the state that
// refers to it (register_workload.cc, bank_workload.cc).
//
// Thread safety: one client thread owns a session.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "experiment/paced_clients.h"
#include "tessera/kv_client.h"

namespace tessera::experiment {

template <typename State>
struct KvSession {
  std::unique_ptr<KvClient> kv;
  std::unique_ptr<State> state;  // State(config, client, *kv)
};

// Connects with `connect` (retried every 200 ms until `stop`) and builds
// the client's state on the connection; null when stopped first.
template <typename State, typename Config, typename Connect>
std::shared_ptr<KvSession<State>> OpenKvSession(const Config& config, uint32_t client,
                                                Connect connect, const std::atomic<bool>& stop) {
  auto kv = RetryUntilStopped(connect, stop);
  if (!kv.ok()) return nullptr;
  auto session = std::make_shared<KvSession<State>>();
  session->kv = std::move(*kv);
  session->state = std::make_unique<State>(config, client, *session->kv);
  return session;
}

}  // namespace tessera::experiment
