// Goal: the handshake MACs are exactly the HMAC-SHA256 constructions of
// docs/formats/rpc.md (known answers computed independently with Python's
// hmac module), depend on every input, and compare in constant time.
#include "rpc/auth.h"

#include <gtest/gtest.h>

namespace tessera::rpc {
namespace {

std::string Hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (const unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

std::string Bytes(int first) {
  std::string out;
  for (int i = 0; i < 16; ++i) out += static_cast<char>(first + i);
  return out;
}

const std::string kSecret = "0123456789abcdef-test-cluster-secret";

TEST(Auth, KnownAnswers) {
  EXPECT_EQ(Hex(HelloMac(kSecret, Bytes(0), Bytes(16), 7, "node")),
            "44602e63079f5ded306a97ad2cc32cea30b3e2980488720240f677ec66967e0a");
  EXPECT_EQ(Hex(WelcomeMac(kSecret, Bytes(0), Bytes(16), 7, "node")),
            "4827b3826cbce6b46a7eba2abdd671150e3489cdd09b703aef0241b8a92281cb");
}

TEST(Auth, EveryInputChangesTheMac) {
  const std::string base = HelloMac(kSecret, Bytes(0), Bytes(16), 7, "node");
  EXPECT_EQ(base.size(), kMacBytes);
  EXPECT_NE(base, HelloMac(kSecret + "x", Bytes(0), Bytes(16), 7, "node"));
  EXPECT_NE(base, HelloMac(kSecret, Bytes(1), Bytes(16), 7, "node"));
  EXPECT_NE(base, HelloMac(kSecret, Bytes(0), Bytes(17), 7, "node"));
  EXPECT_NE(base, HelloMac(kSecret, Bytes(0), Bytes(16), 8, "node"));
  EXPECT_NE(base, HelloMac(kSecret, Bytes(0), Bytes(16), 7, "meta"));
  EXPECT_NE(base, WelcomeMac(kSecret, Bytes(0), Bytes(16), 7, "node"));
}

TEST(Auth, MacEqualsAndNonces) {
  const std::string mac = HelloMac(kSecret, Bytes(0), Bytes(16), 7, "node");
  EXPECT_TRUE(MacEquals(mac, mac));
  std::string flipped = mac;
  flipped[31] ^= 1;
  EXPECT_FALSE(MacEquals(mac, flipped));
  EXPECT_FALSE(MacEquals(mac, mac.substr(0, 31)));
  EXPECT_FALSE(MacEquals(mac, ""));
  const std::string a = RandomNonce();
  EXPECT_EQ(a.size(), kNonceBytes);
  EXPECT_NE(a, RandomNonce());
}

}  // namespace
}  // namespace tessera::rpc
