// Goal: every S3 XML writer produces AWS's document byte for byte (element
// names, order, namespace, escaping, encoding-type=url), and every request
// parser accepts what AWS accepts and fails with AWS's error otherwise.
#include "s3/protocol/xml_documents.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/limits.h"

namespace tessera::s3 {
namespace {

const std::string kDecl = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
const std::string kNs = " xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"";
constexpr int64_t kT = 1255369830000;  // 2009-10-12T17:50:30.000Z
const std::string kEtag = "\"fba9dede5f27731c9771645a39863328\"";
const std::string kEtagXml = "&quot;fba9dede5f27731c9771645a39863328&quot;";
const Owner kOwner{"75aa57f09aa0c8caeab4f8c24e99d10f8e7faeebf76c078efc7c6caea54ba06a",
                   "mtd@amazon.com"};
const std::string kOwnerXml =
    "<ID>75aa57f09aa0c8caeab4f8c24e99d10f8e7faeebf76c078efc7c6caea54ba06a</ID>"
    "<DisplayName>mtd@amazon.com</DisplayName>";

// ---- Writers ------------------------------------------------------------------

TEST(ErrorXml, CodeMessageExtrasResourceRequestId) {
  const std::vector<ErrorField> extra = {{"Key", "photos/a&b.jpg"}};
  EXPECT_EQ(ErrorXml(S3Error(S3ErrorCode::kNoSuchKey), "/mybucket/photos/a&b.jpg",
                     "4442587FB7D0A2F9", extra),
            kDecl +
                "<Error><Code>NoSuchKey</Code><Message>The specified key does not exist."
                "</Message><Key>photos/a&amp;b.jpg</Key><Resource>/mybucket/photos/a&amp;b.jpg"
                "</Resource><RequestId>4442587FB7D0A2F9</RequestId></Error>");
}

TEST(ErrorXml, CustomMessageAndNoResource) {
  EXPECT_EQ(ErrorXml(S3Error(S3ErrorCode::kInvalidArgument, "max-keys < 0"), "", "R1"),
            kDecl +
                "<Error><Code>InvalidArgument</Code><Message>max-keys &lt; 0</Message>"
                "<RequestId>R1</RequestId></Error>");
}

TEST(ListAllMyBucketsXml, OwnerThenBuckets) {
  ListBucketsResult r;
  r.owner = kOwner;
  r.buckets = {{"examplebucket", kT, "us-east-1"}, {"other", 0, ""}};
  EXPECT_EQ(ListAllMyBucketsXml(r),
            kDecl + "<ListAllMyBucketsResult" + kNs + "><Owner>" + kOwnerXml +
                "</Owner><Buckets><Bucket><Name>examplebucket</Name>"
                "<CreationDate>2009-10-12T17:50:30.000Z</CreationDate>"
                "<BucketRegion>us-east-1</BucketRegion></Bucket><Bucket><Name>other</Name>"
                "<CreationDate>1970-01-01T00:00:00.000Z</CreationDate></Bucket></Buckets>"
                "</ListAllMyBucketsResult>");
  r.buckets.clear();
  r.owner.display_name.clear();
  r.continuation_token = "tok";
  r.prefix = "ex";
  EXPECT_EQ(ListAllMyBucketsXml(r),
            kDecl + "<ListAllMyBucketsResult" + kNs + "><Owner><ID>" + kOwner.id +
                "</ID></Owner><Buckets></Buckets><ContinuationToken>tok</ContinuationToken>"
                "<Prefix>ex</Prefix></ListAllMyBucketsResult>");
}

TEST(LocationConstraintXml, EmptyForUsEast1) {
  EXPECT_EQ(LocationConstraintXml(""), kDecl + "<LocationConstraint" + kNs + "/>");
  EXPECT_EQ(LocationConstraintXml("eu-west-1"),
            kDecl + "<LocationConstraint" + kNs + ">eu-west-1</LocationConstraint>");
}

TEST(VersioningConfigurationXml, ThreeStates) {
  EXPECT_EQ(VersioningConfigurationXml(VersioningState::kNeverEnabled),
            kDecl + "<VersioningConfiguration" + kNs + "/>");
  EXPECT_EQ(VersioningConfigurationXml(VersioningState::kEnabled),
            kDecl + "<VersioningConfiguration" + kNs +
                "><Status>Enabled</Status></VersioningConfiguration>");
  EXPECT_EQ(VersioningConfigurationXml(VersioningState::kSuspended),
            kDecl + "<VersioningConfiguration" + kNs +
                "><Status>Suspended</Status></VersioningConfiguration>");
}

TEST(AccessControlPolicyXml, OwnerFullControl) {
  EXPECT_EQ(AccessControlPolicyXml(kOwner),
            kDecl + "<AccessControlPolicy" + kNs + "><Owner>" + kOwnerXml +
                "</Owner><AccessControlList><Grant><Grantee xmlns:xsi=\"http://www.w3.org/2001/"
                "XMLSchema-instance\" xsi:type=\"CanonicalUser\">" +
                kOwnerXml +
                "</Grantee><Permission>FULL_CONTROL</Permission></Grant></AccessControlList>"
                "</AccessControlPolicy>");
}

TEST(TaggingXml, TagSet) {
  const std::vector<Tag> tags = {{"Project", "Blue"}, {"empty", ""}};
  EXPECT_EQ(TaggingXml(tags), kDecl + "<Tagging" + kNs +
                                  "><TagSet><Tag><Key>Project</Key><Value>Blue</Value></Tag>"
                                  "<Tag><Key>empty</Key><Value></Value></Tag></TagSet></Tagging>");
}

ObjectEntry Entry(std::string key) {
  ObjectEntry e;
  e.key = std::move(key);
  e.last_modified_ms = kT;
  e.etag = kEtag;
  e.size = 434234;
  e.owner = kOwner;
  return e;
}

std::string ContentsXml(std::string_view key, bool owner) {
  return "<Contents><Key>" + std::string(key) +
         "</Key><LastModified>2009-10-12T17:50:30.000Z</LastModified><ETag>" + kEtagXml +
         "</ETag><Size>434234</Size>" + (owner ? "<Owner>" + kOwnerXml + "</Owner>" : "") +
         "<StorageClass>STANDARD</StorageClass></Contents>";
}

TEST(ListObjectsV1Xml, PlainListing) {
  ListObjectsV1Result r;
  r.bucket = "johnsmith";
  r.prefix = "photos/2006/";
  r.delimiter = "/";
  r.contents = {Entry("photos/2006/index.html")};
  r.common_prefixes = {"photos/2006/January/"};
  EXPECT_EQ(ListObjectsV1Xml(r),
            kDecl + "<ListBucketResult" + kNs +
                "><Name>johnsmith</Name><Prefix>photos/2006/</Prefix><Marker></Marker>"
                "<MaxKeys>1000</MaxKeys><Delimiter>/</Delimiter><IsTruncated>false</IsTruncated>" +
                ContentsXml("photos/2006/index.html", true) +
                "<CommonPrefixes><Prefix>photos/2006/January/</Prefix></CommonPrefixes>"
                "</ListBucketResult>");
}

TEST(ListObjectsV1Xml, NextMarkerOnlyWithDelimiter) {
  ListObjectsV1Result r;
  r.bucket = "b";
  r.max_keys = 1;
  r.is_truncated = true;
  r.next_marker = "a";
  r.contents = {Entry("a")};
  const std::string without = ListObjectsV1Xml(r);
  EXPECT_EQ(without.find("NextMarker"), std::string::npos);
  r.delimiter = "/";
  EXPECT_EQ(ListObjectsV1Xml(r),
            kDecl + "<ListBucketResult" + kNs +
                "><Name>b</Name><Prefix></Prefix><Marker></Marker><NextMarker>a</NextMarker>"
                "<MaxKeys>1</MaxKeys><Delimiter>/</Delimiter><IsTruncated>true</IsTruncated>" +
                ContentsXml("a", true) + "</ListBucketResult>");
}

TEST(ListObjectsV1Xml, EncodingTypeUrl) {
  ListObjectsV1Result r;
  r.bucket = "b";
  r.prefix = "run books/";
  r.marker = "a+b";
  r.delimiter = " ";
  r.next_marker = "z z";
  r.is_truncated = true;
  r.encoding_url = true;
  r.contents = {Entry("run books/a b.txt")};
  r.common_prefixes = {"run books/한 "};
  EXPECT_EQ(ListObjectsV1Xml(r),
            kDecl + "<ListBucketResult" + kNs +
                "><Name>b</Name><Prefix>run+books/</Prefix><Marker>a%2Bb</Marker>"
                "<NextMarker>z+z</NextMarker><MaxKeys>1000</MaxKeys><Delimiter>+</Delimiter>"
                "<EncodingType>url</EncodingType><IsTruncated>true</IsTruncated>" +
                ContentsXml("run+books/a+b.txt", true) +
                "<CommonPrefixes><Prefix>run+books/%ED%95%9C+</Prefix></CommonPrefixes>"
                "</ListBucketResult>");
}

TEST(ListObjectsV1Xml, EscapesControlCharactersWithoutEncoding) {
  ListObjectsV1Result r;
  r.bucket = "b";
  r.contents = {Entry(std::string("a\x01\r\n<b>'\"", 9))};
  EXPECT_NE(ListObjectsV1Xml(r).find("<Key>a&#1;&#13;\n&lt;b&gt;&apos;&quot;</Key>"),
            std::string::npos);
}

TEST(ListObjectsV2Xml, FirstPage) {
  ListObjectsV2Result r;
  r.bucket = "bucket";
  r.max_keys = 1;
  r.is_truncated = true;
  r.next_continuation_token = "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=";
  r.contents = {Entry("happyface.jpg")};
  EXPECT_EQ(ListObjectsV2Xml(r),
            kDecl + "<ListBucketResult" + kNs +
                "><Name>bucket</Name><Prefix></Prefix>"
                "<NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM="
                "</NextContinuationToken><KeyCount>1</KeyCount><MaxKeys>1</MaxKeys>"
                "<IsTruncated>true</IsTruncated>" +
                ContentsXml("happyface.jpg", false) + "</ListBucketResult>");
}

TEST(ListObjectsV2Xml, EchoesAndEncodes) {
  ListObjectsV2Result r;
  r.bucket = "bucket";
  r.prefix = "a b";
  r.delimiter = "/";
  r.start_after = "k m";
  r.continuation_token = "t+k";
  r.encoding_url = true;
  r.fetch_owner = true;
  r.contents = {Entry("a b/x")};
  r.common_prefixes = {"a b/y/"};
  EXPECT_EQ(ListObjectsV2Xml(r),
            kDecl + "<ListBucketResult" + kNs +
                "><Name>bucket</Name><Prefix>a+b</Prefix><StartAfter>k+m</StartAfter>"
                "<ContinuationToken>t+k</ContinuationToken><KeyCount>2</KeyCount>"
                "<MaxKeys>1000</MaxKeys><Delimiter>/</Delimiter><EncodingType>url</EncodingType>"
                "<IsTruncated>false</IsTruncated>" +
                ContentsXml("a+b/x", true) +
                "<CommonPrefixes><Prefix>a+b/y/</Prefix></CommonPrefixes></ListBucketResult>");
}

TEST(ListVersionsXml, InterleavesVersionsAndDeleteMarkers) {
  ListVersionsResult r;
  r.bucket = "bucket";
  r.prefix = "my";
  r.max_keys = 5;
  VersionEntry v;
  v.key = "my-image.jpg";
  v.version_id = "3/L4kqtJl40Nr8X8gdRQBpUMLUo";
  v.is_latest = true;
  v.last_modified_ms = kT;
  v.etag = kEtag;
  v.size = 434234;
  v.owner = kOwner;
  VersionEntry d;
  d.delete_marker = true;
  d.key = "my-second-image.jpg";
  d.version_id = "03jpff543dhffds434rfdsFDN943fdsFkdmqnh892";
  d.is_latest = true;
  d.last_modified_ms = kT;
  d.owner = kOwner;
  VersionEntry old = v;
  old.key = "my-second-image.jpg";
  old.version_id = "null";
  old.is_latest = false;
  r.entries = {v, d, old};
  const std::string version_fields =
      "<IsLatest>true</IsLatest><LastModified>2009-10-12T17:50:30.000Z</LastModified>";
  EXPECT_EQ(ListVersionsXml(r),
            kDecl + "<ListVersionsResult" + kNs +
                "><Name>bucket</Name><Prefix>my</Prefix><KeyMarker></KeyMarker>"
                "<VersionIdMarker></VersionIdMarker><MaxKeys>5</MaxKeys>"
                "<IsTruncated>false</IsTruncated><Version><Key>my-image.jpg</Key>"
                "<VersionId>3/L4kqtJl40Nr8X8gdRQBpUMLUo</VersionId>" +
                version_fields + "<ETag>" + kEtagXml +
                "</ETag><Size>434234</Size><StorageClass>STANDARD</StorageClass><Owner>" +
                kOwnerXml +
                "</Owner></Version><DeleteMarker><Key>my-second-image.jpg</Key>"
                "<VersionId>03jpff543dhffds434rfdsFDN943fdsFkdmqnh892</VersionId>" +
                version_fields + "<Owner>" + kOwnerXml +
                "</Owner></DeleteMarker><Version><Key>my-second-image.jpg</Key>"
                "<VersionId>null</VersionId><IsLatest>false</IsLatest>"
                "<LastModified>2009-10-12T17:50:30.000Z</LastModified><ETag>" +
                kEtagXml +
                "</ETag><Size>434234</Size><StorageClass>STANDARD</StorageClass><Owner>" +
                kOwnerXml + "</Owner></Version></ListVersionsResult>");
}

TEST(ListVersionsXml, TruncatedAndEncoded) {
  ListVersionsResult r;
  r.bucket = "b";
  r.key_marker = "k 1";
  r.version_id_marker = "v1";
  r.is_truncated = true;
  r.next_key_marker = "k 2";
  r.next_version_id_marker = "v2";
  r.delimiter = "/";
  r.encoding_url = true;
  r.common_prefixes = {"p q/"};
  EXPECT_EQ(ListVersionsXml(r),
            kDecl + "<ListVersionsResult" + kNs +
                "><Name>b</Name><Prefix></Prefix><KeyMarker>k+1</KeyMarker>"
                "<VersionIdMarker>v1</VersionIdMarker><NextKeyMarker>k+2</NextKeyMarker>"
                "<NextVersionIdMarker>v2</NextVersionIdMarker><MaxKeys>1000</MaxKeys>"
                "<Delimiter>/</Delimiter><EncodingType>url</EncodingType>"
                "<IsTruncated>true</IsTruncated><CommonPrefixes><Prefix>p+q/</Prefix>"
                "</CommonPrefixes></ListVersionsResult>");
}

TEST(MultipartXml, InitiateAndComplete) {
  EXPECT_EQ(InitiateMultipartUploadXml("example-bucket", "example-object", "VXBsb2FkIElE"),
            kDecl + "<InitiateMultipartUploadResult" + kNs +
                "><Bucket>example-bucket</Bucket><Key>example-object</Key>"
                "<UploadId>VXBsb2FkIElE</UploadId></InitiateMultipartUploadResult>");
  CompleteMultipartUploadResult c{"http://Example-Bucket.s3.amazonaws.com/Example-Object",
                                  "Example-Bucket", "Example-Object",
                                  "\"3858f62230ac3c915f300c664312c11f-9\""};
  EXPECT_EQ(CompleteMultipartUploadXml(c),
            kDecl + "<CompleteMultipartUploadResult" + kNs +
                "><Location>http://Example-Bucket.s3.amazonaws.com/Example-Object</Location>"
                "<Bucket>Example-Bucket</Bucket><Key>Example-Object</Key>"
                "<ETag>&quot;3858f62230ac3c915f300c664312c11f-9&quot;</ETag>"
                "</CompleteMultipartUploadResult>");
}

// A POST upload's 201 answer: PostResponse without the S3 namespace.
TEST(PostXml, PostResponse) {
  CompleteMultipartUploadResult r{"http://127.0.0.1:9000/b/a%20b", "b", "a b&c", "\"e\""};
  EXPECT_EQ(PostResponseXml(r), kDecl + "<PostResponse><Location>http://127.0.0.1:9000/b/a%20b"
                                        "</Location><Bucket>b</Bucket><Key>a b&amp;c</Key>"
                                        "<ETag>&quot;e&quot;</ETag></PostResponse>");
}

TEST(MultipartXml, ListParts) {
  ListPartsResult r;
  r.bucket = "example-bucket";
  r.key = "example-object";
  r.upload_id = "XXBsb2FkIElE";
  r.initiator = kOwner;
  r.owner = kOwner;
  r.part_number_marker = 1;
  r.next_part_number_marker = 3;
  r.max_parts = 2;
  r.is_truncated = true;
  r.parts = {{2, kT, kEtag, 10485760, {}}};
  EXPECT_EQ(ListPartsXml(r),
            kDecl + "<ListPartsResult" + kNs +
                "><Bucket>example-bucket</Bucket><Key>example-object</Key>"
                "<UploadId>XXBsb2FkIElE</UploadId><Initiator>" + kOwnerXml +
                "</Initiator><Owner>" + kOwnerXml +
                "</Owner><StorageClass>STANDARD</StorageClass>"
                "<PartNumberMarker>1</PartNumberMarker>"
                "<NextPartNumberMarker>3</NextPartNumberMarker><MaxParts>2</MaxParts>"
                "<IsTruncated>true</IsTruncated><Part><PartNumber>2</PartNumber>"
                "<LastModified>2009-10-12T17:50:30.000Z</LastModified><ETag>" +
                kEtagXml + "</ETag><Size>10485760</Size></Part></ListPartsResult>");
}

TEST(ObjectAttributesXml, SectionsInOrderPartsNamedByTheAlgorithm) {
  ObjectAttributesResult r;
  r.etag = "abc-2";
  r.checksum_algorithm = "CRC32";
  r.checksum_value = "wpn7tg==";
  r.checksum_type = "COMPOSITE";
  r.object_parts = true;
  r.parts_count = 2;
  r.part_list = true;
  r.next_part_number_marker = 1;
  r.max_parts = 1;
  r.is_truncated = true;
  r.parts = {{1, 5, "NhCmhg=="}};
  r.storage_class = "STANDARD";
  r.object_size = 10;
  EXPECT_EQ(ObjectAttributesXml(r),
            kDecl + "<GetObjectAttributesResponse" + kNs +
                "><ETag>abc-2</ETag><Checksum><ChecksumCRC32>wpn7tg==</ChecksumCRC32>"
                "<ChecksumType>COMPOSITE</ChecksumType></Checksum><ObjectParts>"
                "<PartNumberMarker>0</PartNumberMarker><NextPartNumberMarker>1"
                "</NextPartNumberMarker><MaxParts>1</MaxParts><IsTruncated>true</IsTruncated>"
                "<Part><PartNumber>1</PartNumber><Size>5</Size><ChecksumCRC32>NhCmhg=="
                "</ChecksumCRC32></Part><PartsCount>2</PartsCount></ObjectParts>"
                "<StorageClass>STANDARD</StorageClass><ObjectSize>10</ObjectSize>"
                "</GetObjectAttributesResponse>");
  // Only what was asked for; no Checksum section without its value.
  ObjectAttributesResult size_only;
  size_only.checksum_algorithm = "CRC32";
  size_only.object_size = 0;
  EXPECT_EQ(ObjectAttributesXml(size_only),
            kDecl + "<GetObjectAttributesResponse" + kNs +
                "><ObjectSize>0</ObjectSize></GetObjectAttributesResponse>");
}

TEST(MultipartXml, ListMultipartUploads) {
  ListMultipartUploadsResult r;
  r.bucket = "bucket";
  r.max_uploads = 3;
  r.delimiter = "/";
  r.prefix = "photos/2006/";
  r.encoding_url = true;
  r.uploads = {{"photos/2006/a b", "XMgbGlr", kOwner, kOwner, "STANDARD", kT, "", ""}};
  r.common_prefixes = {"photos/2006/February/"};
  EXPECT_EQ(ListMultipartUploadsXml(r),
            kDecl + "<ListMultipartUploadsResult" + kNs +
                "><Bucket>bucket</Bucket><KeyMarker></KeyMarker><UploadIdMarker></UploadIdMarker>"
                "<NextKeyMarker></NextKeyMarker><NextUploadIdMarker></NextUploadIdMarker>"
                "<Delimiter>/</Delimiter><Prefix>photos/2006/</Prefix><MaxUploads>3</MaxUploads>"
                "<EncodingType>url</EncodingType><IsTruncated>false</IsTruncated><Upload>"
                "<Key>photos/2006/a+b</Key><UploadId>XMgbGlr</UploadId><Initiator>" +
                kOwnerXml + "</Initiator><Owner>" + kOwnerXml +
                "</Owner><StorageClass>STANDARD</StorageClass>"
                "<Initiated>2009-10-12T17:50:30.000Z</Initiated></Upload><CommonPrefixes>"
                "<Prefix>photos/2006/February/</Prefix></CommonPrefixes>"
                "</ListMultipartUploadsResult>");
}

TEST(DeleteResultXml, DeletedAndErrors) {
  DeleteResult r;
  r.deleted = {{"sample1.txt", "", false, ""}, {"sample2.txt", "", true, "NeQt5xeFTfgPJD8B"}};
  r.errors = {{"sample3.txt", "v1", S3Error(S3ErrorCode::kAccessDenied)}};
  EXPECT_EQ(DeleteResultXml(r),
            kDecl + "<DeleteResult" + kNs +
                "><Deleted><Key>sample1.txt</Key></Deleted><Deleted><Key>sample2.txt</Key>"
                "<DeleteMarker>true</DeleteMarker>"
                "<DeleteMarkerVersionId>NeQt5xeFTfgPJD8B</DeleteMarkerVersionId></Deleted>"
                "<Error><Key>sample3.txt</Key><VersionId>v1</VersionId><Code>AccessDenied</Code>"
                "<Message>Access Denied</Message></Error></DeleteResult>");
}

TEST(CopyResultXml, ObjectAndPart) {
  EXPECT_EQ(CopyObjectResultXml(kT, kEtag),
            kDecl + "<CopyObjectResult" + kNs +
                "><LastModified>2009-10-12T17:50:30.000Z</LastModified><ETag>" + kEtagXml +
                "</ETag></CopyObjectResult>");
  EXPECT_EQ(CopyPartResultXml(kT, kEtag),
            kDecl + "<CopyPartResult" + kNs +
                "><LastModified>2009-10-12T17:50:30.000Z</LastModified><ETag>" + kEtagXml +
                "</ETag></CopyPartResult>");
}

// ---- Parsers ------------------------------------------------------------------

S3ErrorCode ErrorCodeOf(const S3Status& s) {
  return s.ok() ? S3ErrorCode::kInternalError : s.error().code;
}
template <typename T>
S3ErrorCode ErrorCodeOf(const S3Result<T>& r) {
  return r.ok() ? S3ErrorCode::kInternalError : r.error().code;
}

TEST(ParseCreateBucketConfiguration, AcceptsEmptyAndNamespaced) {
  EXPECT_EQ(ParseCreateBucketConfiguration("")->location_constraint, "");
  EXPECT_EQ(ParseCreateBucketConfiguration(" \r\n")->location_constraint, "");
  EXPECT_EQ(ParseCreateBucketConfiguration(
                "<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
                "<LocationConstraint>eu-west-1</LocationConstraint></CreateBucketConfiguration>")
                ->location_constraint,
            "eu-west-1");
  EXPECT_EQ(ParseCreateBucketConfiguration(
                "<?xml version=\"1.0\"?><CreateBucketConfiguration></CreateBucketConfiguration>")
                ->location_constraint,
            "");
}

TEST(ParseCreateBucketConfiguration, Malformed) {
  EXPECT_EQ(ErrorCodeOf(ParseCreateBucketConfiguration("<CreateBucketConfiguration>")),
            S3ErrorCode::kMalformedXML);
  EXPECT_EQ(ErrorCodeOf(ParseCreateBucketConfiguration("<Other/>")), S3ErrorCode::kMalformedXML);
  EXPECT_EQ(ErrorCodeOf(ParseCreateBucketConfiguration("not xml")), S3ErrorCode::kMalformedXML);
}

TEST(ParseCompleteMultipartUpload, Parts) {
  auto parts = ParseCompleteMultipartUpload(
      "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
      "<Part><PartNumber>1</PartNumber><ETag>\"a54357aff0632cce46d942af68356b38\"</ETag>"
      "<ChecksumCRC32>AAAAAA==</ChecksumCRC32></Part>"
      "<Part><ETag>&quot;0c78aef83f66abc1fa1e8477f296d394&quot;</ETag>"
      "<PartNumber> 2 </PartNumber></Part>"
      "<Part><PartNumber>5</PartNumber><ETag>acbd18db4cc2f85cedef654fccc4a4d8</ETag>"
      "<ChecksumCRC32C>c</ChecksumCRC32C><ChecksumSHA1>s1</ChecksumSHA1>"
      "<ChecksumSHA256>s256</ChecksumSHA256></Part></CompleteMultipartUpload>");
  ASSERT_TRUE(parts.ok());
  ASSERT_EQ(parts->size(), 3u);
  EXPECT_EQ((*parts)[0].part_number, 1u);
  EXPECT_EQ((*parts)[0].etag, "\"a54357aff0632cce46d942af68356b38\"");
  EXPECT_EQ((*parts)[0].checksum_crc32, "AAAAAA==");
  EXPECT_EQ((*parts)[1].part_number, 2u);
  EXPECT_EQ((*parts)[1].etag, "\"0c78aef83f66abc1fa1e8477f296d394\"");
  EXPECT_EQ((*parts)[2].etag, "\"acbd18db4cc2f85cedef654fccc4a4d8\"");
  EXPECT_EQ((*parts)[2].checksum_crc32c, "c");
  EXPECT_EQ((*parts)[2].checksum_sha1, "s1");
  EXPECT_EQ((*parts)[2].checksum_sha256, "s256");
}

TEST(ParseCompleteMultipartUpload, Errors) {
  auto code = [](std::string_view parts) {
    return ErrorCodeOf(ParseCompleteMultipartUpload("<CompleteMultipartUpload>" +
                                                    std::string(parts) +
                                                    "</CompleteMultipartUpload>"));
  };
  EXPECT_EQ(code(""), S3ErrorCode::kInvalidRequest);  // no part: "You must specify at least one part"
  EXPECT_EQ(ErrorCodeOf(ParseCompleteMultipartUpload("not xml")), S3ErrorCode::kMalformedXML);
  EXPECT_EQ(code("<Part><ETag>\"e\"</ETag></Part>"), S3ErrorCode::kMalformedXML);
  EXPECT_EQ(code("<Part><PartNumber>1</PartNumber></Part>"), S3ErrorCode::kMalformedXML);
  EXPECT_EQ(code("<Part><PartNumber>one</PartNumber><ETag>e</ETag></Part>"),
            S3ErrorCode::kMalformedXML);
  EXPECT_EQ(code("<Part><PartNumber>-1</PartNumber><ETag>e</ETag></Part>"),
            S3ErrorCode::kMalformedXML);
  EXPECT_EQ(code("<Part><PartNumber>0</PartNumber><ETag>e</ETag></Part>"),
            S3ErrorCode::kInvalidArgument);
  EXPECT_EQ(code("<Part><PartNumber>10001</PartNumber><ETag>e</ETag></Part>"),
            S3ErrorCode::kInvalidArgument);
  EXPECT_EQ(code("<Part><PartNumber>99999999999999999999</PartNumber><ETag>e</ETag></Part>"),
            S3ErrorCode::kInvalidArgument);
  EXPECT_EQ(code("<Part><PartNumber>2</PartNumber><ETag>e</ETag></Part>"
                 "<Part><PartNumber>1</PartNumber><ETag>e</ETag></Part>"),
            S3ErrorCode::kInvalidPartOrder);
  EXPECT_EQ(code("<Part><PartNumber>2</PartNumber><ETag>e</ETag></Part>"
                 "<Part><PartNumber>2</PartNumber><ETag>e</ETag></Part>"),
            S3ErrorCode::kInvalidPartOrder);
  EXPECT_EQ(ErrorCodeOf(ParseCompleteMultipartUpload("<Complete><Part/></Complete>")),
            S3ErrorCode::kMalformedXML);
  EXPECT_EQ(ErrorCodeOf(ParseCompleteMultipartUpload("<CompleteMultipartUpload><Part>")),
            S3ErrorCode::kMalformedXML);
}

TEST(ParseCompleteMultipartUpload, TenThousandPartsFitTheBound) {
  std::string body = "<CompleteMultipartUpload>";
  for (int i = 1; i <= 10000; ++i) {
    body += "<Part><PartNumber>" + std::to_string(i) +
            "</PartNumber><ETag>\"0c78aef83f66abc1fa1e8477f296d394\"</ETag>"
            "<ChecksumSHA256>47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=</ChecksumSHA256>"
            "</Part>";
  }
  body += "</CompleteMultipartUpload>";
  ASSERT_LE(body.size(), limits::kS3XmlParseBytesMax);
  auto parts = ParseCompleteMultipartUpload(body);
  ASSERT_TRUE(parts.ok());
  EXPECT_EQ(parts->size(), 10000u);
}

TEST(ParseDelete, ObjectsAndQuiet) {
  auto r = ParseDelete(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Quiet>true</Quiet>"
      "<Object><Key>sample1.txt</Key></Object>"
      "<Object><Key> spaced &amp; &#13;key </Key><VersionId>v2</VersionId></Object>"
      "<Object><Key>日本</Key></Object></Delete>");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->quiet);
  ASSERT_EQ(r->objects.size(), 3u);
  EXPECT_EQ(r->objects[0].key, "sample1.txt");
  EXPECT_EQ(r->objects[0].version_id, "");
  EXPECT_EQ(r->objects[1].key, " spaced & \rkey ");
  EXPECT_EQ(r->objects[1].version_id, "v2");
  EXPECT_EQ(r->objects[2].key, "日本");
  EXPECT_FALSE(ParseDelete("<Delete><Object><Key>a</Key></Object></Delete>")->quiet);
  EXPECT_FALSE(
      ParseDelete("<Delete><Quiet>false</Quiet><Object><Key>a</Key></Object></Delete>")->quiet);
}

TEST(ParseDelete, Errors) {
  EXPECT_EQ(ErrorCodeOf(ParseDelete("<Delete></Delete>")), S3ErrorCode::kMalformedXML);
  EXPECT_EQ(ErrorCodeOf(ParseDelete("<Delete><Object></Object></Delete>")),
            S3ErrorCode::kMalformedXML);
  EXPECT_EQ(ErrorCodeOf(ParseDelete("<Delete><Quiet>yes</Quiet><Object><Key>a</Key></Object>"
                                    "</Delete>")),
            S3ErrorCode::kMalformedXML);
  EXPECT_EQ(ErrorCodeOf(ParseDelete("<Objects><Object><Key>a</Key></Object></Objects>")),
            S3ErrorCode::kMalformedXML);
  EXPECT_EQ(ErrorCodeOf(ParseDelete("")), S3ErrorCode::kMalformedXML);
  std::string body = "<Delete>";
  for (int i = 0; i < 1000; ++i) body += "<Object><Key>k" + std::to_string(i) + "</Key></Object>";
  EXPECT_EQ(ParseDelete(body + "</Delete>")->objects.size(), 1000u);
  body += "<Object><Key>one-too-many</Key></Object></Delete>";
  EXPECT_EQ(ErrorCodeOf(ParseDelete(body)), S3ErrorCode::kMalformedXML);
}

TEST(ParseXml, BoundedSizeAndNoEntityExpansion) {
  std::string huge = "<Delete><Object><Key>";
  huge += std::string(limits::kS3XmlParseBytesMax, 'k');
  huge += "</Key></Object></Delete>";
  EXPECT_EQ(ErrorCodeOf(ParseDelete(huge)), S3ErrorCode::kMalformedXML);
  // A DTD-declared entity is not expanded: the reference is unknown, so
  // the body does not parse.
  EXPECT_EQ(ErrorCodeOf(ParseDelete("<!DOCTYPE d [<!ENTITY x \"boom\">]>"
                                    "<Delete><Object><Key>&x;</Key></Object></Delete>")),
            S3ErrorCode::kMalformedXML);
}

TEST(ParseVersioningConfiguration, StatusAndMfa) {
  auto r = ParseVersioningConfiguration(
      "<VersioningConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
      "<Status>Enabled</Status><MfaDelete>Disabled</MfaDelete></VersioningConfiguration>");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, VersioningState::kEnabled);
  EXPECT_EQ(r->mfa_delete, false);
  r = ParseVersioningConfiguration(
      "<VersioningConfiguration><Status>Suspended</Status></VersioningConfiguration>");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, VersioningState::kSuspended);
  EXPECT_FALSE(r->mfa_delete.has_value());
  r = ParseVersioningConfiguration("<VersioningConfiguration/>");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->status.has_value());
}

