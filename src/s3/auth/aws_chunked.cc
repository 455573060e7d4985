#include "s3/auth/aws_chunked.h"

#include <algorithm>

#include "common/check.h"
#include "common/limits.h"
#include "s3/auth/crypto.h"
#include "s3/auth/request_parts.h"
#include "s3/auth/sigv4.h"

namespace tessera::s3::auth {
namespace {

constexpr std::string_view kEmptySha256Hex =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
constexpr std::string_view kChunkSignaturePrefix = "chunk-signature=";
constexpr std::string_view kTrailerSignatureName = "x-amz-trailer-signature";

S3Status Malformed(std::string_view detail) {
  return S3Status(S3ErrorCode::kInvalidRequest,
                  "Malformed aws-chunked body: " + std::string(detail));
}

std::optional<uint64_t> ParseHex(std::string_view text) {
  if (text.empty() || text.size() > 16) return std::nullopt;
  uint64_t v = 0;
  for (char c : text) {
    int d = -1;
    if (c >= '0' && c <= '9') d = c - '0';
    if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
    if (d < 0) return std::nullopt;
    v = v << 4 | static_cast<uint64_t>(d);
  }
  return v;
}

bool HasTrailerSection(PayloadMode mode) {
  return mode == PayloadMode::kStreamingSignedTrailer ||
         mode == PayloadMode::kStreamingUnsignedTrailer;
}

std::string ChunkStringToSign(const SigningState& signing, std::string_view previous,
                              std::string_view data) {
  return "AWS4-HMAC-SHA256-PAYLOAD\n" + signing.amz_date + "\n" + signing.scope + "\n" +
         std::string(previous) + "\n" + std::string(kEmptySha256Hex) + "\n" + Sha256Hex(data);
}

std::string TrailerStringToSign(const SigningState& signing, std::string_view previous,
                                std::string_view canonical_trailers) {
  return "AWS4-HMAC-SHA256-TRAILER\n" + signing.amz_date + "\n" + signing.scope + "\n" +
         std::string(previous) + "\n" + Sha256Hex(canonical_trailers);
}

}  // namespace

AwsChunkedDecoder::AwsChunkedDecoder(AwsChunkedOptions options) : options_(std::move(options)) {
  TESSERA_CHECK(IsStreaming(options_.mode));
  previous_signature_ = options_.signing.seed_signature_hex;
  if (!options_.checksum) {
    for (const std::string& name : options_.declared_trailers) {
      if (auto algorithm = ChecksumFromHeaderName(name)) options_.checksum = algorithm;
    }
  }
  if (options_.checksum) checksummer_.emplace(*options_.checksum);
}

bool AwsChunkedDecoder::Signed() const {
  return options_.mode != PayloadMode::kStreamingUnsignedTrailer;
}

bool AwsChunkedDecoder::HasTrailers() const { return HasTrailerSection(options_.mode); }

S3Status AwsChunkedDecoder::Fail(S3Status status) {
  TESSERA_CHECK(!status.ok());
  state_ = State::kFailed;
  failure_ = status;
  chunk_lease_.Release();
  chunk_data_ = std::string();
  return status;
}

S3Status AwsChunkedDecoder::Feed(std::string_view bytes, std::string* decoded_out) {
  TESSERA_CHECK(decoded_out != nullptr && !finished_);
  while (!bytes.empty()) {
    switch (state_) {
      case State::kHeader:
      case State::kTrailer: {
        const size_t newline = bytes.find('\n');
        const size_t take = newline == std::string_view::npos ? bytes.size() : newline + 1;
        if (line_.size() + take > limits::kAwsChunkLineBytesMax + 2) {
          return Fail(Malformed("a chunk header or trailer line is too long"));
        }
        line_.append(bytes.substr(0, take));
        bytes.remove_prefix(take);
        if (newline == std::string_view::npos) break;
        if (line_.size() < 2 || line_[line_.size() - 2] != '\r') {
          return Fail(Malformed("a line does not end with CRLF"));
        }
        std::string line = std::move(line_);
        line_.clear();
        line.resize(line.size() - 2);
        S3Status status =
            state_ == State::kHeader ? OnChunkHeader(line) : OnTrailerLine(line);
        if (!status.ok()) return Fail(status);
        break;
      }
      case State::kData: {
        const size_t take = static_cast<size_t>(std::min<uint64_t>(bytes.size(), chunk_remaining_));
        if (Signed()) {
          chunk_data_.append(bytes.substr(0, take));
        } else {
          EmitData(bytes.substr(0, take), decoded_out);
        }
        chunk_remaining_ -= take;
        bytes.remove_prefix(take);
        if (chunk_remaining_ == 0) state_ = State::kDataCrlf;
        break;
      }
      case State::kDataCrlf: {
        if (bytes.front() != (crlf_seen_ == 0 ? '\r' : '\n')) {
          return Fail(Malformed("chunk data is not followed by CRLF"));
        }
        bytes.remove_prefix(1);
        if (++crlf_seen_ < 2) break;
        crlf_seen_ = 0;
        S3Status status = OnChunkEnd(decoded_out);
        if (!status.ok()) return Fail(status);
        state_ = State::kHeader;
        break;
      }
      case State::kDone:
        return Fail(Malformed("bytes after the end of the body"));
      case State::kFailed:
        return failure_;
    }
  }
  return state_ == State::kFailed ? failure_ : S3Status::Ok();
}

S3Status AwsChunkedDecoder::OnChunkHeader(std::string_view line) {
  const size_t semi = line.find(';');
  std::optional<uint64_t> size = ParseHex(line.substr(0, semi));
  if (!size) return Malformed("invalid chunk size");
  if (Signed()) {
    const std::string_view ext =
        semi == std::string_view::npos ? std::string_view() : line.substr(semi + 1);
    if (ext.substr(0, kChunkSignaturePrefix.size()) != kChunkSignaturePrefix ||
        !IsLowerHex64(ext.substr(kChunkSignaturePrefix.size()))) {
      return Malformed("missing or invalid chunk-signature");
    }
    chunk_signature_ = std::string(ext.substr(kChunkSignaturePrefix.size()));
    if (*size > limits::kAwsChunkBytesMax) return Malformed("a signed chunk is larger than " +
                       std::to_string(limits::kAwsChunkBytesMax) + " bytes");
  }
  if (*size > options_.decoded_content_length - announced_bytes_) {
    return S3Status(S3ErrorCode::kIncompleteBody,
                    "The aws-chunked body is longer than x-amz-decoded-content-length.");
  }
  announced_bytes_ += *size;
  if (*size > 0) {
    if (Signed() && options_.buffer_budget != nullptr) {
      chunk_lease_ = options_.buffer_budget->TryLease(*size);
      if (chunk_lease_.bytes() == 0) {
        return S3Status(S3ErrorCode::kSlowDown,
                        "Too many aws-chunked bytes are being verified at once; retry later.");
      }
    }
    chunk_remaining_ = *size;
    chunk_data_.clear();
    state_ = State::kData;
    return S3Status::Ok();
  }
  if (Signed()) {  // the final chunk is signed too
    const std::string expected = ChunkSignature({});
    if (!ConstantTimeEquals(expected, chunk_signature_)) {
      return S3Status(S3ErrorCode::kSignatureDoesNotMatch);
    }
    previous_signature_ = expected;
  }
  state_ = State::kTrailer;
  return S3Status::Ok();
}

S3Status AwsChunkedDecoder::OnChunkEnd(std::string* decoded_out) {
  if (!Signed()) return S3Status::Ok();
  const std::string expected = ChunkSignature(chunk_data_);
  if (!ConstantTimeEquals(expected, chunk_signature_)) {
    return S3Status(S3ErrorCode::kSignatureDoesNotMatch);
  }
  previous_signature_ = expected;
  EmitData(chunk_data_, decoded_out);
  chunk_data_.clear();
  if (chunk_data_.capacity() > limits::kAwsChunkBufferKeepBytes) chunk_data_.shrink_to_fit();
  chunk_lease_.Release();
  return S3Status::Ok();
}

S3Status AwsChunkedDecoder::OnTrailerLine(std::string_view line) {
  if (line.empty()) return OnTrailersEnd();
  if (!HasTrailers()) return Malformed("trailers after the final chunk of a body without them");
  if (!trailer_signature_.empty()) return Malformed("a trailer after x-amz-trailer-signature");
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos || Trim(line.substr(0, colon)).empty()) {
    return Malformed("invalid trailer line");
  }
  std::string name = ToLowerAscii(Trim(line.substr(0, colon)));
  std::string value(Trim(line.substr(colon + 1)));
  if (name == kTrailerSignatureName) {
    if (options_.mode != PayloadMode::kStreamingSignedTrailer || !IsLowerHex64(value)) {
      return Malformed("unexpected or invalid x-amz-trailer-signature");
    }
    trailer_signature_ = std::move(value);
    return S3Status::Ok();
  }
  const auto& declared = options_.declared_trailers;
  if (std::find(declared.begin(), declared.end(), name) == declared.end()) {
    return S3Status(S3ErrorCode::kInvalidRequest,
                    "The trailer " + name + " was not declared in x-amz-trailer.");
  }
  const bool duplicate = std::any_of(trailers_.begin(), trailers_.end(),
                                     [&](const auto& t) { return t.first == name; });
  if (duplicate || trailers_.size() >= limits::kAwsChunkTrailersMax) {
    return Malformed("repeated trailer " + name);
  }
  trailers_.emplace_back(std::move(name), std::move(value));
  return S3Status::Ok();
}

