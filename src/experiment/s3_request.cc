#include "experiment/s3_request.h"

#include "s3/auth/auth_context.h"
#include "s3/auth/sigv4.h"

namespace tessera::experiment {
namespace {

// UriEncode with '/' kept (an object path).
std::string EncodePath(std::string_view key) {
  std::string out;
  size_t start = 0;
  while (true) {
    const size_t slash = key.find('/', start);
    out += s3::auth::UriEncode(key.substr(start, slash - start));
    if (slash == std::string_view::npos) break;
    out += '/';
    start = slash + 1;
  }
  return out;
}

// The text of every <tag>...</tag> element, XML entities decoded.
std::vector<std::string> Elements(std::string_view xml, std::string_view tag) {
  const std::string open = "<" + std::string(tag) + ">";
  const std::string close = "</" + std::string(tag) + ">";
  std::vector<std::string> out;
  size_t at = 0;
  while ((at = xml.find(open, at)) != std::string_view::npos) {
    const size_t begin = at + open.size();
    const size_t end = xml.find(close, begin);
    if (end == std::string_view::npos) break;
    std::string text;
    for (size_t i = begin; i < end; ++i) {
      if (xml[i] != '&') {
        text += xml[i];
        continue;
      }
      static constexpr std::pair<std::string_view, char> kEntities[] = {
          {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
      bool decoded = false;
      for (const auto& [entity, c] : kEntities) {
        if (xml.substr(i, entity.size()) == entity) {
          text += c;
          i += entity.size() - 1;
          decoded = true;
          break;
        }
      }
      if (!decoded) text += '&';
    }
    out.push_back(std::move(text));
    at = end + close.size();
  }
  return out;
}

}  // namespace

std::string VersionTarget(std::string_view bucket, std::string_view key,
                          std::string_view version_id) {
  return ObjectTarget(bucket, key) + "?versionId=" + s3::auth::UriEncode(version_id);
}

std::string VersioningTarget(std::string_view bucket) { return BucketTarget(bucket) + "?versioning"; }

std::string VersioningEnabledBody() {
  return "<VersioningConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
         "<Status>Enabled</Status></VersioningConfiguration>";
}

std::string ObjectTarget(std::string_view bucket, std::string_view key) {
  return "/" + std::string(bucket) + "/" + EncodePath(key);
}

std::string BucketTarget(std::string_view bucket) { return "/" + std::string(bucket); }

std::string ListTarget(std::string_view bucket, std::string_view prefix,
                       std::string_view continuation_token) {
  std::string target = BucketTarget(bucket) + "?list-type=2&max-keys=1000&prefix=" +
                       s3::auth::UriEncode(prefix);
  if (!continuation_token.empty()) {
    target += "&continuation-token=" + s3::auth::UriEncode(continuation_token);
  }
  return target;
}

std::string CreateUploadTarget(std::string_view bucket, std::string_view key) {
  return ObjectTarget(bucket, key) + "?uploads";
}

std::string PartTarget(std::string_view bucket, std::string_view key, std::string_view upload_id,
                       uint32_t part_number) {
  return ObjectTarget(bucket, key) + "?partNumber=" + std::to_string(part_number) +
         "&uploadId=" + s3::auth::UriEncode(upload_id);
}

std::string CompleteTarget(std::string_view bucket, std::string_view key,
                           std::string_view upload_id) {
  return ObjectTarget(bucket, key) + "?uploadId=" + s3::auth::UriEncode(upload_id);
}

std::string CompleteBody(const std::vector<std::string>& etags) {
  std::string body = "<CompleteMultipartUpload>";
  for (size_t i = 0; i < etags.size(); ++i) {
    std::string quoted = etags[i];
    size_t at = 0;
    while ((at = quoted.find('"', at)) != std::string::npos) {
      quoted.replace(at, 1, "&quot;");
      at += 6;
    }
    body += "<Part><PartNumber>" + std::to_string(i + 1) + "</PartNumber><ETag>" + quoted +
            "</ETag></Part>";
  }
  return body + "</CompleteMultipartUpload>";
}

std::optional<std::string> XmlElement(std::string_view xml, std::string_view tag) {
  std::vector<std::string> found = Elements(xml, tag);
  if (found.empty()) return std::nullopt;
  return std::move(found[0]);
}

S3Headers SignS3Request(const S3Endpoint& endpoint, std::string_view method,
                        std::string_view target, S3Headers extra, int64_t now_unix_s) {
  s3::auth::RequestHead head;
  head.method = std::string(method);
  head.target = std::string(target);
  head.headers = std::move(extra);
  head.headers.emplace_back("Host", endpoint.host + ":" + std::to_string(endpoint.port));
  s3::auth::SignV4(&head, {endpoint.access_key, endpoint.secret_key, endpoint.region}, now_unix_s);
  return head.headers;
}

Result<ListPage> ParseListObjectsV2(std::string_view xml) {
  if (xml.find("<ListBucketResult") == std::string_view::npos) {
    return Status::Corruption("not a ListBucketResult: " + std::string(xml.substr(0, 200)));
  }
  ListPage page;
  // Keys appear only inside <Contents> (CommonPrefixes has <Prefix>).
  page.keys = Elements(xml, "Key");
  const std::vector<std::string> truncated = Elements(xml, "IsTruncated");
  if (!truncated.empty() && truncated[0] == "true") {
    const std::vector<std::string> token = Elements(xml, "NextContinuationToken");
    if (token.empty() || token[0].empty()) {
      return Status::Corruption("IsTruncated without a NextContinuationToken");
    }
    page.next_token = token[0];
  }
  return page;
}

}  // namespace tessera::experiment
