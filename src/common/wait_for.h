// WaitFor: waiting, from a worker thread (GC, sweeper, refreshers), for an
// asynchronous callback: the callback may come after the wait gave up, so the
// promise is shared. Never call from an io thread or a group strand.
#pragma once

#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <utility>

namespace tessera {

// Calls start(callback) and waits up to `timeout` for callback(value);
// nullopt when it did not come in time.
template <typename T, typename Start>
std::optional<T> WaitFor(std::chrono::milliseconds timeout, Start&& start) {
  auto promise = std::make_shared<std::promise<T>>();
  std::future<T> future = promise->get_future();
  start([promise](T value) { promise->set_value(std::move(value)); });
  if (future.wait_for(timeout) != std::future_status::ready) return std::nullopt;
  return future.get();
}

}  // namespace tessera
