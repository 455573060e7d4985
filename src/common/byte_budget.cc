#include "common/byte_budget.h"

#include "common/check.h"

namespace tessera {

ByteLease::ByteLease(ByteLease&& other) noexcept
    : budget_(std::move(other.budget_)), bytes_(other.bytes_) {
  other.bytes_ = 0;
}

ByteLease& ByteLease::operator=(ByteLease&& other) noexcept {
  if (this != &other) {
    Release();
    budget_ = std::move(other.budget_);
    bytes_ = other.bytes_;
    other.bytes_ = 0;
  }
  return *this;
}

void ByteLease::Release() {
  if (budget_ != nullptr && bytes_ > 0) budget_->GiveBack(bytes_);
  budget_.reset();
  bytes_ = 0;
}

ByteLease ByteBudget::TryLease(size_t bytes) {
  if (bytes == 0) return ByteLease();
  size_t leased = leased_.load(std::memory_order_relaxed);
  do {
    if (bytes > max_ || leased > max_ - bytes) return ByteLease();
  } while (!leased_.compare_exchange_weak(leased, leased + bytes, std::memory_order_relaxed));
  return ByteLease(shared_from_this(), bytes);
}

void ByteBudget::GiveBack(size_t bytes) {
  const size_t before = leased_.fetch_sub(bytes, std::memory_order_relaxed);
  TESSERA_CHECK(before >= bytes);
}

}  // namespace tessera
