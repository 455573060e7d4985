// ObjectIndex: the S3 front's access to object metadata in the `_s3` table
// (docs/formats/s3-keys.md) through the router's KvRouter: head reads,
// S3 ops (one log entry in one partition each), listings that walk
// partitions in key order, and per-bucket usage summed over partitions.
//
// Contract:
//  - ReadHead and ReadObject are strong (leader lease) reads.
//  - ReadObject is one node round trip ("s3.get"): the version and, with
//    `with_data`, its inline bytes (in ObjectVersion.inline_data) from one
//    applied state of the partition. ReadHead's latest carries no inline
//    bytes (bytes_in_data_record says they exist): serve bytes from
//    ReadObject only.
//  - Apply sends the op to the partition holding the object's head key; a
//    failure whose outcome is unknown is Timeout (KvRouter's rule).
//  - List returns at most max_items items in key order, starting in the
//    partition holding the start and moving to the next partition only
//    while the range is not exhausted: a partition whose range starts past
//    the prefix is never contacted. `more` says whether items remain
//    (exact when the caller asks one item more than it shows). A hashed
//    bucket's listing walks each hash range so (at most
//    limits::kS3HashedListRangesInFlightMax at a time, each holding at
//    most max_items items) and merges the pages: hash_ranges walks per
//    page, whatever the page size.
//
// Thread safety: any thread; callbacks on rpc strands, exactly once.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/metrics.h"
#include "common/result.h"
#include "router/kv_router.h"
#include "s3/front/list_merge.h"
#include "s3/model/key_layout.h"
#include "tessera/s3.pb.h"

namespace tessera::s3::front {

inline constexpr const char* kS3Table = "_s3";

struct ListQuery {
  uint64_t bucket_id = 0;
  // The bucket's key layout. Keys here (prefix, start_after, the items'
  // keys) are user keys: a hashed bucket's listing is a merge of one walk
  // per hash range (list_merge.h), its items stripped of the range byte.
  model::KeyLayout layout;
  std::string prefix;
  std::string delimiter;
  std::string start_after;  // exclusive object key (or common prefix)
  uint32_t max_items = 1000;
  bool versions = false;          // ListObjectVersions
  std::string version_id_marker;  // with start_after as the key marker
  bool uploads = false;           // ListMultipartUploads (entries carry upload_id)
  std::string upload_id_marker;   // with start_after as the key marker
};


class ObjectIndex {
 public:
  template <typename T>
  using Callback = std::function<void(Result<T>)>;

  // `list_reads`: counts s3.list reads (one per partition visited), e.g.
  // tessera_s3_list_partition_reads_total; may be null.
  explicit ObjectIndex(router::KvRouter& kv, metrics::Counter* list_reads = nullptr)
      : kv_(kv), list_reads_metric_(list_reads) {}

  void ReadHead(uint64_t bucket_id, const std::string& key,
                Callback<std::optional<pb::ObjectHead>> done);
  // One version of a key: the latest (version_id empty; possibly a delete
  // marker) or the one named ("null" included); nullopt when the key or
  // the version does not exist. with_data: inline bytes included (GET,
  // copy); false: metadata only, no data record read (HEAD).
  // InvalidArgument for a version id that cannot be ours.
  void ReadObject(uint64_t bucket_id, const std::string& key, const std::string& version_id,
                  bool with_data, Callback<std::optional<pb::ObjectVersion>> done);
  void Apply(pb::S3Op op, Callback<pb::S3OpResult> done);
  void List(ListQuery query, Callback<ListPage> done);
  // The upload record (strong read), nullopt when there is no such upload.
  void ReadUpload(uint64_t bucket_id, const std::string& key, const std::string& upload_id,
                  Callback<std::optional<pb::UploadRecord>> done);
  // The upload's parts numbered above `after`, ascending, at most `limit`.
  void ListUploadParts(uint64_t bucket_id, const std::string& key, const std::string& upload_id,
                       uint32_t after, uint32_t limit, Callback<std::vector<pb::PartRecord>> done);
  // The bucket's usage: the sum of the usage records of every `_s3`
  // partition from the table's start to the bucket's end (a partition a
  // split left holding none of the bucket's keys keeps its counts of the
  // objects that moved; partitions past the bucket never held any).
  void Usage(uint64_t bucket_id, Callback<pb::BucketUsage> done);
  // The bucket's configuration record (strong read); an empty BucketConfig
  // when it has none.
  void ReadBucketConfig(uint64_t bucket_id, Callback<pb::BucketConfig> done);

  // s3.list reads sent so far (one per partition visited): tests count them.
  uint64_t list_partition_reads() const { return list_partition_reads_.load(); }

 private:
  class ListWalk;
  class HashedList;
  class UsageWalk;

  router::KvRouter& kv_;
  metrics::Counter* const list_reads_metric_;
  std::atomic<uint64_t> list_partition_reads_{0};
};

}  // namespace tessera::s3::front
