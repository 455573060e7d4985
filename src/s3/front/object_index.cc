#include "s3/front/object_index.h"

#include <algorithm>
#include <memory>
#include <mutex>

#include "common/check.h"
#include "common/limits.h"
#include "s3/model/s3_keys.h"
#include "s3/model/version_id.h"
#include "tessera/kv.pb.h"

namespace tessera::s3::front {
namespace {

std::string RoutingKeyOf(const pb::S3Op& op) {
  switch (op.op_case()) {
    case pb::S3Op::kPutObject:
      return model::HeadKey(op.put_object().bucket_id(), op.put_object().key());
    case pb::S3Op::kDeleteObject:
      return model::HeadKey(op.delete_object().bucket_id(), op.delete_object().key());
    case pb::S3Op::kCreateUpload:
      return model::HeadKey(op.create_upload().bucket_id(), op.create_upload().key());
    case pb::S3Op::kUploadPart:
      return model::HeadKey(op.upload_part().bucket_id(), op.upload_part().key());
    case pb::S3Op::kCompleteUpload:
      return model::HeadKey(op.complete_upload().bucket_id(), op.complete_upload().key());
    case pb::S3Op::kAbortUpload:
      return model::HeadKey(op.abort_upload().bucket_id(), op.abort_upload().key());
    case pb::S3Op::kSetTags:
      return model::HeadKey(op.set_tags().bucket_id(), op.set_tags().key());
    case pb::S3Op::kSetObjectAcl:
      return model::HeadKey(op.set_object_acl().bucket_id(), op.set_object_acl().key());
    case pb::S3Op::kSetBucketConfig:
      return model::BucketConfigKey(op.set_bucket_config().bucket_id());
    case pb::S3Op::kGcDone:  // partition-internal: nodes apply it, never the router
    case pb::S3Op::OP_NOT_SET: break;
  }
  return {};
}

// Where a partition's range ends, as a walk sees it: empty = end of table.
bool RangeEndsBefore(const pb::PartitionDescriptor& p, const std::string& bound) {
  return !p.end_key().empty() && (bound.empty() || p.end_key() < bound);
}

}  // namespace

void ObjectIndex::ReadHead(uint64_t bucket_id, const std::string& key,
                           Callback<std::optional<pb::ObjectHead>> done) {
  kv_.Get(kS3Table, model::HeadKey(bucket_id, key), pb::CONSISTENCY_STRONG,
          [done = std::move(done)](Result<pb::KvGetResponse> r) {
            if (!r.ok()) return done(r.status());
            if (!r->found()) return done(std::optional<pb::ObjectHead>());
            pb::ObjectHead head;
            if (!head.ParseFromString(r->value())) {
              return done(Status::Corruption("unparseable object head"));
            }
            done(std::optional<pb::ObjectHead>(std::move(head)));
          });
}

void ObjectIndex::ReadBucketConfig(uint64_t bucket_id, Callback<pb::BucketConfig> done) {
  kv_.Get(kS3Table, model::BucketConfigKey(bucket_id), pb::CONSISTENCY_STRONG,
          [done = std::move(done)](Result<pb::KvGetResponse> r) {
            if (!r.ok()) return done(r.status());
            pb::BucketConfig config;
            if (r->found() && !config.ParseFromString(r->value())) {
              return done(Status::Corruption("unparseable bucket config record"));
            }
            done(std::move(config));
          });
}

void ObjectIndex::Apply(pb::S3Op op, Callback<pb::S3OpResult> done) {
  const std::string routing_key = RoutingKeyOf(op);
  if (routing_key.empty()) return done(Status::InvalidArgument("empty S3 op"));
  auto build = [op = std::move(op)](const pb::PartitionDescriptor& p) {
    pb::KvWriteRequest request;
    request.set_group_id(p.group_id());
    *request.mutable_s3() = op;
    return request.SerializeAsString();
  };
  kv_.Call(kS3Table, routing_key, "kv.write", /*idempotent=*/false, "s3_write", std::move(build),
           [done = std::move(done)](Result<std::string> reply, const pb::PartitionDescriptor&) {
             if (!reply.ok()) return done(reply.status());
             pb::KvWriteResponse response;
             if (!response.ParseFromString(*reply)) {
               return done(Status::Corruption("unparseable kv.write response"));
             }
             if (!response.result().applied()) {
               return done(Status::Corruption("S3 op not applied (unparseable command)"));
             }
             done(std::move(*response.mutable_result()->mutable_s3()));
           });
}

void ObjectIndex::ReadObject(uint64_t bucket_id, const std::string& key,
                             const std::string& version_id, bool with_data,
                             Callback<std::optional<pb::ObjectVersion>> done) {
  if (!version_id.empty() && version_id != "null" && !model::ParseVersionSeq(version_id)) {
    return done(Status::InvalidArgument("Invalid version id specified"));
  }
  pb::S3GetRequest request;
  request.set_bucket_id(bucket_id);
  request.set_key(key);
  request.set_version_id(version_id);
  request.set_consistency(pb::CONSISTENCY_STRONG);
  request.set_with_data(with_data);
  auto build = [request = std::move(request)](const pb::PartitionDescriptor& p) mutable {
    request.set_group_id(p.group_id());
    return request.SerializeAsString();
  };
  kv_.Call(kS3Table, model::HeadKey(bucket_id, key), "s3.get", /*idempotent=*/true, "s3_read",
           std::move(build),
           [done = std::move(done)](Result<std::string> reply, const pb::PartitionDescriptor&) {
             if (!reply.ok()) return done(reply.status());
             pb::S3GetResponse response;
             if (!response.ParseFromString(*reply)) {
               return done(Status::Corruption("unparseable s3.get response"));
             }
             if (!response.found()) return done(std::optional<pb::ObjectVersion>());
             done(std::optional<pb::ObjectVersion>(std::move(*response.mutable_version())));
           });
}

void ObjectIndex::ReadUpload(uint64_t bucket_id, const std::string& key,
                             const std::string& upload_id,
                             Callback<std::optional<pb::UploadRecord>> done) {
  kv_.Get(kS3Table, model::UploadKey(bucket_id, key, upload_id), pb::CONSISTENCY_STRONG,
          [done = std::move(done)](Result<pb::KvGetResponse> r) {
            if (!r.ok()) return done(r.status());
            if (!r->found()) return done(std::optional<pb::UploadRecord>());
            pb::UploadRecord upload;
            if (!upload.ParseFromString(r->value())) {
              return done(Status::Corruption("unparseable upload record"));
            }
            done(std::optional<pb::UploadRecord>(std::move(upload)));
          });
}

void ObjectIndex::ListUploadParts(uint64_t bucket_id, const std::string& key,
                                  const std::string& upload_id, uint32_t after, uint32_t limit,
                                  Callback<std::vector<pb::PartRecord>> done) {
  const std::string start = model::PartKey(bucket_id, key, upload_id, after) + '\0';
  const std::string end = model::PartsEnd(bucket_id, key, upload_id);
  kv_.Scan(kS3Table, start, end, limit, pb::CONSISTENCY_STRONG,
           [done = std::move(done)](Result<router::ScanPage> page) {
             if (!page.ok()) return done(page.status());
             std::vector<pb::PartRecord> parts;
             for (const pb::KvItem& item : page->items) {
               pb::PartRecord part;
               if (!part.ParseFromString(item.value())) {
                 return done(Status::Corruption("unparseable part record"));
               }
               parts.push_back(std::move(part));
             }
             done(std::move(parts));
           });
}

// Walks the partitions overlapping [start, end of prefix) in key order.
class ObjectIndex::ListWalk : public std::enable_shared_from_this<ListWalk> {
 public:
  ListWalk(ObjectIndex& index, ListQuery query, Callback<ListPage> done)
      : index_(index), query_(std::move(query)), done_(std::move(done)) {
    const std::string from = model::ObjectPrefix(query_.bucket_id, query_.prefix);
    cursor_ = from;
    if (!query_.start_after.empty()) {
      cursor_ = std::max(cursor_, model::ObjectEnd(query_.bucket_id, query_.start_after));
    }
    end_ = model::PrefixSuccessor(from);
  }

