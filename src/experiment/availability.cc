#include "experiment/availability.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tessera::experiment {
namespace {

bool InAnyFault(uint64_t t_us, const std::vector<FaultWindow>& faults) {
  for (const FaultWindow& f : faults) {
    if (t_us >= f.start_us && t_us < f.end_us) return true;
  }
  return false;
}

// The time of [a, b) that lies in no fault window.
uint64_t OutsideFaultsUs(uint64_t a_us, uint64_t b_us, const std::vector<FaultWindow>& faults) {
  // Faults may overlap: walk their union, sorted by start.
  std::vector<std::pair<uint64_t, uint64_t>> spans;
  for (const FaultWindow& f : faults) spans.emplace_back(f.start_us, f.end_us);
  std::sort(spans.begin(), spans.end());
  uint64_t outside = 0;
  uint64_t at = a_us;
  for (const auto& [start, end] : spans) {
    if (end <= at) continue;
    if (start >= b_us) break;
    if (start > at) outside += start - at;
    at = std::max(at, end);
    if (at >= b_us) break;
  }
  if (at < b_us) outside += b_us - at;
  return outside;
}

// Nearest-rank percentile of sorted values; 0 when empty.
double Percentile(const std::vector<uint64_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  const size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return static_cast<double>(sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)]);
}

// Fills counts and latencies from the operations `member` selects.
template <typename Member>
void Count(const std::vector<OpRecord>& ops, Member member, pb::AvailabilityWindow& w) {
  std::vector<uint64_t> latencies;
  for (const OpRecord& op : ops) {
    if (!member(op)) continue;
    w.set_ops(w.ops() + 1);
    if (op.outcome != OpOutcome::kOk) continue;
    w.set_ok(w.ok() + 1);
    latencies.push_back(op.latency_us());
  }
  std::sort(latencies.begin(), latencies.end());
  w.set_ok_share(w.ops() == 0 ? 1.0 : static_cast<double>(w.ok()) / static_cast<double>(w.ops()));
  w.set_latency_ms_p50(Percentile(latencies, 0.50) / 1000.0);
  w.set_latency_ms_p99(Percentile(latencies, 0.99) / 1000.0);
}

// Completion times of the writes that took effect, sorted.
std::vector<uint64_t> WriteTimes(const std::vector<OpRecord>& ops) {
  std::vector<uint64_t> times;
  for (const OpRecord& op : ops) {
    if (op.wrote()) times.push_back(op.complete_us);
  }
  std::sort(times.begin(), times.end());
  return times;
}

// Longest gap in [start, end] between the points of `times` inside it (and
// the ends), each gap measured by `length(from, to)`.
template <typename Length>
uint64_t LongestGapUs(const std::vector<uint64_t>& times, uint64_t start_us, uint64_t end_us,
                      Length length) {
  uint64_t longest = 0;
  uint64_t prev = start_us;
  auto consider = [&](uint64_t t) {
    if (t > prev) longest = std::max(longest, length(prev, t));
    prev = std::max(prev, t);
  };
  for (uint64_t t : times) {
    if (t >= start_us && t < end_us) consider(t);
  }
  consider(end_us);
  return longest;
}

}  // namespace

