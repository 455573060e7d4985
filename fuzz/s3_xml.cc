// Fuzz target: the XML request bodies of the S3 API
// (src/s3/protocol/xml_documents.h): CreateBucketConfiguration,
// CompleteMultipartUpload, Delete, VersioningConfiguration, Tagging and
// AccessControlPolicy. Byte 0 picks the parser; the rest is the body.
#include <cstdint>
#include <string_view>

#include "s3/protocol/xml_documents.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera::s3;
  if (size == 0) return 0;
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 6) {
    case 0: (void)ParseCreateBucketConfiguration(body); break;
    case 1: (void)ParseCompleteMultipartUpload(body); break;
    case 2: (void)ParseDelete(body); break;
    case 3: (void)ParseVersioningConfiguration(body); break;
    case 4: (void)ParseTagging(body); break;
    default: (void)ParseAccessControlPolicy(body); break;
  }
  return 0;
}
