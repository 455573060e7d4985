// ByteBudget: a process-wide cap on bytes held by many independent owners
// (e.g. every request's buffered aws-chunked chunk), taken and given back
// through ByteLease.
//
// Contract:
//  1. The bytes leased at any time never exceed max(): TryLease refuses
//     (an empty lease) rather than exceed it.
//  2. A lease gives its bytes back exactly once: when released, reset to
//     another size, or destroyed.
//
// Thread safety: ByteBudget is thread-safe; a ByteLease belongs to one
// owner. A lease must not outlive its budget (hold the budget in a
// shared_ptr when lifetimes are unclear).
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>

namespace tessera {

class ByteBudget;

class ByteLease {
 public:
  ByteLease() = default;
  ByteLease(ByteLease&& other) noexcept;
  ByteLease& operator=(ByteLease&& other) noexcept;
  ByteLease(const ByteLease&) = delete;
  ByteLease& operator=(const ByteLease&) = delete;
  ~ByteLease() { Release(); }

  size_t bytes() const { return bytes_; }
  void Release();

 private:
  friend class ByteBudget;
  ByteLease(std::shared_ptr<ByteBudget> budget, size_t bytes) : budget_(std::move(budget)), bytes_(bytes) {}

  std::shared_ptr<ByteBudget> budget_;
  size_t bytes_ = 0;
};

class ByteBudget : public std::enable_shared_from_this<ByteBudget> {
 public:
  // Create through std::make_shared (leases keep the budget alive).
  explicit ByteBudget(size_t max) : max_(max) {}

  // A lease of `bytes`, or an empty one (bytes() == 0) when that would
  // exceed max(). A request of 0 bytes gets an empty lease.
  ByteLease TryLease(size_t bytes);

  size_t max() const { return max_; }
  size_t leased() const { return leased_.load(std::memory_order_relaxed); }

 private:
  friend class ByteLease;
  void GiveBack(size_t bytes);

  const size_t max_;
  std::atomic<size_t> leased_{0};
};

}  // namespace tessera