TEST(ParseVersioningConfiguration, Errors) {
  for (std::string_view body :
       {"<VersioningConfiguration><Status>enabled</Status></VersioningConfiguration>",
        "<VersioningConfiguration><Status>Off</Status></VersioningConfiguration>",
        "<VersioningConfiguration><MfaDelete>On</MfaDelete></VersioningConfiguration>",
        "<Versioning><Status>Enabled</Status></Versioning>", "", "<VersioningConfiguration>"}) {
    EXPECT_EQ(ErrorCodeOf(ParseVersioningConfiguration(body)), S3ErrorCode::kMalformedXML)
        << body;
  }
}

// Goal: an AccessControlPolicy's grants come out with grantee type (the
// xsi:type attribute, under any namespace prefix), id, uri, email and
// permission; bodies that are not one are MalformedACLError.
TEST(ParseAccessControlPolicy, GrantsAndErrors) {
  const auto grants = ParseAccessControlPolicy(
      "<AccessControlPolicy xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Owner><ID>me</ID>"
      "</Owner><AccessControlList><Grant><Grantee "
      "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xsi:type=\"CanonicalUser\"><ID> me "
      "</ID></Grantee><Permission>FULL_CONTROL</Permission></Grant><Grant><Grantee "
      "xmlns:x=\"http://www.w3.org/2001/XMLSchema-instance\" x:type=\"Group\"><URI>"
      "http://acs.amazonaws.com/groups/global/AllUsers</URI></Grantee><Permission>READ"
      "</Permission></Grant></AccessControlList></AccessControlPolicy>");
  ASSERT_TRUE(grants.ok());
  ASSERT_EQ(grants->size(), 2u);
  EXPECT_EQ((*grants)[0].grantee_type, "CanonicalUser");
  EXPECT_EQ((*grants)[0].id, "me");
  EXPECT_EQ((*grants)[0].permission, "FULL_CONTROL");
  EXPECT_EQ((*grants)[1].grantee_type, "Group");
  EXPECT_EQ((*grants)[1].uri, "http://acs.amazonaws.com/groups/global/AllUsers");
  EXPECT_EQ((*grants)[1].permission, "READ");
  EXPECT_TRUE(ParseAccessControlPolicy(
                  "<AccessControlPolicy><AccessControlList/></AccessControlPolicy>")
                  ->empty());
  for (const char* bad :
       {"", "not xml", "<AccessControlPolicy/>", "<Other><AccessControlList/></Other>",
        "<AccessControlPolicy><AccessControlList><Grant><Permission>READ</Permission></Grant>"
        "</AccessControlList></AccessControlPolicy>",
        "<AccessControlPolicy><AccessControlList><Grant><Grantee><ID>me</ID></Grantee>"
        "<Permission>READ</Permission></Grant></AccessControlList></AccessControlPolicy>"}) {
    EXPECT_EQ(ErrorCodeOf(ParseAccessControlPolicy(bad)), S3ErrorCode::kMalformedACLError) << bad;
  }
}

