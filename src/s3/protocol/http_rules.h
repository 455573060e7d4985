// S3's HTTP rules with no I/O: dates, Range, conditional requests, ETags,
// percent-encoding, query strings, user metadata and response overrides.
// Everything here is a pure function of its arguments (time is passed in as
// int64 unix milliseconds, UTC); the S3 front applies the results.
//
// Thread safety: stateless; safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "s3/protocol/s3_result.h"

namespace tessera::s3 {

// A request or response header as sent (name case as sent).
using HeaderField = std::pair<std::string, std::string>;

// ---- Dates ------------------------------------------------------------------
// Days from 1970-01-01 to year-month-day (proleptic Gregorian, UTC; month
// 1..12, day 1..31, not checked against the month's length).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d);
// RFC 1123 / IMF-fixdate, "Wed, 12 Oct 2009 17:50:00 GMT" (seconds; the
// milliseconds are truncated). For Last-Modified, Date, Expires.
std::string FormatHttpDate(int64_t unix_ms);
// Parses IMF-fixdate, RFC 850 ("Wednesday, 12-Oct-09 17:50:00 GMT") and
// asctime ("Wed Oct 12 17:50:00 2009"), as RFC 7231 7.1.1.1 requires of
// recipients. nullopt when none matches (callers of If-Modified-Since then
// ignore the header, as AWS does).
std::optional<int64_t> ParseHttpDate(std::string_view text);
// ISO 8601 with milliseconds, "2009-10-12T17:50:30.000Z", for XML documents.
std::string FormatIso8601(int64_t unix_ms);
// The same, appended to `out` (listings write one per entry).
void AppendIso8601(std::string* out, int64_t unix_ms);
// Parses "YYYY-MM-DDTHH:MM:SS[.fff]Z" (the fraction may have 1..9 digits;
// only milliseconds are kept).
std::optional<int64_t> ParseIso8601(std::string_view text);
// ISO 8601 basic, "20130524T000000Z" (x-amz-date, X-Amz-Date).
std::optional<int64_t> ParseIso8601Basic(std::string_view text);
// The same basic form, for tests and signing helpers.
std::string FormatIso8601Basic(int64_t unix_ms);

// ---- Range ------------------------------------------------------------------
// An inclusive byte range [first, last] within an object.
struct ByteRange {
  uint64_t first = 0;
  uint64_t last = 0;
  uint64_t length() const { return last - first + 1; }
  bool operator==(const ByteRange&) const = default;
};

// Resolves a Range header against the object size:
// - nullopt (serve the whole object, 200): the header is syntactically
//   invalid or names several ranges (AWS ignores such headers);
// - a ByteRange (206): "bytes=a-b" (b clamped to size-1), "bytes=a-",
//   "bytes=-n" (the last n bytes, all of them when n >= size);
// - InvalidRange (416; the caller adds "Content-Range: bytes */size"): a
//   well-formed single range that selects no byte: a >= size, "bytes=-0",
//   or any range on a 0-byte object.
S3Result<std::optional<ByteRange>> ResolveRange(std::string_view header, uint64_t object_size);
// "bytes 0-9/100" for a 206 answer.
std::string ContentRange(const ByteRange& range, uint64_t object_size);
// "bytes */100" for a 416 answer.
std::string UnsatisfiedContentRange(uint64_t object_size);

// ---- Conditional requests -------------------------------------------------
enum class ConditionOutcome {
  kProceed,             // serve normally
  kNotModified,         // 304, no body
  kPreconditionFailed,  // 412 PreconditionFailed
};

// The conditional headers of a GET or HEAD as sent; nullopt when absent.
struct ReadConditions {
  std::optional<std::string> if_match = std::nullopt;
  std::optional<std::string> if_none_match = std::nullopt;
  std::optional<std::string> if_modified_since = std::nullopt;
  std::optional<std::string> if_unmodified_since = std::nullopt;
};

// Evaluates GET/HEAD preconditions against the current object (its quoted
// ETag and Last-Modified in unix ms; dates compare at second granularity).
// Order, per RFC 7232 section 6 as S3 applies it:
//   1. If-Match present: false -> 412; true -> skip If-Unmodified-Since.
//   2. else If-Unmodified-Since (valid date): modified after -> 412.
//   3. If-None-Match present: matches -> 304; no match -> skip
//      If-Modified-Since.
//   4. else If-Modified-Since (valid date): not modified since -> 304.
// ETag lists ("a", "b"), "*", quoted/unquoted and W/ weak tags are accepted
// (S3 compares strongly after dropping W/). Unparseable dates are ignored,
// and so is an If-Modified-Since later than `now_ms` (RFC 2616 14.25: such
// a date is invalid; AWS ignores it too).
ConditionOutcome EvaluateReadConditions(const ReadConditions& conditions, std::string_view etag,
                                        int64_t last_modified_ms, int64_t now_ms);

// The header that decided a kPreconditionFailed or kNotModified outcome of
// EvaluateReadConditions, as S3 names it in the error's <Condition>:
// "If-Match", "If-Unmodified-Since", "If-None-Match" or "If-Modified-Since".
std::string_view DecidingCondition(const ReadConditions& conditions, ConditionOutcome outcome);

// The conditional-write headers S3 implements (PutObject, CopyObject,
// CompleteMultipartUpload): If-None-Match: "*" or If-Match: <etag>, one at a
// time; whether they hold is the partition op's to judge. Anything else is
// NotImplemented naming the header, as AWS answers.
S3Status CheckWriteConditionHeaders(std::optional<std::string_view> if_match,
                                    std::optional<std::string_view> if_none_match);

// CopyObject / UploadPartCopy x-amz-copy-source-if-* against the source
// object. Same precedence as EvaluateReadConditions, but every failure
// (including the 304 cases) is 412 PreconditionFailed, as AWS documents,
// naming the header ("x-amz-copy-source-If-Match", ...).
S3Status CheckCopySourceConditions(const ReadConditions& conditions, std::string_view etag,
                                   int64_t last_modified_ms, int64_t now_ms);

// ---- ETags ------------------------------------------------------------------
// `"<hex>"` from a lowercase hex MD5 (single-part objects).
std::string QuoteEtag(std::string_view hex_md5);
// `"<hex>-<parts>"`: the MD5 of the concatenated binary part MD5s, then the
// part count (multipart objects).
std::string MultipartEtag(std::string_view hex_md5_of_part_md5s, size_t part_count);
// Strips "W/" and one pair of surrounding quotes; otherwise unchanged.
std::string_view UnquoteEtag(std::string_view etag);
// True when both name the same entity: compared after UnquoteEtag.
bool EtagsMatch(std::string_view a, std::string_view b);

// ---- Percent-encoding and query strings ------------------------------------
// encoding-type=url for listings, as AWS encodes: A-Z a-z 0-9 - _ . / * are
// kept, ' ' becomes '+', every other byte (UTF-8 included, and '~') %XX in
// uppercase hex ("a b+c" -> "a+b%2Bc"). botocore decodes with unquote_plus.
std::string UrlEncodeForListing(std::string_view text);
// Percent-decodes a request path segment or query part. '+' becomes ' '
// only when `plus_as_space` (query strings: yes; paths: no, S3 keeps '+' as
// a literal in paths). A '%' not followed by two hex digits -> InvalidURI.
// The result may be any bytes; callers validate UTF-8 where they need it.
S3Result<std::string> PercentDecode(std::string_view text, bool plus_as_space);
// Uppercase %XX of every byte except A-Z a-z 0-9 - . _ ~ (and '/' when
// `keep_slash`): the form SigV4 and Location headers use.
std::string PercentEncode(std::string_view text, bool keep_slash);

struct QueryParam {
  std::string name;   // decoded
  std::string value;  // decoded; empty when !has_equals
  bool has_equals = false;
  bool operator==(const QueryParam&) const = default;
};
// Splits the raw query (text after '?', without '#') on '&', each part on
// its first '=', and decodes both halves ('+' = space). Keeps order and
// duplicates; empty parts ("a&&b") are skipped. Fails with InvalidURI on a
// bad escape, InvalidArgument beyond limits::kS3QueryParamsMax parameters.
S3Result<std::vector<QueryParam>> ParseQuery(std::string_view raw);
// The first parameter named `name` (case-sensitive, as S3's sub-resources
// are), or nullptr. S3 uses the first of duplicate parameters.
const QueryParam* FindQueryParam(std::span<const QueryParam> params, std::string_view name);

// ---- Metadata and headers --------------------------------------------------
// x-amz-meta-* user metadata: names lowercased with the prefix kept
// ("x-amz-meta-color"), values as sent; repeated headers of one name are
// joined with ',' in arrival order. Sorted by name. More than
// limits::kS3UserMetadataBytesMax bytes (sum of name-without-prefix plus
// value bytes) -> MetadataTooLarge. A name of just "x-amz-meta-" ->
// InvalidArgument.
S3Result<std::vector<HeaderField>> CollectUserMetadata(std::span<const HeaderField> headers);

// The response-* query overrides of GetObject/HeadObject, as (response
// header name, value) in the order the parameters came: response-content-
// type -> Content-Type, -content-language, -expires, -cache-control,
// -content-disposition, -content-encoding. Other parameters are ignored.
// The caller must reject them for anonymous requests (InvalidRequest), as
// AWS does.
std::vector<HeaderField> ResponseHeaderOverrides(std::span<const QueryParam> params);

// Refuses a request carrying a field that could not be written back as it
// came (common/http_field_chars.h: CR, LF, NUL, other control characters):
// in `headers` (the request's own and those hoisted from a SigV2 query) or
// in a response-* override of `params`, since user metadata, Content-Type
// and the overrides are replayed in responses. InvalidArgument naming the
// field (never echoing the value).
S3Status CheckFieldCharacters(std::span<const HeaderField> headers,
                              std::span<const QueryParam> params);

// Content-Encoding with the "aws-chunked" coding removed (case-insensitive,
// list items trimmed, the rest joined by ","): "aws-chunked,gzip" -> "gzip",
// "aws-chunked" -> nullopt (store no Content-Encoding). A value without
// aws-chunked comes back as sent (trimmed); an empty one is nullopt.
std::optional<std::string> StripAwsChunked(std::string_view content_encoding);
// True when the Content-Encoding list contains "aws-chunked".
bool HasAwsChunked(std::string_view content_encoding);

// Case-insensitive ASCII comparison of header names.
bool HeaderNameEquals(std::string_view a, std::string_view b);

}  // namespace tessera::s3
