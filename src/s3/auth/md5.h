// MD5 whose streams can advance side by side. Every S3 upload's ETag is
// the MD5 of its body, and MD5 is a chain of dependent 32-bit steps: one
// stream runs at ~5 cycles per byte however wide the core. Several uploads
// in flight (the aws CLI sends ten parts at once) are hashed together here,
// one stream per SIMD lane (16 with AVX-512, 8 with AVX2), which makes the
// router's ETag work several times cheaper per byte (D39).
//
// Contract: Md5UpdateEach(streams, data) leaves every stream exactly as
// streams[i]->Update(data[i]) would; the digest is plain MD5 (RFC 1321).
// Thread safety: none inside one Md5; distinct Md5s are independent.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace tessera::s3::auth {

// Streams Md5UpdateEach advances in one pass at most; more are taken in
// turns.
inline constexpr size_t kMd5LanesMax = 16;

class Md5;
namespace md5_internal {
enum class Kernel;
void UpdateEachWith(Kernel kernel, std::span<Md5* const> streams,
                    std::span<const std::string_view> data);
}  // namespace md5_internal

class Md5 {
 public:
  Md5();

  void Update(std::string_view data);
  // The 16-byte raw digest. Precondition: not yet finished.
  std::string Finish();

 private:
  friend void md5_internal::UpdateEachWith(md5_internal::Kernel kernel,
                                           std::span<Md5* const> streams,
                                           std::span<const std::string_view> data);

  // Takes up to one partial block from the front of `data` into tail_
  // (hashing tail_ when it fills) and returns what is left; the caller
  // hashes its whole blocks and then stores the rest with KeepTail.
  std::string_view FillTail(std::string_view data);
  void KeepTail(std::string_view rest);

  std::array<uint32_t, 4> state_;
  uint64_t length_ = 0;  // bytes hashed or buffered so far
  std::array<unsigned char, 64> tail_{};
  size_t tail_size_ = 0;  // < 64
  bool finished_ = false;
};

// Updates streams[i] with data[i] for every i (the spans have equal
// lengths; the streams are distinct). Streams with whole 64-byte blocks to
// hash are hashed side by side when the CPU has AVX2 or AVX-512F.
void Md5UpdateEach(std::span<Md5* const> streams, std::span<const std::string_view> data);

}  // namespace tessera::s3::auth
