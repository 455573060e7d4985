// The inputs and the outcome of S3 request authentication (SigV4, SigV2,
// presigned URLs), shared by sigv4.h, sigv2.h, authenticate.h and the
// aws-chunked body decoder. Pure data: no I/O, no clock (the caller passes
// the current time in AuthConfig).
//
// Thread safety: values; distinct objects may be used freely.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera::s3::auth {

// Header (name, value) pairs as they arrived: names in any case, repeated
// names kept as separate entries, in arrival order.
using HeaderList = std::vector<std::pair<std::string, std::string>>;

// What authentication needs of an HTTP request (never the body).
struct RequestHead {
  std::string method;  // "GET", "PUT", ...
  // The request target exactly as sent: path, then '?' and the raw query.
  // Not decoded and not normalised: SigV4 for S3 signs the path as sent.
  std::string target;
  HeaderList headers;
};

struct AuthConfig {
  // The region this endpoint serves; credential scopes naming it or
  // us-east-1 are accepted.
  std::string region = "us-east-1";
  int64_t now_unix_s = 0;    // the current time, from the caller's clock
  int64_t skew_max_s = 900;  // beyond it: RequestTimeTooSkewed
};

// Returns the secret key of an access key, or nullopt if the key is unknown.
// Called at most once per Authenticate call, from the calling thread.
using CredentialLookup = std::function<std::optional<std::string>(std::string_view access_key)>;

// How the request body is covered by the signature (x-amz-content-sha256).
enum class PayloadMode {
  kUnsigned,                   // UNSIGNED-PAYLOAD, SigV2, presigned, anonymous
  kSignedHex,                  // a sha256 hex: the caller must check the body's hash
  kStreamingSigned,            // STREAMING-AWS4-HMAC-SHA256-PAYLOAD (aws-chunked)
  kStreamingSignedTrailer,     // STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER
  kStreamingUnsignedTrailer,   // STREAMING-UNSIGNED-PAYLOAD-TRAILER
};

// True for the three aws-chunked modes: the body must go through
// AwsChunkedDecoder (aws_chunked.h).
bool IsStreaming(PayloadMode mode);

// What the aws-chunked verifier needs to check chunk signatures.
struct SigningState {
  std::string signing_key;         // 32 raw bytes: the derived SigV4 key
  std::string amz_date;            // yyyymmddThhmmssZ, as in the string to sign
  std::string scope;               // yyyymmdd/region/s3/aws4_request
  std::string seed_signature_hex;  // the request's own signature (64 hex)
};

// The outcome of a successful Authenticate.
struct AuthContext {
  // No credentials at all: the caller decides (Tessera answers AccessDenied
  // unless the operation allows anonymous access).
  bool anonymous = false;
  std::string access_key;
  PayloadMode mode = PayloadMode::kUnsigned;
  std::string payload_sha256_hex;  // mode == kSignedHex: the declared hash
  bool presigned = false;          // authenticated by query parameters
  bool sigv2 = false;              // Signature Version 2 (mode is kUnsigned)
  SigningState signing;            // SigV4 only
};

// The value of the first header named `name` (ASCII case-insensitive), or
// nullopt.
std::optional<std::string_view> FindHeader(const HeaderList& headers, std::string_view name);

}  // namespace tessera::s3::auth
