// BlobClient: the router side of the blob store. Writes a blob to its
// slot's replicas (BlobSlotMap), reads it from the nearest one, deletes it
// everywhere. Talks to the nodes through the process's ChannelPool, whose
// node addresses the caller sets (as for KvRouter).
//
// Contract:
//  1. Every callback is called exactly once, from a channel thread, or
//     before the call returns when the outcome is known at once
//     (InvalidArgument, Throttled, every channel refusing the request).
//  2. Put sends blob.put to every replica of the id's slot and answers OK
//     once a write quorum is durable (2 of 3 replicas; with fewer nodes, a
//     majority of the replicas), or an error as soon as a quorum can no
//     longer be reached: Conflict when a replica holds other bytes under the
//     id, otherwise Unavailable naming each replica's failure. Once every
//     replica answered, an acknowledged put counts its copies beyond the
//     quorum in tessera_blob_client_third_copy_total{result="ok|failed"};
//     restoring a missing copy is the repairer's job.
//  3. Read tries the replicas one at a time, same AZ as local_az first, the
//     others in an order rotated by the slot (spreading remote reads), and
//     verifies the response's crc32c. Any failure (error status, timeout,
//     bad checksum) moves on to the next replica (counted in
//     tessera_blob_client_read_fallbacks_total). It answers the first good
//     data; InvalidArgument at once for a range past the end (deterministic
//     on every copy); when every replica failed: NotFound if all said
//     NotFound, Corruption if the failures were only Corruption/NotFound,
//     otherwise Unavailable. `length` is clamped to the end of the blob.
//  4. Delete sends blob.delete to every replica and answers once all
//     answered: the copies removed and the replicas that had none when each
//     one said OK or NotFound, otherwise the first other error (a GC
//     retries later). A replica the pool has no channel to is Unavailable
//     (ChannelPool::Get), never NotFound: only a node's own answer may say
//     it holds no copy.
//  5. At most options.inflight_max operations (and inflight_bytes_max bytes
//     of put data) are in flight; beyond that Put/Read/Delete answer
//     Throttled at once. A put counts until all its replicas answered.
//  5a. Reads asked of one node and not yet answered stay within
//     node_read_bytes_max (each charged its length, at most a blob) and
//     node_reads_max, so no read-ahead overruns what the node queues for
//     this connection (NodeReadGate). Reads beyond wait in the client,
//     kClientWaiting before kReadAhead; one that waited read_timeout_ms
//     counts as that replica's failure and moves on to the next.
//  6. Data over limits::kBlobBytesMax, or an id whose slot is out of range:
//     InvalidArgument.
//  7. The slot map may be replaced while operations run (SetSlotMap, by the
//     SlotMapRefresher): each operation uses the map in force when it
//     started, and a map never replaces one of a higher or equal version.
//
// Metrics: tessera_blob_client_requests_total{op,code},
// tessera_blob_client_latency_seconds{op}, tessera_blob_client_third_copy_total
// {result}, tessera_blob_client_read_fallbacks_total,
// tessera_blob_client_throttled_total, tessera_blob_client_read_wait_seconds
// (time a read attempt waited for its node's bound, contract 5a).
//
// Thread safety: every method may be called from any thread. The client
// must outlive its operations' callbacks: destroy it after the io threads
// are joined (as KvRouter).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "blob/blob_id.h"
#include "blob/blob_slot_map.h"
#include "blob/node_read_gate.h"
#include "common/limits.h"
#include "common/metrics.h"
#include "common/result.h"
#include "common/shared_bytes.h"
#include "rpc/channel_pool.h"

namespace tessera::blob {

struct BlobClientOptions {
  uint32_t put_timeout_ms = 10'000;    // one replica's blob.put (fsync included)
  uint32_t read_timeout_ms = 2'000;    // one replica's blob.read attempt
  uint32_t delete_timeout_ms = 5'000;  // one replica's blob.delete
  uint32_t list_timeout_ms = 10'000;   // one blob.list page
  size_t inflight_max = limits::kBlobClientInflightMax;
  size_t inflight_bytes_max = limits::kBlobClientInflightBytesMax;
  size_t node_read_bytes_max = limits::kBlobClientNodeReadBytesMax;
  size_t node_reads_max = limits::kBlobClientNodeReadsMax;
};

// InvalidArgument for timeouts outside 1..kBlobClientTimeoutMsMax or bounds
// outside 1..their limits.
Status ValidateBlobClientOptions(const BlobClientOptions& options);

class BlobClient {
 public:
  using StatusCallback = std::function<void(Status)>;
  // What a delete found on the slot's replicas.
  struct DeleteOutcome {
    uint32_t copies_removed = 0;  // replicas that held a copy and removed it
    uint32_t copies_absent = 0;   // replicas that held none
  };
  using DeleteCallback = std::function<void(Result<DeleteOutcome>)>;
  // The bytes read, a view into the reply they arrived in (never copied).
  using ReadCallback = std::function<void(Result<SharedBytes>)>;
  struct ListPage {
    std::vector<std::pair<BlobId, uint64_t>> entries;  // id, size; ascending
    // Parallel to entries when listed with_owner: owner, file mtime (ms).
    std::vector<std::pair<std::string, int64_t>> owners;
    bool more = false;
  };
  using ListCallback = std::function<void(Result<ListPage>)>;