TEST(ParseTagging, TagSet) {
  auto tags = ParseTagging(
      "<Tagging xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><TagSet>"
      "<Tag><Key>Project</Key><Value>Project One</Value></Tag>"
      "<Tag><Key>empty</Key><Value></Value></Tag></TagSet></Tagging>");
  ASSERT_TRUE(tags.ok());
  const std::vector<Tag> want = {{"Project", "Project One"}, {"empty", ""}};
  EXPECT_EQ(*tags, want);
  EXPECT_TRUE(ParseTagging("<Tagging><TagSet/></Tagging>")->empty());
}

TEST(ParseTagging, Errors) {
  for (std::string_view body : {"<Tagging></Tagging>",
                                "<Tagging><TagSet><Tag><Key>k</Key></Tag></TagSet></Tagging>",
                                "<Tagging><TagSet><Tag><Value>v</Value></Tag></TagSet></Tagging>",
                                "<TagSet><Tag><Key>k</Key><Value>v</Value></Tag></TagSet>", ""}) {
    EXPECT_EQ(ErrorCodeOf(ParseTagging(body)), S3ErrorCode::kMalformedXML) << body;
  }
}

TEST(ValidateTagSet, AwsRules) {
  std::vector<Tag> tags;
  for (int i = 0; i < 10; ++i) tags.push_back({"k" + std::to_string(i), "v"});
  EXPECT_TRUE(ValidateTagSet(tags, limits::kS3ObjectTagsMax).ok());
  tags.push_back({"k10", "v"});
  EXPECT_EQ(ErrorCodeOf(ValidateTagSet(tags, limits::kS3ObjectTagsMax)), S3ErrorCode::kInvalidTag);
  EXPECT_TRUE(ValidateTagSet(tags, limits::kS3BucketTagsMax).ok());

  auto one = [](std::string key, std::string value) {
    const std::vector<Tag> t = {{std::move(key), std::move(value)}};
    return ValidateTagSet(t, 10);
  };
  EXPECT_TRUE(one(std::string(128, 'k'), std::string(256, 'v')).ok());
  std::string wide_key;
  for (int i = 0; i < 128; ++i) wide_key += "é";  // 128 characters, 256 bytes
  EXPECT_TRUE(one(wide_key, "").ok());
  EXPECT_FALSE(one(std::string(129, 'k'), "v").ok());
  EXPECT_FALSE(one("k", std::string(257, 'v')).ok());
  EXPECT_FALSE(one("", "v").ok());
  EXPECT_FALSE(one("aws:createdBy", "v").ok());
  const std::vector<Tag> dup = {{"k", "1"}, {"k", "2"}};
  const S3Status dup_status = ValidateTagSet(dup, 10);
  ASSERT_FALSE(dup_status.ok());
  EXPECT_EQ(dup_status.error().Message(), "Cannot provide multiple Tags with the same key");
  EXPECT_EQ(dup_status.error().details, (std::vector<S3ErrorDetail>{{"TagKey", "k"}}));
}

