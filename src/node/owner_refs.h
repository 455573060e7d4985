// OwnerRefs: "which of these blobs does the owner object still reference?",
// asked of the leader of the `_s3` partition that holds the owner `B K`
// (docs/formats/blobs.md, "Garbage collection and repair"; decision D20).
// The blob sweeper asks it for every blob it examines; the GC worker asks
// it for a GC record whose owner lies outside its own group's range (the
// object moved to another group by a split, docs/partition-splits.md).
//
// RoutedOwnerRefs routes by the partition map (meta.tables, read by
// Refresh) and asks the partition's leader ("s3.blob_refs"; answered
// without an rpc when the group is hosted here), trying its replicas with
// the hinted leader first. Its contract:
//   1. an answer is only ever the owner group's own STRONG read: a group
//      whose range no longer holds the owner answers WrongPartition
//      (s3_blob_refs.h), never "unreferenced";
//   2. no map, no partition for the owner, or no replica answering gives an
//      error (Unavailable, WrongPartition, Timeout...): the caller keeps
//      its blobs for a later round and never reads an error as
//      "unreferenced";
//   3. a replica that failed (Unavailable or Timeout) is not asked again
//      until the next Refresh (one slow node costs a round one timeout).
//
// Thread safety: none; one worker thread (the GC's or the sweeper's) owns
// an instance. Everything passed to the constructor must outlive it.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/result.h"
#include "node/replication_host.h"
#include "rpc/channel_pool.h"
#include "tessera/cluster_rpc.pb.h"
#include "tessera/s3.pb.h"

namespace tessera::node {

class OwnerRefs {
 public:
  virtual ~OwnerRefs() = default;
  // The subset of `blob_ids` a record of `owner` references, from the
  // leader of the owner's partition; an error when no such answer came.
  virtual Result<std::set<std::string>> Referenced(const std::string& owner,
                                                   const std::vector<std::string>& blob_ids) = 0;
};

// The `_s3` partition whose range holds the records of `owner` (`B K`);
// nullptr when none does.
const pb::PartitionDescriptor* PartitionOfOwner(const std::vector<pb::PartitionDescriptor>& partitions,
                                                const std::string& owner);

class RoutedOwnerRefs : public OwnerRefs {
 public:
  // `pool` must know the addresses of the storage nodes and of `meta_ids`.
  RoutedOwnerRefs(uint32_t self_id, ReplicationHost& replication, rpc::ChannelPool& pool,
                  std::vector<uint32_t> meta_ids);

  // Reads the `_s3` partition map from one metadata replica and forgets the
  // failed replicas (a round's start). On error the previous map is dropped.
  Status Refresh();
  bool has_map() const { return partitions_.has_value(); }

  // Asks in chunks of limits::kBlobRefsIdsMax; any chunk failing fails all.
  Result<std::set<std::string>> Referenced(const std::string& owner,
                                           const std::vector<std::string>& blob_ids) override;

  // Replicas that failed since the last Refresh (the sweeper skips them
  // for its repairs too).
  std::set<uint32_t>& failed_nodes() { return failed_nodes_; }

 private:
  Result<std::set<std::string>> AskPartition(const pb::PartitionDescriptor& partition,
                                             const pb::S3BlobRefsRequest& request);
  Result<pb::S3BlobRefsResponse> Ask(uint32_t node, const pb::S3BlobRefsRequest& request);

  const uint32_t self_id_;
  ReplicationHost& replication_;
  rpc::ChannelPool& pool_;
  const std::vector<uint32_t> meta_ids_;
  uint64_t refreshes_ = 0;  // rotates the metadata replica asked
  std::optional<std::vector<pb::PartitionDescriptor>> partitions_;
  std::set<uint32_t> failed_nodes_;
};

// One rpc to `peer`, waited for (worker threads only: never an io thread
// or a group strand).
Result<std::string> CallPeerSync(rpc::ChannelPool& pool, uint32_t peer, const std::string& method,
                                 std::string payload);

}  // namespace tessera::node
