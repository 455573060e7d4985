// Goal: Md5 is plain MD5 (RFC 1321 vectors, OpenSSL's digest of random
// inputs split anywhere), and hashing streams side by side with every
// kernel this CPU has gives each stream the digest it would get alone,
// whatever mix of lengths, partial blocks and repeated updates.
#include "s3/auth/md5.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "s3/auth/checksum.h"
#include "s3/auth/crypto.h"
#include "s3/auth/md5_kernels.h"

namespace tessera::s3::auth {
namespace {

using md5_internal::Kernel;

std::string Hex(const std::string& raw) { return HexEncode(raw); }

std::string OneShot(std::string_view data) {
  Md5 md5;
  md5.Update(data);
  return Hex(md5.Finish());
}

std::string Reference(std::string_view data) {
  return Hex(ComputeChecksum(ChecksumAlgorithm::kMd5, data));
}

std::string RandomBytes(std::mt19937_64& rng, size_t n) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

TEST(Md5, Rfc1321Vectors) {
  EXPECT_EQ(OneShot(""), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(OneShot("a"), "0cc175b9c0f1b6a831c399e269772661");
  EXPECT_EQ(OneShot("abc"), "900150983cd24fb0d6963f7d28e17f72");
  EXPECT_EQ(OneShot("message digest"), "f96b697d7cb7938d525a2f31aaf161d0");
  EXPECT_EQ(OneShot("abcdefghijklmnopqrstuvwxyz"), "c3fcd3d76192e4007dfb496cca67e13b");
  EXPECT_EQ(OneShot("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"),
            "d174ab98d277d9f5a5611c2c9f419d9f");
  EXPECT_EQ(OneShot("1234567890123456789012345678901234567890"
                    "1234567890123456789012345678901234567890"),
            "57edf4a22be3c955ac49da2e2107b67a");
}

TEST(Md5, MatchesOpenSslAtEveryLengthAroundBlockEdges) {
  std::mt19937_64 rng(7);
  const std::string data = RandomBytes(rng, 1000);
  for (size_t n = 0; n <= data.size(); ++n) {
    ASSERT_EQ(OneShot(std::string_view(data).substr(0, n)), Reference(data.substr(0, n))) << n;
  }
}

TEST(Md5, UpdatesSplitAnywhereGiveTheSameDigest) {
  std::mt19937_64 rng(11);
  const std::string data = RandomBytes(rng, 70000);
  const std::string want = Reference(data);
  for (int trial = 0; trial < 50; ++trial) {
    Md5 md5;
    size_t at = 0;
    while (at < data.size()) {
      const size_t n = std::min<size_t>(data.size() - at, rng() % 3 == 0 ? rng() % 64 : rng() % 9000);
      md5.Update(std::string_view(data).substr(at, n));
      at += n;
    }
    ASSERT_EQ(Hex(md5.Finish()), want) << trial;
  }
}

std::vector<Kernel> AvailableKernels() {
  std::vector<Kernel> kernels;
  for (Kernel k : {Kernel::kScalar, Kernel::kAvx2, Kernel::kAvx512}) {
    if (md5_internal::Available(k)) kernels.push_back(k);
  }
  return kernels;
}

class Md5Kernels : public testing::TestWithParam<Kernel> {};

// Streams of mixed lengths, fed in several rounds of uneven pieces: each
// stream's digest equals OpenSSL's of its whole input.
TEST_P(Md5Kernels, SideBySideStreamsMatchEachStreamAlone) {
  if (!md5_internal::Available(GetParam())) GTEST_SKIP() << "CPU lacks this kernel";
  std::mt19937_64 rng(static_cast<uint64_t>(GetParam()) + 3);
  for (size_t streams : {1u, 2u, 3u, 7u, 8u, 9u, 16u, 17u, 40u}) {
    std::vector<std::string> inputs(streams);
    std::vector<Md5> md5s(streams);
    std::vector<Md5*> pointers;
    for (Md5& m : md5s) pointers.push_back(&m);
    for (int round = 0; round < 6; ++round) {
      std::vector<std::string> pieces(streams);
      std::vector<std::string_view> views;
      for (size_t s = 0; s < streams; ++s) {
        const size_t n = rng() % 4 == 0 ? rng() % 70 : rng() % 20000;
        pieces[s] = RandomBytes(rng, n);
        inputs[s] += pieces[s];
        views.push_back(pieces[s]);
      }
      md5_internal::UpdateEachWith(GetParam(), pointers, views);
    }
    for (size_t s = 0; s < streams; ++s) {
      ASSERT_EQ(Hex(md5s[s].Finish()), Reference(inputs[s])) << streams << " streams, #" << s;
    }
  }
}

// The block kernel directly: every lane count, lanes sharing one input.
TEST_P(Md5Kernels, EveryLaneCountHashesEachLaneAlone) {
  if (!md5_internal::Available(GetParam())) GTEST_SKIP() << "CPU lacks this kernel";
  std::mt19937_64 rng(5);
  const size_t width = md5_internal::LanesOf(GetParam());
  const size_t blocks = 5;
  for (size_t lanes = 1; lanes <= width; ++lanes) {
    std::vector<std::string> data;
    for (size_t l = 0; l < lanes; ++l) data.push_back(l % 3 == 2 ? data[0] : RandomBytes(rng, 64 * blocks));
    std::vector<std::array<uint32_t, 4>> states(lanes);
    std::vector<uint32_t*> state_pointers;
    std::vector<const unsigned char*> data_pointers;
    for (size_t l = 0; l < lanes; ++l) {
      for (size_t k = 0; k < 4; ++k) states[l][k] = static_cast<uint32_t>(rng());
      state_pointers.push_back(states[l].data());
      data_pointers.push_back(reinterpret_cast<const unsigned char*>(data[l].data()));
    }
    std::vector<std::array<uint32_t, 4>> want = states;
    for (size_t l = 0; l < lanes; ++l) {
      uint32_t* s = want[l].data();
      md5_internal::HashBlocks(Kernel::kScalar, &s, &data_pointers[l], 1, blocks);
    }
    md5_internal::HashBlocks(GetParam(), state_pointers.data(), data_pointers.data(), lanes, blocks);
    EXPECT_EQ(states, want) << lanes << " lanes";
  }
}

INSTANTIATE_TEST_SUITE_P(AllKernels, Md5Kernels,
                         testing::Values(Kernel::kScalar, Kernel::kAvx2, Kernel::kAvx512),
                         [](const testing::TestParamInfo<Kernel>& param_info) {
                           switch (param_info.param) {
                             case Kernel::kScalar: return std::string("Scalar");
                             case Kernel::kAvx2: return std::string("Avx2");
                             case Kernel::kAvx512: return std::string("Avx512");
                           }
                           return std::string("Unknown");
                         });

TEST(Md5, BestKernelIsAvailable) {
  EXPECT_TRUE(md5_internal::Available(md5_internal::Best()));
  EXPECT_FALSE(AvailableKernels().empty());
}

}  // namespace
}  // namespace tessera::s3::auth
