// Load-based split finder (docs/partition-splits.md, "Splits by load"): on
// a partition's leader, a bounded reservoir of the keys of recent requests,
// each sample counting the later requests left of it, right of it and on
// it (CockroachDB's split.Finder idea). Each window of kWindowMs it answers
// the window's load (requests per second: reads, scans and KV writes
// alike, a scan counted once at its start key, a batch once at its first
// key) and either a split key that gives each half about half of that
// load, or a typed reason why there is none.
//
// Which key: a sample key S (the right half starts at S) observed by at
// least kMinObservations later requests, whose share of them left of S is
// nearest one half, accepted when within [kBalanceMin, 1 - kBalanceMin].
// When none is:
//   * one_hot_key: a sample key carried at least kHotKeyShare of the
//     requests that observed it; no split separates one key's load;
//   * sequential: at least kSequentialShare of the window's requests had a
//     key above every key before them in the window (only the newest
//     range is hot: the right half would take all the load again);
//   * unbalanced: otherwise.
// too_few_samples: fewer than kMinRequests requests in the window, or no
// sample observed by kMinObservations.
//
// Cost per request: kSamples key comparisons and, rarely, one sample
// replaced (its string's capacity reused); no allocation once the
// reservoir is full except a longer key than a slot held.
//
// Thread safety: LoadSplitFinder is not thread-safe; LoadSplitFinders
// (one finder per group of a node) guards them with one mutex.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace tessera::node {

enum class LoadSplitReason {
  kKeyFound,       // split_key names the split
  kTooFewSamples,
  kOneHotKey,
  kSequential,
  kUnbalanced,
};
// "key_found", "too_few_samples", "one_hot_key", "sequential", "unbalanced".
const char* LoadSplitReasonName(LoadSplitReason reason);

struct LoadSplitAnswer {
  uint64_t requests_per_s = 0;  // over the last complete window
  LoadSplitReason reason = LoadSplitReason::kTooFewSamples;
  std::string split_key;        // when reason == kKeyFound
  // The share of the observed requests left of split_key (key found), or
  // the hot key's share (one_hot_key), in thousandths.
  uint32_t share_permille = 0;
};

class LoadSplitFinder {
 public:
  static constexpr size_t kSamples = 20;
  // Not a knob: the autoadmin's split_after decides how long a load must
  // last; the window only smooths the figure the leader reports.
  static constexpr uint64_t kWindowMs = 5'000;
  static constexpr uint64_t kMinRequests = 100;
  static constexpr uint64_t kMinObservations = 20;
  static constexpr double kBalanceMin = 0.3;
  static constexpr double kHotKeyShare = 0.3;
  static constexpr double kSequentialShare = 0.5;

  LoadSplitFinder(uint64_t seed, uint64_t now_ms);

  // One request with `key` at `now_ms` (ms of a monotonic clock).
  void Record(std::string_view key, uint64_t now_ms);
  // The last complete window's answer; closes the current window first
  // when it is over (so an idle partition's load falls to 0).
  const LoadSplitAnswer& Answer(uint64_t now_ms);

 private:
  struct Sample {
    std::string key;
    uint64_t left = 0;
    uint64_t right = 0;
    uint64_t contained = 0;
  };
  void CloseWindow(uint64_t now_ms);
  LoadSplitAnswer Decide(uint64_t elapsed_ms) const;

  uint64_t rng_;  // SplitMix64 state: which requests the reservoir keeps
  uint64_t window_start_ms_;
  uint64_t requests_ = 0;
  uint64_t new_max_ = 0;  // requests whose key was above every earlier one
  std::string max_key_;
  std::array<Sample, kSamples> samples_;
  size_t sample_count_ = 0;
  LoadSplitAnswer last_;
};

// The finders of a node's groups. Record is called for every KV request a
// replica serves; Report by the status collector, which forgets the finder
// of a group whose replica does not lead (a new leader starts afresh).
class LoadSplitFinders {
 public:
  void Record(uint64_t group_id, std::string_view key, uint64_t now_ms);
  // The leader's answer; nullopt (and the finder dropped) elsewhere.
  std::optional<LoadSplitAnswer> Report(uint64_t group_id, bool leader, uint64_t now_ms);

 private:
  std::mutex mu_;  // guards finders_
  std::map<uint64_t, LoadSplitFinder> finders_;
};

}  // namespace tessera::node
