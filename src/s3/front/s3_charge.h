// What an S3 request costs in capacity units before it is served
// (docs/admission.md, "S3 buckets"): the S3 operation it names, read from
// its method, whether it names a key, its query parameters and headers,
// priced by admission::S3OperationUnits.
//
// Contract:
//  1. Only the metadata records an operation reads and writes are charged,
//     never the object bytes (the blob store carries those).
//  2. What is known only once the request is served (the parts a
//     completion or abort touches, the keys a listing returns, the keys a
//     multi-object delete names) is charged at its minimum here; a
//     ListObjects(V2) handler charges the rest of its keys afterwards.
//  3. A service-level request (no bucket) costs nothing: it has no bucket
//     capacity to charge.
//
// Pure: no state, no clock. Thread safety: none needed.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "admission/capacity_units.h"
#include "http/headers.h"
#include "s3/protocol/http_rules.h"

namespace tessera::s3::front {

// Bytes of an object record beside its key, user metadata and tags: etag,
// version id, sizes, blob ids, content type, timestamps (a generous bound).
inline constexpr uint64_t kS3ObjectRecordBaseBytes = 320;

struct S3RequestShape {
  std::string_view method;
  bool has_bucket = false;
  std::string_view key;  // empty: a bucket-level request
  std::span<const QueryParam> query;
  const http::Headers* headers = nullptr;  // the request's (and query_headers)
};

admission::S3Charge S3RequestCharge(const S3RequestShape& request);

}  // namespace tessera::s3::front
