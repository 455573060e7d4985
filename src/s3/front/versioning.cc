// Bucket versioning: PutBucketVersioning (the registry's state), GET/HEAD
// of a version by id, and ListObjectVersions (a version walk over the
// bucket's partitions, newest version first per key).
#include "common/limits.h"
#include "s3/front/charge_rest.h"
#include "s3/front/s3_call.h"
#include "s3/front/s3_front.h"
#include "s3/front/small_body.h"
#include "s3/protocol/xml_documents.h"

namespace tessera::s3::front {
namespace {

constexpr uint32_t kMaxKeysDefault = 1000;

std::string ParamOr(const S3Call& call, std::string_view name, std::string fallback = {}) {
  const QueryParam* p = call.Param(name);
  return p ? p->value : fallback;
}

VersionEntry EntryOf(const S3Call& call, const pb::S3ListEntry& e) {
  VersionEntry v;
  v.delete_marker = e.delete_marker();
  v.key = e.key();
  v.version_id = e.version_id();
  v.is_latest = e.is_latest();
  v.last_modified_ms = e.last_modified_ms();
  v.etag = QuoteEtag(e.etag());
  v.size = e.size();
  v.owner = OwnerOfUser(call, e.owner());
  if (!e.storage_class().empty()) v.storage_class = e.storage_class();
  v.checksum_algorithm = e.checksum_algorithm();
  v.checksum_type = e.checksum_type();
  return v;
}

}  // namespace

void PutBucketVersioning(CallPtr call) {
  WithAuthorizedBucket(call, authz::Action::kPutBucketVersioning, [call] {
    ReadSmallBody(call, limits::kS3XmlBodyBytesMax, [call](S3Result<std::string> body) {
      if (!body.ok()) return call->Fail(body.error());
      auto request = ParseVersioningConfiguration(*body);
      if (!request.ok()) return call->Fail(request.error());
      if (!request->status) {
        return call->Fail(S3Error(S3ErrorCode::kIllegalVersioningConfigurationException));
      }
      const pb::BucketVersioning state = *request->status == VersioningState::kEnabled
                                             ? pb::VERSIONING_ENABLED
                                             : pb::VERSIONING_SUSPENDED;
      // Owner and id as this router knows them; the registry checks both
      // on the record (the cache may predate a delete and re-create).
      call->front.registry().SetVersioning(
          call->bucket, call->user, call->bucket_info.bucket_id(), state,
          [call](Result<pb::BucketDescriptor> updated) {
            if (!updated.ok()) {
              if (updated.status().code() == StatusCode::kNotFound) {
                return call->Fail(S3Error(S3ErrorCode::kNoSuchBucket));
              }
              if (updated.status().code() == StatusCode::kConflict) {
                return call->Fail(S3Error(S3ErrorCode::kAccessDenied));
              }
              return call->Fail(updated.status());
            }
            call->Respond(200, {}, "");
          });
    });
  });
}

void GetObjectVersion(CallPtr call) {
  const std::string version_id = ParamOr(*call, "versionId");
  if (version_id.empty()) {
    return call->Fail(VersionIdArgumentError(version_id));
  }
  WithAuthorizedBucket(call, authz::Action::kGetObjectVersion, [call, version_id] {
    WithVersion(call, call->bucket_info.bucket_id(), call->key, version_id,
                /*with_data=*/!call->is_head(), [call](pb::ObjectVersion version) {
                  if (version.delete_marker()) {
                    // S3: a delete marker cannot be read: 405 with its headers.
                    return call->Fail(
                        DeleteMarkerMethodError(call->is_head() ? "HEAD" : "GET"),
                        {{"x-amz-delete-marker", "true"},
                         {"x-amz-version-id", version.version_id()},
                         {"Last-Modified", FormatHttpDate(version.last_modified_ms())},
                         {"Allow", "DELETE"}});
                  }
                  ServeObject(call, version);
                });
  });
}

void WithVersion(CallPtr call, uint64_t bucket_id, const std::string& key,
                 const std::string& version_id, bool with_data,
                 std::function<void(pb::ObjectVersion)> found) {
  // Read by the stored key of the call's bucket (every caller's bucket_id).
  call->front.index().ReadObject(
      bucket_id, model::StoredKey(model::KeyLayoutOf(call->bucket_info), key), version_id,
      with_data,
      [call, key, version_id, found = std::move(found)](
          Result<std::optional<pb::ObjectVersion>> version) {
        if (!version.ok()) {
          if (version.status().code() == StatusCode::kInvalidArgument) {
            return call->Fail(VersionIdArgumentError(version_id));
          }
          return call->Fail(version.status());
        }
        const bool live = version->has_value() && !(*version)->delete_marker();
        if (!AuthorizedOnPendingObject(*call, live ? &**version : nullptr)) return;
        if (!version->has_value()) {
          return call->Fail(S3Error(S3ErrorCode::kNoSuchVersion)
                                .With("Key", key)
                                .With("VersionId", version_id));
        }
        found(std::move(**version));
      });
}

void ListObjectVersions(CallPtr call) {
  ListVersionsResult result;
  result.prefix = ParamOr(*call, "prefix");
  if (const QueryParam* d = call->Param("delimiter"); d && !d->value.empty()) {
    result.delimiter = d->value;
  }
  result.key_marker = ParamOr(*call, "key-marker");
  result.version_id_marker = ParamOr(*call, "version-id-marker");
  if (!result.version_id_marker.empty() && result.key_marker.empty()) {
    return call->Fail(InvalidArgumentError(
        "A version-id marker cannot be specified without a key marker.", "version-id-marker",
        result.version_id_marker));
  }
  auto max_keys = ParseListLimit(*call, "max-keys", kMaxKeysDefault);
  if (!max_keys.ok()) return call->Fail(max_keys.error());
  result.max_keys = *max_keys;
  auto encoding_url = ParseEncodingType(*call);
  if (!encoding_url.ok()) return call->Fail(encoding_url.error());
  result.encoding_url = *encoding_url;
  result.bucket = call->bucket;
  WithAuthorizedBucket(call, authz::Action::kListBucketVersions, [call, result = std::move(result)]() mutable {
    if (result.max_keys == 0) return call->RespondXml(200, ListVersionsXml(result));
    ListQuery query;
    query.bucket_id = call->bucket_info.bucket_id();
    query.layout = model::KeyLayoutOf(call->bucket_info);
    query.prefix = result.prefix;
    query.delimiter = result.delimiter.value_or("");
    query.start_after = result.key_marker;
    query.versions = true;
    query.version_id_marker = result.version_id_marker;
    query.max_items = result.max_keys + 1;
    call->front.index().List(query, [call, result = std::move(result)](
                                        Result<ListPage> page) mutable {
      if (!page.ok()) return call->Fail(page.status());
      result.is_truncated = page->items.size() > result.max_keys;
      if (result.is_truncated) page->items.resize(result.max_keys);
      ChargeListed(*call, *page);
      for (const pb::S3ListItem& item : page->items) {
        if (item.has_entry()) {
          result.entries.push_back(EntryOf(*call, item.entry()));
        } else {
          result.common_prefixes.push_back(item.common_prefix());
        }
      }
      if (result.is_truncated && !page->items.empty()) {
        const pb::S3ListItem& last = page->items.back();
        if (last.has_entry()) {
          result.next_key_marker = last.entry().key();
          result.next_version_id_marker = last.entry().version_id();
        } else {
          result.next_key_marker = last.common_prefix();
        }
      }
      call->RespondXml(200, ListVersionsXml(result));
    });
  });
}

}  // namespace tessera::s3::front
