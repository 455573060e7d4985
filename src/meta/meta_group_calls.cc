#include "meta/meta_group_calls.h"

#include <future>
#include <utility>

namespace tessera::meta {

Result<std::optional<pb::KvRecord>> ReadStrongSync(node::GroupHost& group, const std::string& key) {
  std::promise<Result<std::optional<pb::KvRecord>>> promise;
  auto future = promise.get_future();
  group.Read(key, pb::CONSISTENCY_STRONG,
             [&promise](Result<std::optional<pb::KvRecord>> r) { promise.set_value(std::move(r)); });
  return future.get();
}

Result<pb::KvScanResponse> ScanStrongSync(node::GroupHost& group, const std::string& start,
                                          const std::string& end, uint32_t limit) {
  pb::KvScanRequest request;
  request.set_start_key(start);
  request.set_end_key(end);
  request.set_limit(limit);
  request.set_consistency(pb::CONSISTENCY_STRONG);
  std::promise<Result<pb::KvScanResponse>> promise;
  auto future = promise.get_future();
  group.Scan(std::move(request),
             [&promise](Result<pb::KvScanResponse> r) { promise.set_value(std::move(r)); });
  return future.get();
}

Result<pb::KvApplyResult> WriteSync(node::GroupHost& group, pb::KvBatch batch) {
  std::promise<Result<pb::KvApplyResult>> promise;
  auto future = promise.get_future();
  group.Write(std::move(batch),
              [&promise](Result<pb::KvApplyResult> r) { promise.set_value(std::move(r)); });
  return future.get();
}

bool ShouldForwardToLeader(const Status& refusal, const rpc::PeerInfo& from, uint32_t self_id) {
  const uint32_t hint = refusal.leader_hint();
  return refusal.code() == StatusCode::kNotLeader && from.role != "meta" && hint != 0 &&
         hint != self_id;
}

void ForwardToLeader(rpc::ChannelPool& pool, uint32_t leader, const std::string& method,
                     const std::string& payload, std::chrono::milliseconds timeout,
                     rpc::Responder responder) {
  auto channel = pool.Get(leader);
  if (!channel.ok()) return responder.Fail(Status::NotLeader(leader));
  const Status accepted =
      (*channel)->Call(method, payload, timeout, [responder](Result<std::string> response) {
        if (response.ok()) responder.Reply(std::move(response).value());
        else responder.Fail(response.status());
      });
  if (!accepted.ok()) responder.Fail(accepted);
}

}  // namespace tessera::meta
