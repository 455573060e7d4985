#include "s3/protocol/xml_documents.h"

#include <pugixml.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <set>

#include "common/limits.h"
#include "s3/protocol/http_rules.h"

namespace tessera::s3 {
namespace {

// ---- Writing ------------------------------------------------------------------

// AWS escapes the five predefined entities (ETags come out as
// &quot;hex&quot;). Control characters other than TAB and LF cannot appear
// raw in XML 1.0; they are written as character references (CR as &#13; so
// it survives end-of-line normalization). Clients that need such keys
// intact ask for encoding-type=url.
constexpr std::array<bool, 256> kNeedsEscape = [] {
  std::array<bool, 256> table{};
  for (int c = 0; c < 0x20; ++c) table[c] = c != '\t' && c != '\n';
  for (const unsigned char c : std::string_view("&<>\"'")) table[c] = true;
  return table;
}();

bool NeedsEscape(char c) { return kNeedsEscape[static_cast<unsigned char>(c)]; }

void AppendEscaped(std::string* out, std::string_view text) {
  // Runs of characters that need no escape (nearly all of a listing) are
  // appended whole.
  size_t run = 0;
  while (run < text.size() && !NeedsEscape(text[run])) ++run;
  out->append(text.data(), run);
  if (run == text.size()) return;
  for (char c : text.substr(run)) {
    switch (c) {
      case '&': *out += "&amp;"; break;
      case '<': *out += "&lt;"; break;
      case '>': *out += "&gt;"; break;
      case '"': *out += "&quot;"; break;
      case '\'': *out += "&apos;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') {
          *out += "&#" + std::to_string(static_cast<unsigned char>(c)) + ";";
        } else {
          out->push_back(c);
        }
    }
  }
}

// Builds one document: declaration, root with the S3 namespace, elements.
class XmlWriter {
 public:
  // `reserve_bytes`: the expected document size (a listing's entries).
  explicit XmlWriter(size_t reserve_bytes = 0) {
    out_.reserve(reserve_bytes);
    out_ = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  }

  // The root element; with_namespace adds xmlns="http://s3.amazonaws.com/...".
  XmlWriter& Root(std::string_view name, bool with_namespace = true) {
    out_ += "<";
    out_ += name;
    if (with_namespace) {
      out_ += " xmlns=\"";
      out_ += kS3XmlNamespace;
      out_ += "\"";
    }
    out_ += ">";
    return *this;
  }
  // <name xmlns="..."/>
  XmlWriter& EmptyRoot(std::string_view name) {
    out_ += "<";
    out_ += name;
    out_ += " xmlns=\"";
    out_ += kS3XmlNamespace;
    out_ += "\"/>";
    return *this;
  }
  XmlWriter& Text(std::string_view text) {
    AppendEscaped(&out_, text);
    return *this;
  }
  XmlWriter& Open(std::string_view name) {
    out_ += "<";
    out_ += name;
    out_ += ">";
    return *this;
  }
  XmlWriter& Close(std::string_view name) {
    out_ += "</";
    out_ += name;
    out_ += ">";
    return *this;
  }
  XmlWriter& Raw(std::string_view xml) {
    out_ += xml;
    return *this;
  }
  XmlWriter& Element(std::string_view name, std::string_view text) {
    Open(name);
    AppendEscaped(&out_, text);
    return Close(name);
  }
  XmlWriter& Element(std::string_view name, uint64_t value) {
    char digits[20];
    const auto end = std::to_chars(digits, digits + sizeof(digits), value).ptr;
    Open(name);
    out_.append(digits, end);
    return Close(name);
  }
  XmlWriter& Bool(std::string_view name, bool value) {
    return Element(name, std::string_view(value ? "true" : "false"));
  }
  // With milliseconds, unlike S3's whole seconds (decision D46): `aws s3
  // sync` compares a local mtime to the listed LastModified, and whole
  // seconds make it upload again a file written in the second it was sent.
  XmlWriter& Time(std::string_view name, int64_t unix_ms) {
    Open(name);
    AppendIso8601(&out_, unix_ms);  // digits and punctuation: nothing to escape
    return Close(name);
  }
  XmlWriter& ElementIf(bool present, std::string_view name, std::string_view text) {
    return present ? Element(name, text) : *this;
  }
  // A listing entry's <ChecksumAlgorithm> and <ChecksumType>, when it has one.
  XmlWriter& Checksum(std::string_view algorithm, std::string_view type) {
    return ElementIf(!algorithm.empty(), "ChecksumAlgorithm", algorithm)
        .ElementIf(!algorithm.empty() && !type.empty(), "ChecksumType", type);
  }
  // <name><ID/><DisplayName/></name>; DisplayName only when known (AWS has
  // stopped sending it in newer regions).
  XmlWriter& OwnerLike(std::string_view name, const Owner& owner) {
    Open(name).Element("ID", owner.id);
    ElementIf(!owner.display_name.empty(), "DisplayName", owner.display_name);
    return Close(name);
  }
  std::string Finish() { return std::move(out_); }

