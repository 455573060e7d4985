// Goal: the aws-chunked decoder verifies AWS's documented streaming
// examples byte for byte, accepts its input split at any boundary, never
// releases unverified bytes, checks trailers and checksums of every
// algorithm, and turns every framing, signature and length fault into the
// documented S3 error.
#include "s3/auth/aws_chunked.h"

#include <gtest/gtest.h>

#include <random>

#include "s3/auth/auth_test_util.h"
#include "s3/auth/sigv4.h"

namespace tessera::s3::auth {
namespace {

using testing::ExampleConfig;
using testing::ExampleLookup;
using testing::kAccessKey;
using testing::kExampleTime;
using testing::kSecretKey;

struct Decoded {
  S3Status feed;    // first failing Feed, or OK
  S3Status finish;  // Finish (only if every Feed succeeded)
  std::string data;
};

// Feeds `body` in pieces of `piece` bytes (0: all at once).
Decoded Decode(const AwsChunkedOptions& options, std::string_view body, size_t piece = 0,
               AwsChunkedDecoder* keep = nullptr) {
  AwsChunkedDecoder local(options);
  AwsChunkedDecoder& d = keep ? *keep : local;
  Decoded out;
  if (piece == 0) piece = body.size() + 1;
  for (size_t at = 0; at < body.size(); at += piece) {
    out.feed = d.Feed(body.substr(at, piece), &out.data);
    if (!out.feed.ok()) return out;
  }
  out.finish = d.Finish();
  return out;
}

S3ErrorCode CodeOf(const Decoded& d) {
  if (!d.feed.ok()) return d.feed.error().code;
  if (!d.finish.ok()) return d.finish.error().code;
  ADD_FAILURE() << "expected an error";
  return S3ErrorCode::kInternalError;
}

// sigv4-streaming: PUT of 66560 bytes of 'a' in 64 KiB chunks.
RequestHead StreamingExampleRequest() {
  return {"PUT",
          "/examplebucket/chunkObject.txt",
          {{"Host", "s3.amazonaws.com"},
           {"x-amz-date", "20130524T000000Z"},
           {"x-amz-storage-class", "REDUCED_REDUNDANCY"},
           {"Authorization",
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/"
            "aws4_request,SignedHeaders=content-encoding;content-length;host;x-amz-content-"
            "sha256;x-amz-date;x-amz-decoded-content-length;x-amz-storage-class,Signature="
            "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9"},
           {"x-amz-content-sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"},
           {"Content-Encoding", "aws-chunked"},
           {"x-amz-decoded-content-length", "66560"},
           {"Content-Length", "66824"}}};
}

std::string StreamingExampleBody() {
  return "10000;chunk-signature=ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648"
         "\r\n" +
         std::string(65536, 'a') +
         "\r\n400;chunk-signature=0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef54"
         "97\r\n" +
         std::string(1024, 'a') +
         "\r\n0;chunk-signature=b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9"
         "\r\n\r\n";
}

AwsChunkedOptions OptionsFor(const RequestHead& request) {
  auto context = VerifySigV4Header(request, ExampleConfig(), ExampleLookup());
  EXPECT_TRUE(context.ok()) << (context.ok() ? "" : context.error().Message());
  auto options = AwsChunkedOptionsFor(request, *context);
  EXPECT_TRUE(options.ok()) << (options.ok() ? "" : options.error().Message());
  return *options;
}

TEST(AwsChunkedExamples, StreamingPayloadAnySplit) {
  const AwsChunkedOptions options = OptionsFor(StreamingExampleRequest());
  const std::string body = StreamingExampleBody();
  ASSERT_EQ(body.size(), 66824u);  // the example's Content-Length
  for (size_t piece : {size_t{0}, size_t{1}, size_t{2}, size_t{7}, size_t{85}, size_t{4096},
                       size_t{65536}}) {
    Decoded d = Decode(options, body, piece);
    ASSERT_TRUE(d.feed.ok()) << piece << ": " << d.feed.error().Message();
    ASSERT_TRUE(d.finish.ok()) << piece << ": " << d.finish.error().Message();
    EXPECT_EQ(d.data, std::string(66560, 'a')) << piece;
  }
}

TEST(AwsChunkedExamples, StreamingPayloadRandomSplits) {
  const AwsChunkedOptions options = OptionsFor(StreamingExampleRequest());
  const std::string body = StreamingExampleBody();
  std::mt19937 rng(7);
  for (int round = 0; round < 20; ++round) {
    AwsChunkedDecoder d(options);
    std::string out;
    for (size_t at = 0; at < body.size();) {
      const size_t n = std::min<size_t>(body.size() - at, rng() % 300);
      ASSERT_TRUE(d.Feed(std::string_view(body).substr(at, n), &out).ok());
      at += n;
    }
    ASSERT_TRUE(d.Finish().ok());
    EXPECT_EQ(out.size(), 66560u);
  }
}

TEST(AwsChunkedExamples, TamperedExampleBytesAreCaught) {
  const AwsChunkedOptions options = OptionsFor(StreamingExampleRequest());
  std::string body = StreamingExampleBody();
  body[100] = 'b';  // in the first chunk's data
  Decoded d = Decode(options, body);
  EXPECT_EQ(CodeOf(d), S3ErrorCode::kSignatureDoesNotMatch);
  EXPECT_TRUE(d.data.empty()) << "no byte of a failed chunk is released";
  std::string second = StreamingExampleBody();
  second[65536 + 100 + 90] = 'b';  // in the second chunk's data
  Decoded d2 = Decode(options, second);
  EXPECT_EQ(CodeOf(d2), S3ErrorCode::kSignatureDoesNotMatch);
  EXPECT_EQ(d2.data.size(), 65536u) << "only the verified first chunk was released";
  std::string final_sig = StreamingExampleBody();
  final_sig[final_sig.size() - 5] = '0';  // the final chunk's signature
  EXPECT_EQ(CodeOf(Decode(options, final_sig)), S3ErrorCode::kSignatureDoesNotMatch);
  // Reordered chunks: each signature chains on the previous one.
  RequestHead r = StreamingExampleRequest();
  AwsChunkedOptions one = options;
  one.decoded_content_length = 1024;
  const std::string only_second =
      "400;chunk-signature=0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497\r\n" +
      std::string(1024, 'a') + "\r\n";
  EXPECT_EQ(CodeOf(Decode(one, only_second)), S3ErrorCode::kSignatureDoesNotMatch);
}

// sigv4-streaming-trailers: the same upload with a CRC32C trailer.
RequestHead TrailerExampleRequest() {
  return {"PUT",
          "/examplebucket/chunkObject.txt",
          {{"Host", "s3.amazonaws.com"},
           {"x-amz-date", "20130524T000000Z"},
           {"x-amz-storage-class", "REDUCED_REDUNDANCY"},
           {"Authorization",
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/"
            "aws4_request,SignedHeaders=content-encoding;host;x-amz-content-sha256;x-amz-date;"
            "x-amz-decoded-content-length;x-amz-storage-class;x-amz-trailer,Signature="
            "106e2a8a18243abcf37539882f36619c00e2dfc72633413f02d3b74544bfeb8e"},
           {"x-amz-content-sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"},
           {"Content-Encoding", "aws-chunked"},
           {"x-amz-decoded-content-length", "66560"},
           {"x-amz-trailer", "x-amz-checksum-crc32c"},
           {"Content-Length", "66946"}}};
}

std::string TrailerExampleBody(std::string_view crc32c_b64, std::string_view trailer_signature) {
  return "10000;chunk-signature=b474d8862b1487a5145d686f57f013e54db672cee1c953b3010fb58501ef5aa2"
         "\r\n" +
         std::string(65536, 'a') +
         "\r\n400;chunk-signature=1c1344b170168f8e65b41376b44b20fe354e373826ccbbe2c1d40a8cae51e5"
         "c7\r\n" +
         std::string(1024, 'a') +
         "\r\n0;chunk-signature=2ca2aba2005185cf7159c6277faf83795951dd77a3a99e6e65d5c9f85863f992"
         "\r\nx-amz-checksum-crc32c:" +
         std::string(crc32c_b64) + "\r\nx-amz-trailer-signature:" +
         std::string(trailer_signature) + "\r\n\r\n";
}

TEST(AwsChunkedExamples, SignedTrailer) {
  const AwsChunkedOptions options = OptionsFor(TrailerExampleRequest());
  EXPECT_EQ(options.mode, PayloadMode::kStreamingSignedTrailer);
  EXPECT_EQ(options.checksum, ChecksumAlgorithm::kCrc32c);
  // The documented body: seed and chunk signatures are the page's. The page
  // prints trailer signature 63bddb24..., which does not follow from its own
  // string to sign (AWS4-HMAC-SHA256-TRAILER, ..., 2ca2aba2..., 1e376db7...
  // = sha256("x-amz-checksum-crc32c:sOO8/Q==\n")); HMAC of that string is
  // d81f82fc..., the value other S3 implementations test with too.
  // sOO8/Q== is the CRC32C of the 66560 bytes.
  const std::string documented =
      TrailerExampleBody("sOO8/Q==", "d81f82fc3505edab99d459891051a732e8730629a2e4a59689829ca17fe2e435");
  ASSERT_EQ(documented.size(), 66946u);  // the example's Content-Length
  AwsChunkedDecoder decoder(options);
  Decoded d = Decode(options, documented, 1, &decoder);
  ASSERT_TRUE(d.feed.ok()) << d.feed.error().Message();
  EXPECT_EQ(d.data, std::string(66560, 'a'));
  ASSERT_EQ(decoder.trailers().size(), 1u);
  EXPECT_EQ(decoder.trailers()[0].first, "x-amz-checksum-crc32c");
  EXPECT_EQ(decoder.trailers()[0].second, "sOO8/Q==");
  EXPECT_TRUE(d.finish.ok()) << d.finish.error().Message();
  EXPECT_EQ(decoder.computed_checksum_base64(), "sOO8/Q==");
  // A tampered trailer value no longer matches the trailer signature.
  const std::string tampered =
      TrailerExampleBody("sOO8/Q=A", "d81f82fc3505edab99d459891051a732e8730629a2e4a59689829ca17fe2e435");
  EXPECT_EQ(CodeOf(Decode(options, tampered)), S3ErrorCode::kSignatureDoesNotMatch);
  const std::string page_value =
      TrailerExampleBody("sOO8/Q==", "63bddb248ad2590c92712055f51b8e78ab024eead08276b24f010b0efd74843f");
  EXPECT_EQ(CodeOf(Decode(options, page_value)), S3ErrorCode::kSignatureDoesNotMatch);
}

// A request signed now for `mode`, and its options.
struct SignedUpload {
  RequestHead request;
  AwsChunkedOptions options;
};

SignedUpload SignedSetup(PayloadMode mode, std::string_view data, HeaderList extra = {}) {
  static const char* kValues[] = {"", "", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD",
                                  "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER",
                                  "STREAMING-UNSIGNED-PAYLOAD-TRAILER"};
  RequestHead r{"PUT", "/bucket/key", {{"Host", "s3.example"}, {"Content-Encoding", "aws-chunked"},
                                       {"x-amz-decoded-content-length", std::to_string(data.size())}}};
  for (auto& h : extra) r.headers.push_back(h);
  SignV4(&r, {std::string(kAccessKey), std::string(kSecretKey), "us-east-1"}, kExampleTime,
         kValues[static_cast<int>(mode)]);
  auto context = VerifySigV4Header(r, ExampleConfig(), ExampleLookup());
  EXPECT_TRUE(context.ok());
  EXPECT_EQ(context->mode, mode);
  auto options = AwsChunkedOptionsFor(r, *context);
  EXPECT_TRUE(options.ok()) << (options.ok() ? "" : options.error().Message());
  return {r, options.ok() ? *options : AwsChunkedOptions{}};
}

std::string Data(size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s.push_back(static_cast<char>('A' + i * 31 % 57));
  return s;
}

TEST(AwsChunked, TrailersOfEveryAlgorithmInEveryTrailerMode) {
  const std::string data = Data(100'000);
  for (PayloadMode mode :
       {PayloadMode::kStreamingSignedTrailer, PayloadMode::kStreamingUnsignedTrailer}) {
    for (ChecksumAlgorithm a : {ChecksumAlgorithm::kCrc32, ChecksumAlgorithm::kCrc32c,
                                ChecksumAlgorithm::kSha1, ChecksumAlgorithm::kSha256,
                                ChecksumAlgorithm::kCrc64Nvme}) {
      const std::string header(ChecksumHeaderName(a));
      SignedUpload s = SignedSetup(mode, data, {{"x-amz-trailer", header},
                                         {"x-amz-sdk-checksum-algorithm", std::string(ChecksumName(a))}});
      EXPECT_EQ(s.options.checksum, a);
      const std::string value = Base64Encode(ComputeChecksum(a, data));
      const std::string body =
          EncodeAwsChunked(data, 8192, mode, s.options.signing, {{header, value}});
      for (size_t piece : {size_t{0}, size_t{1}, size_t{1000}}) {
        AwsChunkedDecoder decoder(s.options);
        Decoded d = Decode(s.options, body, piece, &decoder);
        ASSERT_TRUE(d.feed.ok() && d.finish.ok()) << header << " piece " << piece;
        EXPECT_EQ(d.data, data);
        EXPECT_EQ(decoder.computed_checksum_base64(), value);
        ASSERT_EQ(decoder.trailers().size(), 1u);
        EXPECT_EQ(decoder.trailers()[0].second, value);
      }
      // The wrong value: BadDigest naming the algorithm.
      const std::string wrong_value = Base64Encode(ComputeChecksum(a, "other"));
      Decoded bad = Decode(s.options, EncodeAwsChunked(data, 8192, mode, s.options.signing,
                                                       {{header, wrong_value}}));
      ASSERT_EQ(CodeOf(bad), S3ErrorCode::kBadDigest) << header;
      EXPECT_EQ(bad.finish.error().Message(), "The " + std::string(ChecksumName(a)) +
                                                  " you specified did not match the calculated "
                                                  "checksum.");
    }
  }
}

TEST(AwsChunked, ChecksumSentAsAHeaderIsVerified) {
  const std::string data = Data(5000);
  const std::string good = Base64Encode(ComputeChecksum(ChecksumAlgorithm::kCrc32, data));
  SignedUpload s = SignedSetup(PayloadMode::kStreamingSigned, data, {{"x-amz-checksum-crc32", good}});
  EXPECT_EQ(s.options.header_checksum_base64, good);
  const std::string body = EncodeAwsChunked(data, 1000, s.options.mode, s.options.signing, {});
  Decoded d = Decode(s.options, body);
  EXPECT_TRUE(d.feed.ok() && d.finish.ok());
  SignedUpload bad = SignedSetup(PayloadMode::kStreamingSigned, data, {{"x-amz-checksum-crc32", "AAAAAA=="}});
  Decoded b = Decode(bad.options,
                     EncodeAwsChunked(data, 1000, bad.options.mode, bad.options.signing, {}));
  EXPECT_EQ(CodeOf(b), S3ErrorCode::kBadDigest);
  EXPECT_EQ(b.finish.error().Message(),
            "The CRC32 you specified did not match the calculated checksum.");
}

TEST(AwsChunked, EmptyBodiesAndLastChunkShorter) {
  for (PayloadMode mode : {PayloadMode::kStreamingSigned, PayloadMode::kStreamingSignedTrailer,
                           PayloadMode::kStreamingUnsignedTrailer}) {
    SignedUpload s = SignedSetup(mode, "");
    Decoded d = Decode(s.options, EncodeAwsChunked("", 10, mode, s.options.signing, {}), 1);
    EXPECT_TRUE(d.feed.ok() && d.finish.ok());
    EXPECT_EQ(d.data, "");
    SignedUpload t = SignedSetup(mode, Data(25));
    Decoded e = Decode(t.options, EncodeAwsChunked(Data(25), 10, mode, t.options.signing, {}), 3);
    EXPECT_TRUE(e.feed.ok() && e.finish.ok());
    EXPECT_EQ(e.data, Data(25));
  }
}

TEST(AwsChunked, SignedBytesAreReleasedOnlyOnceVerified) {
  const std::string data = Data(3000);
  SignedUpload s = SignedSetup(PayloadMode::kStreamingSigned, data);
  const std::string body = EncodeAwsChunked(data, 1000, s.options.mode, s.options.signing, {});
  AwsChunkedDecoder d(s.options);
  std::string out;
  const size_t header = body.find("\r\n") + 2;
  ASSERT_TRUE(d.Feed(std::string_view(body).substr(0, header + 999), &out).ok());
  EXPECT_TRUE(out.empty());
  ASSERT_TRUE(d.Feed(std::string_view(body).substr(header + 999, 3), &out).ok());  // + CRLF
  EXPECT_EQ(out, data.substr(0, 1000));
  // The unsigned mode streams bytes as they come.
  SignedUpload u = SignedSetup(PayloadMode::kStreamingUnsignedTrailer, data);
  const std::string ubody = EncodeAwsChunked(data, 1000, u.options.mode, u.options.signing, {});
  AwsChunkedDecoder ud(u.options);
  std::string uout;
  ASSERT_TRUE(ud.Feed(std::string_view(ubody).substr(0, 5 + 10), &uout).ok());  // "3e8\r\n" + 10
  EXPECT_EQ(uout, data.substr(0, 10));
}

// Goal: a buffered chunk leases its bytes from the shared budget from its
// header until it is verified; a chunk the budget cannot take is refused
// with SlowDown before its data is read, and the lease comes back when the
// chunk verifies or the decoder fails or goes away.
TEST(AwsChunked, BufferedChunksLeaseFromTheSharedBudget) {
  const std::string data = Data(3000);
  SignedUpload s = SignedSetup(PayloadMode::kStreamingSigned, data);
  const std::string body = EncodeAwsChunked(data, 1000, s.options.mode, s.options.signing, {});
  auto budget = std::make_shared<ByteBudget>(1500);
  AwsChunkedOptions options = s.options;
  options.buffer_budget = budget;
  const size_t header = body.find("\r\n") + 2;
  std::string out;
  {
    AwsChunkedDecoder first(options);
    ASSERT_TRUE(first.Feed(std::string_view(body).substr(0, header + 10), &out).ok());
    EXPECT_EQ(budget->leased(), 1000u);
    // A second request's 1000-byte chunk does not fit beside it.
    AwsChunkedDecoder second(options);
    std::string other;
    const S3Status refused = second.Feed(std::string_view(body).substr(0, header), &other);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().code, S3ErrorCode::kSlowDown);
    EXPECT_EQ(budget->leased(), 1000u);
    // The first chunk verified: its lease is back, the next chunk leases.
    ASSERT_TRUE(first.Feed(std::string_view(body).substr(header + 10, 992), &out).ok());
    EXPECT_EQ(out, data.substr(0, 1000));
    EXPECT_LE(budget->leased(), 1000u);
  }
  EXPECT_EQ(budget->leased(), 0u) << "a decoder gone gives its lease back";
  // A whole body decodes within the budget, and leaves nothing leased.
  Decoded whole = Decode(options, body, 333);
  ASSERT_TRUE(whole.feed.ok() && whole.finish.ok());
  EXPECT_EQ(whole.data, data);
  EXPECT_EQ(budget->leased(), 0u);
  // A failed decoder gives its lease back at once.
  AwsChunkedDecoder tampered(options);
  std::string bad = body;
  bad[header + 5] ^= 1;
  out.clear();
  EXPECT_FALSE(tampered.Feed(bad, &out).ok());
  EXPECT_EQ(budget->leased(), 0u);
}

TEST(AwsChunkedErrors, Framing) {
  const std::string data = Data(20);
  SignedUpload s = SignedSetup(PayloadMode::kStreamingSigned, data);
  const std::string good = EncodeAwsChunked(data, 20, s.options.mode, s.options.signing, {});
  const std::string sig = good.substr(good.find('=') + 1, 64);
  auto code = [&](std::string body) { return CodeOf(Decode(s.options, body)); };
  EXPECT_EQ(code("zz;chunk-signature=" + sig + "\r\n"), S3ErrorCode::kInvalidRequest);
  EXPECT_EQ(code(";chunk-signature=" + sig + "\r\n"), S3ErrorCode::kInvalidRequest);
  EXPECT_EQ(code("14\r\n" + data + "\r\n"), S3ErrorCode::kInvalidRequest);  // no signature
  EXPECT_EQ(code("14;chunk-signature=" + std::string(63, 'a') + "\r\n"), S3ErrorCode::kInvalidRequest);
  EXPECT_EQ(code("14;chunk-signature=" + std::string(64, 'A') + "\r\n"), S3ErrorCode::kInvalidRequest);
  EXPECT_EQ(code("14;chunk-signatur=" + sig + "\r\n"), S3ErrorCode::kInvalidRequest);
  EXPECT_EQ(code("14;chunk-signature=" + sig + "\n"), S3ErrorCode::kInvalidRequest);  // bare LF
  EXPECT_EQ(code("14;chunk-signature=" + sig + "\r\n" + data + "XX"), S3ErrorCode::kInvalidRequest);
  EXPECT_EQ(code("14;chunk-signature=" + sig + "\r\n" + data + "\rX"), S3ErrorCode::kInvalidRequest);
  EXPECT_EQ(code(std::string(5000, '1')), S3ErrorCode::kInvalidRequest);  // endless line
  EXPECT_EQ(code("11111111111111111;chunk-signature=" + sig + "\r\n"), S3ErrorCode::kInvalidRequest);
  EXPECT_EQ(code(good + "x"), S3ErrorCode::kInvalidRequest);  // bytes after the end
  // Truncations: IncompleteBody at Finish.
  for (size_t cut : {size_t{0}, size_t{10}, good.find("\r\n") + 5, good.size() - 3}) {
    EXPECT_EQ(code(good.substr(0, cut)), S3ErrorCode::kIncompleteBody) << cut;
  }
  // Only the final empty line missing: accepted, nothing is lost.
  Decoded no_final = Decode(s.options, good.substr(0, good.size() - 2));
  EXPECT_TRUE(no_final.feed.ok() && no_final.finish.ok());
  // Errors stick.
  AwsChunkedDecoder d(s.options);
  std::string out;
  EXPECT_FALSE(d.Feed("zz\r\n", &out).ok());
  S3Status again = d.Feed(good, &out);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, S3ErrorCode::kInvalidRequest);
  EXPECT_FALSE(d.Finish().ok());
}

TEST(AwsChunkedErrors, ChunkSizeLimitsAndDecodedLength) {
  // A signed chunk above the buffering bound.
  const std::string data = Data(20);
  SignedUpload s = SignedSetup(PayloadMode::kStreamingSigned, data);
  AwsChunkedOptions big = s.options;
  big.decoded_content_length = uint64_t{1} << 40;
  const std::string sig(64, 'a');
  EXPECT_EQ(CodeOf(Decode(big, "1000001;chunk-signature=" + sig + "\r\n")),
            S3ErrorCode::kInvalidRequest);
  // Longer or shorter than x-amz-decoded-content-length.
  AwsChunkedOptions shorter = s.options;
  shorter.decoded_content_length = 19;
  EXPECT_EQ(CodeOf(Decode(shorter, EncodeAwsChunked(data, 20, s.options.mode, s.options.signing, {}))),
            S3ErrorCode::kIncompleteBody);
  AwsChunkedOptions longer = s.options;
  longer.decoded_content_length = 21;
  EXPECT_EQ(CodeOf(Decode(longer, EncodeAwsChunked(data, 20, s.options.mode, s.options.signing, {}))),
            S3ErrorCode::kIncompleteBody);
}

TEST(AwsChunkedErrors, Trailers) {
  const std::string data = Data(50);
  const std::string crc = Base64Encode(ComputeChecksum(ChecksumAlgorithm::kCrc32, data));
  for (PayloadMode mode :
       {PayloadMode::kStreamingSignedTrailer, PayloadMode::kStreamingUnsignedTrailer}) {
    SignedUpload s = SignedSetup(mode, data, {{"x-amz-trailer", "x-amz-checksum-crc32"}});
    auto encode = [&](HeaderList trailers) {
      return EncodeAwsChunked(data, 16, mode, s.options.signing, trailers);
    };
    // Declared but absent.
    EXPECT_EQ(CodeOf(Decode(s.options, encode({}))), S3ErrorCode::kInvalidRequest);
    // Present but not declared.
    EXPECT_EQ(CodeOf(Decode(s.options, encode({{"x-amz-checksum-crc32", crc},
                                               {"x-amz-meta-x", "1"}}))),
              S3ErrorCode::kInvalidRequest);
    // Repeated.
    EXPECT_EQ(CodeOf(Decode(s.options, encode({{"x-amz-checksum-crc32", crc},
                                               {"x-amz-checksum-crc32", crc}}))),
              S3ErrorCode::kInvalidRequest);
    // Not base64 of 4 bytes.
    EXPECT_EQ(CodeOf(Decode(s.options, encode({{"x-amz-checksum-crc32", "AAAA"}}))),
              S3ErrorCode::kInvalidRequest);
    // A malformed trailer line.
    std::string body = encode({{"x-amz-checksum-crc32", crc}});
    body.replace(body.find("x-amz-checksum-crc32:"), 21, "x-amz-checksum-crc32 ");
    EXPECT_EQ(CodeOf(Decode(s.options, body)), S3ErrorCode::kInvalidRequest);
  }
  // Signed trailer: a missing or wrong trailer signature.
  SignedUpload s = SignedSetup(PayloadMode::kStreamingSignedTrailer, data,
                        {{"x-amz-trailer", "x-amz-checksum-crc32"}});
  std::string body = EncodeAwsChunked(data, 16, s.options.mode, s.options.signing,
                                      {{"x-amz-checksum-crc32", crc}});
  std::string no_sig = body;
  const size_t at = no_sig.find("x-amz-trailer-signature:");
  no_sig.erase(at, no_sig.size() - 2 - at);
  EXPECT_EQ(CodeOf(Decode(s.options, no_sig)), S3ErrorCode::kSignatureDoesNotMatch);
  std::string wrong_sig = body;
  wrong_sig[at + 30] = wrong_sig[at + 30] == '0' ? '1' : '0';
  EXPECT_EQ(CodeOf(Decode(s.options, wrong_sig)), S3ErrorCode::kSignatureDoesNotMatch);
  std::string after_sig = body;
  after_sig.insert(after_sig.size() - 2, "x-amz-checksum-crc32:" + crc + "\r\n");
  EXPECT_EQ(CodeOf(Decode(s.options, after_sig)), S3ErrorCode::kInvalidRequest);
  // The unsigned trailer mode carries no trailer signature.
  SignedUpload u = SignedSetup(PayloadMode::kStreamingUnsignedTrailer, data,
                        {{"x-amz-trailer", "x-amz-checksum-crc32"}});
  std::string with_sig = EncodeAwsChunked(data, 16, u.options.mode, u.options.signing,
                                          {{"x-amz-checksum-crc32", crc}});
  with_sig.insert(with_sig.size() - 2, "x-amz-trailer-signature:" + std::string(64, 'a') + "\r\n");
  EXPECT_EQ(CodeOf(Decode(u.options, with_sig)), S3ErrorCode::kInvalidRequest);
  // No trailers at all in the plain signed mode.
  SignedUpload p = SignedSetup(PayloadMode::kStreamingSigned, data);
  std::string plain = EncodeAwsChunked(data, 16, p.options.mode, p.options.signing, {});
  plain.insert(plain.size() - 2, "x-amz-checksum-crc32:" + crc + "\r\n");
  EXPECT_EQ(CodeOf(Decode(p.options, plain)), S3ErrorCode::kInvalidRequest);
}

TEST(AwsChunkedOptions, FromRequestHeaders) {
  AuthContext context;
  context.mode = PayloadMode::kStreamingUnsignedTrailer;
  auto options_of = [&](HeaderList headers) {
    return AwsChunkedOptionsFor(RequestHead{"PUT", "/b/k", std::move(headers)}, context);
  };
  auto missing = options_of({});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, S3ErrorCode::kMissingContentLength);
  EXPECT_EQ(options_of({{"x-amz-decoded-content-length", "12a"}}).error().code,
            S3ErrorCode::kInvalidArgument);
  auto ok = options_of({{"x-amz-decoded-content-length", "12"},
                        {"X-Amz-Trailer", " X-Amz-Checksum-SHA256 , x-amz-meta-z"}});
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->decoded_content_length, 12u);
  EXPECT_EQ(ok->checksum, ChecksumAlgorithm::kSha256);
  EXPECT_EQ(ok->declared_trailers,
            (std::vector<std::string>{"x-amz-checksum-sha256", "x-amz-meta-z"}));
  EXPECT_EQ(options_of({{"x-amz-decoded-content-length", "1"},
                        {"x-amz-trailer", "x-amz-checksum-crc32,x-amz-checksum-sha1"}})
                .error()
                .code,
            S3ErrorCode::kInvalidRequest);
  EXPECT_EQ(options_of({{"x-amz-decoded-content-length", "1"},
                        {"x-amz-trailer", "x-amz-checksum-md9"}})
                .error()
                .code,
            S3ErrorCode::kInvalidRequest);
  EXPECT_EQ(options_of({{"x-amz-decoded-content-length", "1"},
                        {"x-amz-trailer", "x-amz-checksum-crc32"},
                        {"x-amz-checksum-crc32", "AAAAAA=="}})
                .error()
                .code,
            S3ErrorCode::kInvalidRequest);
  EXPECT_EQ(options_of({{"x-amz-decoded-content-length", "1"},
                        {"x-amz-trailer", "x-amz-checksum-crc32"},
                        {"x-amz-sdk-checksum-algorithm", "SHA256"}})
                .error()
                .code,
            S3ErrorCode::kInvalidRequest);
  auto sdk_only = options_of({{"x-amz-decoded-content-length", "1"},
                              {"x-amz-sdk-checksum-algorithm", "crc32c"}});
  ASSERT_TRUE(sdk_only.ok());
  EXPECT_EQ(sdk_only->checksum, ChecksumAlgorithm::kCrc32c);
  context.mode = PayloadMode::kStreamingSigned;
  EXPECT_EQ(options_of({{"x-amz-decoded-content-length", "1"},
                        {"x-amz-trailer", "x-amz-checksum-crc32"}})
                .error()
                .code,
            S3ErrorCode::kInvalidRequest);
}

}  // namespace
}  // namespace tessera::s3::auth