std::vector<pb::AvailabilityWindow> SummarizeAvailability(const std::vector<OpRecord>& ops,
                                                          const std::vector<FaultWindow>& faults,
                                                          uint64_t end_us) {
  const std::vector<uint64_t> writes = WriteTimes(ops);
  std::vector<pb::AvailabilityWindow> out;
  uint64_t first_fault_us = end_us;
  for (const FaultWindow& f : faults) {
    first_fault_us = std::min(first_fault_us, f.start_us);
    pb::AvailabilityWindow& w = out.emplace_back();
    w.set_label(f.label);
    w.set_start_us(f.start_us);
    w.set_end_us(f.end_us);
    Count(ops, [&](const OpRecord& op) { return op.invoke_us >= f.start_us && op.invoke_us < f.end_us; },
          w);
    w.set_longest_write_gap_ms(
        LongestGapUs(writes, f.start_us, f.end_us, [](uint64_t a, uint64_t b) { return b - a; }) /
        1000);
    pb::AvailabilityWindow settled;
    Count(ops,
          [&](const OpRecord& op) {
            return op.invoke_us >= f.start_us + kFailoverGraceUs && op.invoke_us < f.end_us;
          },
          settled);
    w.set_ops_after_first_s(settled.ops());
    w.set_ok_share_after_first_s(settled.ok_share());
  }
  pb::AvailabilityWindow& calm = out.emplace_back();
  calm.set_label("outside faults");
  calm.set_start_us(0);
  calm.set_end_us(end_us);
  Count(ops, [&](const OpRecord& op) { return !InAnyFault(op.invoke_us, faults); }, calm);
  calm.set_longest_write_gap_ms(
      LongestGapUs(writes, 0, end_us,
                   [&](uint64_t a, uint64_t b) { return OutsideFaultsUs(a, b, faults); }) /
      1000);
  if (!faults.empty()) {
    pb::AvailabilityWindow steady;
    Count(ops, [&](const OpRecord& op) { return op.invoke_us < first_fault_us; }, steady);
    if (steady.ok() >= kSteadyOpsMin && steady.latency_ms_p99() > 0) {
      calm.set_steady_latency_ms_p99(steady.latency_ms_p99());
      calm.set_p99_over_steady(calm.latency_ms_p99() / steady.latency_ms_p99());
    }
  }
  return out;
}

std::string DescribeWindow(const pb::AvailabilityWindow& w) {
  const bool calm = w.label() == "outside faults";
  char settled[64] = "";
  if (!calm) {
    std::snprintf(settled, sizeof settled, " (%.1f%% after its first second)",
                  100.0 * w.ok_share_after_first_s());
  }
  char steady[96] = "";
  if (calm && w.p99_over_steady() > 0) {
    std::snprintf(steady, sizeof steady, " (%.2fx the steady p99 of %.1f ms)", w.p99_over_steady(),
                  w.steady_latency_ms_p99());
  }
  char line[768];
  std::snprintf(line, sizeof line,
                "%s: %llu ops, %.1f%% ok%s, longest write gap %.1f s, p50 %.1f ms, p99 %.1f ms%s",
                w.label().c_str(), static_cast<unsigned long long>(w.ops()), 100.0 * w.ok_share(),
                settled, static_cast<double>(w.longest_write_gap_ms()) / 1000.0, w.latency_ms_p50(),
                w.latency_ms_p99(), steady);
  return line;
}

pb::CheckerResult CheckAvailability(const std::vector<pb::AvailabilityWindow>& windows,
                                    const pb::AvailabilityChecker& bounds) {
  pb::CheckerResult result;
  result.set_name("availability");
  result.set_passed(true);
  std::string summary;
  std::string missed;
  auto miss = [&](const char* format, double figure, double bound, const std::string& label) {
    result.set_passed(false);
    char why[384];
    std::snprintf(why, sizeof why, format, label.c_str(), figure, bound);
    missed += why;
  };
  for (const pb::AvailabilityWindow& w : windows) {
    summary += DescribeWindow(w) + "\n";
    if (w.label() == "outside faults") {
      if (w.ok_share() < bounds.min_ok_share_outside_faults()) {
        miss("ok share %s %.3f is below the required %.3f\n", w.ok_share(),
             bounds.min_ok_share_outside_faults(), w.label());
      }
      if (bounds.max_p99_over_steady() > 0 && w.p99_over_steady() > bounds.max_p99_over_steady()) {
        miss("p99 %s is %.2fx the steady p99, above the allowed %.2fx\n", w.p99_over_steady(),
             bounds.max_p99_over_steady(), w.label());
      }
    } else if (w.ops_after_first_s() > 0 &&
               w.ok_share_after_first_s() < bounds.min_ok_share_after_first_s()) {
      miss("ok share after the first second of %s %.3f is below the required %.3f\n",
           w.ok_share_after_first_s(), bounds.min_ok_share_after_first_s(), w.label());
    }
  }
  summary += missed;
  if (!summary.empty()) summary.pop_back();
  result.set_summary(summary);
  return result;
}

}  // namespace tessera::experiment
