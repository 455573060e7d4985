// NativeKvHandler: answers one native KV API request (proto/tessera/
// kv_api.proto) through the KvRouter, independent of the transport
// (native_api.h carries the frames). The op mapping is the HTTP API's
// (kv_ops.h): the same request sends the same kv.* call either way.
//
// Contract:
//  1. `reply` is called exactly once, from any thread (or before Handle
//     returns for a request refused at once), with a response carrying the
//     request's id.
//  2. Status codes are tessera::StatusCode values (= tessera::KvCode 0..11),
//     or kWirePermissionDenied for a table or access the connection's
//     grant does not allow (an internal table such as `_s3` always; nothing
//     is sent to a node). A write whose condition fails answers Conflict
//     with failed_condition.
//  3. A batch whose keys are not all in the partition of its first write
//     answers InvalidArgument before anything is sent to a node (the
//     partition is resolved through the route cache first).
//
// Thread safety: Handle may be called from any thread; the router and the
// resolver must outlive every request in flight.
#pragma once

#include <functional>

#include "router/kv_grant.h"
#include "router/kv_router.h"
#include "router/route_resolver.h"
#include "tessera/kv_api.pb.h"

namespace tessera::router {

// Wire codes beyond tessera::StatusCode's 0..11 (= tessera::KvCode 12..14).
inline constexpr uint32_t kWireUnauthenticated = 12;
inline constexpr uint32_t kWirePermissionDenied = 13;
inline constexpr uint32_t kWireThroughputExceeded = 14;

class NativeKvHandler {
 public:
  using Reply = std::function<void(pb::KvApiResponse)>;

  NativeKvHandler(KvRouter& router, RouteResolver& routes);

  // `grant`: what the connection's credential may do (checked first).
  void Handle(pb::KvApiRequest request, const KvGrant& grant, Reply reply);

 private:
  void Batch(uint64_t id, const std::string& table, pb::KvBatch batch, Reply reply);

  KvRouter& router_;
  RouteResolver& routes_;
};

// A response for `request_id` carrying a failed `status`.
pb::KvApiResponse ErrorResponse(uint64_t request_id, const Status& status);

}  // namespace tessera::router