 private:
  std::string out_;
};

// A listing document's size to reserve: room for `entries` typical entries.
size_t ListingBytes(size_t entries) {
  constexpr size_t kEntryBytes = 256;  // a Contents element with a short key
  return 1024 + std::min(entries, size_t{limits::kS3ListItemsPerReadMax}) * kEntryBytes;
}

// Listing values under encoding-type=url.
std::string MaybeEncode(bool encode, std::string_view text) {
  return encode ? UrlEncodeForListing(text) : std::string(text);
}

void WriteCommonPrefixes(XmlWriter& w, const std::vector<std::string>& prefixes, bool encode) {
  for (const std::string& p : prefixes) {
    w.Open("CommonPrefixes").Element("Prefix", MaybeEncode(encode, p)).Close("CommonPrefixes");
  }
}

void WriteObjectEntry(XmlWriter& w, const ObjectEntry& e, bool encode, bool with_owner) {
  w.Open("Contents");
  // Not through MaybeEncode: an unencoded key is written without a copy.
  if (encode) {
    w.Element("Key", UrlEncodeForListing(e.key));
  } else {
    w.Element("Key", e.key);
  }
  w.Time("LastModified", e.last_modified_ms)
      .Element("ETag", e.etag)
      .Element("Size", e.size);
  if (with_owner) w.OwnerLike("Owner", e.owner);
  w.Element("StorageClass", e.storage_class);
  w.Checksum(e.checksum_algorithm, e.checksum_type).Close("Contents");
}

}  // namespace

// AWS error documents carry no namespace: <Error><Code>..</Code>
// <Message>..</Message> then operation-specific fields (BucketName, Key,
// ArgumentName, ...), Resource, RequestId ("Error responses" in the S3 API
// reference).
std::string ErrorXml(const S3Error& error, std::string_view resource,
                     std::string_view request_id, std::span<const ErrorField> extra) {
  XmlWriter w;
  w.Root("Error", /*with_namespace=*/false)
      .Element("Code", CodeName(error.code))
      .Element("Message", error.Message());
  for (const auto& [name, value] : extra) w.Element(name, value);
  w.ElementIf(!resource.empty(), "Resource", resource).Element("RequestId", request_id);
  return w.Close("Error").Finish();
}

std::string ListAllMyBucketsXml(const ListBucketsResult& result) {
  XmlWriter w;
  w.Root("ListAllMyBucketsResult").OwnerLike("Owner", result.owner).Open("Buckets");
  for (const BucketEntry& b : result.buckets) {
    w.Open("Bucket").Element("Name", b.name).Time("CreationDate", b.creation_ms);
    w.ElementIf(!b.region.empty(), "BucketRegion", b.region).Close("Bucket");
  }
  w.Close("Buckets");
  if (result.continuation_token) w.Element("ContinuationToken", *result.continuation_token);
  if (result.prefix) w.Element("Prefix", *result.prefix);
  return w.Close("ListAllMyBucketsResult").Finish();
}

// GetBucketLocation answers an empty element for us-east-1 (the
// LocationConstraint "null" of the API reference).
std::string LocationConstraintXml(std::string_view region) {
  XmlWriter w;
  if (region.empty()) return w.EmptyRoot("LocationConstraint").Finish();
  return w.Root("LocationConstraint").Text(region).Close("LocationConstraint").Finish();
}

// GetBucketVersioning: "If the versioning state has never been set on a
// bucket, then no versioning state is returned" -- an empty element.
std::string VersioningConfigurationXml(VersioningState state) {
  XmlWriter w;
  if (state == VersioningState::kNeverEnabled) {
    return w.EmptyRoot("VersioningConfiguration").Finish();
  }
  w.Root("VersioningConfiguration")
      .Element("Status", std::string_view(state == VersioningState::kEnabled ? "Enabled"
                                                                             : "Suspended"));
  return w.Close("VersioningConfiguration").Finish();
}

std::string AccessControlPolicyXml(const Owner& owner) {
  XmlWriter w;
  w.Root("AccessControlPolicy").OwnerLike("Owner", owner).Open("AccessControlList").Open("Grant");
  w.Raw("<Grantee xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" "
        "xsi:type=\"CanonicalUser\">")
      .Element("ID", owner.id)
      .ElementIf(!owner.display_name.empty(), "DisplayName", owner.display_name)
      .Close("Grantee")
      .Element("Permission", std::string_view("FULL_CONTROL"));
  return w.Close("Grant").Close("AccessControlList").Close("AccessControlPolicy").Finish();
}

std::string AccessControlPolicyXml(const Owner& owner, std::span<const AclGrant> grants) {
  XmlWriter w;
  w.Root("AccessControlPolicy").OwnerLike("Owner", owner).Open("AccessControlList");
  for (const AclGrant& g : grants) {
    w.Open("Grant");
    const bool group = g.grantee_type == "Group";
    w.Raw(group ? "<Grantee xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" "
                  "xsi:type=\"Group\">"
                : "<Grantee xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" "
                  "xsi:type=\"CanonicalUser\">");
    if (group) {
      w.Element("URI", g.uri);
    } else {
      w.Element("ID", g.id);
      if (g.id == owner.id && !owner.display_name.empty()) {
        w.Element("DisplayName", owner.display_name);
      }
    }
    w.Close("Grantee").Element("Permission", g.permission).Close("Grant");
  }
  return w.Close("AccessControlList").Close("AccessControlPolicy").Finish();
}