  void Step() {
    if (!end_.empty() && cursor_ >= end_) return Finish(false);
    if (++steps_ > limits::kS3ListPartitionsPerRequestMax) {
      return done_(Status::Unavailable("listing crossed too many partitions"));
    }
    index_.list_partition_reads_.fetch_add(1);
    if (index_.list_reads_metric_) index_.list_reads_metric_->Increment();
    const uint32_t want = query_.max_items - static_cast<uint32_t>(page_.items.size());
    pb::S3ListRequest request;
    request.set_bucket_id(query_.bucket_id);
    request.set_prefix(query_.prefix);
    request.set_delimiter(query_.delimiter);
    request.set_start_after(start_after_.empty() ? query_.start_after : start_after_);
    request.set_versions(query_.versions);
    request.set_uploads(query_.uploads);
    // The version and upload id markers apply to the first partition only:
    // later ones start at a new key.
    if (start_after_.empty()) {
      request.set_version_id_marker(query_.version_id_marker);
      request.set_upload_id_marker(query_.upload_id_marker);
    }
    request.set_max_keys(want);
    request.set_consistency(pb::CONSISTENCY_STRONG);
    auto build = [request](const pb::PartitionDescriptor& p) mutable {
      request.set_group_id(p.group_id());
      request.set_end_key(p.end_key());
      return request.SerializeAsString();
    };
    index_.kv_.Call(kS3Table, cursor_, "s3.list", /*idempotent=*/true, "s3_list",
                    std::move(build),
                    [self = shared_from_this()](Result<std::string> reply,
                                                const pb::PartitionDescriptor& p) {
                      self->OnListed(std::move(reply), p);
                    });
  }

