// Goal: each S3 request is charged the units docs/admission.md lists for
// its operation, by its metadata records and never its object bytes.
#include "s3/front/s3_charge.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tessera::s3::front {
namespace {

admission::S3Charge Charge(std::string_view method, std::string_view key,
                           std::vector<QueryParam> query = {}, http::Headers headers = {}) {
  S3RequestShape shape;
  shape.method = method;
  shape.has_bucket = true;
  shape.key = key;
  shape.query = query;
  shape.headers = &headers;
  return S3RequestCharge(shape);
}

void ExpectUnits(const admission::S3Charge& c, double read, double write) {
  EXPECT_DOUBLE_EQ(c.read_units, read);
  EXPECT_DOUBLE_EQ(c.write_units, write);
}

TEST(S3RequestCharge, ObjectOperations) {
  ExpectUnits(Charge("GET", "k"), 1, 0);
  ExpectUnits(Charge("HEAD", "k"), 1, 0);
  // A 5 GiB PUT costs what a 1 byte one does: the blob store carries bytes.
  ExpectUnits(Charge("PUT", "k", {}, {{"Content-Length", "5368709120"}}), 0, 1);
  ExpectUnits(Charge("PUT", "k", {}, {{"x-amz-meta-big", std::string(2000, 'v')}}), 0, 3);
  ExpectUnits(Charge("PUT", "k", {}, {{"x-amz-copy-source", "b/src"}}), 1, 1);
  ExpectUnits(Charge("DELETE", "k"), 0, 1);
  ExpectUnits(Charge("POST", "k", {{"uploads", "", false}}), 0, 1);
  ExpectUnits(Charge("PUT", "k", {{"uploadId", "u", true}, {"partNumber", "1", true}}), 0, 1);
  ExpectUnits(Charge("PUT", "k", {{"uploadId", "u", true}, {"partNumber", "1", true}},
                     {{"X-Amz-Copy-Source", "b/src"}}),
              1, 1);
  ExpectUnits(Charge("POST", "k", {{"uploadId", "u", true}}), 1, 2);  // at least one part
  ExpectUnits(Charge("DELETE", "k", {{"uploadId", "u", true}}), 0, 1);
}

TEST(S3RequestCharge, BucketOperations) {
  ExpectUnits(Charge("HEAD", ""), 1, 0);
  ExpectUnits(Charge("GET", "", {{"list-type", "2", true}}), 1, 0);
  ExpectUnits(Charge("GET", "", {{"acl", "", false}}), 1, 0);
  ExpectUnits(Charge("PUT", "", {{"versioning", "", false}}), 0, 1);
  ExpectUnits(Charge("POST", "", {{"delete", "", false}}), 0, 1);
  ExpectUnits(Charge("PUT", ""), 1, 1);
  ExpectUnits(Charge("DELETE", ""), 1, 1);
  S3RequestShape service;
  service.method = "GET";
  ExpectUnits(S3RequestCharge(service), 0, 0);
}

// What is known only while serving is charged afterwards, so that what
// was taken before plus the rest is the operation's whole price
// (docs/admission.md), never less and never twice.
TEST(S3RestOfCharge, BeforePlusRestIsTheWholePrice) {
  using admission::S3Operation;
  using admission::S3OperationUnits;
  const admission::S3Charge before_complete = Charge("POST", "k", {{"uploadId", "u", true}});
  for (uint64_t parts : {1u, 2u, 37u, 10000u}) {
    const admission::S3Charge whole = S3OperationUnits(S3Operation::kCompleteMultipartUpload, 0, parts);
    const admission::S3Charge rest = S3RestAfterComplete(parts);
    ExpectUnits(rest, whole.read_units - before_complete.read_units,
                whole.write_units - before_complete.write_units);
  }
  ExpectUnits(S3RestAfterComplete(1), 0, 0);
  ExpectUnits(S3RestAfterComplete(0), 0, 0);  // never negative

  const admission::S3Charge before_abort = Charge("DELETE", "k", {{"uploadId", "u", true}});
  ExpectUnits(before_abort, 0, 1);
  for (uint64_t parts : {0u, 1u, 37u, 10000u}) {
    const admission::S3Charge whole = S3OperationUnits(S3Operation::kAbortMultipartUpload, 0, parts);
    ExpectUnits(S3RestAfterAbort(parts), 0, whole.write_units - before_abort.write_units);
  }

  const admission::S3Charge before_delete = Charge("POST", "", {{"delete", "", false}});
  ExpectUnits(before_delete, 0, 1);
  ExpectUnits(S3RestAfterBatchDelete(1), 0, 0);
  ExpectUnits(S3RestAfterBatchDelete(1000), 0, 999);
  ExpectUnits(S3RestAfterBatchDelete(0), 0, 0);

  ExpectUnits(S3RestAfterListing(0), 0, 0);
  ExpectUnits(S3RestAfterListing(4096), 0, 0);
  ExpectUnits(S3RestAfterListing(4097), 1, 0);
  ExpectUnits(S3RestAfterListing(1000 * 1024), 249, 0);
}

}  // namespace
}  // namespace tessera::s3::front