std::string TaggingXml(std::span<const Tag> tags) {
  XmlWriter w;
  w.Root("Tagging").Open("TagSet");
  for (const Tag& t : tags) {
    w.Open("Tag").Element("Key", t.key).Element("Value", t.value).Close("Tag");
  }
  return w.Close("TagSet").Close("Tagging").Finish();
}

std::string CorsConfigurationXml(std::span<const CorsRule> rules) {
  XmlWriter w;
  w.Root("CORSConfiguration");
  for (const CorsRule& rule : rules) {
    w.Open("CORSRule").ElementIf(!rule.id.empty(), "ID", rule.id);
    for (const std::string& h : rule.allowed_headers) w.Element("AllowedHeader", h);
    for (const std::string& m : rule.allowed_methods) w.Element("AllowedMethod", m);
    for (const std::string& o : rule.allowed_origins) w.Element("AllowedOrigin", o);
    for (const std::string& h : rule.expose_headers) w.Element("ExposeHeader", h);
    if (rule.max_age_s) w.Element("MaxAgeSeconds", std::to_string(*rule.max_age_s));
    w.Close("CORSRule");
  }
  return w.Close("CORSConfiguration").Finish();
}

// ListObjects (v1). encoding-type=url encodes Prefix, Marker, NextMarker,
// Delimiter, Contents/Key and CommonPrefixes/Prefix (API reference:
// "Delimiter, Marker, Prefix, NextMarker, Key"; botocore and the Ruby SDK
// decode the same set). NextMarker appears only with a delimiter.
std::string ListObjectsV1Xml(const ListObjectsV1Result& r) {
  const bool enc = r.encoding_url;
  XmlWriter w(ListingBytes(r.contents.size() + r.common_prefixes.size()));
  w.Root("ListBucketResult")
      .Element("Name", r.bucket)
      .Element("Prefix", MaybeEncode(enc, r.prefix))
      .Element("Marker", MaybeEncode(enc, r.marker));
  if (r.delimiter && !r.next_marker.empty()) {
    w.Element("NextMarker", MaybeEncode(enc, r.next_marker));
  }
  w.Element("MaxKeys", uint64_t{r.max_keys});
  if (r.delimiter) w.Element("Delimiter", MaybeEncode(enc, *r.delimiter));
  w.ElementIf(enc, "EncodingType", "url").Bool("IsTruncated", r.is_truncated);
  for (const ObjectEntry& e : r.contents) WriteObjectEntry(w, e, enc, /*with_owner=*/true);
  WriteCommonPrefixes(w, r.common_prefixes, enc);
  return w.Close("ListBucketResult").Finish();
}

// ListObjectsV2. encoding-type=url encodes Prefix, Delimiter, StartAfter,
// Contents/Key and CommonPrefixes/Prefix -- botocore's
// decode_list_object_v2 set. Continuation tokens are opaque and never
// encoded (botocore would not decode them).
std::string ListObjectsV2Xml(const ListObjectsV2Result& r) {
  const bool enc = r.encoding_url;
  XmlWriter w(ListingBytes(r.contents.size() + r.common_prefixes.size()));
  w.Root("ListBucketResult")
      .Element("Name", r.bucket)
      .Element("Prefix", MaybeEncode(enc, r.prefix));
  if (r.start_after) w.Element("StartAfter", MaybeEncode(enc, *r.start_after));
  if (r.continuation_token) w.Element("ContinuationToken", *r.continuation_token);
  w.ElementIf(r.is_truncated, "NextContinuationToken", r.next_continuation_token)
      .Element("KeyCount", uint64_t{r.contents.size() + r.common_prefixes.size()})
      .Element("MaxKeys", uint64_t{r.max_keys});
  if (r.delimiter) w.Element("Delimiter", MaybeEncode(enc, *r.delimiter));
  w.ElementIf(enc, "EncodingType", "url").Bool("IsTruncated", r.is_truncated);
  for (const ObjectEntry& e : r.contents) WriteObjectEntry(w, e, enc, r.fetch_owner);
  WriteCommonPrefixes(w, r.common_prefixes, enc);
  return w.Close("ListBucketResult").Finish();
}