 private:
  void OnListed(Result<std::string> reply, const pb::PartitionDescriptor& p) {
    if (!reply.ok()) return done_(reply.status());
    pb::S3ListResponse response;
    if (!response.ParseFromString(*reply)) {
      return done_(Status::Corruption("unparseable s3.list response"));
    }
    for (pb::S3ListItem& item : *response.mutable_items()) {
      start_after_ = item.has_entry() ? item.entry().key() : item.common_prefix();
      page_.items.push_back(std::move(item));
    }
    if (page_.items.size() >= query_.max_items) return Finish(true);
    if (response.truncated()) return Finish(true);  // cannot happen: want was the rest
    if (!RangeEndsBefore(p, end_)) return Finish(false);
    cursor_ = p.end_key();
    Step();
  }

  void Finish(bool more) {
    page_.more = more;
    done_(std::move(page_));
  }

  ObjectIndex& index_;
  const ListQuery query_;
  const Callback<ListPage> done_;
  std::string cursor_;       // routing key of the next partition to read
  std::string end_;          // past the prefix; empty: no bound
  std::string start_after_;  // the last item returned so far
  uint32_t steps_ = 0;
  ListPage page_;
};

// Lists a hashed bucket: one ListWalk per hash range h over the stored
// keys `h prefix..` (at most kS3HashedListRangesInFlightMax at once), each
// page's keys stripped of h, then MergeRangePages (list_merge.h).
class ObjectIndex::HashedList : public std::enable_shared_from_this<HashedList> {
 public:
  HashedList(ObjectIndex& index, ListQuery query, Callback<ListPage> done)
      : index_(index), query_(std::move(query)), done_(std::move(done)) {
    TESSERA_CHECK(query_.layout.hashed());
    pages_.resize(query_.layout.hash_ranges);
    if (!query_.start_after.empty()) marker_range_ = model::HashRangeOf(query_.layout, query_.start_after);
  }

  void Start() {
    const uint32_t first = std::min(query_.layout.hash_ranges, limits::kS3HashedListRangesInFlightMax);
    for (uint32_t i = 0; i < first; ++i) Launch();
  }

 private:
  // The walk of range h: stored keys h|prefix.., after h|start_after; the
  // version and upload id markers name a version or upload of the marker
  // key, which lives in its own range only.
  ListQuery RangeQuery(uint8_t range) const {
    ListQuery q;
    q.bucket_id = query_.bucket_id;
    q.prefix = model::RangeStoredKey(range, query_.prefix);
    q.delimiter = query_.delimiter;
    if (!query_.start_after.empty()) q.start_after = model::RangeStoredKey(range, query_.start_after);
    q.max_items = query_.max_items;
    q.versions = query_.versions;
    q.uploads = query_.uploads;
    if (range == marker_range_) {
      q.version_id_marker = query_.version_id_marker;
      q.upload_id_marker = query_.upload_id_marker;
    }
    return q;
  }

  void Launch() {
    uint8_t range = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (failed_ || next_range_ > query_.layout.hash_ranges) return;
      range = static_cast<uint8_t>(next_range_++);
    }
    auto walk = std::make_shared<ListWalk>(
        index_, RangeQuery(range), [self = shared_from_this(), range](Result<ListPage> page) {
          self->OnRange(range, std::move(page));
        });
    walk->Step();
  }

