// S3's XML documents: plain structs in, the exact XML AWS sends out; and the
// request bodies S3 accepts parsed into structs (or MalformedXML).
//
// Writers: every document starts with `<?xml version="1.0" encoding="UTF-8"?>`
// and, except Error, has xmlns="http://s3.amazonaws.com/doc/2006-03-01/" on
// its root. Elements come in the order AWS sends them; text is escaped (&, <,
// >, ", ', and control characters as &#xN;). Times are unix ms, written as
// ISO 8601 with milliseconds ("2009-10-12T17:50:30.000Z"). ETags are passed
// quoted (`"hex"`), as http_rules.h QuoteEtag makes them. Listing writers
// apply encoding-type=url themselves: pass raw keys and prefixes.
//
// Parsers: bodies over limits::kS3XmlParseBytesMax, not well-formed, with the
// wrong root element or missing required elements -> MalformedXML; the root
// may carry any namespace (clients send with and without xmlns). Unknown
// child elements are ignored.
//
// Thread safety: stateless functions; safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "s3/protocol/cors_rules.h"
#include "s3/protocol/s3_result.h"

namespace tessera::s3 {

inline constexpr std::string_view kS3XmlNamespace = "http://s3.amazonaws.com/doc/2006-03-01/";

struct Owner {
  std::string id;
  std::string display_name;
};

// ---- Error -------------------------------------------------------------------
// An extra element of an Error document, e.g. {"BucketName", "b"},
// {"Key", "k"}, {"ArgumentName", "x"}, {"ArgumentValue", "y"}, {"Region", r},
// {"HostId", h}.
using ErrorField = std::pair<std::string_view, std::string_view>;
// <Error><Code/><Message/>[extra...][<Resource/>]<RequestId/></Error>.
// Resource is left out when empty. No xmlns, as AWS sends it.
std::string ErrorXml(const S3Error& error, std::string_view resource,
                     std::string_view request_id, std::span<const ErrorField> extra = {});

// ---- Service and bucket ----------------------------------------------------
struct BucketEntry {
  std::string name;
  int64_t creation_ms = 0;
  std::string region;  // BucketRegion; left out when empty
};
struct ListBucketsResult {
  Owner owner;
  std::vector<BucketEntry> buckets;
  std::optional<std::string> continuation_token;  // ContinuationToken (paginated form)
  std::optional<std::string> prefix;              // Prefix, echoed when requested
};
std::string ListAllMyBucketsXml(const ListBucketsResult& result);

// <LocationConstraint xmlns=.../> for us-east-1 (empty `region`), else the
// region as text.
std::string LocationConstraintXml(std::string_view region);

enum class VersioningState { kNeverEnabled, kEnabled, kSuspended };
// No Status element when never enabled; MfaDelete is never written.
std::string VersioningConfigurationXml(VersioningState state);

// Owner plus one Grant: FULL_CONTROL to the owner (CanonicalUser).
std::string AccessControlPolicyXml(const Owner& owner);

struct Tag {
  std::string key;
  std::string value;
  bool operator==(const Tag&) const = default;
};
// One Grant of an AccessControlPolicy body (PUT ?acl). grantee_type is the
// Grantee's xsi:type: CanonicalUser (with id), Group (with uri) or
// AmazonCustomerByEmail (with email).
struct AclGrant {
  std::string grantee_type;
  std::string id;
  std::string uri;
  std::string email;
  std::string permission;  // FULL_CONTROL, READ, WRITE, READ_ACP, WRITE_ACP
};
// <AccessControlPolicy><Owner>...</Owner><AccessControlList><Grant>
// <Grantee xsi:type="..."/><Permission/></Grant>...</AccessControlList>
// </AccessControlPolicy>. Not XML, another root, no AccessControlList, or
// a Grant without Grantee type or Permission -> MalformedACLError.
S3Result<std::vector<AclGrant>> ParseAccessControlPolicy(std::string_view body);
// The same document with `grants` (grantee_type CanonicalUser with id, or
// Group with uri) in order; the owner's own grants carry its display name.
std::string AccessControlPolicyXml(const Owner& owner, std::span<const AclGrant> grants);

// <Tagging><TagSet><Tag><Key/><Value/></Tag>...</TagSet></Tagging>.
std::string TaggingXml(std::span<const Tag> tags);
// <CORSConfiguration><CORSRule>[<ID/>]<AllowedHeader/>...<AllowedMethod/>...
// <AllowedOrigin/>...<ExposeHeader/>...[<MaxAgeSeconds/>]</CORSRule>...
// (GetBucketCors), every element as PutBucketCors set it.
std::string CorsConfigurationXml(std::span<const CorsRule> rules);

// ---- Listings --------------------------------------------------------------
struct ObjectEntry {
  std::string key;  // raw; encoded by the writer under encoding-type=url
  int64_t last_modified_ms = 0;
  std::string etag;  // quoted
  uint64_t size = 0;
  Owner owner;  // written by v1 always, by v2 only with fetch-owner
  std::string storage_class = "STANDARD";
  std::string checksum_algorithm;  // with checksum_type; empty: not written
  std::string checksum_type;
};

// GET /bucket (ListObjects, v1).
struct ListObjectsV1Result {
  std::string bucket;
  std::string prefix;  // as requested ("" when absent); always written
  std::string marker;  // as requested; always written
  std::optional<std::string> delimiter;  // written when requested
  uint32_t max_keys = 1000;
  bool is_truncated = false;
  // Written only when a delimiter was given and this is non-empty; set it
  // (to the last key or common prefix of the page) only when truncated, as
  // AWS does. Without a delimiter clients page with the last Key.
  std::string next_marker;
  bool encoding_url = false;  // encoding-type=url was requested
  std::vector<ObjectEntry> contents;
  std::vector<std::string> common_prefixes;  // raw, in order
};
std::string ListObjectsV1Xml(const ListObjectsV1Result& result);

// GET /bucket?list-type=2 (ListObjectsV2).
struct ListObjectsV2Result {
  std::string bucket;
  std::string prefix;  // always written
  std::optional<std::string> delimiter;
  uint32_t max_keys = 1000;
  bool is_truncated = false;
  std::optional<std::string> continuation_token;  // echoed when requested
  std::string next_continuation_token;            // written when truncated
  std::optional<std::string> start_after;         // echoed when requested
  bool encoding_url = false;
  bool fetch_owner = false;
  std::vector<ObjectEntry> contents;
  std::vector<std::string> common_prefixes;
};
// KeyCount = contents + common prefixes.
std::string ListObjectsV2Xml(const ListObjectsV2Result& result);

// GET /bucket?versions. Entries in key order, newest version first per key;
// versions and delete markers interleave as they come.
struct VersionEntry {
  bool delete_marker = false;
  std::string key;
  std::string version_id;  // "null" for the null version
  bool is_latest = false;
  int64_t last_modified_ms = 0;
  std::string etag;  // versions only
  uint64_t size = 0;  // versions only
  Owner owner;
  std::string storage_class = "STANDARD";  // versions only
  std::string checksum_algorithm;  // versions only; empty: not written
  std::string checksum_type;
};
struct ListVersionsResult {
  std::string bucket;
  std::string prefix;
  std::string key_marker;
  std::string version_id_marker;
  std::optional<std::string> delimiter;
  uint32_t max_keys = 1000;
  bool is_truncated = false;
  std::string next_key_marker;         // written when truncated
  std::string next_version_id_marker;  // written when truncated
  bool encoding_url = false;
  std::vector<VersionEntry> entries;
  std::vector<std::string> common_prefixes;
};
std::string ListVersionsXml(const ListVersionsResult& result);

// ---- Multipart -------------------------------------------------------------
std::string InitiateMultipartUploadXml(std::string_view bucket, std::string_view key,
                                       std::string_view upload_id);

struct CompleteMultipartUploadResult {
  std::string location;  // absolute URL of the object
  std::string bucket;
  std::string key;
  std::string etag;  // quoted "hex-N"
};
std::string CompleteMultipartUploadXml(const CompleteMultipartUploadResult& result);
// <PostResponse> (no namespace, as S3 answers a POST upload with
// success_action_status 201): the same four elements.
std::string PostResponseXml(const CompleteMultipartUploadResult& result);

struct PartEntry {
  uint32_t part_number = 0;
  int64_t last_modified_ms = 0;
  std::string etag;  // quoted
  uint64_t size = 0;
  // (algorithm as S3 names it: CRC32, CRC32C, SHA1, SHA256, CRC64NVME;
  // base64 value): written as <Checksum{algorithm}>.
  std::vector<std::pair<std::string, std::string>> checksums;
};
struct ListPartsResult {
  std::string bucket;
  std::string key;
  std::string upload_id;
  Owner initiator;
  Owner owner;
  std::string storage_class = "STANDARD";
  uint32_t part_number_marker = 0;
  uint32_t next_part_number_marker = 0;
  uint32_t max_parts = 1000;
  bool is_truncated = false;
  std::vector<PartEntry> parts;
  // The upload's checksum: algorithm and COMPOSITE / FULL_OBJECT; both
  // empty when it has none (then neither element is written).
  std::string checksum_algorithm;
  std::string checksum_type;
};
std::string ListPartsXml(const ListPartsResult& result);

// GetObjectAttributes: each section is written only when asked for (and,
// for Checksum and ObjectParts, when the object has one).
struct AttributePart {
  uint32_t part_number = 0;
  uint64_t size = 0;
  std::string checksum;  // base64 in the object's algorithm; empty: none
};
struct ObjectAttributesResult {
  std::optional<std::string> etag;  // unquoted, as S3 writes it here
  // The object's checksum algorithm ("CRC32", ...; empty: none), which
  // also names each Part's checksum element.
  std::string checksum_algorithm;
  // Checksum section: its value (without a composite's "-N") and
  // COMPOSITE / FULL_OBJECT; empty value: no Checksum element.
  std::string checksum_value;
  std::string checksum_type;
  bool object_parts = false;        // write ObjectParts
  uint32_t parts_count = 0;
  bool part_list = false;           // write the paging elements and Part entries
  uint32_t part_number_marker = 0;
  uint32_t next_part_number_marker = 0;
  uint32_t max_parts = 1000;
  bool is_truncated = false;
  std::vector<AttributePart> parts;
  std::optional<std::string> storage_class;
  std::optional<uint64_t> object_size;
};
std::string ObjectAttributesXml(const ObjectAttributesResult& result);

struct UploadEntry {
  std::string key;
  std::string upload_id;
  Owner initiator;
  Owner owner;
  std::string storage_class = "STANDARD";
  int64_t initiated_ms = 0;
  std::string checksum_algorithm;  // empty: not written
  std::string checksum_type;
};
struct ListMultipartUploadsResult {
  std::string bucket;
  std::string key_marker;
  std::string upload_id_marker;
  std::string next_key_marker;
  std::string next_upload_id_marker;
  std::optional<std::string> delimiter;
  std::optional<std::string> prefix;  // echoed only when the request named one
  uint32_t max_uploads = 1000;
  bool is_truncated = false;
  bool encoding_url = false;
  std::vector<UploadEntry> uploads;
  std::vector<std::string> common_prefixes;
};
std::string ListMultipartUploadsXml(const ListMultipartUploadsResult& result);

// ---- Object operations -----------------------------------------------------
// POST /bucket?delete answer: Deleted and Error entries (in request order
// within each kind; quiet mode: the caller passes no Deleted entries).
struct DeletedEntry {
  std::string key;
  std::string version_id;  // written when non-empty
  bool delete_marker = false;  // DeleteMarker written when true
  std::string delete_marker_version_id;  // written when non-empty
};
struct DeleteErrorEntry {
  std::string key;
  std::string version_id;  // written when non-empty
  S3Error error;
};
struct DeleteResult {
  std::vector<DeletedEntry> deleted;
  std::vector<DeleteErrorEntry> errors;
};
std::string DeleteResultXml(const DeleteResult& result);

// <CopyObjectResult> / <CopyPartResult>: LastModified, ETag.
std::string CopyObjectResultXml(int64_t last_modified_ms, std::string_view etag);
std::string CopyPartResultXml(int64_t last_modified_ms, std::string_view etag);

// ---- Request bodies --------------------------------------------------------
struct CreateBucketConfiguration {
  std::string location_constraint;  // "" when absent (us-east-1)
};
// An empty (or all-whitespace) body is the default configuration.
S3Result<CreateBucketConfiguration> ParseCreateBucketConfiguration(std::string_view body);

struct CompletedPart {
  uint32_t part_number = 0;
  std::string etag;  // normalized to the quoted form `"hex"`
  std::string checksum_crc32;   // as sent (base64), empty when absent
  std::string checksum_crc32c;
  std::string checksum_sha1;
  std::string checksum_sha256;
  std::string checksum_crc64nvme;
};
// The error S3 answers for a CompleteMultipartUpload that lists no part:
// InvalidRequest "You must specify at least one part".
S3Error NoPartsListed();
// <CompleteMultipartUpload><Part><PartNumber/><ETag/>...</Part>...: at least
// one Part (else NoPartsListed()) and at most limits::kS3MultipartPartsMax;
// PartNumber an integer (else MalformedXML) in 1..10000 (else
// InvalidArgument); ETag required (else MalformedXML); part numbers strictly
// ascending (else InvalidPartOrder).
S3Result<std::vector<CompletedPart>> ParseCompleteMultipartUpload(std::string_view body);

struct ObjectToDelete {
  std::string key;
  std::string version_id;  // empty when absent
  // Conditions (the elements as written; nullopt when absent): delete only
  // if the latest version has this ETag / LastModifiedTime / Size.
  std::optional<std::string> etag;
  std::optional<std::string> last_modified_time;
  std::optional<std::string> size;
};
struct DeleteRequest {
  bool quiet = false;
  std::vector<ObjectToDelete> objects;
};
// <Delete><Quiet>true</Quiet><Object><Key/><VersionId/></Object>...: 1..1000
// Objects (else MalformedXML), each with a Key (else MalformedXML; the key
// is kept exactly, spaces included, and not validated here: run
// ValidateObjectKey per object). Quiet is true/false (also True/TRUE,
// False/FALSE), else MalformedXML.
S3Result<DeleteRequest> ParseDelete(std::string_view body);

struct VersioningRequest {
  std::optional<VersioningState> status;  // kEnabled / kSuspended; nullopt: absent
  std::optional<bool> mfa_delete;         // MfaDelete Enabled/Disabled
};
// Status other than Enabled/Suspended, or MfaDelete other than
// Enabled/Disabled -> MalformedXML.
S3Result<VersioningRequest> ParseVersioningConfiguration(std::string_view body);

// PublicAccessBlockConfiguration (PUT/GET ?publicAccessBlock): the four
// settings, absent ones false. Not XML, another root, or a value other
// than true/false -> MalformedXML.
struct PublicAccessBlockSettings {
  bool block_public_acls = false;
  bool ignore_public_acls = false;
  bool block_public_policy = false;
  bool restrict_public_buckets = false;
};
S3Result<PublicAccessBlockSettings> ParsePublicAccessBlockConfiguration(std::string_view body);
std::string PublicAccessBlockConfigurationXml(const PublicAccessBlockSettings& settings);
// <PolicyStatus><IsPublic>true|false</IsPublic></PolicyStatus>.
std::string PolicyStatusXml(bool is_public);

// <Tagging><TagSet><Tag><Key/><Value/></Tag>...</TagSet></Tagging>. Every
// Tag needs a Key and a Value (else MalformedXML). The tag-set rules (count,
// lengths, duplicates) are checked by ValidateTagSet, not here.
S3Result<std::vector<Tag>> ParseTagging(std::string_view body);
// <CORSConfiguration><CORSRule>...</CORSRule>...</CORSConfiguration>
// (PutBucketCors), checked with ValidateCorsRules (cors_rules.h): a
// MaxAgeSeconds that is not an integer is MalformedXML.
S3Result<std::vector<CorsRule>> ParseCorsConfiguration(std::string_view body);
// At most `tags_max` tags (10 for objects, 50 for buckets), keys 1..128 and
// values 0..256 Unicode characters, no duplicate keys, no "aws:" prefix on
// keys. Failures: InvalidTag with AWS's message, naming the TagKey.
S3Status ValidateTagSet(std::span<const Tag> tags, size_t tags_max);

// <OwnershipControls><Rule><ObjectOwnership>X</ObjectOwnership></Rule>
// </OwnershipControls>, X one of BucketOwnerEnforced, BucketOwnerPreferred,
// ObjectWriter (S3 takes exactly one rule). The value, or MalformedXML.
S3Result<std::string> ParseOwnershipControls(std::string_view body);
std::string OwnershipControlsXml(std::string_view object_ownership);

}  // namespace tessera::s3
