#include "s3/front/s3_charge.h"

#include <algorithm>
#include <cctype>

namespace tessera::s3::front {
namespace {

using admission::S3Operation;
using admission::S3OperationUnits;

bool Has(std::span<const QueryParam> query, std::string_view name) {
  return std::any_of(query.begin(), query.end(), [name](const QueryParam& p) { return p.name == name; });
}

bool StartsWithNoCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  }
  return true;
}

bool EqualsNoCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && StartsWithNoCase(a, b);
}

// The object record a PUT, copy or upload creation writes: its key, user
// metadata and tags, and the fixed part.
uint64_t RecordBytes(const S3RequestShape& r, bool* copy_source) {
  uint64_t bytes = kS3ObjectRecordBaseBytes + r.key.size();
  *copy_source = false;
  if (r.headers == nullptr) return bytes;
  for (const auto& [name, value] : *r.headers) {
    if (StartsWithNoCase(name, "x-amz-meta-")) bytes += name.size() + value.size();
    if (EqualsNoCase(name, "x-amz-tagging")) bytes += value.size();
    if (EqualsNoCase(name, "x-amz-copy-source")) *copy_source = true;
  }
  return bytes;
}

admission::S3Charge ObjectCharge(const S3RequestShape& r) {
  bool copy = false;
  const uint64_t record = RecordBytes(r, &copy);
  const bool upload = Has(r.query, "uploadId");
  if (r.method == "GET" || r.method == "HEAD") {
    return S3OperationUnits(r.method == "HEAD" ? S3Operation::kHeadObject : S3Operation::kGetObject, 0);
  }
  if (r.method == "PUT") {
    if (upload) {  // UploadPart(Copy): one part record, the source's record read
      admission::S3Charge c = S3OperationUnits(S3Operation::kUploadPart, 0);
      if (copy) c.read_units += 1;
      return c;
    }
    return S3OperationUnits(copy ? S3Operation::kCopyObject : S3Operation::kPutObject, record);
  }
  if (r.method == "DELETE") {
    return upload ? S3OperationUnits(S3Operation::kAbortMultipartUpload, 0, 0)
                  : S3OperationUnits(S3Operation::kDeleteObject, 0);
  }
  if (r.method == "POST") {
    if (Has(r.query, "uploads")) return S3OperationUnits(S3Operation::kCreateMultipartUpload, record);
    if (upload) return S3OperationUnits(S3Operation::kCompleteMultipartUpload, 0, 1);
  }
  return {};
}

admission::S3Charge BucketCharge(const S3RequestShape& r) {
  if (r.method == "HEAD") return S3OperationUnits(S3Operation::kHeadBucket, 0);
  if (r.method == "GET") return S3OperationUnits(S3Operation::kListObjects, 0);  // or a subresource
  if (r.method == "DELETE" && r.query.empty()) return S3OperationUnits(S3Operation::kDeleteBucket, 0);
  if (r.method == "PUT" && r.query.empty()) return S3OperationUnits(S3Operation::kCreateBucket, 0);
  if (r.method == "PUT" || r.method == "DELETE" || r.method == "POST") {
    return S3OperationUnits(S3Operation::kWriteConfig, 0);
  }
  return {};
}

}  // namespace

admission::S3Charge S3RequestCharge(const S3RequestShape& request) {
  if (!request.has_bucket) return {};
  return request.key.empty() ? BucketCharge(request) : ObjectCharge(request);
}

namespace {

admission::S3Charge Minus(admission::S3Charge full, admission::S3Charge taken) {
  return {std::max(0.0, full.read_units - taken.read_units),
          std::max(0.0, full.write_units - taken.write_units)};
}

}  // namespace

admission::S3Charge S3RestAfterComplete(uint64_t parts) {
  return Minus(S3OperationUnits(S3Operation::kCompleteMultipartUpload, 0, parts),
               S3OperationUnits(S3Operation::kCompleteMultipartUpload, 0, 1));
}

admission::S3Charge S3RestAfterAbort(uint64_t parts) {
  return Minus(S3OperationUnits(S3Operation::kAbortMultipartUpload, 0, parts),
               S3OperationUnits(S3Operation::kAbortMultipartUpload, 0, 0));
}

admission::S3Charge S3RestAfterBatchDelete(uint64_t keys) {
  const admission::S3Charge one = S3OperationUnits(S3Operation::kDeleteObject, 0);
  return Minus({one.read_units * keys, one.write_units * keys},
               S3OperationUnits(S3Operation::kWriteConfig, 0));
}

admission::S3Charge S3RestAfterListing(uint64_t listed_bytes) {
  return Minus(S3OperationUnits(S3Operation::kListObjects, listed_bytes),
               S3OperationUnits(S3Operation::kListObjects, 0));
}

}  // namespace tessera::s3::front
