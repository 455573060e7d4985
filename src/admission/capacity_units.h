// Capacity units: what one KV or S3 operation costs against a table's
// provisioned capacity (docs/admission.md has the tables).
//
//  - A read unit (RCU) is one strongly consistent read of an item of up to
//    kReadUnitBytes; an eventually consistent read costs half. Larger
//    items cost one unit (or half) per started kReadUnitBytes.
//  - A write unit (WCU) is one write of an item of up to kWriteUnitBytes;
//    larger items cost one unit per started kWriteUnitBytes.
//  - An item's size is its key's bytes plus its value's bytes.
//
// Every operation costs at least its minimum (one unit, half for an
// eventual read) even when it touches nothing: a get of an absent key, a
// scan of an empty range, a delete.
//
// Pure: sizes in, units out; no proto, no clock, no state. Units are
// doubles because an eventual read costs half a unit.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace tessera::admission {

inline constexpr uint64_t kReadUnitBytes = 4096;
inline constexpr uint64_t kWriteUnitBytes = 1024;

enum class ReadConsistency : uint8_t { kStrong, kEventual };

// A read returning `bytes` (one item, or a scan's items together).
double ReadUnits(uint64_t bytes, ReadConsistency consistency);

// One write (put or delete) of an item of `bytes`.
double WriteUnits(uint64_t bytes);

// A conditional batch: each write costs WriteUnits of its item, each
// condition one write unit (it is checked at the leader as part of the
// write, as a transaction's condition check is); at least one unit.
double BatchWriteUnits(std::span<const uint64_t> write_bytes, uint64_t conditions);

// S3 operations, charged by the metadata records they read and write in
// the `_s3` table, never by the object bytes (those go to the blob store,
// whose bandwidth is not a capacity unit; the table in docs/admission.md).
enum class S3Operation : uint8_t {
  kHeadObject,
  kGetObject,
  kPutObject,
  kDeleteObject,
  kCopyObject,
  kListObjects,
  kCreateMultipartUpload,
  kUploadPart,
  kCompleteMultipartUpload,
  kAbortMultipartUpload,
  kHeadBucket,
  kCreateBucket,
  kDeleteBucket,
  kReadConfig,   // GET/HEAD of a bucket or object subresource (?acl, ?tagging, ?uploadId ...)
  kWriteConfig,  // PUT/DELETE of a subresource; POST ?delete (at least one record)
};

struct S3Charge {
  double read_units = 0;
  double write_units = 0;
};

// `record_bytes`: the metadata record written (PutObject, CopyObject,
// CreateMultipartUpload: key + user metadata + tags + a fixed part) or
// the key bytes listed (ListObjects); `records`: the part records touched
// (Complete/AbortMultipartUpload), otherwise ignored. Reads of one record
// cost one unit (records are under 4 KiB).
S3Charge S3OperationUnits(S3Operation operation, uint64_t record_bytes, uint64_t records = 0);

// The name under which GAC and the routers' shares know an S3 bucket's
// capacity: "s3:" + the bucket name (':' is never in a table name, so a
// table and a bucket of the same name never mix).
std::string BucketGacName(std::string_view bucket);

}  // namespace tessera::admission