// ListObjectVersions. encoding-type=url encodes KeyMarker, NextKeyMarker,
// Prefix, Delimiter, Version/Key, DeleteMarker/Key, CommonPrefixes/Prefix
// (botocore decode_list_object_versions).
std::string ListVersionsXml(const ListVersionsResult& r) {
  const bool enc = r.encoding_url;
  XmlWriter w(ListingBytes(r.entries.size() + r.common_prefixes.size()));
  w.Root("ListVersionsResult")
      .Element("Name", r.bucket)
      .Element("Prefix", MaybeEncode(enc, r.prefix))
      .Element("KeyMarker", MaybeEncode(enc, r.key_marker))
      .Element("VersionIdMarker", r.version_id_marker);
  if (r.is_truncated) {
    // A page that ends in a common prefix has no version to name.
    w.Element("NextKeyMarker", MaybeEncode(enc, r.next_key_marker))
        .ElementIf(!r.next_version_id_marker.empty(), "NextVersionIdMarker",
                   r.next_version_id_marker);
  }
  w.Element("MaxKeys", uint64_t{r.max_keys});
  if (r.delimiter) w.Element("Delimiter", MaybeEncode(enc, *r.delimiter));
  w.ElementIf(enc, "EncodingType", "url").Bool("IsTruncated", r.is_truncated);
  for (const VersionEntry& e : r.entries) {
    const std::string_view tag = e.delete_marker ? "DeleteMarker" : "Version";
    w.Open(tag)
        .Element("Key", MaybeEncode(enc, e.key))
        .Element("VersionId", e.version_id)
        .Bool("IsLatest", e.is_latest)
        .Time("LastModified", e.last_modified_ms);
    if (!e.delete_marker) {
      w.Element("ETag", e.etag).Element("Size", e.size).Element("StorageClass", e.storage_class);
      w.Checksum(e.checksum_algorithm, e.checksum_type);
    }
    w.OwnerLike("Owner", e.owner).Close(tag);
  }
  WriteCommonPrefixes(w, r.common_prefixes, enc);
  return w.Close("ListVersionsResult").Finish();
}

std::string InitiateMultipartUploadXml(std::string_view bucket, std::string_view key,
                                       std::string_view upload_id) {
  XmlWriter w;
  w.Root("InitiateMultipartUploadResult")
      .Element("Bucket", bucket)
      .Element("Key", key)
      .Element("UploadId", upload_id);
  return w.Close("InitiateMultipartUploadResult").Finish();
}

std::string CompleteMultipartUploadXml(const CompleteMultipartUploadResult& r) {
  XmlWriter w;
  w.Root("CompleteMultipartUploadResult")
      .Element("Location", r.location)
      .Element("Bucket", r.bucket)
      .Element("Key", r.key)
      .Element("ETag", r.etag);
  return w.Close("CompleteMultipartUploadResult").Finish();
}

std::string PostResponseXml(const CompleteMultipartUploadResult& r) {
  XmlWriter w;
  w.Root("PostResponse", /*with_namespace=*/false)
      .Element("Location", r.location)
      .Element("Bucket", r.bucket)
      .Element("Key", r.key)
      .Element("ETag", r.etag);
  return w.Close("PostResponse").Finish();
}

std::string ListPartsXml(const ListPartsResult& r) {
  XmlWriter w;
  w.Root("ListPartsResult")
      .Element("Bucket", r.bucket)
      .Element("Key", r.key)
      .Element("UploadId", r.upload_id)
      .OwnerLike("Initiator", r.initiator)
      .OwnerLike("Owner", r.owner)
      .Element("StorageClass", r.storage_class)
      .Element("PartNumberMarker", uint64_t{r.part_number_marker})
      .Element("NextPartNumberMarker", uint64_t{r.next_part_number_marker})
      .Element("MaxParts", uint64_t{r.max_parts})
      .Bool("IsTruncated", r.is_truncated);
  for (const PartEntry& p : r.parts) {
    w.Open("Part")
        .Element("PartNumber", uint64_t{p.part_number})
        .Time("LastModified", p.last_modified_ms)
        .Element("ETag", p.etag)
        .Element("Size", p.size);
    for (const auto& [algorithm, value] : p.checksums) w.Element("Checksum" + algorithm, value);
    w.Close("Part");
  }
  w.ElementIf(!r.checksum_algorithm.empty(), "ChecksumAlgorithm", r.checksum_algorithm)
      .ElementIf(!r.checksum_type.empty(), "ChecksumType", r.checksum_type);
  return w.Close("ListPartsResult").Finish();
}

std::string ObjectAttributesXml(const ObjectAttributesResult& r) {
  XmlWriter w;
  w.Root("GetObjectAttributesResponse");
  if (r.etag) w.Element("ETag", *r.etag);
  if (!r.checksum_algorithm.empty() && !r.checksum_value.empty()) {
    w.Open("Checksum")
        .Element("Checksum" + r.checksum_algorithm, r.checksum_value)
        .ElementIf(!r.checksum_type.empty(), "ChecksumType", r.checksum_type)
        .Close("Checksum");
  }
  if (r.object_parts) {
    w.Open("ObjectParts");
    if (r.part_list) {
      w.Element("PartNumberMarker", uint64_t{r.part_number_marker})
          .Element("NextPartNumberMarker", uint64_t{r.next_part_number_marker})
          .Element("MaxParts", uint64_t{r.max_parts})
          .Bool("IsTruncated", r.is_truncated);
      for (const AttributePart& p : r.parts) {
        w.Open("Part")
            .Element("PartNumber", uint64_t{p.part_number})
            .Element("Size", p.size)
            .ElementIf(!p.checksum.empty(), "Checksum" + r.checksum_algorithm, p.checksum)
            .Close("Part");
      }
    }
    w.Element("PartsCount", uint64_t{r.parts_count}).Close("ObjectParts");
  }
  if (r.storage_class) w.Element("StorageClass", *r.storage_class);
  if (r.object_size) w.Element("ObjectSize", *r.object_size);
  return w.Close("GetObjectAttributesResponse").Finish();
}

