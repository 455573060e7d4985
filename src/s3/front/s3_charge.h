// What an S3 request costs in capacity units before it is served
// (docs/admission.md, "S3 buckets"): the S3 operation it names, read from
// its method, whether it names a key, its query parameters and headers,
// priced by admission::S3OperationUnits.
//
// Contract:
//  1. Only the metadata records an operation reads and writes are charged,
//     never the object bytes (the blob store carries those).
//  2. What is known only once the request is served (the parts a
//     completion touches, the keys a listing returns, the keys a
//     multi-object delete names) is charged at its minimum here; the
//     handler charges the rest once it knows the count (S3RestAfter*,
//     ChargeRest in charge_rest.h).
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

// The rest of a charge, beyond what S3RequestCharge took before serving
// (contract 2), once the count is known. Never negative.
// A completion of `parts` parts: their records read and rewritten.
admission::S3Charge S3RestAfterComplete(uint64_t parts);
// An abort that removed `parts` part records: one record written per part.
admission::S3Charge S3RestAfterAbort(uint64_t parts);
// A multi-object delete of `keys` keys: one record written per key.
admission::S3Charge S3RestAfterBatchDelete(uint64_t keys);
// A listing (objects, versions or uploads) that returned `listed_bytes`
// of keys and common prefixes: one read unit per started 4 KiB.
admission::S3Charge S3RestAfterListing(uint64_t listed_bytes);

}  // namespace tessera::s3::front