  void OnRange(uint8_t range, Result<ListPage> page) {
    if (page.ok()) StripRangeByte(&*page);
    bool all_done = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (failed_) return;
      if (!page.ok()) {
        failed_ = true;
      } else {
        pages_[range - 1] = std::move(page).value();
        all_done = ++finished_ == query_.layout.hash_ranges;
      }
    }
    if (!page.ok()) return done_(page.status());
    if (all_done) return done_(MergeRangePages(std::move(pages_), query_.max_items));
    Launch();
  }

  void StripRangeByte(ListPage* page) const {
    for (pb::S3ListItem& item : page->items) {
      std::string* key = item.has_entry() ? item.mutable_entry()->mutable_key()
                                          : item.mutable_common_prefix();
      *key = std::string(model::UserKey(query_.layout, *key));
    }
  }

  ObjectIndex& index_;
  const ListQuery query_;
  const Callback<ListPage> done_;
  uint8_t marker_range_ = 0;  // the range of start_after; 0: none
  std::mutex mu_;             // guards what follows (walks answer on rpc strands)
  uint32_t next_range_ = 1;
  uint32_t finished_ = 0;
  bool failed_ = false;
  std::vector<ListPage> pages_;  // by range - 1
};

void ObjectIndex::List(ListQuery query, Callback<ListPage> done) {
  if (query.bucket_id == model::kInternalBucketId || query.max_items == 0 ||
      query.max_items > limits::kS3ListItemsPerReadMax) {
    return done(Status::InvalidArgument("bad listing query"));
  }
  if (query.layout.hashed()) {
    return std::make_shared<HashedList>(*this, std::move(query), std::move(done))->Start();
  }
  std::make_shared<ListWalk>(*this, std::move(query), std::move(done))->Step();
}

// Sums the usage records of every partition from the table's start to the
// bucket's end: usage records are per-partition deltas, and the parent of a
// split keeps its counts of the objects that moved (decisions.md, "_s3
// splits: usage").
class ObjectIndex::UsageWalk : public std::enable_shared_from_this<UsageWalk> {
 public:
  UsageWalk(ObjectIndex& index, uint64_t bucket_id, Callback<pb::BucketUsage> done)
      : index_(index),
        bucket_id_(bucket_id),
        cursor_(),
        end_(model::PrefixSuccessor(model::BucketPrefix(bucket_id))),
        done_(std::move(done)) {}

  void Step() {
    if (++steps_ > limits::kS3ListPartitionsPerRequestMax) {
      return done_(Status::Unavailable("bucket spans too many partitions"));
    }
    pb::S3UsageRequest request;
    request.set_bucket_id(bucket_id_);
    auto build = [request](const pb::PartitionDescriptor& p) mutable {
      request.set_group_id(p.group_id());
      return request.SerializeAsString();
    };
    index_.kv_.Call(kS3Table, cursor_, "s3.usage", /*idempotent=*/true, "s3_read",
                    std::move(build),
                    [self = shared_from_this()](Result<std::string> reply,
                                                const pb::PartitionDescriptor& p) {
                      self->OnUsage(std::move(reply), p);
                    });
  }

 private:
  void OnUsage(Result<std::string> reply, const pb::PartitionDescriptor& p) {
    if (!reply.ok()) return done_(reply.status());
    pb::BucketUsage part;
    if (!part.ParseFromString(*reply)) return done_(Status::Corruption("unparseable usage"));
    sum_.set_objects(sum_.objects() + part.objects());
    sum_.set_bytes(sum_.bytes() + part.bytes());
    sum_.set_versions(sum_.versions() + part.versions());
    sum_.set_uploads(sum_.uploads() + part.uploads());
    sum_.set_part_bytes(sum_.part_bytes() + part.part_bytes());
    if (!RangeEndsBefore(p, end_)) return done_(sum_);
    cursor_ = p.end_key();
    Step();
  }

  ObjectIndex& index_;
  const uint64_t bucket_id_;
  std::string cursor_;
  const std::string end_;
  const Callback<pb::BucketUsage> done_;
  uint32_t steps_ = 0;
  pb::BucketUsage sum_;
};

void ObjectIndex::Usage(uint64_t bucket_id, Callback<pb::BucketUsage> done) {
  std::make_shared<UsageWalk>(*this, bucket_id, std::move(done))->Step();
}

}  // namespace tessera::s3::front
