// KV API operations as partition batches: the one mapping the HTTP/JSON API
// (http_api.h) and the native API (native_handler.h) share, so both send
// the same kv.write for the same request.
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>

#include "common/status.h"
#include "tessera/cluster_rpc.pb.h"
#include "tessera/kv.pb.h"

namespace tessera::router {

// A put (`value` set) or delete (`value` empty) of `key`, guarded by
// `condition` when given (its key must be `key`).
pb::KvBatch SingleKeyBatch(const std::string& key, std::optional<std::string> value,
                           const std::optional<pb::KvCondition>& condition);

// InvalidArgument for a batch the API refuses: no write, more than
// limits::kNativeBatchRecordsMax conditions plus writes, a key over
// kRouterKeyBytesMax or a value over kStateValueBytesMax.
Status CheckBatch(const pb::KvBatch& batch);

// The key a batch is routed by (its first write's); the batch must have
// passed CheckBatch.
const std::string& RoutingKey(const pb::KvBatch& batch);

// Whether every key of `batch` (conditions and writes) lies in the range of
// `partition`: only then can that partition apply it atomically.
bool BatchInPartition(const pb::KvBatch& batch, const pb::PartitionDescriptor& partition);

}  // namespace tessera::router
