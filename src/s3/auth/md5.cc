#include "s3/auth/md5.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "common/check.h"
#include "s3/auth/md5_kernels.h"

namespace tessera::s3::auth {
namespace md5_internal {
namespace {

constexpr size_t kBlock = 64;

inline uint32_t LoadLe32(const unsigned char* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

inline uint32_t Rotl(uint32_t x, int s) { return (x << s) | (x >> (32 - s)); }

template <int I>
inline void ScalarStep(uint32_t& a, uint32_t b, uint32_t c, uint32_t d, const uint32_t* m) {
  uint32_t f;
  if constexpr (I < 16) {
    f = d ^ (b & (c ^ d));
  } else if constexpr (I < 32) {
    f = c ^ (d & (b ^ c));
  } else if constexpr (I < 48) {
    f = b ^ c ^ d;
  } else {
    f = c ^ (b | ~d);
  }
  a = b + Rotl(a + f + kSine[I] + m[MessageWord(I)], kShift[I]);
}

// Four steps rotate the roles of a, b, c and d once around.
template <int I>
inline void ScalarFour(uint32_t& a, uint32_t& b, uint32_t& c, uint32_t& d, const uint32_t* m) {
  ScalarStep<I>(a, b, c, d, m);
  ScalarStep<I + 1>(d, a, b, c, m);
  ScalarStep<I + 2>(c, d, a, b, m);
  ScalarStep<I + 3>(b, c, d, a, m);
}

template <int... G>
inline void ScalarRounds(std::integer_sequence<int, G...>, uint32_t& a, uint32_t& b, uint32_t& c,
                         uint32_t& d, const uint32_t* m) {
  (ScalarFour<4 * G>(a, b, c, d, m), ...);
}

void HashBlocksScalar(uint32_t* state, const unsigned char* data, size_t blocks) {
  uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
  for (size_t n = 0; n < blocks; ++n, data += kBlock) {
    uint32_t m[16];
    for (int j = 0; j < 16; ++j) m[j] = LoadLe32(data + 4 * j);
    const uint32_t a0 = a, b0 = b, c0 = c, d0 = d;
    ScalarRounds(std::make_integer_sequence<int, 16>{}, a, b, c, d, m);
    a += a0;
    b += b0;
    c += c0;
    d += d0;
  }
  state[0] = a;
  state[1] = b;
  state[2] = c;
  state[3] = d;
}

// Below this many streams with blocks to hash, one scalar pass per stream
// beats a SIMD pass (whose cost does not depend on how many lanes are in
// use). Measured with tessera_md5_bench (docs/benchmarks.md).
constexpr size_t kSimdLanesMin = 2;

struct Work {
  uint32_t* state;
  const unsigned char* data;
  size_t blocks;
};

}  // namespace

size_t LanesOf(Kernel kernel) {
  switch (kernel) {
    case Kernel::kScalar: return 1;
    case Kernel::kAvx2: return 8;
    case Kernel::kAvx512: return 16;
  }
  return 1;
}

bool Available(Kernel kernel) {
  switch (kernel) {
    case Kernel::kScalar: return true;
    case Kernel::kAvx2: return __builtin_cpu_supports("avx2");
    case Kernel::kAvx512: return __builtin_cpu_supports("avx512f");
  }
  return false;
}

Kernel Best() {
  static const Kernel best = Available(Kernel::kAvx512) ? Kernel::kAvx512
                             : Available(Kernel::kAvx2) ? Kernel::kAvx2
                                                        : Kernel::kScalar;
  return best;
}

void HashBlocks(Kernel kernel, uint32_t* const* state, const unsigned char* const* data,
                size_t lanes, size_t blocks) {
  TESSERA_CHECK(lanes >= 1 && lanes <= LanesOf(kernel));
  switch (kernel) {
    case Kernel::kScalar: return HashBlocksScalar(state[0], data[0], blocks);
    case Kernel::kAvx2: return HashBlocksAvx2(state, data, lanes, blocks);
    case Kernel::kAvx512: return HashBlocksAvx512(state, data, lanes, blocks);
  }
}

void UpdateEachWith(Kernel kernel, std::span<Md5* const> streams,
                    std::span<const std::string_view> data) {
  TESSERA_CHECK(streams.size() == data.size());
  std::vector<Work> work;
  work.reserve(streams.size());
  for (size_t i = 0; i < streams.size(); ++i) {
    Md5& md5 = *streams[i];
    const std::string_view rest = md5.FillTail(data[i]);
    const size_t blocks = rest.size() / kBlock;
    if (blocks > 0) {
      work.push_back({md5.state_.data(), reinterpret_cast<const unsigned char*>(rest.data()), blocks});
    }
    md5.KeepTail(rest.substr(blocks * kBlock));
  }
  // Each pass takes the streams with the most blocks left and runs them
  // for as many blocks as the shortest of them has, which finishes at
  // least one stream: at most streams.size() passes.
  const size_t width = LanesOf(kernel);
  uint32_t* states[kMd5LanesMax];
  const unsigned char* pointers[kMd5LanesMax];
  while (width > 1 && work.size() >= kSimdLanesMin) {
    const size_t lanes = std::min(width, work.size());
    std::partial_sort(work.begin(), work.begin() + static_cast<std::ptrdiff_t>(lanes), work.end(),
                      [](const Work& x, const Work& y) { return x.blocks > y.blocks; });
    const size_t run = work[lanes - 1].blocks;
    for (size_t l = 0; l < lanes; ++l) {
      states[l] = work[l].state;
      pointers[l] = work[l].data;
    }
    HashBlocks(kernel, states, pointers, lanes, run);
    for (size_t l = 0; l < lanes; ++l) {
      work[l].data += run * kBlock;
      work[l].blocks -= run;
    }
    std::erase_if(work, [](const Work& w) { return w.blocks == 0; });
  }
  for (const Work& w : work) HashBlocksScalar(w.state, w.data, w.blocks);
}

}  // namespace md5_internal

Md5::Md5() { std::copy(std::begin(md5_internal::kInit), std::end(md5_internal::kInit), state_.begin()); }

std::string_view Md5::FillTail(std::string_view data) {
  TESSERA_CHECK(!finished_);
  length_ += data.size();
  if (tail_size_ == 0) return data;
  const size_t take = std::min(data.size(), tail_.size() - tail_size_);
  std::memcpy(tail_.data() + tail_size_, data.data(), take);
  tail_size_ += take;
  if (tail_size_ < tail_.size()) return {};
  md5_internal::HashBlocksScalar(state_.data(), tail_.data(), 1);
  tail_size_ = 0;
  return data.substr(take);
}

void Md5::KeepTail(std::string_view rest) {
  TESSERA_CHECK(rest.size() < tail_.size() && (tail_size_ == 0 || rest.empty()));
  if (rest.empty()) return;
  std::memcpy(tail_.data(), rest.data(), rest.size());
  tail_size_ = rest.size();
}

void Md5::Update(std::string_view data) {
  Md5* self = this;
  md5_internal::UpdateEachWith(md5_internal::Kernel::kScalar, {&self, 1}, {&data, 1});
}

std::string Md5::Finish() {
  TESSERA_CHECK(!finished_);
  // Padding: 0x80, zeros up to 56 mod 64, the bit length little-endian.
  unsigned char pad[2 * 64] = {0x80};
  const size_t pad_bytes = (tail_size_ < 56 ? 56 : 120) - tail_size_;
  const uint64_t bits = length_ * 8;
  unsigned char length_le[8];
  for (int i = 0; i < 8; ++i) length_le[i] = static_cast<unsigned char>(bits >> (8 * i));
  const uint64_t length = length_;
  Update({reinterpret_cast<const char*>(pad), pad_bytes});
  Update({reinterpret_cast<const char*>(length_le), sizeof(length_le)});
  TESSERA_CHECK(tail_size_ == 0);
  length_ = length;
  finished_ = true;
  std::string digest(16, '\0');
  for (size_t i = 0; i < 16; ++i) digest[i] = static_cast<char>(state_[i / 4] >> (8 * (i % 4)));
  return digest;
}

void Md5UpdateEach(std::span<Md5* const> streams, std::span<const std::string_view> data) {
  md5_internal::UpdateEachWith(md5_internal::Best(), streams, data);
}

}  // namespace tessera::s3::auth
