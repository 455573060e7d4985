#include "blob/node_read_gate.h"

#include <string>

#include "common/check.h"

namespace tessera::blob {
namespace {

// The list the outermost Run on this thread is working through (contract 4).
thread_local std::vector<std::pair<NodeReadGate::Start, Status>>* t_running = nullptr;

}  // namespace

NodeReadGate::NodeReadGate(Options options) : options_(options) {
  TESSERA_CHECK(options_.bytes_max > 0 && options_.reads_max > 0);
}

bool NodeReadGate::FitsLocked(const NodeState& state, size_t bytes) const {
  return state.reads == 0 || (state.reads < options_.reads_max && state.bytes <= options_.bytes_max &&
                              bytes <= options_.bytes_max - state.bytes);
}

void NodeReadGate::Enter(uint32_t node, size_t bytes, ReadPriority priority, Clock::time_point now,
                         Start start) {
  ReadyList ready;
  {
    std::lock_guard lock(mu_);
    NodeState& state = nodes_[node];
    AdmitWaitingLocked(state, now, ready);
    // Contract 2: a read never passes one of its own priority or higher.
    bool queue_ahead = !state.waiting[0].empty();
    if (priority == ReadPriority::kReadAhead) queue_ahead = queue_ahead || !state.waiting[1].empty();
    if (!queue_ahead && FitsLocked(state, bytes)) {
      state.bytes += bytes;
      ++state.reads;
      ready.emplace_back(std::move(start), Status::Ok());
    } else {
      state.waiting[static_cast<size_t>(priority)].push_back(Waiter{bytes, now, std::move(start)});
      ++waiting_;
      ++waited_;
    }
  }
  Run(std::move(ready));
}

void NodeReadGate::Leave(uint32_t node, size_t bytes, Clock::time_point now) {
  ReadyList ready;
  {
    std::lock_guard lock(mu_);
    auto it = nodes_.find(node);
    TESSERA_CHECK(it != nodes_.end());
    NodeState& state = it->second;
    TESSERA_CHECK(state.reads > 0 && state.bytes >= bytes);
    state.bytes -= bytes;
    --state.reads;
    AdmitWaitingLocked(state, now, ready);
  }
  Run(std::move(ready));
}

void NodeReadGate::AdmitWaitingLocked(NodeState& state, Clock::time_point now, ReadyList& ready) {
  // Expired reads are a prefix of each queue (first come first served).
  for (std::deque<Waiter>& queue : state.waiting) {
    while (!queue.empty() && now - queue.front().since > options_.wait_max) {
      const auto waited_ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(now - queue.front().since).count();
      ready.emplace_back(std::move(queue.front().start),
                         Status::Unavailable("waited " + std::to_string(waited_ms) +
                                             " ms behind the node's unanswered reads"));
      queue.pop_front();
      --waiting_;
    }
  }
  for (std::deque<Waiter>& queue : state.waiting) {
    while (!queue.empty() && FitsLocked(state, queue.front().bytes)) {
      state.bytes += queue.front().bytes;
      ++state.reads;
      ready.emplace_back(std::move(queue.front().start), Status::Ok());
      queue.pop_front();
      --waiting_;
    }
    if (!queue.empty()) return;  // lower priorities wait behind its head
  }
}

void NodeReadGate::Run(ReadyList ready) {
  if (t_running != nullptr) {
    for (auto& r : ready) t_running->push_back(std::move(r));
    return;
  }
  t_running = &ready;
  // Starts may append to `ready` (through nested calls): index, not iterators.
  for (size_t i = 0; i < ready.size(); ++i) {
    auto [start, status] = std::move(ready[i]);
    start(std::move(status));
  }
  t_running = nullptr;
}

size_t NodeReadGate::bytes_in_flight(uint32_t node) const {
  std::lock_guard lock(mu_);
  auto it = nodes_.find(node);
  return it == nodes_.end() ? 0 : it->second.bytes;
}

size_t NodeReadGate::reads_in_flight(uint32_t node) const {
  std::lock_guard lock(mu_);
  auto it = nodes_.find(node);
  return it == nodes_.end() ? 0 : it->second.reads;
}

size_t NodeReadGate::reads_waiting() const {
  std::lock_guard lock(mu_);
  return waiting_;
}

uint64_t NodeReadGate::reads_waited() const {
  std::lock_guard lock(mu_);
  return waited_;
}

}  // namespace tessera::blob