// ListMultipartUploads. encoding-type=url encodes KeyMarker, NextKeyMarker,
// Prefix, Delimiter, Upload/Key and CommonPrefixes/Prefix (the Ruby SDK's
// decode_list_multipart_uploads_keys set).
std::string ListMultipartUploadsXml(const ListMultipartUploadsResult& r) {
  const bool enc = r.encoding_url;
  XmlWriter w;
  w.Root("ListMultipartUploadsResult")
      .Element("Bucket", r.bucket)
      .Element("KeyMarker", MaybeEncode(enc, r.key_marker))
      .Element("UploadIdMarker", r.upload_id_marker)
      .Element("NextKeyMarker", MaybeEncode(enc, r.next_key_marker))
      .Element("NextUploadIdMarker", r.next_upload_id_marker);
  if (r.delimiter) w.Element("Delimiter", MaybeEncode(enc, *r.delimiter));
  if (r.prefix) w.Element("Prefix", MaybeEncode(enc, *r.prefix));
  w.Element("MaxUploads", uint64_t{r.max_uploads})
      .ElementIf(enc, "EncodingType", "url")
      .Bool("IsTruncated", r.is_truncated);
  for (const UploadEntry& u : r.uploads) {
    w.Open("Upload")
        .Element("Key", MaybeEncode(enc, u.key))
        .Element("UploadId", u.upload_id)
        .OwnerLike("Initiator", u.initiator)
        .OwnerLike("Owner", u.owner)
        .Element("StorageClass", u.storage_class)
        .Time("Initiated", u.initiated_ms)
        .Checksum(u.checksum_algorithm, u.checksum_type)
        .Close("Upload");
  }
  WriteCommonPrefixes(w, r.common_prefixes, enc);
  return w.Close("ListMultipartUploadsResult").Finish();
}

std::string DeleteResultXml(const DeleteResult& r) {
  XmlWriter w;
  w.Root("DeleteResult");
  for (const DeletedEntry& d : r.deleted) {
    w.Open("Deleted").Element("Key", d.key).ElementIf(!d.version_id.empty(), "VersionId",
                                                      d.version_id);
    if (d.delete_marker) w.Bool("DeleteMarker", true);
    w.ElementIf(!d.delete_marker_version_id.empty(), "DeleteMarkerVersionId",
                d.delete_marker_version_id)
        .Close("Deleted");
  }
  for (const DeleteErrorEntry& e : r.errors) {
    w.Open("Error")
        .Element("Key", e.key)
        .ElementIf(!e.version_id.empty(), "VersionId", e.version_id)
        .Element("Code", CodeName(e.error.code))
        .Element("Message", e.error.Message())
        .Close("Error");
  }
  return w.Close("DeleteResult").Finish();
}

std::string CopyObjectResultXml(int64_t last_modified_ms, std::string_view etag) {
  XmlWriter w;
  w.Root("CopyObjectResult").Time("LastModified", last_modified_ms).Element("ETag", etag);
  return w.Close("CopyObjectResult").Finish();
}

std::string CopyPartResultXml(int64_t last_modified_ms, std::string_view etag) {
  XmlWriter w;
  w.Root("CopyPartResult").Time("LastModified", last_modified_ms).Element("ETag", etag);
  return w.Close("CopyPartResult").Finish();
}

// ---- Request bodies --------------------------------------------------------
namespace {

S3Error Malformed() { return S3Error(S3ErrorCode::kMalformedXML); }

std::string_view LocalName(const pugi::xml_node& node) {
  std::string_view name = node.name();
  const size_t colon = name.find(':');
  return colon == std::string_view::npos ? name : name.substr(colon + 1);
}

// Children of `parent` with the local name `name` (any namespace prefix).
template <typename Fn>
void ForEachChild(const pugi::xml_node& parent, std::string_view name, Fn&& fn) {
  for (pugi::xml_node child : parent.children()) {
    if (child.type() == pugi::node_element && LocalName(child) == name) fn(child);
  }
}

pugi::xml_node FirstChild(const pugi::xml_node& parent, std::string_view name) {
  for (pugi::xml_node child : parent.children()) {
    if (child.type() == pugi::node_element && LocalName(child) == name) return child;
  }
  return {};
}

// The element's text: all its character data (text and CDATA), untrimmed,
// so keys with spaces survive.
std::string TextOf(const pugi::xml_node& node) {
  std::string text;
  for (pugi::xml_node child : node.children()) {
    if (child.type() == pugi::node_pcdata || child.type() == pugi::node_cdata) {
      text += child.value();
    }
  }
  return text;
}

std::string_view TrimXmlSpace(std::string_view s) {
  constexpr std::string_view kSpace = " \t\r\n";
  const size_t first = s.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(kSpace) - first + 1);
}

// Text of values that are not keys (numbers, flags, ids): surrounding XML
// whitespace dropped.
std::string TrimmedTextOf(const pugi::xml_node& node) {
  return std::string(TrimXmlSpace(TextOf(node)));
}

