#include "cluster/cluster_client.h"

#include <openssl/rand.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>

#include "common/metrics.h"
#include "rpc/channel_pool.h"
#include "rpc/fault_injector.h"

namespace tessera::cluster {

struct ClusterClient::State {
  boost::asio::io_context io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work{io.get_executor()};
  metrics::Registry metrics;
  rpc::FaultInjector faults{1};
  std::unique_ptr<rpc::ChannelPool> pool;
  std::thread thread;
  ProcessTable table;
  explicit State(const ProcessTable& t) : table(t) {}
};

Result<std::unique_ptr<ClusterClient>> ClusterClient::Create(const ProcessTable& table,
                                                             rpc::Identity identity) {
  TESSERA_RETURN_IF_ERROR(rpc::ValidateIdentity(identity));
  auto state = std::make_unique<State>(table);
  rpc::ChannelOptions defaults;
  defaults.identity = std::move(identity);
  defaults.connect_timeout_ms = 1000;
  defaults.backoff_initial_ms = 1;
  defaults.backoff_max_ms = 50;
  state->pool = std::make_unique<rpc::ChannelPool>(
      rpc::RpcContext{state->io, state->metrics, state->faults}, defaults);
  for (const ProcessEntry& e : table.all()) {
    if (!ServesRpc(e.role)) continue;  // routers speak HTTP to the CLI
    TESSERA_RETURN_IF_ERROR(
        state->pool->SetPeerAddress(e.id, e.host, static_cast<uint16_t>(e.peer_port)));
  }
  // The io thread takes no signal: a process that waits for SIGINT with
  // sigtimedwait (the foreground `tessera cluster up`) must receive it on
  // its own thread, never here, where the default action would end it.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &previous);
  state->thread = std::thread([s = state.get()] { s->io.run(); });
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return std::unique_ptr<ClusterClient>(new ClusterClient(std::move(state)));
}

ClusterClient::ClusterClient(std::unique_ptr<State> state) : state_(std::move(state)) {}

ClusterClient::~ClusterClient() {
  state_->pool.reset();
  state_->work.reset();
  state_->io.stop();
  state_->thread.join();
}

Result<std::string> ClusterClient::Call(uint32_t id, const std::string& method,
                                        const std::string& payload,
                                        std::chrono::milliseconds timeout) {
  auto channel = state_->pool->Get(id);
  if (!channel.ok()) return channel.status();
  auto promise = std::make_shared<std::promise<Result<std::string>>>();
  auto future = promise->get_future();
  Status sent = (*channel)->Call(method, payload, timeout,
                                 [promise](Result<std::string> r) { promise->set_value(std::move(r)); });
  if (!sent.ok()) return sent;
  return future.get();
}

Status ClusterClient::AddPeer(uint32_t id, const std::string& host, uint16_t port) {
  return state_->pool->SetPeerAddress(id, host, port);
}

Result<std::string> ClusterClient::CallAny(ProcessRole role, const std::string& method,
                                           const std::string& payload,
                                           std::chrono::milliseconds timeout) {
  Result<std::string> last = Status::Unavailable("no process of that role");
  for (const ProcessEntry& e : state_->table.OfRole(role)) {
    last = Call(e.id, method, payload, timeout);
    if (last.ok()) return last;
  }
  return last;
}

Result<std::string> ReadClusterSecret(const std::string& dir) {
  std::ifstream in(dir + "/secret");
  std::string secret;
  if (!(in >> secret) || secret.empty()) {
    return Status::NotFound("no cluster secret in " + dir + " (start the cluster with `tessera cluster up`)");
  }
  return secret;
}

Result<std::string> EnsureClusterSecret(const std::string& dir) {
  auto existing = ReadClusterSecret(dir);
  if (existing.ok()) return existing;
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) return Status::IOError("no randomness for the secret");
  std::ostringstream hex;
  for (unsigned char b : bytes) hex << "0123456789abcdef"[b >> 4] << "0123456789abcdef"[b & 15];
  const std::string path = dir + "/secret";
  {
    std::ofstream out(path, std::ios::trunc);
    if (!(out << hex.str() << "\n")) return Status::IOError("cannot write " + path);
  }
  ::chmod(path.c_str(), 0600);
  return hex.str();
}

}  // namespace tessera::cluster
