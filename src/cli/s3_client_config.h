// `tessera s3 client-config aws|s3cmd|rclone|boto3`: the text of a
// configuration each S3 client accepts as is for one cluster endpoint and
// one key pair: an aws CLI profile (config-file form, with endpoint_url
// and addressing_style), an .s3cfg, an rclone remote, a boto3 snippet.
// Each names path-style addressing, SigV4, the region and, for HTTPS, the
// CA bundle the client must trust; `#` lines say where the text goes.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"

namespace tessera::cli {

enum class S3Client { kAws, kS3cmd, kRclone, kBoto3 };

// "aws" | "s3cmd" | "rclone" | "boto3"; InvalidArgument naming the choices.
Result<S3Client> ParseS3Client(const std::string& name);

struct S3ClientEndpoint {
  std::string host;  // "127.0.0.1", or "localhost" for HTTPS (the certificate's name)
  uint32_t port = 0;
  bool https = false;
  std::string ca_bundle;  // absolute path of the CA to trust; HTTPS only
  std::string region;
  std::string access_key;
  std::string secret_key;
  // The aws profile / rclone remote name ([A-Za-z0-9_-], checked by the caller).
  std::string profile;
};

// The configuration for `client`. Every value is written as is, except in
// the boto3 snippet, where strings are Python literals.
std::string RenderS3ClientConfig(S3Client client, const S3ClientEndpoint& endpoint);

}  // namespace tessera::cli
