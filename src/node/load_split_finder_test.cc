// Goal: the load split finder picks a key that halves the sampled load, and
// refuses (with the typed reason) one hot key, sequential keys and too
// little load.
#include "node/load_split_finder.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>

namespace tessera::node {
namespace {

std::string Key(uint32_t i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "k%06u", i);
  return buf;
}

// Feeds `per_window` requests spread over one window, then reads the answer
// just after the window closed.
template <typename KeyOf>
LoadSplitAnswer OneWindow(LoadSplitFinder& finder, uint64_t per_window, KeyOf key_of) {
  const uint64_t step_us = LoadSplitFinder::kWindowMs * 1000 / per_window;
  for (uint64_t i = 0; i < per_window; ++i) finder.Record(key_of(i), i * step_us / 1000);
  return finder.Answer(LoadSplitFinder::kWindowMs);
}

TEST(LoadSplitFinder, UniformLoadSplitsNearTheMiddle) {
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    LoadSplitFinder finder(seed, 0);
    std::mt19937 rng(static_cast<uint32_t>(seed));
    const LoadSplitAnswer a = OneWindow(finder, 5000, [&](uint64_t) { return Key(rng() % 10'000); });
    ASSERT_EQ(a.reason, LoadSplitReason::kKeyFound) << LoadSplitReasonName(a.reason);
    EXPECT_EQ(a.requests_per_s, 1000u);
    EXPECT_GE(a.split_key, Key(3'000));
    EXPECT_LE(a.split_key, Key(7'000));
    EXPECT_GE(a.share_permille, 300u);
    EXPECT_LE(a.share_permille, 700u);
  }
}

TEST(LoadSplitFinder, SplitsAtTheLoadNotAtTheKeys) {
  // 90% of the requests on keys 0..999, the rest on 1000..9999: the load's
  // middle is near key 555, far from the key space's middle.
  LoadSplitFinder finder(7, 0);
  std::mt19937 rng(7);
  const LoadSplitAnswer a = OneWindow(finder, 5000, [&](uint64_t) {
    return rng() % 10 < 9 ? Key(rng() % 1000) : Key(1000 + rng() % 9000);
  });
  ASSERT_EQ(a.reason, LoadSplitReason::kKeyFound);
  EXPECT_LT(a.split_key, Key(1000));
}

TEST(LoadSplitFinder, OneHotKeyIsNotSplit) {
  LoadSplitFinder finder(3, 0);
  const LoadSplitAnswer a = OneWindow(finder, 2000, [](uint64_t) { return Key(42); });
  EXPECT_EQ(a.reason, LoadSplitReason::kOneHotKey);
  EXPECT_TRUE(a.split_key.empty());
  EXPECT_EQ(a.share_permille, 1000u);
}

TEST(LoadSplitFinder, OneHotKeyAmongAFewOthersIsNotSplit) {
  LoadSplitFinder finder(4, 0);
  std::mt19937 rng(4);
  const LoadSplitAnswer a =
      OneWindow(finder, 2000, [&](uint64_t) { return rng() % 10 < 8 ? Key(42) : Key(rng() % 10'000); });
  EXPECT_EQ(a.reason, LoadSplitReason::kOneHotKey) << LoadSplitReasonName(a.reason);
}

TEST(LoadSplitFinder, SequentialKeysAreNotSplit) {
  LoadSplitFinder finder(5, 0);
  const LoadSplitAnswer a = OneWindow(finder, 2000, [](uint64_t i) { return Key(static_cast<uint32_t>(i)); });
  EXPECT_EQ(a.reason, LoadSplitReason::kSequential) << LoadSplitReasonName(a.reason);
  EXPECT_TRUE(a.split_key.empty());
}

TEST(LoadSplitFinder, FewRequestsSayTooFewSamples) {
  LoadSplitFinder finder(6, 0);
  const LoadSplitAnswer a = OneWindow(finder, 50, [](uint64_t i) { return Key(static_cast<uint32_t>(i * 7919 % 50)); });
  EXPECT_EQ(a.reason, LoadSplitReason::kTooFewSamples);
  EXPECT_EQ(a.requests_per_s, 10u);
}

TEST(LoadSplitFinder, AnIdleWindowReportsNoLoad) {
  LoadSplitFinder finder(8, 0);
  std::mt19937 rng(8);
  ASSERT_EQ(OneWindow(finder, 2000, [&](uint64_t) { return Key(rng() % 10'000); }).reason,
            LoadSplitReason::kKeyFound);
  const LoadSplitAnswer idle = finder.Answer(3 * LoadSplitFinder::kWindowMs);
  EXPECT_EQ(idle.requests_per_s, 0u);
  EXPECT_EQ(idle.reason, LoadSplitReason::kTooFewSamples);
}

TEST(LoadSplitFinders, AFollowerReportsNothingAndForgetsItsFinder) {
  LoadSplitFinders finders;
  for (uint32_t i = 0; i < 500; ++i) finders.Record(9, Key(i % 3), i);
  EXPECT_FALSE(finders.Report(9, /*leader=*/false, 10).has_value());
  // Forgotten: as a leader again it starts from an empty window.
  const auto fresh = finders.Report(9, /*leader=*/true, 2 * LoadSplitFinder::kWindowMs);
  ASSERT_TRUE(fresh.has_value());
  EXPECT_EQ(fresh->requests_per_s, 0u);
}

}  // namespace
}  // namespace tessera::node
