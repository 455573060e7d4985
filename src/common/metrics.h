// Metrics: counters, gauges and fixed-bucket histograms, identified by a
// name (unit last: `tessera_rpc_bytes_sent_total`,
// `tessera_rpc_call_latency_seconds`) and a set of labels, rendered in the
// Prometheus text exposition format (version 0.0.4).
//
// Contract:
//  1. Get* returns the one instrument for (name, labels), creating it on first
//     use; the reference stays valid for the registry's lifetime. Callers
//     look instruments up once and keep the reference on hot paths.
//  2. A name has one type, one help text and (histograms) one bucket layout.
//     Registering it again with another is a bug, as are invalid names,
//     label names, or more than limits::kMetricSeriesMax series: all CHECKed.
//     Label values come from small fixed sets (never ids of requests).
//  3. Label order does not matter: {a="1",b="2"} and {b="2",a="1"} are the
//     same series. RenderText orders families by name, series by labels.
//
// Thread safety: everything may be called from any thread. Updating an
// instrument is a relaxed atomic operation; Get* and RenderText take the
// registry's mutex, which guards the family map only. A rendering taken
// while instruments change is not a consistent snapshot across series, but
// each histogram's buckets, _count and +Inf agree.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera::metrics {

// (label name, label value) pairs.
using Labels = std::vector<std::pair<std::string, std::string>>;

// Monotonic count of events.
class Counter {
 public:
  void Increment(uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

// A value that goes up and down.
class Gauge {
 public:
  void Set(double v) { value_.store(v, std::memory_order_relaxed); }
  void Add(double delta) { value_.fetch_add(delta, std::memory_order_relaxed); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

// Distribution over fixed buckets: bucket i counts observations v with
// upper_bounds[i-1] < v <= upper_bounds[i]; one more bucket takes the rest.
class Histogram {
 public:
  // `upper_bounds`: finite, strictly increasing, 1 to
  // limits::kHistogramBucketsMax of them (CHECKed).
  explicit Histogram(std::vector<double> upper_bounds);

  void Observe(double v);

  struct Snapshot {
    std::vector<uint64_t> bucket_counts;  // per bucket, not cumulative; last is +Inf
    uint64_t count = 0;                   // sum of bucket_counts
    double sum = 0;
  };
  Snapshot snapshot() const;
  const std::vector<double>& upper_bounds() const { return upper_bounds_; }

 private:
  const std::vector<double> upper_bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;  // upper_bounds_.size() + 1
  std::atomic<double> sum_{0.0};
};

// `count` bounds start, start*factor, start*factor^2, ...
std::vector<double> ExponentialBuckets(double start, double factor, size_t count);
// Latency buckets from 50 µs to about 13 s (factor 2), for *_seconds.
const std::vector<double>& LatencyBucketsSeconds();

class Registry {
 public:
  Registry();
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  Counter& GetCounter(std::string_view name, std::string_view help, const Labels& labels = {});
  Gauge& GetGauge(std::string_view name, std::string_view help, const Labels& labels = {});
  Histogram& GetHistogram(std::string_view name, std::string_view help,
                          const std::vector<double>& upper_bounds, const Labels& labels = {});

  // Every series, in the Prometheus text format: per family `# HELP`,
  // `# TYPE`, then its series; histograms as cumulative `_bucket{le=...}`,
  // `_sum` and `_count`.
  std::string RenderText() const;

 private:
  enum class Type { kCounter, kGauge, kHistogram };
  struct Series;
  struct Family;

  Series& GetSeries(std::string_view name, std::string_view help, Type type,
                    const std::vector<double>* upper_bounds, const Labels& labels);

  mutable std::mutex mu_;  // guards families_ and series_count_
  std::map<std::string, std::unique_ptr<Family>, std::less<>> families_;
  size_t series_count_ = 0;
};

}  // namespace tessera::metrics