// Parses `body` and checks the root's local name. pugixml parses without
// recursion, never fetches external entities and expands only the
// predefined and numeric ones, so a hostile body costs at most its size.
S3Result<pugi::xml_node> LoadRoot(pugi::xml_document* doc, std::string_view body,
                                  std::string_view root_name) {
  if (body.size() > limits::kS3XmlParseBytesMax) return Malformed();
  const unsigned options = pugi::parse_default | pugi::parse_ws_pcdata | pugi::parse_doctype;
  const pugi::xml_parse_result parsed =
      doc->load_buffer(body.data(), body.size(), options, pugi::encoding_utf8);
  if (!parsed) return Malformed();
  // S3 request bodies never carry a DTD; refusing one keeps entity tricks
  // out entirely.
  for (pugi::xml_node node : doc->children()) {
    if (node.type() == pugi::node_doctype) return Malformed();
  }
  pugi::xml_node root = doc->document_element();
  if (!root || LocalName(root) != root_name) return Malformed();
  return root;
}

// "1".."10000" -> the number; other digit strings -> InvalidArgument (as
// AWS answers an out-of-range part number); anything else MalformedXML.
S3Result<uint32_t> ParsePartNumber(std::string_view text) {
  text = TrimXmlSpace(text);
  if (text.empty() || !std::all_of(text.begin(), text.end(),
                                   [](char c) { return c >= '0' && c <= '9'; })) {
    return Malformed();
  }
  uint64_t n = 0;
  for (char c : text) {
    n = std::min<uint64_t>(n * 10 + static_cast<uint64_t>(c - '0'),
                           limits::kS3MultipartPartsMax + 1);
  }
  if (n < 1 || n > limits::kS3MultipartPartsMax) {
    return PartNumberArgumentError(std::string(text));
  }
  return static_cast<uint32_t>(n);
}