  // `options` must be valid (CHECKed; see ValidateBlobClientOptions).
  BlobClient(rpc::ChannelPool& nodes, BlobSlotMap slot_map, std::string local_az,
             metrics::Registry& metrics, BlobClientOptions options = {});
  ~BlobClient();
  BlobClient(const BlobClient&) = delete;
  BlobClient& operator=(const BlobClient&) = delete;

  // A fresh id; slots taken round robin from a random first slot.
  BlobId NextBlobId();

  // `owner`: the `_s3` key prefix of the object the blob belongs to
  // (s3::model::ObjectPrefix(bucket_id, key)); stored with the blob so the
  // GC and the orphan sweeper can ask who references it. Empty: unknown
  // (such blobs are never swept).
  // `data_crc32c`: Crc32c(data) when the caller has it (trusted, not
  // recomputed); computed here otherwise. The replicas' requests share one
  // copy of `data`.
  void Put(const BlobId& id, std::string owner, std::string data, StatusCallback done,
           std::optional<uint32_t> data_crc32c = std::nullopt);
  // `priority`: whether a client waits for these bytes now or they are
  // read ahead (contract 5a).
  void Read(const BlobId& id, uint64_t offset, uint64_t length, ReadCallback done,
            ReadPriority priority = ReadPriority::kClientWaiting);
  // OK only when every replica of the slot confirmed the blob deleted or
  // absent (a GC record stays until then); contract 4.
  void Delete(const BlobId& id, DeleteCallback done);

  // One node's blob.list page (for a repairer, GC or checker): ids with
  // slot >= slot_from, after `after` when given, at most `limit`.
  // `with_owner`: entries carry owner and mtime (a header read per entry).
  void ListNode(uint32_t node_id, uint32_t slot_from, const std::optional<BlobId>& after,
                uint32_t limit, ListCallback done, bool with_owner = false);

  // One replica only (repairer): blob.put to `node_id`, not a quorum write.
  void PutNode(uint32_t node_id, const BlobId& id, std::string owner, std::string data,
               StatusCallback done);
  // blob.stat on one node: NotFound when the node lacks the blob,
  // Corruption when its copy fails its header checks.
  struct StatInfo {
    uint64_t size = 0;
    std::string owner;
    int64_t mtime_ms = 0;
  };
  using StatCallback = std::function<void(Result<StatInfo>)>;
  void StatNode(uint32_t node_id, const BlobId& id, StatCallback done);

  // The map in force now (contract 7).
  std::shared_ptr<const BlobSlotMap> slot_map() const;
  // Installs `map` when its version is above the current one; false
  // otherwise (nothing changes).
  bool SetSlotMap(BlobSlotMap map);

  // Operations in flight now (for tests and gauges).
  size_t inflight() const;

 private:
  struct Metrics;
  class PutOp;
  class ReadOp;
  class DeleteOp;
  friend class PutOp;
  friend class ReadOp;
  friend class DeleteOp;

  // Admits one operation holding `bytes`, or returns Throttled.
  Status Admit(size_t bytes);
  void Release(size_t bytes);
  // The slot's replicas in read order (contract 3).
  std::vector<uint32_t> ReadOrder(uint32_t slot) const;

  rpc::ChannelPool& nodes_;
  mutable std::mutex map_mu_;  // guards slot_map_ (the pointer, not the map)
  std::shared_ptr<const BlobSlotMap> slot_map_;
  const std::string local_az_;
  const BlobClientOptions options_;
  std::unique_ptr<Metrics> metrics_;
  NodeReadGate read_gate_;
  std::atomic<uint32_t> next_slot_;
  mutable std::mutex mu_;  // guards inflight_ and inflight_bytes_
  size_t inflight_ = 0;
  size_t inflight_bytes_ = 0;
};

}  // namespace tessera::blob
