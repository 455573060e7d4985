// SharedBytes: read-only bytes that several holders share without copying
// (a blob read on its way from the page cache to a socket, a blob put's
// data sent to three nodes).
//
// Contract:
//  1. Copies share one storage, freed with the last copy; the bytes never
//     change once a SharedBytes holds them.
//  2. Uninitialized(n) allocates n bytes without zeroing them: the creator
//     must write every byte through mutable_data() before making the first
//     copy or handing it on. Large buffers are filled by a read or a copy
//     anyway, and zeroing one first costs as much as filling it.
//  3. A default-constructed SharedBytes is empty (size 0, no storage).
//  4. Slice views part of the bytes and shares their storage.
//  5. UninitializedEndAligned(n, a) is Uninitialized whose last byte ends
//     at a multiple of `a` (a power of two): a buffer received into whose
//     tail (a blob's data, the end of a frame) can be written to a file
//     opened with O_DIRECT without a copy.
//  6. Viewing(owner, bytes) shares bytes that `owner` keeps alive (a file
//     mapping, say); the caller vouches that they never change.
//
// Thread safety: a SharedBytes may be copied and read from any thread
// (shared_ptr semantics); mutable_data() only by its creator, before
// sharing.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <utility>

#include "common/check.h"

namespace tessera {

class SharedBytes {
 public:
  SharedBytes() = default;
  SharedBytes(const SharedBytes& other)
      : owner_(other.owner_), data_(other.data_), size_(other.size_) {}  // not writable
  SharedBytes& operator=(const SharedBytes& other) {
    if (this != &other) *this = SharedBytes(other);
    return *this;
  }
  // A moved-from SharedBytes is empty.
  SharedBytes(SharedBytes&& other) noexcept
      : owner_(std::move(other.owner_)), data_(other.data_), size_(other.size_), writable_(other.writable_) {
    other.data_ = nullptr;
    other.size_ = 0;
    other.writable_ = false;
  }
  SharedBytes& operator=(SharedBytes&& other) noexcept {
    if (this != &other) {
      owner_ = std::move(other.owner_);
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
      writable_ = std::exchange(other.writable_, false);
    }
    return *this;
  }

  // Takes over `bytes` (moved, not copied).
  explicit SharedBytes(std::string bytes) {
    auto owned = std::make_shared<const std::string>(std::move(bytes));
    data_ = owned->data();
    size_ = owned->size();
    owner_ = std::move(owned);
  }

  // Contract 6.
  static SharedBytes Viewing(std::shared_ptr<const void> owner, std::string_view bytes) {
    SharedBytes out;
    out.owner_ = std::move(owner);
    out.data_ = bytes.data();
    out.size_ = bytes.size();
    return out;
  }

  static SharedBytes Uninitialized(size_t size) {
    SharedBytes out;
    std::shared_ptr<char[]> storage = std::make_shared_for_overwrite<char[]>(size);
    out.data_ = storage.get();
    out.size_ = size;
    out.owner_ = std::move(storage);
    out.writable_ = true;
    return out;
  }

  // Contract 5. `alignment`: a power of two, at most 64 KiB (CHECKed).
  static SharedBytes UninitializedEndAligned(size_t size, size_t alignment) {
    TESSERA_CHECK(alignment > 0 && (alignment & (alignment - 1)) == 0 && alignment <= (64 << 10));
    const size_t lead = (alignment - size % alignment) % alignment;
    // Through operator new: the binary serves large buffers from huge
    // pages (D45).
    char* base = static_cast<char*>(::operator new(lead + size, std::align_val_t{alignment}));
    std::shared_ptr<char> storage(base, [alignment](char* p) {
      ::operator delete(p, std::align_val_t{alignment});
    });
    SharedBytes out;
    out.data_ = base + lead;
    out.size_ = size;
    out.owner_ = std::move(storage);
    out.writable_ = true;
    return out;
  }

  // Contract 2: only of an Uninitialized one, by its creator, before sharing.
  char* mutable_data() {
    TESSERA_CHECK(writable_);
    return const_cast<char*>(data_);
  }

  // Bytes [offset, offset + n) of these; offset + n <= size().
  SharedBytes Slice(size_t offset, size_t n) const {
    TESSERA_CHECK(offset <= size_ && n <= size_ - offset);
    SharedBytes out;
    out.owner_ = owner_;
    out.data_ = data_ + offset;
    out.size_ = n;
    return out;
  }

  std::string_view view() const { return {data_, size_}; }
  const char* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  std::shared_ptr<const void> owner_;  // keeps [data_, data_ + size_) alive
  const char* data_ = nullptr;
  size_t size_ = 0;
  bool writable_ = false;  // made by Uninitialized (copies are not)
};

}  // namespace tessera
