// Test helpers for the router module.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cluster/process_table.h"
#include "common/metrics.h"
#include "common/metrics_test_util.h"
#include "common/result.h"
#include "rpc/server.h"
#include "tessera/cluster_rpc.pb.h"

namespace tessera::router::testing {

using metrics::testing::SeriesValue;

// A process of the fake cluster a router test talks to: `role` `id` in
// az1 on 127.0.0.1:`port`.
inline cluster::ProcessEntry LoopbackEntry(uint32_t id, cluster::ProcessRole role, uint16_t port) {
  cluster::ProcessEntry e;
  e.id = id;
  e.role = role;
  e.name = std::string(cluster::ProcessRoleName(role)) + std::to_string(id);
  e.az = "az1";
  e.host = "127.0.0.1";
  e.peer_port = port;
  return e;
}

// A fake metadata replica's meta.lookup_batch handler: one result per
// lookup, from `lookup` (the partition, or the failure to report).
using FakeLookup = std::function<Result<pb::PartitionDescriptor>(const pb::LookupRequest&)>;
inline rpc::Handler LookupBatchHandler(FakeLookup lookup) {
  return [lookup = std::move(lookup)](const rpc::PeerInfo&, const pb::Envelope& request,
                                      rpc::Responder responder) {
    pb::LookupBatchRequest batch;
    if (!batch.ParseFromString(request.payload())) {
      return responder.Fail(Status::InvalidArgument("bad LookupBatchRequest"));
    }
    pb::LookupBatchResponse response;
    for (const pb::LookupRequest& one : batch.lookups()) {
      pb::LookupResult* result = response.add_results();
      Result<pb::PartitionDescriptor> found = lookup(one);
      if (found.ok()) {
        *result->mutable_partition() = std::move(found).value();
      } else {
        result->set_status_code(static_cast<uint32_t>(found.status().code()));
        result->set_status_message(found.status().message());
      }
    }
    responder.Reply(response.SerializeAsString());
  };
}

// A started rpc server (any free port) answering `methods` with `handler`,
// standing in for node or meta replica `id`.
inline std::unique_ptr<rpc::RpcServer> StartFakeServer(rpc::RpcContext context, uint32_t id,
                                                       const std::string& role,
                                                       const std::string& secret,
                                                       const std::vector<std::string>& methods,
                                                       rpc::Handler handler) {
  rpc::ServerOptions options;
  options.identity = rpc::Identity{id, role, secret};
  auto server = std::make_unique<rpc::RpcServer>(context, options);
  for (const std::string& m : methods) EXPECT_TRUE(server->RegisterHandler(m, handler).ok());
  EXPECT_TRUE(server->Start().ok());
  return server;
}

}  // namespace tessera::router::testing
