// The process's clocks as production code reads them, with the two clock
// faults an operator can inject (admin.faults clock_offset_ms and
// clock_skew_ppm; docs/experiments.md, docs/decisions.md D-CLOCK):
//
//  * WallNowMs: the wall clock (system_clock) plus an offset, a clock jump.
//    Read wherever a process stamps or compares wall time: meta's registry
//    timestamps and autoadmin lease, a storage node's blob sweeper.
//  * MonotonicNowUs: the monotonic clock (steady_clock) running at
//    1 + skew_ppm / 1e6 of its real rate: what the consensus hosts hand
//    their replicas as "now". Leases stay safe while every replica's rate
//    stays within Options::max_clock_drift_ppm of the others'; a skew past
//    it is a fault the design does not claim to survive.
//
// Invariants: MonotonicNowUs never decreases, across skew changes too (a
// change re-anchors the skewed clock where it stands); with no fault set
// both read the real clocks (MonotonicNowUs possibly shifted by the time a
// past skew gained or lost). Process-wide: one process, one clock.
//
// Thread safety: every function may be called from any thread.
#pragma once

#include <cstdint>

namespace tessera::fault_clock {

// Bounds of the injectable faults (kept here, not in common/limits.h: only
// the fault rules and the tools that set them read them, D81). The largest
// wall-clock offset either way (30 days), and the largest rate skew of
// the monotonic clock (+-50 %; at -100 % time would stop).
inline constexpr int64_t kOffsetMsMax = int64_t{30} * 24 * 3600 * 1000;
inline constexpr int32_t kSkewPpmMax = 500'000;
static_assert(kSkewPpmMax < 1'000'000, "a skewed monotonic clock must still advance");

// Milliseconds since the Unix epoch on the wall clock, plus the offset.
int64_t WallNowMs();
// Seconds since the Unix epoch on the offset wall clock.
inline int64_t WallNowUnixS() { return WallNowMs() / 1000; }
// Microseconds on the (possibly skewed) monotonic clock; arbitrary epoch.
uint64_t MonotonicNowUs();

// The caller validates the bounds (kOffsetMsMax, kSkewPpmMax); 0 clears
// each fault.
void SetWallOffsetMs(int64_t offset_ms);
int64_t WallOffsetMs();
void SetMonotonicSkewPpm(int32_t skew_ppm);
int32_t MonotonicSkewPpm();

}  // namespace tessera::fault_clock