size_t Utf8Chars(std::string_view s) {
  return static_cast<size_t>(std::count_if(
      s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

}  // namespace

S3Result<CreateBucketConfiguration> ParseCreateBucketConfiguration(std::string_view body) {
  CreateBucketConfiguration config;
  if (TrimXmlSpace(body).empty()) return config;
  pugi::xml_document doc;
  auto root = LoadRoot(&doc, body, "CreateBucketConfiguration");
  if (!root.ok()) return root.error();
  if (pugi::xml_node lc = FirstChild(*root, "LocationConstraint")) {
    config.location_constraint = TrimmedTextOf(lc);
  }
  return config;
}

// AWS: at least one Part; PartNumber 1..10000; parts "in ascending order"
// (else InvalidPartOrder, which we also answer for a repeated number).
S3Error NoPartsListed() {
  return S3Error(S3ErrorCode::kInvalidRequest, "You must specify at least one part");
}

S3Result<std::vector<CompletedPart>> ParseCompleteMultipartUpload(std::string_view body) {
  pugi::xml_document doc;
  auto root = LoadRoot(&doc, body, "CompleteMultipartUpload");
  if (!root.ok()) return root.error();
  std::vector<CompletedPart> parts;
  std::optional<S3Error> failure;
  ForEachChild(*root, "Part", [&](const pugi::xml_node& node) {
    if (failure) return;
    if (parts.size() == limits::kS3MultipartPartsMax) {
      failure = Malformed();
      return;
    }
    pugi::xml_node number = FirstChild(node, "PartNumber");
    pugi::xml_node etag = FirstChild(node, "ETag");
    if (!number || !etag) {
      failure = Malformed();
      return;
    }
    auto n = ParsePartNumber(TextOf(number));
    if (!n.ok()) {
      failure = n.error();
      return;
    }
    CompletedPart part;
    part.part_number = *n;
    part.etag = QuoteEtag(UnquoteEtag(TextOf(etag)));
    part.checksum_crc32 = TrimmedTextOf(FirstChild(node, "ChecksumCRC32"));
    part.checksum_crc32c = TrimmedTextOf(FirstChild(node, "ChecksumCRC32C"));
    part.checksum_sha1 = TrimmedTextOf(FirstChild(node, "ChecksumSHA1"));
    part.checksum_sha256 = TrimmedTextOf(FirstChild(node, "ChecksumSHA256"));
    part.checksum_crc64nvme = TrimmedTextOf(FirstChild(node, "ChecksumCRC64NVME"));
    if (!parts.empty() && part.part_number <= parts.back().part_number) {
      failure = S3Error(S3ErrorCode::kInvalidPartOrder);
      return;
    }
    parts.push_back(std::move(part));
  });
  if (failure) return *failure;
  if (parts.empty()) return NoPartsListed();
  return parts;
}

// DeleteObjects: 1..1000 Object elements ("The request can contain a list
// of up to 1000 keys"); more, or none, is MalformedXML as AWS answers.
S3Result<DeleteRequest> ParseDelete(std::string_view body) {
  pugi::xml_document doc;
  auto root = LoadRoot(&doc, body, "Delete");
  if (!root.ok()) return root.error();
  DeleteRequest request;
  if (pugi::xml_node quiet = FirstChild(*root, "Quiet")) {
    const std::string value = TrimmedTextOf(quiet);
    if (value == "true" || value == "True" || value == "TRUE") {
      request.quiet = true;
    } else if (value != "false" && value != "False" && value != "FALSE") {
      return Malformed();
    }
  }
  bool missing_key = false;
  bool too_many = false;
  ForEachChild(*root, "Object", [&](const pugi::xml_node& node) {
    if (request.objects.size() == limits::kS3DeleteObjectsMax) {
      too_many = true;
      return;
    }
    pugi::xml_node key = FirstChild(node, "Key");
    if (!key) {
      missing_key = true;
      return;
    }
    ObjectToDelete object;
    object.key = TextOf(key);
    object.version_id = TrimmedTextOf(FirstChild(node, "VersionId"));
    auto optional_text = [&node](const char* name) -> std::optional<std::string> {
      pugi::xml_node child = FirstChild(node, name);
      if (!child) return std::nullopt;
      return TrimmedTextOf(child);
    };
    object.etag = optional_text("ETag");
    object.last_modified_time = optional_text("LastModifiedTime");
    object.size = optional_text("Size");
    request.objects.push_back(std::move(object));
  });
  if (missing_key || too_many || request.objects.empty()) return Malformed();
  return request;
}

S3Result<VersioningRequest> ParseVersioningConfiguration(std::string_view body) {
  pugi::xml_document doc;
  auto root = LoadRoot(&doc, body, "VersioningConfiguration");
  if (!root.ok()) return root.error();
  VersioningRequest request;
  if (pugi::xml_node status = FirstChild(*root, "Status")) {
    const std::string value = TrimmedTextOf(status);
    if (value == "Enabled") {
      request.status = VersioningState::kEnabled;
    } else if (value == "Suspended") {
      request.status = VersioningState::kSuspended;
    } else {
      return Malformed();
    }
  }
  if (pugi::xml_node mfa = FirstChild(*root, "MfaDelete")) {
    const std::string value = TrimmedTextOf(mfa);
    if (value != "Enabled" && value != "Disabled") return Malformed();
    request.mfa_delete = value == "Enabled";
  }
  return request;
}

S3Result<PublicAccessBlockSettings> ParsePublicAccessBlockConfiguration(std::string_view body) {
  pugi::xml_document doc;
  auto root = LoadRoot(&doc, body, "PublicAccessBlockConfiguration");
  if (!root.ok()) return root.error();
  PublicAccessBlockSettings settings;
  const std::pair<const char*, bool*> fields[] = {
      {"BlockPublicAcls", &settings.block_public_acls},
      {"IgnorePublicAcls", &settings.ignore_public_acls},
      {"BlockPublicPolicy", &settings.block_public_policy},
      {"RestrictPublicBuckets", &settings.restrict_public_buckets},
  };
  for (const auto& [name, value] : fields) {
    pugi::xml_node node = FirstChild(*root, name);
    if (!node) continue;
    const std::string text = TrimmedTextOf(node);
    if (text != "true" && text != "false") return Malformed();
    *value = text == "true";
  }
  return settings;
}

std::string PublicAccessBlockConfigurationXml(const PublicAccessBlockSettings& settings) {
  XmlWriter w;
  w.Root("PublicAccessBlockConfiguration")
      .Element("BlockPublicAcls", std::string_view(settings.block_public_acls ? "true" : "false"))
      .Element("IgnorePublicAcls", std::string_view(settings.ignore_public_acls ? "true" : "false"))
      .Element("BlockPublicPolicy", std::string_view(settings.block_public_policy ? "true" : "false"))
      .Element("RestrictPublicBuckets",
               std::string_view(settings.restrict_public_buckets ? "true" : "false"));
  return w.Close("PublicAccessBlockConfiguration").Finish();
}

std::string PolicyStatusXml(bool is_public) {
  XmlWriter w;
  w.Root("PolicyStatus").Element("IsPublic", std::string_view(is_public ? "true" : "false"));
  return w.Close("PolicyStatus").Finish();
}

S3Result<std::vector<AclGrant>> ParseAccessControlPolicy(std::string_view body) {
  const S3Error malformed(S3ErrorCode::kMalformedACLError);
  pugi::xml_document doc;
  auto root = LoadRoot(&doc, body, "AccessControlPolicy");
  if (!root.ok()) return malformed;
  pugi::xml_node list = FirstChild(*root, "AccessControlList");
  if (!list) return malformed;
  std::vector<AclGrant> grants;
  bool incomplete = false;
  ForEachChild(list, "Grant", [&](const pugi::xml_node& grant) {
    pugi::xml_node grantee = FirstChild(grant, "Grantee");
    pugi::xml_node permission = FirstChild(grant, "Permission");
    AclGrant out;
    for (pugi::xml_attribute a : grantee.attributes()) {
      const std::string_view name = a.name();
      if (name == "type" || name.ends_with(":type")) out.grantee_type = a.value();
    }
    if (!grantee || !permission || out.grantee_type.empty()) {
      incomplete = true;
      return;
    }
    out.id = TrimmedTextOf(FirstChild(grantee, "ID"));
    out.uri = TrimmedTextOf(FirstChild(grantee, "URI"));
    out.email = TrimmedTextOf(FirstChild(grantee, "EmailAddress"));
    out.permission = TrimmedTextOf(permission);
    grants.push_back(std::move(out));
  });
  if (incomplete) return malformed;
  return grants;
}

S3Result<std::vector<Tag>> ParseTagging(std::string_view body) {
  pugi::xml_document doc;
  auto root = LoadRoot(&doc, body, "Tagging");
  if (!root.ok()) return root.error();
  pugi::xml_node tag_set = FirstChild(*root, "TagSet");
  if (!tag_set) return Malformed();
  std::vector<Tag> tags;
  bool incomplete = false;
  ForEachChild(tag_set, "Tag", [&](const pugi::xml_node& node) {
    // More than any tag-set limit is rejected by ValidateTagSet; stop
    // collecting well before that to bound the work.
    if (tags.size() > limits::kS3BucketTagsMax) return;
    pugi::xml_node key = FirstChild(node, "Key");
    pugi::xml_node value = FirstChild(node, "Value");
    if (!key || !value) {
      incomplete = true;
      return;
    }
    tags.push_back(Tag{TextOf(key), TextOf(value)});
  });
  if (incomplete) return Malformed();
  return tags;
}

S3Result<std::vector<CorsRule>> ParseCorsConfiguration(std::string_view body) {
  pugi::xml_document doc;
  auto root = LoadRoot(&doc, body, "CORSConfiguration");
  if (!root.ok()) return root.error();
  std::vector<CorsRule> rules;
  bool malformed = false;
  ForEachChild(*root, "CORSRule", [&](const pugi::xml_node& node) {
    // More than kCorsRulesMax is refused by ValidateCorsRules; stop
    // collecting just past it to bound the work.
    if (rules.size() > kCorsRulesMax) return;
    CorsRule rule;
    if (pugi::xml_node id = FirstChild(node, "ID")) rule.id = TextOf(id);
    ForEachChild(node, "AllowedOrigin",
                 [&](const pugi::xml_node& n) { rule.allowed_origins.push_back(TrimmedTextOf(n)); });
    ForEachChild(node, "AllowedMethod",
                 [&](const pugi::xml_node& n) { rule.allowed_methods.push_back(TrimmedTextOf(n)); });
    ForEachChild(node, "AllowedHeader",
                 [&](const pugi::xml_node& n) { rule.allowed_headers.push_back(TrimmedTextOf(n)); });
    ForEachChild(node, "ExposeHeader",
                 [&](const pugi::xml_node& n) { rule.expose_headers.push_back(TrimmedTextOf(n)); });
    if (pugi::xml_node age = FirstChild(node, "MaxAgeSeconds")) {
      const std::string text = TrimmedTextOf(age);
      int64_t value = 0;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (text.empty() || ec != std::errc() || end != text.data() + text.size()) malformed = true;
      rule.max_age_s = value;
    }
    rules.push_back(std::move(rule));
  });
  if (malformed) return Malformed();
  if (S3Status st = ValidateCorsRules(rules); !st.ok()) return st.error();
  return rules;
}

// AWS tag rules ("Tagging objects", PutObjectTagging / PutBucketTagging):
// at most 10 tags per object (50 per bucket), keys 1..128 and values
// 0..256 Unicode characters, keys unique, "aws:" reserved. AWS answers
// InvalidTag naming the TagKey (and the TagValue) at fault.
S3Status ValidateTagSet(std::span<const Tag> tags, size_t tags_max) {
  auto invalid = [](std::string message, const Tag& tag, bool with_value = false) {
    S3Error error = S3Error(S3ErrorCode::kInvalidTag, std::move(message)).With("TagKey", tag.key);
    if (with_value) error.details.emplace_back("TagValue", tag.value);
    return error;
  };
  if (tags.size() > tags_max) {
    return S3Error(S3ErrorCode::kInvalidTag,
                   "Object tags cannot be greater than " + std::to_string(tags_max));
  }
  std::set<std::string_view> keys;
  for (const Tag& tag : tags) {
    const size_t key_chars = Utf8Chars(tag.key);
    if (key_chars == 0 || key_chars > limits::kS3TagKeyCharsMax) {
      return invalid("The TagKey you have provided is invalid", tag);
    }
    if (Utf8Chars(tag.value) > limits::kS3TagValueCharsMax) {
      return invalid("The TagValue you have provided is invalid", tag, /*with_value=*/true);
    }
    if (tag.key.starts_with("aws:")) {
      return invalid("Your TagKey cannot be prefixed with aws:", tag);
    }
    if (!keys.insert(tag.key).second) {
      return invalid("Cannot provide multiple Tags with the same key", tag);
    }
  }
  return S3Status::Ok();
}

S3Result<std::string> ParseOwnershipControls(std::string_view body) {
  pugi::xml_document doc;
  auto root = LoadRoot(&doc, body, "OwnershipControls");
  if (!root.ok()) return root.error();
  std::vector<pugi::xml_node> rules;
  ForEachChild(*root, "Rule", [&](const pugi::xml_node& rule) { rules.push_back(rule); });
  if (rules.size() != 1) return Malformed();
  const std::string value = TrimmedTextOf(FirstChild(rules[0], "ObjectOwnership"));
  if (value != "BucketOwnerEnforced" && value != "BucketOwnerPreferred" && value != "ObjectWriter") {
    return Malformed();
  }
  return value;
}

std::string OwnershipControlsXml(std::string_view object_ownership) {
  XmlWriter w;
  w.Root("OwnershipControls").Open("Rule").Element("ObjectOwnership", object_ownership);
  return w.Close("Rule").Close("OwnershipControls").Finish();
}

}  // namespace tessera::s3
