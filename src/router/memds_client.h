// MemdsClient: partition lookups (meta.lookup) against the metadata
// replicas, each of which serves them from memory (MemDS).
//
// Each lookup starts at the next replica in rotation (spreading load) and
// fails over to the others on a transport failure, Throttled, Timeout or
// Unavailable, trying each replica at most once. NotFound (unknown table)
// and InvalidArgument are authoritative answers and end the lookup.
//
// Thread safety: every method may be called from any thread. Callbacks run
// on rpc channel strands; the pool must outlive every lookup.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "router/route_resolver.h"
#include "rpc/channel_pool.h"

namespace tessera::router {

class MemdsClient : public PartitionLookup {
 public:
  // `meta_ids`: the metadata replicas' process ids, addresses set in `pool`.
  MemdsClient(rpc::ChannelPool& pool, std::vector<uint32_t> meta_ids, uint32_t timeout_ms);

  void Lookup(const std::string& table, const std::string& key, PartitionCallback done) override;

 private:
  struct Attempt;
  void TryNext(std::shared_ptr<Attempt> attempt);

  rpc::ChannelPool& pool_;
  const std::vector<uint32_t> meta_ids_;
  const uint32_t timeout_ms_;
  std::atomic<uint64_t> next_{0};
};

}  // namespace tessera::router