S3Status AwsChunkedDecoder::OnTrailersEnd() {
  for (const std::string& name : options_.declared_trailers) {
    const bool present = std::any_of(trailers_.begin(), trailers_.end(),
                                     [&](const auto& t) { return t.first == name; });
    if (!present) {
      return S3Status(S3ErrorCode::kInvalidRequest,
                      "The trailer " + name + " declared in x-amz-trailer was not sent.");
    }
  }
  const bool needs_signature = options_.mode == PayloadMode::kStreamingSignedTrailer &&
                               (!trailers_.empty() || !trailer_signature_.empty());
  if (needs_signature && !ConstantTimeEquals(TrailerSignature(), trailer_signature_)) {
    return S3Status(S3ErrorCode::kSignatureDoesNotMatch,
                    "The trailer signature (x-amz-trailer-signature) is missing or does not "
                    "match.");
  }
  state_ = State::kDone;
  return S3Status::Ok();
}

void AwsChunkedDecoder::EmitData(std::string_view data, std::string* decoded_out) {
  decoded_bytes_ += data.size();
  TESSERA_CHECK(decoded_bytes_ <= options_.decoded_content_length);
  if (checksummer_) checksummer_->Update(data);
  decoded_out->append(data);
}

std::string AwsChunkedDecoder::ChunkSignature(std::string_view data) const {
  return HmacSha256Hex(options_.signing.signing_key,
                       ChunkStringToSign(options_.signing, previous_signature_, data));
}

