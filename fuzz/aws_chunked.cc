// Fuzz target: the aws-chunked body decoder (src/s3/auth/aws_chunked.h),
// fed in pieces of fuzz-chosen sizes as a request body arrives.
// Input: byte 0: bits 0-1 the mode (signed, signed with trailer, unsigned
// with trailer), bit 2 set: encode the rest with EncodeAwsChunked first
// and require that it decodes back to exactly the rest; bits 3-5 the
// checksum. Bytes 1-2: the decoded length declared (raw mode) or chunk size
// (round trip). Byte 3 seeds the piece sizes. The rest: the body.
// Checked: never more decoded bytes than declared; a round trip decodes to
// its input and finishes OK.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include "fuzz/fuzz_input.h"
#include "s3/auth/aws_chunked.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera::s3::auth;
  tessera::fuzz::FuzzInput in(data, size);
  const uint8_t flags = in.Byte();
  const uint64_t number = in.Number(2);
  uint32_t seed = in.Byte() | 1u;
  const std::string rest(in.Rest());
  static const PayloadMode kModes[] = {PayloadMode::kStreamingSigned, PayloadMode::kStreamingSignedTrailer,
                                       PayloadMode::kStreamingUnsignedTrailer,
                                       PayloadMode::kStreamingUnsignedTrailer};
  const bool round_trip = (flags & 4) != 0;
  AwsChunkedOptions options;
  options.mode = kModes[flags & 3];
  options.signing.signing_key = std::string(32, 'k');
  options.signing.amz_date = "20130524T000000Z";
  options.signing.scope = "20130524/us-east-1/s3/aws4_request";
  options.signing.seed_signature_hex = std::string(64, 'a');
  const unsigned checksum = (flags >> 3) & 7;
  if (checksum < 6) options.checksum = static_cast<ChecksumAlgorithm>(checksum);
  std::string body = rest;
  if (round_trip) {
    options.checksum.reset();  // EncodeAwsChunked is given no trailers
    options.decoded_content_length = rest.size();
    body = EncodeAwsChunked(rest, 1 + number % 8192, options.mode, options.signing, {});
  } else {
    options.decoded_content_length = number;
    if (options.mode != PayloadMode::kStreamingSigned && (flags & 64)) {
      options.declared_trailers = {"x-amz-checksum-crc32"};
      options.checksum = ChecksumAlgorithm::kCrc32;
    }
  }
  AwsChunkedDecoder decoder(options);
  std::string decoded;
  size_t fed = 0;
  bool ok = true;
  while (fed < body.size() && ok) {
    seed = seed * 1103515245u + 12345u;
    const size_t piece = std::min<size_t>(1 + (seed >> 16) % 1024, body.size() - fed);
    ok = decoder.Feed(std::string_view(body).substr(fed, piece), &decoded).ok();
    fed += piece;
    if (decoded.size() > options.decoded_content_length) __builtin_trap();
  }
  const bool finished = ok && decoder.Finish().ok();
  if (round_trip && (!finished || decoded != rest)) __builtin_trap();
  return 0;
}
