// Goal: each S3 client configuration names the endpoint, path style, SigV4,
// the region, the keys and (HTTPS only) the CA bundle in that client's own
// syntax. The integration test s3_client_config_integration runs the
// clients with exactly this text.
#include "cli/s3_client_config.h"

#include <gtest/gtest.h>

namespace tessera::cli {
namespace {

S3ClientEndpoint Endpoint(bool https) {
  S3ClientEndpoint e;
  e.host = https ? "localhost" : "127.0.0.1";
  e.port = https ? 19443 : 19080;
  e.https = https;
  e.ca_bundle = https ? "/d/tls/ca.pem" : "";
  e.region = "us-east-1";
  e.access_key = "TKabc";
  e.secret_key = "s3cr\"t";
  e.profile = "tessera";
  return e;
}

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(S3ClientConfig, ParsesTheFourClientsAndRefusesOthers) {
  EXPECT_EQ(*ParseS3Client("aws"), S3Client::kAws);
  EXPECT_EQ(*ParseS3Client("s3cmd"), S3Client::kS3cmd);
  EXPECT_EQ(*ParseS3Client("rclone"), S3Client::kRclone);
  EXPECT_EQ(*ParseS3Client("boto3"), S3Client::kBoto3);
  auto bad = ParseS3Client("mc");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(Has(bad.status().message(), "aws, s3cmd, rclone or boto3"));
}

TEST(S3ClientConfig, AwsProfile) {
  const std::string http = RenderS3ClientConfig(S3Client::kAws, Endpoint(false));
  for (const char* part : {"[profile tessera]\n", "endpoint_url = http://127.0.0.1:19080\n",
                           "region = us-east-1\n", "aws_access_key_id = TKabc\n",
                           "s3 =\n  addressing_style = path\n  signature_version = s3v4\n"}) {
    EXPECT_TRUE(Has(http, part)) << part << "\n" << http;
  }
  EXPECT_FALSE(Has(http, "ca_bundle"));
  const std::string https = RenderS3ClientConfig(S3Client::kAws, Endpoint(true));
  EXPECT_TRUE(Has(https, "endpoint_url = https://localhost:19443\n")) << https;
  EXPECT_TRUE(Has(https, "ca_bundle = /d/tls/ca.pem\n")) << https;
}

TEST(S3ClientConfig, S3cfgIsPathStyleSigV4) {
  const std::string http = RenderS3ClientConfig(S3Client::kS3cmd, Endpoint(false));
  for (const char* part : {"[default]\n", "host_base = 127.0.0.1:19080\n",
                           "host_bucket = 127.0.0.1:19080\n", "signature_v2 = False\n",
                           "use_https = False\n", "bucket_location = us-east-1\n"}) {
    EXPECT_TRUE(Has(http, part)) << part << "\n" << http;
  }
  const std::string https = RenderS3ClientConfig(S3Client::kS3cmd, Endpoint(true));
  EXPECT_TRUE(Has(https, "use_https = True\n")) << https;
  EXPECT_TRUE(Has(https, "ca_certs_file = /d/tls/ca.pem\n")) << https;
}

TEST(S3ClientConfig, RcloneRemoteAndItsCaVariable) {
  const std::string http = RenderS3ClientConfig(S3Client::kRclone, Endpoint(false));
  for (const char* part : {"[tessera]\n", "type = s3\n", "provider = Other\n",
                           "endpoint = http://127.0.0.1:19080\n", "force_path_style = true\n"}) {
    EXPECT_TRUE(Has(http, part)) << part << "\n" << http;
  }
  EXPECT_FALSE(Has(http, "SSL_CERT_FILE"));
  const std::string https = RenderS3ClientConfig(S3Client::kRclone, Endpoint(true));
  EXPECT_TRUE(Has(https, "SSL_CERT_FILE=/d/tls/ca.pem")) << https;
}

TEST(S3ClientConfig, Boto3SnippetQuotesItsStrings) {
  const std::string http = RenderS3ClientConfig(S3Client::kBoto3, Endpoint(false));
  EXPECT_TRUE(Has(http, "endpoint_url=\"http://127.0.0.1:19080\"")) << http;
  EXPECT_TRUE(Has(http, "aws_secret_access_key=\"s3cr\\\"t\"")) << http;
  EXPECT_TRUE(Has(http, "s3={\"addressing_style\": \"path\"}")) << http;
  EXPECT_FALSE(Has(http, "verify="));
  const std::string https = RenderS3ClientConfig(S3Client::kBoto3, Endpoint(true));
  EXPECT_TRUE(Has(https, "verify=\"/d/tls/ca.pem\"")) << https;
}

}  // namespace
}  // namespace tessera::cli
