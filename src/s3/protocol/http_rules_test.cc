// Goal: S3's HTTP rules -- dates, Range, conditional requests, ETags,
// percent-encoding, query strings, metadata and overrides -- give AWS's
// answers, including every edge AWS documents or s3-tests checks.
#include "s3/protocol/http_rules.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tessera::s3 {
namespace {

constexpr int64_t kS = 1000;

// ---- Dates ------------------------------------------------------------------

TEST(HttpDate, FormatsImfFixdate) {
  EXPECT_EQ(FormatHttpDate(0), "Thu, 01 Jan 1970 00:00:00 GMT");
  EXPECT_EQ(FormatHttpDate(1255369800 * kS), "Mon, 12 Oct 2009 17:50:00 GMT");
  EXPECT_EQ(FormatHttpDate(1255369800 * kS + 999), "Mon, 12 Oct 2009 17:50:00 GMT");
  EXPECT_EQ(FormatHttpDate(951868799 * kS), "Tue, 29 Feb 2000 23:59:59 GMT");
  EXPECT_EQ(FormatHttpDate(-1 * kS), "Wed, 31 Dec 1969 23:59:59 GMT");
}

TEST(HttpDate, ParsesTheThreeForms) {
  const int64_t want = 784111777 * kS;
  EXPECT_EQ(ParseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT"), want);
  EXPECT_EQ(ParseHttpDate("Sunday, 06-Nov-94 08:49:37 GMT"), want);
  EXPECT_EQ(ParseHttpDate("Sun Nov  6 08:49:37 1994"), want);
  EXPECT_EQ(ParseHttpDate("  Sun, 06 Nov 1994 08:49:37 GMT "), want);
  EXPECT_EQ(ParseHttpDate("Thursday, 01-Jan-26 00:00:00 GMT"),
            ParseHttpDate("Thu, 01 Jan 2026 00:00:00 GMT"));
}

TEST(HttpDate, RejectsMalformed) {
  for (std::string_view bad :
       {"", "yesterday", "Sun, 06 Nov 1994 08:49:37", "Sun, 06 Nov 1994 08:49:37 UTC",
        "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 31 Feb 1994 08:49:37 GMT",
        "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT",
        "Sun, 29 Feb 1900 00:00:00 GMT", "1994-11-06T08:49:37Z"}) {
    EXPECT_FALSE(ParseHttpDate(bad).has_value()) << bad;
  }
}

TEST(HttpDate, RoundTrips) {
  for (int64_t s : {int64_t{0}, int64_t{951868799}, int64_t{1255369800}, int64_t{253402300799}}) {
    EXPECT_EQ(ParseHttpDate(FormatHttpDate(s * kS)), s * kS);
  }
}

TEST(Iso8601, FormatsWithMilliseconds) {
  EXPECT_EQ(FormatIso8601(1255369830 * kS), "2009-10-12T17:50:30.000Z");
  EXPECT_EQ(FormatIso8601(1255369830 * kS + 7), "2009-10-12T17:50:30.007Z");
  EXPECT_EQ(FormatIso8601(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatIso8601(253402300799999), "9999-12-31T23:59:59.999Z");
  EXPECT_EQ(FormatIso8601(-1), "1969-12-31T23:59:59.999Z");
}

TEST(Iso8601, AppendsToWhatIsThere) {
  std::string doc = "<LastModified>";
  AppendIso8601(&doc, 1255369830 * kS + 7);
  EXPECT_EQ(doc, "<LastModified>2009-10-12T17:50:30.007Z");
  AppendIso8601(&doc, 253402300800000);  // year 10000: the snprintf form
  EXPECT_EQ(doc, "<LastModified>2009-10-12T17:50:30.007Z10000-01-01T00:00:00.000Z");
}

TEST(Iso8601, Parses) {
  EXPECT_EQ(ParseIso8601("2009-10-12T17:50:30.000Z"), 1255369830 * kS);
  EXPECT_EQ(ParseIso8601("2009-10-12T17:50:30Z"), 1255369830 * kS);
  EXPECT_EQ(ParseIso8601("2009-10-12T17:50:30.5Z"), 1255369830 * kS + 500);
  EXPECT_EQ(ParseIso8601("2009-10-12T17:50:30.123456789Z"), 1255369830 * kS + 123);
  for (std::string_view bad :
       {"2009-10-12T17:50:30", "2009-10-12 17:50:30Z", "2009-13-12T17:50:30Z",
        "2009-10-12T17:50:30.Z", "2009-10-12T17:50:30.1234567890Z", "2009-10-12T17:50:30+01:00"}) {
    EXPECT_FALSE(ParseIso8601(bad).has_value()) << bad;
  }
}

TEST(Iso8601Basic, ParsesAndFormats) {
  EXPECT_EQ(ParseIso8601Basic("20130524T000000Z"), 1369353600 * kS);
  EXPECT_EQ(FormatIso8601Basic(1369353600 * kS), "20130524T000000Z");
  EXPECT_FALSE(ParseIso8601Basic("20130524T000000").has_value());
  EXPECT_FALSE(ParseIso8601Basic("2013-05-24T00:00:00Z").has_value());
  EXPECT_FALSE(ParseIso8601Basic("20130532T000000Z").has_value());
}

// ---- Range ------------------------------------------------------------------

std::optional<ByteRange> Served(std::string_view header, uint64_t size) {
  auto r = ResolveRange(header, size);
  EXPECT_TRUE(r.ok()) << header;
  return r.ok() ? *r : std::nullopt;
}

bool Unsatisfiable(std::string_view header, uint64_t size) {
  auto r = ResolveRange(header, size);
  return !r.ok() && r.error().code == S3ErrorCode::kInvalidRange;
}

TEST(Range, ResolvesTheThreeForms) {
  // s3-tests: "contentData" (11 bytes).
  EXPECT_EQ(Served("bytes=4-7", 11), (ByteRange{4, 7}));
  EXPECT_EQ(Served("bytes=4-", 11), (ByteRange{4, 10}));
  EXPECT_EQ(Served("bytes=-7", 11), (ByteRange{4, 10}));
  EXPECT_EQ(Served("bytes=0-0", 11), (ByteRange{0, 0}));
  EXPECT_EQ(Served("bytes=10-10", 11), (ByteRange{10, 10}));
}

TEST(Range, ClampsPastTheEnd) {
  EXPECT_EQ(Served("bytes=3145728-5242880", 4194304), (ByteRange{3145728, 4194303}));
  EXPECT_EQ(Served("bytes=-100", 11), (ByteRange{0, 10}));
  EXPECT_EQ(Served("bytes=0-99999999999999999999999", 11), (ByteRange{0, 10}));
}

TEST(Range, UnsatisfiableIsInvalidRange) {
  EXPECT_TRUE(Unsatisfiable("bytes=40-50", 11));
  EXPECT_TRUE(Unsatisfiable("bytes=11-", 11));
  EXPECT_TRUE(Unsatisfiable("bytes=-0", 11));
  EXPECT_TRUE(Unsatisfiable("bytes=99999999999999999999999-", 11));
}

TEST(Range, EmptyObject) {
  EXPECT_TRUE(Unsatisfiable("bytes=40-50", 0));  // s3-tests test_ranged_request_empty_object
  EXPECT_TRUE(Unsatisfiable("bytes=0-", 0));
  EXPECT_TRUE(Unsatisfiable("bytes=0-0", 0));
  EXPECT_TRUE(Unsatisfiable("bytes=-0", 0));
  // A suffix range on an empty object: served whole (200), no Content-Range.
  EXPECT_EQ(Served("bytes=-1", 0), std::nullopt);
}

TEST(Range, InvalidOrMultipleIsIgnored) {
  for (std::string_view header : {"", "bytes", "bytes=", "bytes=-", "bytes=a-b", "bytes=5-2",
                                  "items=0-1", "bytes=0-1,3-4", "bytes=1-2-3", "bytes=+1-2",
                                  "bytes=0x10-", "bytes 0-1"}) {
    EXPECT_EQ(Served(header, 11), std::nullopt) << header;
  }
}

TEST(Range, ToleratesCaseAndSpaces) {
  EXPECT_EQ(Served("Bytes=1-2", 11), (ByteRange{1, 2}));
  EXPECT_EQ(Served(" bytes= 1 - 2 ", 11), (ByteRange{1, 2}));
}

TEST(Range, ContentRangeStrings) {
  EXPECT_EQ(ContentRange(ByteRange{4, 10}, 11), "bytes 4-10/11");
  EXPECT_EQ(UnsatisfiedContentRange(11), "bytes */11");
  EXPECT_EQ((ByteRange{4, 10}).length(), 7u);
}

// ---- Conditional requests -------------------------------------------------

constexpr std::string_view kEtag = "\"6805f2cfc46c0f04559748bb039d69ae\"";
const int64_t kModified = 1255369830 * kS + 400;  // Mon, 12 Oct 2009 17:50:30 GMT
const std::string kBefore = "Mon, 12 Oct 2009 17:50:29 GMT";
const std::string kAt = "Mon, 12 Oct 2009 17:50:30 GMT";
const std::string kAfter = "Mon, 12 Oct 2009 17:50:31 GMT";
const std::string kMatch(kEtag);
const std::string kOther = "\"00000000000000000000000000000000\"";

const int64_t kNow = kModified + 3600 * kS;
const std::string kFuture = "Mon, 12 Oct 2009 18:50:31 GMT";  // after kNow

ConditionOutcome Read(ReadConditions c) {
  return EvaluateReadConditions(c, kEtag, kModified, kNow);
}

TEST(ReadConditions, NoneProceeds) { EXPECT_EQ(Read({}), ConditionOutcome::kProceed); }

TEST(ReadConditions, IfMatch) {
  EXPECT_EQ(Read({.if_match = kMatch}), ConditionOutcome::kProceed);
  EXPECT_EQ(Read({.if_match = kOther}), ConditionOutcome::kPreconditionFailed);
  EXPECT_EQ(Read({.if_match = "*"}), ConditionOutcome::kProceed);
  EXPECT_EQ(Read({.if_match = "6805f2cfc46c0f04559748bb039d69ae"}), ConditionOutcome::kProceed);
  EXPECT_EQ(Read({.if_match = kOther + ", " + kMatch}), ConditionOutcome::kProceed);
  EXPECT_EQ(Read({.if_match = "W/" + kMatch}), ConditionOutcome::kProceed);
}

TEST(ReadConditions, IfNoneMatch) {
  EXPECT_EQ(Read({.if_none_match = kMatch}), ConditionOutcome::kNotModified);
  EXPECT_EQ(Read({.if_none_match = kOther}), ConditionOutcome::kProceed);
  EXPECT_EQ(Read({.if_none_match = "*"}), ConditionOutcome::kNotModified);
  EXPECT_EQ(Read({.if_none_match = kOther + "," + kMatch}), ConditionOutcome::kNotModified);
}

TEST(ReadConditions, Dates) {
  EXPECT_EQ(Read({.if_modified_since = kBefore}), ConditionOutcome::kProceed);
  EXPECT_EQ(Read({.if_modified_since = kAt}), ConditionOutcome::kNotModified);
  EXPECT_EQ(Read({.if_modified_since = kAfter}), ConditionOutcome::kNotModified);
  EXPECT_EQ(Read({.if_unmodified_since = kBefore}), ConditionOutcome::kPreconditionFailed);
  EXPECT_EQ(Read({.if_unmodified_since = kAt}), ConditionOutcome::kProceed);
  EXPECT_EQ(Read({.if_unmodified_since = kAfter}), ConditionOutcome::kProceed);
  // Unparseable dates are ignored, and so is an If-Modified-Since in the
  // future (an invalid date, RFC 2616 14.25); If-Unmodified-Since is not.
  EXPECT_EQ(Read({.if_modified_since = "garbage"}), ConditionOutcome::kProceed);
  EXPECT_EQ(Read({.if_modified_since = kFuture}), ConditionOutcome::kProceed);
  EXPECT_EQ(Read({.if_unmodified_since = kFuture}), ConditionOutcome::kProceed);
  EXPECT_EQ(Read({.if_unmodified_since = "garbage"}), ConditionOutcome::kProceed);
}

// The precedence table (RFC 7232 section 6; the two rows AWS documents for
// GetObject are marked).
TEST(ReadConditions, PrecedenceTable) {
  struct Row {
    ReadConditions c;
    ConditionOutcome want;
  };
  const std::vector<Row> rows = {
      // AWS: If-Match true + If-Unmodified-Since false -> 200.
      {{.if_match = kMatch, .if_unmodified_since = kBefore}, ConditionOutcome::kProceed},
      {{.if_match = kOther, .if_unmodified_since = kAfter}, ConditionOutcome::kPreconditionFailed},
      // AWS: If-None-Match false + If-Modified-Since true -> 304.
      {{.if_none_match = kMatch, .if_modified_since = kBefore}, ConditionOutcome::kNotModified},
      // If-None-Match true wins over If-Modified-Since false.
      {{.if_none_match = kOther, .if_modified_since = kAfter}, ConditionOutcome::kProceed},
      // 412 outranks 304.
      {{.if_match = kOther, .if_none_match = kMatch}, ConditionOutcome::kPreconditionFailed},
      {{.if_none_match = kMatch, .if_unmodified_since = kBefore},
       ConditionOutcome::kPreconditionFailed},
      {{.if_match = kMatch, .if_none_match = kMatch}, ConditionOutcome::kNotModified},
      {{.if_match = kMatch, .if_modified_since = kAt}, ConditionOutcome::kNotModified},
      {{.if_modified_since = kBefore, .if_unmodified_since = kAt}, ConditionOutcome::kProceed},
  };
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(Read(rows[i].c), rows[i].want) << "row " << i;
  }
}

TEST(ReadConditions, DecidingConditionNamesTheHeader) {
  const ReadConditions match{.if_match = kOther, .if_unmodified_since = kAfter};
  EXPECT_EQ(DecidingCondition(match, ConditionOutcome::kPreconditionFailed), "If-Match");
  EXPECT_EQ(
      DecidingCondition({.if_unmodified_since = kBefore}, ConditionOutcome::kPreconditionFailed),
      "If-Unmodified-Since");
  EXPECT_EQ(DecidingCondition({.if_none_match = kMatch}, ConditionOutcome::kNotModified),
            "If-None-Match");
  EXPECT_EQ(DecidingCondition({.if_modified_since = kAfter}, ConditionOutcome::kNotModified),
            "If-Modified-Since");
}

// The <Condition> a copy's 412 names, or "" when the copy proceeds.
std::string CopyRefusal(ReadConditions c) {
  const S3Status st = CheckCopySourceConditions(c, kEtag, kModified, kNow);
  if (st.ok()) return "";
  EXPECT_EQ(st.error().code, S3ErrorCode::kPreconditionFailed);
  for (const auto& [name, value] : st.error().details) {
    if (name == "Condition") return value;
  }
  return "(no Condition)";
}

TEST(CopySourceConditions, NotModifiedBecomesPreconditionFailed) {
  EXPECT_EQ(CopyRefusal({.if_none_match = kMatch, .if_modified_since = kBefore}),
            "x-amz-copy-source-If-None-Match");
  EXPECT_EQ(CopyRefusal({.if_match = kMatch, .if_unmodified_since = kBefore}), "");
  EXPECT_EQ(CopyRefusal({.if_match = kOther}), "x-amz-copy-source-If-Match");
  EXPECT_EQ(CopyRefusal({.if_unmodified_since = kBefore}), "x-amz-copy-source-If-Unmodified-Since");
  EXPECT_EQ(CopyRefusal({.if_modified_since = kAfter}), "x-amz-copy-source-If-Modified-Since");
  EXPECT_EQ(CopyRefusal({.if_modified_since = kFuture}), "");
  EXPECT_EQ(CopyRefusal({}), "");
}

// The Header a NotImplemented names, or "" when the headers are accepted.
std::string WriteRefusal(std::optional<std::string_view> if_match,
                         std::optional<std::string_view> if_none_match) {
  const S3Status st = CheckWriteConditionHeaders(if_match, if_none_match);
  if (st.ok()) return "";
  EXPECT_EQ(st.error().code, S3ErrorCode::kNotImplemented);
  for (const auto& [name, value] : st.error().details) {
    if (name == "Header") return value;
  }
  return "(no Header)";
}

TEST(WriteConditionHeaders, OnlyTheFormsS3Implements) {
  EXPECT_EQ(WriteRefusal(std::nullopt, std::nullopt), "");
  EXPECT_EQ(WriteRefusal(std::nullopt, "*"), "");
  EXPECT_EQ(WriteRefusal(kMatch, std::nullopt), "");
  EXPECT_EQ(WriteRefusal(std::nullopt, kMatch), "If-None-Match");
  EXPECT_EQ(WriteRefusal("*", std::nullopt), "If-Match");
  EXPECT_EQ(WriteRefusal(kMatch, "*"), "If-Match,If-None-Match");
}

// ---- ETags ------------------------------------------------------------------

TEST(Etag, Helpers) {
  EXPECT_EQ(QuoteEtag("d41d8cd98f00b204e9800998ecf8427e"), "\"d41d8cd98f00b204e9800998ecf8427e\"");
  EXPECT_EQ(MultipartEtag("ab12", 3), "\"ab12-3\"");
  EXPECT_EQ(UnquoteEtag("\"abc\""), "abc");
  EXPECT_EQ(UnquoteEtag("W/\"abc\""), "abc");
  EXPECT_EQ(UnquoteEtag("abc"), "abc");
  EXPECT_EQ(UnquoteEtag("\""), "\"");
  EXPECT_TRUE(EtagsMatch("abc", "\"abc\""));
  EXPECT_FALSE(EtagsMatch("abc", "\"abd\""));
}

// ---- Percent-encoding and query strings ------------------------------------

TEST(UrlEncodeForListing, MatchesAwsMeasurements) {
  EXPECT_EQ(UrlEncodeForListing("a b.txt"), "a+b.txt");
  EXPECT_EQ(UrlEncodeForListing("a+b.txt"), "a%2Bb.txt");
  EXPECT_EQ(UrlEncodeForListing("100%.csv"), "100%25.csv");
  EXPECT_EQ(UrlEncodeForListing("한글/x.txt"), "%ED%95%9C%EA%B8%80/x.txt");
  EXPECT_EQ(UrlEncodeForListing("run books/"), "run+books/");
  EXPECT_EQ(UrlEncodeForListing("a-b_c.d/e*f~g"), "a-b_c.d/e*f%7Eg");
  EXPECT_EQ(UrlEncodeForListing(std::string_view("\n\x01", 2)), "%0A%01");
  EXPECT_EQ(UrlEncodeForListing("&<>\"'=?#"), "%26%3C%3E%22%27%3D%3F%23");
}

TEST(UrlEncodeForListing, RoundTripsThroughFormDecoding) {
  for (std::string_view key : {"a b+c", "100%", "日本語 キー", "emoji \xF0\x9F\x98\x80+",
                               "~tilde*star", "x=y&z", "\t\r\n"}) {
    auto decoded = PercentDecode(UrlEncodeForListing(key), /*plus_as_space=*/true);
    ASSERT_TRUE(decoded.ok());
    EXPECT_EQ(*decoded, key);
  }
}

TEST(PercentDecode, PlusHandlingAndErrors) {
  EXPECT_EQ(*PercentDecode("a+b%2Bc", true), "a b+c");
  EXPECT_EQ(*PercentDecode("a+b%2Bc", false), "a+b+c");
  EXPECT_EQ(*PercentDecode("%e2%82%AC", false), "\xE2\x82\xAC");
  EXPECT_EQ(*PercentDecode("", false), "");
  for (std::string_view bad : {"%", "%2", "%G0", "a%zz", "%%"}) {
    auto r = PercentDecode(bad, false);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, S3ErrorCode::kInvalidURI);
  }
}

TEST(PercentEncode, Rfc3986Unreserved) {
  EXPECT_EQ(PercentEncode("a b/c~d", false), "a%20b%2Fc~d");
  EXPECT_EQ(PercentEncode("a b/c~d", true), "a%20b/c~d");
  EXPECT_EQ(PercentEncode("é", false), "%C3%A9");
  for (std::string_view text : {"ключ/值 + 100%", "\xF0\x9F\x98\x80"}) {
    EXPECT_EQ(*PercentDecode(PercentEncode(text, false), false), text);
  }
}

TEST(ParseQuery, OrderDuplicatesAndEquals) {
  auto q = ParseQuery("list-type=2&prefix=a+b%2Fc&versions&prefix=second&&empty=");
  ASSERT_TRUE(q.ok());
  const std::vector<QueryParam> want = {
      {"list-type", "2", true}, {"prefix", "a b/c", true}, {"versions", "", false},
      {"prefix", "second", true}, {"empty", "", true}};
  EXPECT_EQ(*q, want);
  const QueryParam* prefix = FindQueryParam(*q, "prefix");
  ASSERT_NE(prefix, nullptr);
  EXPECT_EQ(prefix->value, "a b/c");
  EXPECT_EQ(FindQueryParam(*q, "Prefix"), nullptr);
  EXPECT_TRUE(ParseQuery("")->empty());
}

TEST(ParseQuery, ValueKeepsFurtherEquals) {
  auto q = ParseQuery("X-Amz-Credential=AK%2F2013&a=b=c");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ((*q)[0].value, "AK/2013");
  EXPECT_EQ((*q)[1].value, "b=c");
}

TEST(ParseQuery, Errors) {
  EXPECT_EQ(ParseQuery("a=%zz").error().code, S3ErrorCode::kInvalidURI);
  EXPECT_EQ(ParseQuery("%=1").error().code, S3ErrorCode::kInvalidURI);
  std::string many;
  for (int i = 0; i < 257; ++i) many += "p" + std::to_string(i) + "=1&";
  EXPECT_EQ(ParseQuery(many).error().code, S3ErrorCode::kInvalidArgument);
}

// ---- Metadata and headers --------------------------------------------------

TEST(UserMetadata, CollectsLowercasedJoinedSorted) {
  const std::vector<HeaderField> headers = {
      {"Content-Type", "text/plain"},   {"X-Amz-Meta-Color", "Blue"},
      {"x-amz-meta-alpha", "1"},        {"x-amz-meta-color", "Green"},
      {"x-amz-metadata-directive", "REPLACE"}, {"X-AMZ-META-Spaces", " a b "}};
  auto meta = CollectUserMetadata(headers);
  ASSERT_TRUE(meta.ok());
  const std::vector<HeaderField> want = {{"x-amz-meta-alpha", "1"},
                                         {"x-amz-meta-color", "Blue,Green"},
                                         {"x-amz-meta-spaces", " a b "}};
  EXPECT_EQ(*meta, want);
}

TEST(UserMetadata, TwoKilobyteLimit) {
  // name "k" (1 byte) + value 2047 bytes = 2048: allowed; one more: not.
  std::vector<HeaderField> headers = {{"x-amz-meta-k", std::string(2047, 'v')}};
  EXPECT_TRUE(CollectUserMetadata(headers).ok());
  headers[0].second.push_back('v');
  auto too_big = CollectUserMetadata(headers);
  ASSERT_FALSE(too_big.ok());
  EXPECT_EQ(too_big.error().code, S3ErrorCode::kMetadataTooLarge);
  // Summed over all entries.
  const std::vector<HeaderField> split = {{"x-amz-meta-a", std::string(1024, 'v')},
                                          {"x-amz-meta-b", std::string(1023, 'v')}};
  EXPECT_EQ(CollectUserMetadata(split).error().code, S3ErrorCode::kMetadataTooLarge);
}

TEST(UserMetadata, EmptyNameRejected) {
  const std::vector<HeaderField> headers = {{"x-amz-meta-", "v"}};
  EXPECT_EQ(CollectUserMetadata(headers).error().code, S3ErrorCode::kInvalidArgument);
}

TEST(ResponseOverrides, MapsTheSixParameters) {
  auto q = ParseQuery(
      "response-content-type=text%2Fhtml&response-content-language=fr&response-expires=Thu%2C"
      "+01+Dec+1994+16%3A00%3A00+GMT&response-cache-control=no-cache&response-content-"
      "disposition=attachment&response-content-encoding=gzip&response-other=x&"
      "response-content-type=ignored");
  ASSERT_TRUE(q.ok());
  const std::vector<HeaderField> want = {{"Content-Type", "text/html"},
                                         {"Content-Language", "fr"},
                                         {"Expires", "Thu, 01 Dec 1994 16:00:00 GMT"},
                                         {"Cache-Control", "no-cache"},
                                         {"Content-Disposition", "attachment"},
                                         {"Content-Encoding", "gzip"}};
  EXPECT_EQ(ResponseHeaderOverrides(*q), want);
}

// Goal: a field that could split a response when written back (CR, LF,
// NUL or another control character in a header, a header hoisted from a
// query, or a response-* override) is refused where it enters; tabs and
// UTF-8 bytes are not control characters.
TEST(FieldCharacters, ControlCharactersAreRefusedWhereTheyEnter) {
  const std::vector<HeaderField> fine = {{"x-amz-meta-note", "tab\there, caf\xc3\xa9"},
                                         {"Content-Type", "text/plain"}};
  auto plain = ParseQuery("response-content-type=text%2Fhtml&x=%0D%0A");
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(CheckFieldCharacters(fine, *plain).ok());  // x is no override
  for (const std::string& bad :
       std::vector<std::string>{"a\r\nX-Injected: 1", std::string("nul\0", 4), "bell\a", "del\x7f"}) {
    std::vector<HeaderField> headers = fine;
    headers.emplace_back("x-amz-meta-evil", bad);
    auto refused = CheckFieldCharacters(headers, {});
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().code, S3ErrorCode::kInvalidArgument);
  }
  EXPECT_FALSE(CheckFieldCharacters(std::vector<HeaderField>{{"x-amz-meta-a\r\nb", "v"}}, {}).ok());
  EXPECT_FALSE(CheckFieldCharacters(std::vector<HeaderField>{{"", "v"}}, {}).ok());
  for (const char* query : {"response-content-type=text%2Fhtml%0D%0ASet-Cookie:%20a=b",
                            "response-content-disposition=a%0Ab", "response-expires=%00"}) {
    auto q = ParseQuery(query);
    ASSERT_TRUE(q.ok()) << query;
    auto refused = CheckFieldCharacters(fine, *q);
    ASSERT_FALSE(refused.ok()) << query;
    EXPECT_EQ(refused.error().code, S3ErrorCode::kInvalidArgument) << query;
  }
}

TEST(ContentEncoding, StripsAwsChunked) {
  EXPECT_EQ(StripAwsChunked("aws-chunked,gzip"), "gzip");
  EXPECT_EQ(StripAwsChunked("gzip, aws-chunked"), "gzip");
  EXPECT_EQ(StripAwsChunked("AWS-Chunked"), std::nullopt);
  EXPECT_EQ(StripAwsChunked("aws-chunked"), std::nullopt);
  EXPECT_EQ(StripAwsChunked("aws-chunked, gzip, br"), "gzip,br");
  EXPECT_EQ(StripAwsChunked("gzip, br"), "gzip, br");
  EXPECT_EQ(StripAwsChunked(""), std::nullopt);
  EXPECT_TRUE(HasAwsChunked("gzip,aws-chunked"));
  EXPECT_FALSE(HasAwsChunked("gzip"));
  EXPECT_FALSE(HasAwsChunked("aws-chunked-not"));
}

TEST(HeaderNames, CaseInsensitive) {
  EXPECT_TRUE(HeaderNameEquals("Content-Type", "content-type"));
  EXPECT_FALSE(HeaderNameEquals("Content-Type", "content-typ"));
}

}  // namespace
}  // namespace tessera::s3
