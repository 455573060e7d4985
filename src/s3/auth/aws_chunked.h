// Decoder for "Content-Encoding: aws-chunked" request bodies (after the HTTP
// layer has removed any HTTP chunked transfer-encoding):
//
//   chunk   = hex-size [";chunk-signature=" 64hex] CRLF data CRLF
//   final   = "0" [";chunk-signature=" 64hex] CRLF
//   body    = *chunk final [trailers] CRLF
//   trailers= *(name ":" value CRLF) ["x-amz-trailer-signature:" 64hex CRLF]
//
// Signed modes carry a chunk-signature on every chunk (the final one too):
// HMAC(signing_key, "AWS4-HMAC-SHA256-PAYLOAD\n" amz_date "\n" scope "\n"
// previous_signature "\n" sha256("") "\n" sha256(data)), the first previous
// signature being the request's seed signature. The signed trailer mode ends
// with x-amz-trailer-signature = HMAC(signing_key, "AWS4-HMAC-SHA256-TRAILER\n"
// amz_date "\n" scope "\n" final_chunk_signature "\n" sha256(trailer lines,
// each "name:value\n")). The unsigned trailer mode has no signatures at all.
//
// Decoded bytes are emitted only once verified: in signed modes one chunk is
// buffered (at most limits::kAwsChunkBytesMax) and released when its
// signature checks; in the unsigned mode bytes pass through as they arrive.
// A buffered chunk's bytes are leased from options.buffer_budget (the
// router-wide cap) from its header until it is verified; a chunk the
// budget cannot take fails with SlowDown (503: retry later), before any of
// its data is read. Between chunks the decoder keeps at most
// limits::kAwsChunkBufferKeepBytes of buffer capacity.
//
// Error choices: malformed framing (bad hex, missing CRLF, unknown chunk
// extension, oversized line or chunk, bytes after the end) -> InvalidRequest,
// because it is a client encoding bug, not a short body; a body that ends
// early (Finish before the final CRLF) or whose decoded length differs from
// x-amz-decoded-content-length -> IncompleteBody, as S3 answers for a short
// body; bad chunk or trailer signature -> SignatureDoesNotMatch; a trailer
// declared in x-amz-trailer but absent, or present but undeclared ->
// InvalidRequest; checksum mismatch -> BadDigest "The CRC32 you specified did
// not match the calculated checksum.".
//
// Thread safety: one decoder per request, used by one thread at a time.
// Invariants: 1. bytes emitted so far <= decoded_content_length; 2. after the
// first error every call returns that error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/byte_budget.h"
#include "s3/auth/auth_context.h"
#include "s3/auth/checksum.h"
#include "s3/auth/s3_result.h"

namespace tessera::s3::auth {

struct AwsChunkedOptions {
  PayloadMode mode = PayloadMode::kStreamingSigned;  // must satisfy IsStreaming
  SigningState signing;                  // signed modes only
  uint64_t decoded_content_length = 0;   // x-amz-decoded-content-length
  // Lowercase trailer names from x-amz-trailer (comma-separated there).
  std::vector<std::string> declared_trailers;
  // The checksum to compute over the decoded bytes: the algorithm named by
  // x-amz-trailer, else by an x-amz-checksum-* header, else by
  // x-amz-sdk-checksum-algorithm; nullopt: none.
  std::optional<ChecksumAlgorithm> checksum;
  // The value of the x-amz-checksum-* header when the checksum was sent up
  // front instead of as a trailer.
  std::optional<std::string> header_checksum_base64;
  // Signed modes: where buffered chunks lease their bytes; null: no
  // process-wide cap (tests, tools).
  std::shared_ptr<ByteBudget> buffer_budget;
};

// Options for a request that authenticated with IsStreaming(context.mode).
// Reads x-amz-decoded-content-length (missing -> MissingContentLength, not a
// number -> InvalidArgument); x-amz-trailer (comma-separated names; more
// than limits::kAwsChunkTrailersMax, an unknown x-amz-checksum-* name, two
// checksum names, or any name with a mode that has no trailers ->
// InvalidRequest); x-amz-checksum-* (FindDeclaredChecksum) and
// x-amz-sdk-checksum-algorithm.
S3Result<AwsChunkedOptions> AwsChunkedOptionsFor(const RequestHead& request,
                                                 const AuthContext& context);

class AwsChunkedDecoder {
 public:
  explicit AwsChunkedDecoder(AwsChunkedOptions options);

  // Consumes `bytes` (split anywhere, any size, including empty) and appends
  // the verified decoded bytes to *decoded_out. Precondition: Finish has not
  // been called.
  S3Status Feed(std::string_view bytes, std::string* decoded_out);

  // The body has ended: checks that the encoding was complete, the decoded
  // length, the declared trailers, and the checksum (declared in a trailer
  // or header vs computed). OK means every decoded byte is authentic and
  // complete. A body that stops right after a complete trailer section
  // line, without the final empty line, is accepted (nothing is lost).
  // Calling it again returns the same result.
  S3Status Finish();

  // The final CRLF has been consumed (more bytes would be an error).
  bool done() const { return state_ == State::kDone; }
  uint64_t decoded_bytes() const { return decoded_bytes_; }
  // Trailers (name lowercased, value trimmed) in arrival order, without
  // x-amz-trailer-signature. Complete once done().
  const std::vector<std::pair<std::string, std::string>>& trailers() const { return trailers_; }
  // The computed checksum (options.checksum) as base64, after a successful
  // Finish; nullopt when no checksum was computed.
  const std::optional<std::string>& computed_checksum_base64() const { return computed_checksum_; }

 private:
  enum class State { kHeader, kData, kDataCrlf, kTrailer, kDone, kFailed };

  S3Status Fail(S3Status status);
  S3Status OnChunkHeader(std::string_view line);
  S3Status OnChunkEnd(std::string* decoded_out);
  S3Status OnTrailerLine(std::string_view line);
  S3Status OnTrailersEnd();
  void EmitData(std::string_view data, std::string* decoded_out);
  std::string ChunkSignature(std::string_view data) const;
  std::string TrailerSignature() const;
  bool Signed() const;
  bool HasTrailers() const;

  AwsChunkedOptions options_;
  State state_ = State::kHeader;
  S3Status failure_;
  std::string line_;               // partial header/trailer line
  uint64_t chunk_remaining_ = 0;   // data bytes still to read in this chunk
  uint64_t announced_bytes_ = 0;   // sum of the chunk sizes seen so far
  bool finished_ = false;          // Finish has run
  std::string chunk_data_;         // signed modes: the chunk being verified
  ByteLease chunk_lease_;          // signed modes: its bytes, from options_.buffer_budget
  std::string chunk_signature_;    // signed modes: its declared signature
  std::string previous_signature_;
  uint8_t crlf_seen_ = 0;          // kDataCrlf: bytes of "\r\n" consumed
  uint64_t decoded_bytes_ = 0;
  std::optional<Checksummer> checksummer_;
  std::vector<std::pair<std::string, std::string>> trailers_;
  std::string trailer_signature_;
  std::optional<std::string> computed_checksum_;
};

// Encodes `data` as an aws-chunked body in chunks of `chunk_bytes` (the last
// may be shorter), as the AWS SDKs do: signed modes sign each chunk from
// signing.seed_signature_hex; trailer modes append `trailers` (and the
// trailer signature when signed). For tests and test clients.
std::string EncodeAwsChunked(std::string_view data, size_t chunk_bytes, PayloadMode mode,
                             const SigningState& signing, const HeaderList& trailers);

}  // namespace tessera::s3::auth
