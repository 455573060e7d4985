// Blob references of the `_s3` records (docs/formats/s3-keys.md, "Garbage
// collection"): which blobs a record names, and which of a set of blob ids
// the records of one object still reference. Used by the GC worker and the
// orphan sweeper (through the node's "s3.blob_refs" read) before a blob is
// deleted, by OpContext so an op never queues a blob it keeps, and by the
// checker ("s3.blob_scan").
//
// A blob is referenced by an object `B K` when one of these records names
// it: the head's latest version (B K 00 01), a version record (B K 00 02
// ~seq), a part record of an upload in progress (B K 00 04 U 00 n). Upload
// records (B K 00 03 U) name no blobs. GC records are not references.
//
// Thread safety: pure functions; the RecordSource is used from the calling
// thread only.
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "s3/model/listing.h"  // RecordSource, RecordRow

namespace tessera::s3::model {

// Appends the blob ids the object record (`table_key`, `value`) names.
// Internal records (bucket 0) and upload records name none. Corruption when
// the value does not parse as its key's record type.
Status AppendRecordBlobs(std::string_view table_key, std::string_view value,
                         std::vector<std::string>* blob_ids);

// [first, end) of the records of exactly the object whose prefix is `owner`
// (B K): owner 00 .. owner 00 FF (keys extending K are not included).
std::string OwnerRecordsBegin(std::string_view owner);
std::string OwnerRecordsEnd(std::string_view owner);

// The subset of `candidates` referenced by a record of object `owner`.
// Reads the object's records in pages of 1000 and gives up once `rows_max`
// were read and more follow: Unavailable (the caller must then keep every
// candidate).
// InvalidArgument for an owner shorter than a bucket id (8 bytes) or of
// bucket 0.
Result<std::set<std::string>> ReferencedAmong(const RecordSource& records, std::string_view owner,
                                              const std::set<std::string>& candidates,
                                              size_t rows_max);

// One page of the blobs referenced by the object records in [start, end)
// (checker): reads at most `rows` records, skipping internal records.
// `next` is where the next page starts (empty: the range is done).
struct BlobScanPage {
  std::vector<std::string> referenced;
  std::string next;
};
Result<BlobScanPage> ScanReferencedBlobs(const RecordSource& records, const std::string& start,
                                         const std::string& end, size_t rows);

}  // namespace tessera::s3::model
