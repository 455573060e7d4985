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

}  // namespace
}  // namespace tessera::s3::front
