// The listing read of one partition: object keys of one bucket in key
// order, with S3's prefix / delimiter / start-after semantics, reading head
// records only (delete-marker heads are skipped: a listing never shows a
// key whose latest version is a delete marker) and seeking past each common
// prefix and past each key's other records instead of reading them.
//
// Contract of ListPartition:
//  - Items are in key order; a common prefix is emitted at most once and
//    only when it sorts after start_after; keys rolled into a common prefix
//    are never emitted as entries.
//  - Upload listings (request.uploads) list upload records instead: one
//    entry per upload in key then upload-id order, keys rolled into common
//    prefixes only when they have an upload; they read every head record
//    in the range (there is no index of uploads), seeking past the rest.
//  - It stops after max_keys items (truncated = true) or at the end of the
//    range [.., min(end_key, end of prefix)) (truncated = false). A caller
//    that wants to know whether more items exist asks for one more.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "tessera/s3.pb.h"

namespace tessera::s3::model {

struct RecordRow {
  std::string key;
  std::string value;  // the serialized record (ObjectHead for head keys)
};

// Which rows of a Walk the visitor reads the value of.
using KeyFilter = std::function<bool(std::string_view key)>;
// One row of a Walk: both views live only during the call; the value of a
// row whose key the filter refused is empty and must not be read. Returns
// false to end the walk after this row.
using RowVisitor = std::function<bool(std::string_view key, std::string_view value)>;

class RecordSource {
 public:
  virtual ~RecordSource() = default;
  // Rows with keys in [start, end) (empty end: no bound), at most `limit`.
  virtual Result<std::vector<RecordRow>> Scan(const std::string& start, const std::string& end,
                                              size_t limit) const = 0;
  // The rows Scan(start, end, limit) returns, visited in key order until
  // `visit` returns false; rows `wants_value` refuses are visited without
  // their values. This default copies them through Scan; a source that can
  // visit its rows in place overrides it.
  virtual Status Walk(const std::string& start, const std::string& end, size_t limit,
                      const KeyFilter& wants_value, const RowVisitor& visit) const;
};

Result<pb::S3ListResponse> ListPartition(const RecordSource& source,
                                         const pb::S3ListRequest& request);

}  // namespace tessera::s3::model
