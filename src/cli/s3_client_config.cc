#include "cli/s3_client_config.h"

#include <sstream>

namespace tessera::cli {
namespace {

std::string Url(const S3ClientEndpoint& e) {
  return (e.https ? "https://" : "http://") + e.host + ":" + std::to_string(e.port);
}

std::string HostPort(const S3ClientEndpoint& e) { return e.host + ":" + std::to_string(e.port); }

// A Python string literal (double quotes; backslash, quote and control
// bytes escaped).
std::string PyString(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

// Config-file form: botocore reads endpoint_url, the keys and ca_bundle
// from a profile; AWS_ENDPOINT_URL, AWS_CA_BUNDLE and key variables in the
// environment take precedence over it.
std::string Aws(const S3ClientEndpoint& e) {
  std::ostringstream out;
  out << "# aws CLI profile: add it to ~/.aws/config (or to a file named by AWS_CONFIG_FILE),\n"
      << "# then: aws --profile " << e.profile << " s3 ls\n"
      << "# AWS_ENDPOINT_URL, AWS_CA_BUNDLE and AWS_* keys in the environment override it.\n"
      << "[profile " << e.profile << "]\n"
      << "region = " << e.region << "\n"
      << "endpoint_url = " << Url(e) << "\n"
      << "aws_access_key_id = " << e.access_key << "\n"
      << "aws_secret_access_key = " << e.secret_key << "\n";
  if (e.https) out << "ca_bundle = " << e.ca_bundle << "\n";
  out << "s3 =\n"
      << "  addressing_style = path\n"
      << "  signature_version = s3v4\n";
  return out.str();
}

// s3cmd: host_bucket without %(bucket)s is path style.
std::string S3cmd(const S3ClientEndpoint& e) {
  std::ostringstream out;
  out << "# s3cmd configuration: save it as ~/.s3cfg (or any FILE and run s3cmd -c FILE),\n"
      << "# then: s3cmd ls\n"
      << "[default]\n"
      << "access_key = " << e.access_key << "\n"
      << "secret_key = " << e.secret_key << "\n"
      << "host_base = " << HostPort(e) << "\n"
      << "host_bucket = " << HostPort(e) << "\n"
      << "bucket_location = " << e.region << "\n"
      << "signature_v2 = False\n"
      << "use_https = " << (e.https ? "True" : "False") << "\n"
      << "check_ssl_certificate = True\n"
      << "ca_certs_file = " << (e.https ? e.ca_bundle : "") << "\n";
  return out.str();
}

// rclone (1.60) takes no CA for s3 remotes from its config or --ca-cert;
// Go's TLS reads SSL_CERT_FILE.
std::string Rclone(const S3ClientEndpoint& e) {
  std::ostringstream out;
  out << "# rclone remote: add it to the file `rclone config file` names (or any FILE and\n"
      << "# run rclone --config FILE), then: ";
  if (e.https) out << "SSL_CERT_FILE=" << e.ca_bundle << " ";
  out << "rclone lsd " << e.profile << ":\n";
  if (e.https) {
    out << "# HTTPS: rclone trusts the cluster's CA only through SSL_CERT_FILE=" << e.ca_bundle
        << "\n";
  }
  out << "[" << e.profile << "]\n"
      << "type = s3\n"
      << "provider = Other\n"
      << "env_auth = false\n"
      << "access_key_id = " << e.access_key << "\n"
      << "secret_access_key = " << e.secret_key << "\n"
      << "endpoint = " << Url(e) << "\n"
      << "region = " << e.region << "\n"
      << "force_path_style = true\n";
  return out.str();
}

std::string Boto3(const S3ClientEndpoint& e) {
  std::ostringstream out;
  out << "# boto3: a client for this cluster (Python), e.g. print(s3.list_buckets()[\"Buckets\"])\n"
      << "import boto3\n"
      << "from botocore.config import Config\n"
      << "\n"
      << "s3 = boto3.client(\n"
      << "    \"s3\",\n"
      << "    endpoint_url=" << PyString(Url(e)) << ",\n"
      << "    region_name=" << PyString(e.region) << ",\n"
      << "    aws_access_key_id=" << PyString(e.access_key) << ",\n"
      << "    aws_secret_access_key=" << PyString(e.secret_key) << ",\n";
  if (e.https) out << "    verify=" << PyString(e.ca_bundle) << ",\n";
  out << "    config=Config(signature_version=\"s3v4\", s3={\"addressing_style\": \"path\"}),\n"
      << ")\n";
  return out.str();
}

}  // namespace

Result<S3Client> ParseS3Client(const std::string& name) {
  if (name == "aws") return S3Client::kAws;
  if (name == "s3cmd") return S3Client::kS3cmd;
  if (name == "rclone") return S3Client::kRclone;
  if (name == "boto3") return S3Client::kBoto3;
  return Status::InvalidArgument("unknown S3 client '" + name + "': aws, s3cmd, rclone or boto3");
}

std::string RenderS3ClientConfig(S3Client client, const S3ClientEndpoint& endpoint) {
  switch (client) {
    case S3Client::kAws: return Aws(endpoint);
    case S3Client::kS3cmd: return S3cmd(endpoint);
    case S3Client::kRclone: return Rclone(endpoint);
    case S3Client::kBoto3: return Boto3(endpoint);
  }
  return "";
}

}  // namespace tessera::cli