// Goal: ownership controls parse only S3's three values in exactly one
// rule, and render back.
TEST(OwnershipControls, ParseAndRender) {
  const auto parsed = ParseOwnershipControls(
      "<OwnershipControls xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Rule>"
      "<ObjectOwnership>BucketOwnerPreferred</ObjectOwnership></Rule></OwnershipControls>");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(*parsed, "BucketOwnerPreferred");
  for (const char* bad :
       {"<OwnershipControls/>", "<OwnershipControls><Rule><ObjectOwnership>Mine</ObjectOwnership>"
                                "</Rule></OwnershipControls>",
        "<OwnershipControls><Rule><ObjectOwnership>ObjectWriter</ObjectOwnership></Rule><Rule>"
        "<ObjectOwnership>ObjectWriter</ObjectOwnership></Rule></OwnershipControls>",
        "<Other/>", "not xml"}) {
    const auto r = ParseOwnershipControls(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, S3ErrorCode::kMalformedXML) << bad;
  }
  const std::string xml = OwnershipControlsXml("ObjectWriter");
  EXPECT_NE(xml.find("<OwnershipControls xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
                     "<Rule><ObjectOwnership>ObjectWriter</ObjectOwnership></Rule>"),
            std::string::npos)
      << xml;
}

}  // namespace
}  // namespace tessera::s3

