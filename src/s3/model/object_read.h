// The object read of one partition (node method "s3.get"): one version of a
// key — the latest (the head's copy, possibly a delete marker) or the one
// named by a version id, "null" included — and, when asked, its inline
// bytes from its data record (docs/formats/s3-keys.md, "The object read").
//
// Contract of ReadObject:
//  - Point reads only: the head, at most one version record, and at most
//    one data record (only with request.with_data and only when the version
//    says its bytes are in one). A HEAD (with_data false) never reads a data
//    record.
//  - Consistency is the caller's: every read goes through `records`, which
//    must show one applied state (the node serves the whole read in one
//    state-reader callback on the group's executor, which applies entries
//    too, so no entry is applied between the reads).
//  - found = false for a key without head, a version id that names no
//    version of the key; InvalidArgument for a version id that cannot be
//    ours; Corruption for an unparseable record or a missing data record.
//  - Records written before data records existed (bytes in
//    ObjectVersion.inline_data) are returned as stored; with_data false
//    strips their bytes, so the answer never depends on the record's age.
//
// Thread safety: a pure function of `records`.
#pragma once

#include <optional>
#include <string>

#include "common/result.h"
#include "tessera/s3.pb.h"

namespace tessera::s3::model {

// Point reads of a partition's `_s3` records (the record's protobuf, i.e.
// the KvRecord's value); nullopt when absent.
class PointReader {
 public:
  virtual ~PointReader() = default;
  virtual Result<std::optional<std::string>> Get(const std::string& key) const = 0;
};

Result<pb::S3GetResponse> ReadObject(const PointReader& records, const pb::S3GetRequest& request);

}  // namespace tessera::s3::model
