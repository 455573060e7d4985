#include "node/load_split_finder.h"

#include <algorithm>
#include <cmath>

#include "common/splitmix64.h"

namespace tessera::node {

const char* LoadSplitReasonName(LoadSplitReason reason) {
  switch (reason) {
    case LoadSplitReason::kKeyFound: return "key_found";
    case LoadSplitReason::kTooFewSamples: return "too_few_samples";
    case LoadSplitReason::kOneHotKey: return "one_hot_key";
    case LoadSplitReason::kSequential: return "sequential";
    case LoadSplitReason::kUnbalanced: return "unbalanced";
  }
  return "unknown";
}

LoadSplitFinder::LoadSplitFinder(uint64_t seed, uint64_t now_ms)
    : rng_(seed), window_start_ms_(now_ms) {}

void LoadSplitFinder::Record(std::string_view key, uint64_t now_ms) {
  if (now_ms >= window_start_ms_ + kWindowMs) CloseWindow(now_ms);
  for (size_t i = 0; i < sample_count_; ++i) {
    Sample& s = samples_[i];
    const int c = key.compare(s.key);
    if (c < 0) {
      ++s.left;
    } else if (c > 0) {
      ++s.right;
    } else {
      ++s.contained;
    }
  }
  if (requests_ == 0 || key > max_key_) {
    if (requests_ > 0) ++new_max_;
    max_key_.assign(key);
  }
  ++requests_;
  // Reservoir sampling: every request of the window is a sample with the
  // same probability kSamples / requests_.
  size_t slot = sample_count_;
  if (sample_count_ == kSamples) {
    slot = SplitMix64Next(rng_) % requests_;
    if (slot >= kSamples) return;
  } else {
    ++sample_count_;
  }
  Sample& s = samples_[slot];
  s.key.assign(key);
  s.left = s.right = s.contained = 0;
}

const LoadSplitAnswer& LoadSplitFinder::Answer(uint64_t now_ms) {
  if (now_ms >= window_start_ms_ + kWindowMs) CloseWindow(now_ms);
  return last_;
}

void LoadSplitFinder::CloseWindow(uint64_t now_ms) {
  last_ = Decide(now_ms - window_start_ms_);
  window_start_ms_ = now_ms;
  requests_ = 0;
  new_max_ = 0;
  max_key_.clear();
  sample_count_ = 0;
}

LoadSplitAnswer LoadSplitFinder::Decide(uint64_t elapsed_ms) const {
  LoadSplitAnswer out;
  out.requests_per_s = elapsed_ms == 0 ? 0 : requests_ * 1000 / elapsed_ms;
  if (requests_ < kMinRequests) return out;
  const Sample* best = nullptr;
  double best_distance = 1;
  double hot_share = 0;
  bool observed_enough = false;
  for (size_t i = 0; i < sample_count_; ++i) {
    const Sample& s = samples_[i];
    const uint64_t observed = s.left + s.right + s.contained;
    if (observed < kMinObservations) continue;
    observed_enough = true;
    const double left = static_cast<double>(s.left) / static_cast<double>(observed);
    hot_share = std::max(hot_share, static_cast<double>(s.contained) / static_cast<double>(observed));
    if (s.left == 0) continue;  // S is the smallest key seen: an empty left half
    const double distance = std::fabs(left - 0.5);
    if (best == nullptr || distance < best_distance) {
      best = &s;
      best_distance = distance;
    }
  }
  if (!observed_enough) return out;
  if (best != nullptr && best_distance <= 0.5 - kBalanceMin) {
    const uint64_t observed = best->left + best->right + best->contained;
    out.reason = LoadSplitReason::kKeyFound;
    out.split_key = best->key;
    out.share_permille = static_cast<uint32_t>(best->left * 1000 / observed);
  } else if (hot_share >= kHotKeyShare) {
    out.reason = LoadSplitReason::kOneHotKey;
    out.share_permille = static_cast<uint32_t>(hot_share * 1000);
  } else if (static_cast<double>(new_max_) >= kSequentialShare * static_cast<double>(requests_)) {
    out.reason = LoadSplitReason::kSequential;
    out.share_permille = static_cast<uint32_t>(new_max_ * 1000 / requests_);
  } else {
    out.reason = LoadSplitReason::kUnbalanced;
  }
  return out;
}

void LoadSplitFinders::Record(uint64_t group_id, std::string_view key, uint64_t now_ms) {
  std::lock_guard lock(mu_);
  auto it = finders_.find(group_id);
  if (it == finders_.end()) it = finders_.try_emplace(group_id, group_id, now_ms).first;
  it->second.Record(key, now_ms);
}

std::optional<LoadSplitAnswer> LoadSplitFinders::Report(uint64_t group_id, bool leader, uint64_t now_ms) {
  std::lock_guard lock(mu_);
  auto it = finders_.find(group_id);
  if (!leader) {
    if (it != finders_.end()) finders_.erase(it);
    return std::nullopt;
  }
  if (it == finders_.end()) return LoadSplitAnswer{};
  return it->second.Answer(now_ms);
}

}  // namespace tessera::node