std::string AwsChunkedDecoder::TrailerSignature() const {
  std::string canonical;
  for (const auto& [name, value] : trailers_) canonical += name + ":" + value + "\n";
  return HmacSha256Hex(options_.signing.signing_key,
                       TrailerStringToSign(options_.signing, previous_signature_, canonical));
}

S3Status AwsChunkedDecoder::Finish() {
  if (finished_) return state_ == State::kFailed ? failure_ : S3Status::Ok();
  finished_ = true;
  if (state_ == State::kFailed) return failure_;
  if (state_ == State::kTrailer && line_.empty()) {  // only the final empty line is missing
    S3Status status = OnTrailersEnd();
    if (!status.ok()) return Fail(status);
  }
  if (state_ != State::kDone || decoded_bytes_ != options_.decoded_content_length) {
    return Fail(S3Status(S3ErrorCode::kIncompleteBody));
  }
  if (!checksummer_) return S3Status::Ok();
  const std::string computed = checksummer_->Finish();
  computed_checksum_ = Base64Encode(computed);
  const std::string_view header_name = ChecksumHeaderName(*options_.checksum);
  std::optional<std::string> declared = options_.header_checksum_base64;
  for (const auto& [name, value] : trailers_) {
    if (name == header_name) declared = value;
  }
  if (!declared) return S3Status::Ok();
  S3Status status = VerifyChecksum(*options_.checksum, *declared, computed);
  if (!status.ok()) return Fail(status);
  return S3Status::Ok();
}

std::string EncodeAwsChunked(std::string_view data, size_t chunk_bytes, PayloadMode mode,
                             const SigningState& signing, const HeaderList& trailers) {
  TESSERA_CHECK(IsStreaming(mode) && chunk_bytes > 0);
  const bool is_signed = mode != PayloadMode::kStreamingUnsignedTrailer;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  std::string previous = signing.seed_signature_hex;
  auto append_chunk = [&](std::string_view chunk) {
    std::string size_hex;
    for (size_t n = chunk.size(); size_hex.empty() || n > 0; n >>= 4) size_hex.insert(0, 1, kHex[n & 15]);
    out += size_hex;
    if (is_signed) {
      previous = HmacSha256Hex(signing.signing_key, ChunkStringToSign(signing, previous, chunk));
      out += ";chunk-signature=" + previous;
    }
    out += "\r\n";
    if (!chunk.empty()) {
      out.append(chunk);
      out += "\r\n";
    }
  };
  for (size_t offset = 0; offset < data.size(); offset += chunk_bytes) {
    append_chunk(data.substr(offset, chunk_bytes));
  }
  append_chunk({});
  if (HasTrailerSection(mode)) {
    std::string canonical;
    for (const auto& [name, value] : trailers) {
      out += name + ":" + value + "\r\n";
      canonical += ToLowerAscii(name) + ":" + std::string(Trim(value)) + "\n";
    }
    if (mode == PayloadMode::kStreamingSignedTrailer) {
      out += std::string(kTrailerSignatureName) + ":" +
             HmacSha256Hex(signing.signing_key, TrailerStringToSign(signing, previous, canonical)) +
             "\r\n";
    }
  }
  out += "\r\n";
  return out;
}

}  // namespace tessera::s3::auth
