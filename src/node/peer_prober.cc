#include "node/peer_prober.h"

#include <chrono>
#include <mutex>
#include <set>

#include "common/status.h"
#include "node/peer_link_window.h"

namespace tessera::node {
namespace {

uint64_t NowMs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

}  // namespace

struct PeerProber::Shared {
  explicit Shared(uint32_t window_ms) : window(window_ms) {}
  std::mutex mu;
  PeerLinkWindow window;
  std::set<uint32_t> in_flight;
};

PeerProber::PeerProber(rpc::ChannelPool& pool, uint32_t self_id,
                       std::function<std::vector<uint32_t>()> peers, PeerProberOptions options)
    : pool_(pool),
      self_id_(self_id),
      peers_(std::move(peers)),
      options_(options),
      shared_(std::make_shared<Shared>(options.window_ms)) {}

PeerProber::~PeerProber() { Stop(); }

void PeerProber::Start() {
  worker_.Start("peer-prober", options_.interval_ms, [this] { ProbeOnce(); });
}

void PeerProber::Stop() { worker_.Stop(); }

void PeerProber::ProbeOnce() {
  for (uint32_t peer : peers_()) {
    if (peer == self_id_) continue;
    {
      std::lock_guard lock(shared_->mu);
      if (!shared_->in_flight.insert(peer).second) continue;  // the previous ping is pending
    }
    auto channel = pool_.Get(peer);
    Status called = channel.status();
    if (channel.ok()) {
      std::weak_ptr<Shared> weak = shared_;
      called = (*channel)->Call(
          "node.ping", std::string(), std::chrono::milliseconds(options_.timeout_ms),
          [weak, peer](Result<std::string> answer) {
            auto shared = weak.lock();
            if (!shared) return;
            std::lock_guard lock(shared->mu);
            shared->in_flight.erase(peer);
            // Answered (whatever the answer), or no answer by the deadline;
            // a call lost with its connection says nothing of the peer's speed.
            const bool timed_out = !answer.ok() && answer.status().code() == StatusCode::kTimeout;
            const bool answered =
                answer.ok() || answer.status().send_outcome() == SendOutcome::kAnswered;
            if (answered || timed_out) shared->window.Record(peer, timed_out, NowMs());
          });
    }
    if (!called.ok()) {
      std::lock_guard lock(shared_->mu);
      shared_->in_flight.erase(peer);
    }
  }
}

std::vector<pb::PeerLinkProto> PeerProber::Report() const {
  std::lock_guard lock(shared_->mu);
  return shared_->window.Report(NowMs());
}

}  // namespace tessera::node
