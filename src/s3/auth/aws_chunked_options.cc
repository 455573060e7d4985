// AwsChunkedOptionsFor: what a request's headers say about its aws-chunked
// body (decoded length, trailers, checksum).
#include <algorithm>

#include "common/check.h"
#include "common/limits.h"
#include "s3/auth/aws_chunked.h"
#include "s3/auth/request_parts.h"

namespace tessera::s3::auth {
namespace {

constexpr std::string_view kSingleChecksum =
    "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.";

S3Result<uint64_t> DecodedLength(const HeaderList& headers) {
  auto value = FindHeader(headers, "x-amz-decoded-content-length");
  if (!value) {
    return S3Error(S3ErrorCode::kMissingContentLength,
                   "You must provide the x-amz-decoded-content-length HTTP header.");
  }
  auto length = ParseDecimal(Trim(*value));
  if (!length) {
    return S3Error(S3ErrorCode::kInvalidArgument,
                   "x-amz-decoded-content-length is not a valid length.");
  }
  return static_cast<uint64_t>(*length);
}

// The lowercase names of x-amz-trailer, and the checksum one of them names.
S3Status ParseTrailerNames(const HeaderList& headers, PayloadMode mode,
                           AwsChunkedOptions* options) {
  auto value = FindHeader(headers, "x-amz-trailer");
  if (!value) return S3Status::Ok();
  std::string_view rest = *value;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string name = ToLowerAscii(Trim(rest.substr(0, comma)));
    rest.remove_prefix(comma == std::string_view::npos ? rest.size() : comma + 1);
    if (name.empty()) continue;
    if (mode == PayloadMode::kStreamingSigned) {
      return S3Status(S3ErrorCode::kInvalidRequest,
                      "x-amz-trailer requires a STREAMING-*-TRAILER x-amz-content-sha256.");
    }
    if (options->declared_trailers.size() == limits::kAwsChunkTrailersMax) {
      return S3Status(S3ErrorCode::kInvalidRequest, "Too many trailers in x-amz-trailer.");
    }
    if (name.rfind("x-amz-checksum-", 0) == 0) {
      auto algorithm = ChecksumFromHeaderName(name);
      if (!algorithm) {
        return S3Status(S3ErrorCode::kInvalidRequest,
                        "The value specified in the x-amz-trailer header is not supported");
      }
      if (options->checksum) return S3Status(S3ErrorCode::kInvalidRequest, std::string(kSingleChecksum));
      options->checksum = algorithm;
    }
    options->declared_trailers.push_back(name);
  }
  return S3Status::Ok();
}

}  // namespace

S3Result<AwsChunkedOptions> AwsChunkedOptionsFor(const RequestHead& request,
                                                 const AuthContext& context) {
  TESSERA_CHECK(IsStreaming(context.mode));
  AwsChunkedOptions options;
  options.mode = context.mode;
  options.signing = context.signing;
  S3Result<uint64_t> length = DecodedLength(request.headers);
  if (!length.ok()) return length.error();
  options.decoded_content_length = *length;
  TESSERA_S3_RETURN_IF_ERROR(ParseTrailerNames(request.headers, context.mode, &options));

  auto declared = FindDeclaredChecksum(request.headers);
  if (!declared.ok()) return declared.error();
  if (declared->has_value()) {
    if (options.checksum) return S3Error(S3ErrorCode::kInvalidRequest, std::string(kSingleChecksum));
    options.checksum = (*declared)->algorithm;
    options.header_checksum_base64 = (*declared)->value_base64;
  }
  if (auto sdk = FindHeader(request.headers, "x-amz-sdk-checksum-algorithm")) {
    auto algorithm = ChecksumFromAlgorithmValue(*sdk);
    if (!algorithm || (options.checksum && *options.checksum != *algorithm)) {
      return S3Error(S3ErrorCode::kInvalidRequest,
                     "Value for x-amz-sdk-checksum-algorithm header is invalid.");
    }
    options.checksum = algorithm;
  }
  return options;
}

}  // namespace tessera::s3::auth