namespace tessera::s3 {
namespace {

// Goal: a PublicAccessBlockConfiguration reads its four settings (absent:
// false), refuses anything but true/false, and is written back in S3's
// element order; PolicyStatus carries IsPublic.
TEST(PublicAccessBlockXml, ParseAndWrite) {
  const auto settings = ParsePublicAccessBlockConfiguration(
      "<PublicAccessBlockConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
      "<BlockPublicAcls>true</BlockPublicAcls><RestrictPublicBuckets> false "
      "</RestrictPublicBuckets></PublicAccessBlockConfiguration>");
  ASSERT_TRUE(settings.ok());
  EXPECT_TRUE(settings->block_public_acls);
  EXPECT_FALSE(settings->ignore_public_acls);
  EXPECT_FALSE(settings->restrict_public_buckets);
  for (std::string_view bad :
       {"", "<Other/>", "<PublicAccessBlockConfiguration><BlockPublicAcls>yes</BlockPublicAcls>"
                        "</PublicAccessBlockConfiguration>"}) {
    EXPECT_EQ(ErrorCodeOf(ParsePublicAccessBlockConfiguration(bad)), S3ErrorCode::kMalformedXML)
        << bad;
  }
  const std::string xml = PublicAccessBlockConfigurationXml(*settings);
  EXPECT_NE(xml.find("<BlockPublicAcls>true</BlockPublicAcls><IgnorePublicAcls>false"
                     "</IgnorePublicAcls><BlockPublicPolicy>false</BlockPublicPolicy>"
                     "<RestrictPublicBuckets>false</RestrictPublicBuckets>"),
            std::string::npos)
      << xml;
  EXPECT_NE(PolicyStatusXml(true).find("<PolicyStatus"), std::string::npos);
  EXPECT_NE(PolicyStatusXml(true).find("<IsPublic>true</IsPublic>"), std::string::npos);
}

}  // namespace
}  // namespace tessera::s3
