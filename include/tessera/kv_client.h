// tessera::KvClient: the C++ client of Tessera's native KV API, spoken with
// a router's `kv_port` (docs/formats/kv-api.md is the wire specification).
//
// A KvClient holds one authenticated TCP connection at a time, to one of
// the routers it was given. The router routes every operation to the
// leader of the partition holding its key, follows redirects and retries
// what is safe to retry; the client itself never resends a request (a
// failed write may or may not have happened only when the code is
// kTimeout or kIOError).
//
// Contract:
//  1. Connect authenticates with an access key and its secret by a
//     challenge-response proof (HMAC-SHA256 over a fresh server nonce): the
//     secret never crosses the wire and a recorded handshake cannot be
//     replayed. A refused key or proof is kPermissionDenied.
//  2. Every operation ends with exactly one result: the router's answer,
//     kTimeout after KvClientOptions::request_timeout_ms, or kIOError when
//     the connection is lost. After a loss the next call connects again, to
//     the next router of the list, blocking for at most connect_timeout_ms;
//     when that fails, calls answer kIOError at once for a backoff of 50 ms
//     doubling up to 2 s, then the next call tries the next router. A
//     router that refuses the credential (kPermissionDenied) ends it: every
//     later call answers kPermissionDenied.
//  3. Many operations may be in flight on the one connection (Submit, or
//     the synchronous calls from many threads); the router answers them in
//     any order. Beyond KvClientOptions::inflight_max unanswered requests
//     Submit fails at once with kThrottled.
//  4. Writes (Put, PutIf, Delete, Batch) return the version they took
//     effect at (the partition log slot, increasing per partition). A
//     condition that does not hold is kConflict and changes nothing.
//  5. Errors: kNotFound for an unknown table (an absent key is not an
//     error: Get answers std::nullopt), kInvalidArgument for bad input
//     (oversized key/value, empty batch, batch keys in several partitions),
//     kUnavailable when a partition has no leader / no quorum, kThrottled
//     when the router pushes back.
//
// Thread safety: every method may be called from any thread at once.
// Callbacks run on the client's own I/O thread: they must not block and
// must not call the synchronous methods (Submit from a callback is fine).
// Destroying the client closes the connection; operations still in flight
// complete with kAborted before the destructor returns.
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace tessera {

// Numeric values are those of the wire (docs/formats/kv-api.md) and, for
// 0..11, of the server's status codes.
enum class KvCode : uint8_t {
  kOk = 0,
  kNotFound = 1,
  kNotLeader = 2,
  kThrottled = 3,
  kStaleEpoch = 4,
  kCorruption = 5,
  kIOError = 6,
  kTimeout = 7,
  kInvalidArgument = 8,
  kConflict = 9,
  kUnavailable = 10,
  kAborted = 11,
  kUnauthenticated = 12,   // no (or no finished) handshake
  kPermissionDenied = 13,  // unknown access key or bad proof
  // The table's provisioned capacity is used up (docs/admission.md): the
  // request was not applied; back off and retry it.
  kThroughputExceeded = 14,
};

// "OK", "NotFound", ... "PermissionDenied", "ThroughputExceeded".
const char* KvCodeName(KvCode code);

class [[nodiscard]] KvStatus {
 public:
  KvStatus() = default;  // OK
  KvStatus(KvCode code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == KvCode::kOk; }
  KvCode code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const;  // "Code: message"

 private:
  KvCode code_ = KvCode::kOk;
  std::string message_;
};

// A value or a non-OK KvStatus.
template <typename T>
class [[nodiscard]] KvResult {
 public:
  KvResult(T value) : data_(std::move(value)) {}         // NOLINT: implicit by design
  KvResult(KvStatus status) : data_(std::move(status)) {}  // NOLINT; must not be OK

  bool ok() const { return std::holds_alternative<T>(data_); }
  KvStatus status() const { return ok() ? KvStatus() : std::get<KvStatus>(data_); }
  T& value() & { return std::get<T>(data_); }
  const T& value() const& { return std::get<T>(data_); }
  T&& value() && { return std::get<T>(std::move(data_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, KvStatus> data_;
};

enum class KvConsistency : uint8_t {
  kStrong = 0,    // the partition leader's lease read: sees every acknowledged write
  kEventual = 1,  // any replica's applied state: may lag
};

// A stored value and the version (log slot) of the write that produced it.
struct KvValue {
  std::string value;
  uint64_t version = 0;
};

struct KvItem {
  std::string key;
  std::string value;
  uint64_t version = 0;
};

// A precondition on one key, checked atomically with the writes it guards.
struct KvCondition {
  enum class Kind : uint8_t { kAbsent, kPresent, kVersion };
  std::string key;
  Kind kind = Kind::kAbsent;
  uint64_t version = 0;  // kVersion only

  static KvCondition Absent(std::string k) { return {std::move(k), Kind::kAbsent, 0}; }
  static KvCondition Present(std::string k) { return {std::move(k), Kind::kPresent, 0}; }
  static KvCondition Version(std::string k, uint64_t v) { return {std::move(k), Kind::kVersion, v}; }
};

struct KvWrite {
  std::string key;
  std::string value;
  bool is_delete = false;
};

// The atomic multi-record operation: when every condition holds, every
// write happens at one version; otherwise nothing does (kConflict). Every
// key (conditions and writes) must lie in one partition.
struct KvBatch {
  std::vector<KvCondition> conditions;
  std::vector<KvWrite> writes;  // at least one
};

// One page of a range scan: items in key order; `next` is where the next
// page starts (pass it as the next start key), none when the range is done.
struct KvScanPage {
  std::vector<KvItem> items;
  std::optional<std::string> next;
};

// One operation for Submit (the synchronous methods build these).
struct KvRequest {
  enum class Op : uint8_t { kGet, kPut, kDelete, kScan, kBatch };
  Op op = Op::kGet;
  std::string table;
  std::string key;                         // get, put, delete; scan: start key (inclusive)
  std::string value;                       // put
  std::optional<KvCondition> condition;    // put, delete (its key is `key`)
  KvConsistency consistency = KvConsistency::kStrong;  // get, scan
  std::string end_key;                     // scan: exclusive, empty = end of table
  uint32_t limit = 100;                    // scan: 1..1000
  KvBatch batch;                           // batch
};

// The answer to one KvRequest; which members are set depends on its op.
struct KvReply {
  std::optional<KvValue> value;  // get: the value, none when the key is absent
  uint64_t version = 0;          // put, delete, batch: the version written
  KvScanPage page;               // scan
};

// A router's native API address (its `kv_port`).
struct KvEndpoint {
  std::string host;
  uint16_t port = 0;
};

struct KvClientOptions {
  uint32_t connect_timeout_ms = 5'000;   // TCP connect plus handshake
  // Non-empty: connect with TLS (to the router's kv_tls_port), trusting the
  // CA certificates in this PEM file only, and verifying that the router's
  // certificate names the host given to Connect (a DNS name or an IP
  // address). A file that does not load fails Connect with kInvalidArgument.
  std::string tls_ca_file;
  uint32_t request_timeout_ms = 10'000;  // one operation, from submission to answer
  uint32_t inflight_max = 256;           // unanswered requests on the connection
};

class KvClient {
 public:
  using Callback = std::function<void(KvResult<KvReply>)>;

  // Connects to the router at host:port and authenticates. kIOError when
  // the connection fails, kTimeout past connect_timeout_ms,
  // kPermissionDenied when the router refuses the credential,
  // kInvalidArgument for bad options.
  static KvResult<std::unique_ptr<KvClient>> Connect(const std::string& host, uint16_t port,
                                                     const std::string& access_key,
                                                     const std::string& secret_key,
                                                     KvClientOptions options = {});
  // The same over several routers (1..64): the first connection goes to the
  // first router that accepts, tried in order; reconnects go round the list.
  static KvResult<std::unique_ptr<KvClient>> Connect(std::vector<KvEndpoint> routers,
                                                     const std::string& access_key,
                                                     const std::string& secret_key,
                                                     KvClientOptions options = {});
  ~KvClient();
  KvClient(const KvClient&) = delete;
  KvClient& operator=(const KvClient&) = delete;

  // The value of `key`, std::nullopt when absent.
  KvResult<std::optional<KvValue>> Get(const std::string& table, const std::string& key,
                                       KvConsistency consistency = KvConsistency::kStrong);
  // Returns the new version.
  KvResult<uint64_t> Put(const std::string& table, const std::string& key, const std::string& value);
  // Put when `condition` (on `key`) holds; kConflict otherwise.
  KvResult<uint64_t> PutIf(const std::string& table, const std::string& key,
                           const std::string& value, KvCondition::Kind kind,
                           uint64_t expected_version = 0);
  // Deletes `key` (absent keys too), optionally under a condition on it.
  KvResult<uint64_t> Delete(const std::string& table, const std::string& key,
                            std::optional<KvCondition> condition = std::nullopt);
  // Keys in [start_key, end_key) (empty end: to the end of the table), at
  // most `limit` (1..1000), walking partitions in key order.
  KvResult<KvScanPage> Scan(const std::string& table, const std::string& start_key,
                            const std::string& end_key = "", uint32_t limit = 100,
                            KvConsistency consistency = KvConsistency::kStrong);
  // Applies `batch` atomically; returns its version.
  KvResult<uint64_t> Batch(const std::string& table, const KvBatch& batch);

  // Pipelining: sends `request` at once and calls `done` exactly once with
  // its answer, on the client's I/O thread (possibly before returning, for
  // a request refused locally).
  void Submit(KvRequest request, Callback done);
  std::future<KvResult<KvReply>> Submit(KvRequest request);

  // Whether the current connection is usable (no loss seen on it yet).
  bool connected() const;
  // Connections opened after the first one.
  uint64_t reconnects() const;

 private:
  class Impl;
  explicit KvClient(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

}  // namespace tessera
