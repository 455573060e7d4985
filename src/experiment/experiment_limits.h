// The bounds of `tessera experiment` (docs/experiments.md), in one place.
// They bound only this tool's own queues and memory, not the cluster's.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tessera::experiment {

inline constexpr uint32_t kDurationSMax = 3600;
inline constexpr uint32_t kRecoverySDefault = 10;
inline constexpr uint32_t kRecoverySMax = 300;
inline constexpr size_t kWorkloadsMax = 8;
inline constexpr uint32_t kClientsMax = 64;      // per workload
inline constexpr uint32_t kRatePerSMax = 5000;   // per workload, all its clients
inline constexpr uint32_t kKeysMax = 64;         // hot keys per workload
inline constexpr uint32_t kOpTimeoutMsDefault = 2000;
inline constexpr uint32_t kOpTimeoutMsMax = 60'000;
// kv_bank workloads.
inline constexpr uint32_t kBankAccountsMax = 64;
inline constexpr uint32_t kBankBalanceMax = 1'000'000;  // initial balance per account
// s3_objects workloads: prefixes, and body sizes (kept in memory per request).
inline constexpr uint32_t kS3PrefixesDefault = 2;
inline constexpr uint32_t kS3PrefixesMax = 8;
inline constexpr uint32_t kS3MinBytesDefault = 128;
inline constexpr uint32_t kS3MaxBytesDefault = 64 * 1024;
inline constexpr uint32_t kS3BodyBytesMax = 8 << 20;
// Parts of one multipart upload (sent one after the other).
inline constexpr uint32_t kS3MultipartPartsMax = 16;
// Operations one run records (all workloads): a workload stops issuing
// operations once the history is full, so memory and the checker's work
// stay bounded.
inline constexpr uint64_t kHistoryOpsMax = 1'000'000;
inline constexpr size_t kFaultsMax = 256;        // scheduled faults per run
inline constexpr uint32_t kSlowDiskMsMax = 10'000;
inline constexpr size_t kFileBytesMax = 1 << 20; // an experiment or layout file
// The default gap between random faults.
inline constexpr uint32_t kRandomGapSDefault = 5;

static_assert(kRecoverySDefault <= kRecoverySMax);
static_assert(kOpTimeoutMsDefault <= kOpTimeoutMsMax);

}  // namespace tessera::experiment
