// What every service of a meta replica does with the meta Paxos group: block
// a worker thread on one strong read or one write of the group, and hand a
// client's mutation that reached a follower to the leader.
//
// Thread safety: the synchronous calls block the calling thread until the
// group answers; never call them from an io thread (the group's callbacks
// may need it). ForwardToLeader is non-blocking and safe from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "common/result.h"
#include "common/status.h"
#include "node/group_host.h"
#include "rpc/channel_pool.h"
#include "rpc/server.h"
#include "rpc/types.h"
#include "tessera/kv.pb.h"

namespace tessera::meta {

// A strongly consistent read of `key` on the meta group (leader, under its
// lease): the record, nullopt when absent, or NotLeader(hint) / the group's
// error.
Result<std::optional<pb::KvRecord>> ReadStrongSync(node::GroupHost& group, const std::string& key);

// A strongly consistent scan of [start, end) on the meta group, at most
// `limit` items (the state machine's cap applies too).
Result<pb::KvScanResponse> ScanStrongSync(node::GroupHost& group, const std::string& start,
                                          const std::string& end, uint32_t limit);

// One batch through the meta group's log; answers once it is applied.
Result<pb::KvApplyResult> WriteSync(node::GroupHost& group, pb::KvBatch batch);

// True when `refusal` should be answered by forwarding the request to the
// leader instead: it is NotLeader with a hint other than `self_id`, and the
// request came from outside the meta group (a meta replica's own request is
// never forwarded again, so a forward makes at most one hop).
bool ShouldForwardToLeader(const Status& refusal, const rpc::PeerInfo& from, uint32_t self_id);

// Sends `method(payload)` to `leader` and relays its answer (or error) to
// `responder`; NotLeader(leader) when no channel to it exists.
void ForwardToLeader(rpc::ChannelPool& pool, uint32_t leader, const std::string& method,
                     const std::string& payload, std::chrono::milliseconds timeout,
                     rpc::Responder responder);

}  // namespace tessera::meta
