#include "sim/s3_invariants.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "common/big_endian.h"
#include "s3/model/s3_keys.h"

namespace tessera::sim {
namespace {

using s3::model::RecordRow;
using s3::model::RecordType;

// The records of one object key.
struct KeyRecords {
  std::optional<pb::ObjectHead> head;
  std::map<uint64_t, pb::VersionRecord> versions;            // by seq
  std::map<uint64_t, std::string> data;                      // by seq (0: the version-less latest)
  std::map<std::string, pb::UploadRecord> uploads;           // by upload id
  std::map<std::string, std::vector<pb::PartRecord>> parts;  // by upload id
};

// The rows as a listing's record source.
class RowSource : public s3::model::RecordSource {
 public:
  explicit RowSource(const std::vector<RecordRow>& rows) : rows_(rows) {}
  Result<std::vector<RecordRow>> Scan(const std::string& start, const std::string& end,
                                      size_t limit) const override {
    std::vector<RecordRow> out;
    for (const RecordRow& row : rows_) {
      if (out.size() >= limit) break;
      if (row.key < start || (!end.empty() && row.key >= end)) continue;
      out.push_back(row);
    }
    return out;
  }

 private:
  const std::vector<RecordRow>& rows_;
};

std::string Quoted(std::string_view key) { return "'" + std::string(key) + "'"; }

template <typename Message>
bool Parse(const std::string& bytes, Message* message) {
  return message->ParseFromString(bytes);
}

// Parses the rows into per-key records and the usage record.
std::string Collect(const std::vector<RecordRow>& rows, uint64_t bucket_id,
                    std::map<std::string, KeyRecords>* keys, pb::BucketUsage* usage) {
  const std::string usage_key = s3::model::UsageKey(bucket_id);
  for (const RecordRow& row : rows) {
    if (row.key == usage_key) {
      if (!Parse(row.value, usage)) return "usage: the usage record does not parse";
      continue;
    }
    const auto parsed = s3::model::ParseObjectRecordKey(row.key);
    if (!parsed || parsed->bucket_id != bucket_id) continue;
    KeyRecords& records = (*keys)[std::string(parsed->object_key)];
    const std::string where = Quoted(parsed->object_key);
    switch (parsed->type) {
      case RecordType::kHead:
        if (!Parse(row.value, &records.head.emplace()))
          return "ghost: head of " + where + " does not parse";
        break;
      case RecordType::kVersion:
      case RecordType::kData: {
        if (parsed->suffix.size() != 8) return "ghost: bad record suffix under " + where;
        const uint64_t seq = ~ReadBigEndian64(parsed->suffix);
        if (parsed->type == RecordType::kVersion) {
          if (!Parse(row.value, &records.versions[seq]))
            return "ghost: version of " + where + " does not parse";
        } else {
          pb::ObjectData data;
          if (!Parse(row.value, &data)) return "ghost: data of " + where + " does not parse";
          records.data[seq] = data.data();
        }
        break;
      }
      case RecordType::kUpload: {
        pb::UploadRecord upload;
        if (!Parse(row.value, &upload)) return "ghost: upload of " + where + " does not parse";
        records.uploads[upload.upload_id()] = upload;
        break;
      }
      case RecordType::kPart: {
        const std::string_view upload_id = parsed->suffix.substr(0, parsed->suffix.find('\0'));
        auto& parts = records.parts[std::string(upload_id)];
        if (!Parse(row.value, &parts.emplace_back()))
          return "ghost: part of " + where + " does not parse";
        break;
      }
    }
  }
  return "";
}

// The no-ghost invariants of one key; adds its versions to `versions`.
std::string CheckKey(const std::string& key, const KeyRecords& records,
                     std::vector<pb::ObjectVersion>* versions) {
  const std::string where = Quoted(key);
  if (!records.head) {
    if (!records.versions.empty()) return "ghost: version records of " + where + " without a head";
    if (!records.data.empty()) return "ghost: data records of " + where + " without a head";
    return "";
  }
  const pb::ObjectHead& head = *records.head;
  if (head.latest_seq() == 0) {
    if (!records.versions.empty())
      return "ghost: version records of " + where + " unreachable from its head";
    const bool has_data = head.latest().bytes_in_data_record();
    if (records.data.size() != (has_data ? 1u : 0u) || (has_data && records.data.count(0) == 0)) {
      return "ghost: data records of " + where + " do not match its version-less head";
    }
    if (has_data && records.data.at(0).size() != head.latest().size()) {
      return "ghost: data of " + where + " is not its head's size";
    }
    versions->push_back(head.latest());
    return "";
  }
  std::set<uint64_t> reached;
  std::set<std::string> ids;
  uint64_t newer = 0;
  for (uint64_t seq = head.latest_seq(); seq != 0;) {
    auto it = records.versions.find(seq);
    if (it == records.versions.end()) {
      return "ghost: the chain of " + where + " names missing version " + std::to_string(seq);
    }
    if (!reached.insert(seq).second) return "ghost: the chain of " + where + " loops";
    const pb::VersionRecord& record = it->second;
    if (record.newer_seq() != newer) {
      return "ghost: version " + std::to_string(seq) + " of " + where + " links to newer " +
             std::to_string(record.newer_seq()) + ", not " + std::to_string(newer);
    }
    if (!ids.insert(record.version().version_id()).second) {
      return "exactly-once: version id " + record.version().version_id() + " twice under " + where;
    }
    const bool has_data = record.version().bytes_in_data_record();
    const auto data = records.data.find(seq);
    if (has_data != (data != records.data.end())) {
      return std::string("ghost: version ") + std::to_string(seq) + " of " + where +
             (has_data ? " lacks its data record" : " has a stray data record");
    }
    if (has_data && data->second.size() != record.version().size()) {
      return "ghost: data of version " + std::to_string(seq) + " of " + where + " is not its size";
    }
    versions->push_back(record.version());
    newer = seq;
    seq = record.older_seq();
  }
  if (reached.size() != records.versions.size()) {
    return "ghost: " + std::to_string(records.versions.size() - reached.size()) +
           " version records of " + where + " unreachable from its head";
  }
  const auto with_data = std::count_if(versions->begin(), versions->end(),
                                       [](const auto& v) { return v.bytes_in_data_record(); });
  if (records.data.size() != static_cast<size_t>(with_data)) {
    return "ghost: data records of " + where + " without a version";
  }
  const pb::VersionRecord& latest = records.versions.at(head.latest_seq());
  if (latest.version().SerializeAsString() != head.latest().SerializeAsString()) {
    return "ghost: the head of " + where + " is not its newest version";
  }
  if (head.null_seq() != 0) {
    auto null = records.versions.find(head.null_seq());
    if (null == records.versions.end() || null->second.version().version_id() != "null") {
      return "ghost: the null version of " + where + " is missing";
    }
  }
  if (head.next_seq() <= records.versions.rbegin()->first) {
    return "ghost: next_seq of " + where + " is not past its versions";
  }
  return "";
}

using Keys = std::map<std::string, KeyRecords>;
using Tags = std::map<std::string, const S3SentOp*>;
using Seen = std::map<std::string, std::pair<std::string, std::string>>;  // tag -> key, version id

// The no-ghost checks of every key, summing the usage a scan finds, each
// key's versions and the live keys in order.
std::string ScanKeys(const Keys& keys, pb::BucketUsage* scanned_out,
                     std::map<std::string, std::vector<pb::ObjectVersion>>* versions_of,
                     std::vector<std::string>* live) {
  pb::BucketUsage& scanned = *scanned_out;
  for (const auto& [key, records] : keys) {
    std::vector<pb::ObjectVersion>& versions = (*versions_of)[key];
    if (std::string bad = CheckKey(key, records, &versions); !bad.empty()) return bad;
    for (const pb::ObjectVersion& v : versions) scanned.set_bytes(scanned.bytes() + v.size());
    scanned.set_versions(scanned.versions() + static_cast<int64_t>(records.versions.size()));
    if (records.head && !records.head->latest().delete_marker()) {
      scanned.set_objects(scanned.objects() + 1);
      live->push_back(key);
    }
    scanned.set_uploads(scanned.uploads() + static_cast<int64_t>(records.uploads.size()));
    for (const auto& [upload_id, parts] : records.parts) {
      if (records.uploads.count(upload_id) == 0) {
        return "ghost: parts of upload " + upload_id + " of " + Quoted(key) + " without the upload";
      }
      for (const pb::PartRecord& part : parts) {
        scanned.set_part_bytes(scanned.part_bytes() + static_cast<int64_t>(part.size()));
      }
    }
  }
  return "";
}

// The tags of `v` (under `key`): none, or the one a tagging operation sent
// for the key set, never a refused one's.
std::string CheckTags(const std::string& key, const pb::ObjectVersion& v, const Tags& by_tag) {
  if (v.tags_size() == 0) return "";
  const std::string who = "version " + v.version_id() + " of " + Quoted(key);
  if (v.tags_size() != 1 || v.tags(0).name() != "op") return "exactly-once: " + who + " has torn tags";
  auto op = by_tag.find(v.tags(0).value());
  if (op == by_tag.end() || op->second->kind != S3SentOp::Kind::kSetTags ||
      op->second->key != key) {
    return "exactly-once: " + who + " has tags no tagging of it set";
  }
  if (op->second->fate == S3SentOp::Fate::kRefused) {
    return "exactly-once: tagging " + op->second->tag + " was refused but is in effect";
  }
  return "";
}

// Each version's tag in effect at most once, only when sent and not
// refused or failed, under its key, with its put's body.
std::string CheckVersionTags(
    const Keys& keys, const std::map<std::string, std::vector<pb::ObjectVersion>>& versions_of,
    const Tags& by_tag, Seen* seen_out) {
  Seen& seen = *seen_out;
  for (const auto& [key, versions] : versions_of) {
    const KeyRecords& records = keys.at(key);
    for (const pb::ObjectVersion& v : versions) {
      const std::string tag = v.delete_marker() ? v.owner() : v.etag();
      if (!seen.emplace(tag, std::make_pair(key, v.version_id())).second) {
        return "exactly-once: operation " + tag + " in effect twice (" + Quoted(key) + ")";
      }
      auto op = by_tag.find(tag);
      if (op == by_tag.end())
        return "exactly-once: " + Quoted(key) + " holds unknown operation " + tag;
      if (op->second->fate == S3SentOp::Fate::kRefused) {
        return "exactly-once: operation " + tag + " was refused but is in effect";
      }
      if (op->second->fate == S3SentOp::Fate::kAcked && op->second->s3_outcome != pb::S3_OK) {
        return "exactly-once: operation " + tag + " failed (" +
               pb::S3Outcome_Name(op->second->s3_outcome) + ") but is in effect";
      }
      if (op->second->key != key) return "exactly-once: operation " + tag + " under the wrong key";
      if (std::string bad = CheckTags(key, v, by_tag); !bad.empty()) return bad;
      if (!v.delete_marker() && v.bytes_in_data_record()) {
        const uint64_t seq = [&] {
          if (records.head->latest_seq() == 0) return uint64_t{0};
          for (const auto& [s, record] : records.versions) {
            if (record.version().version_id() == v.version_id()) return s;
          }
          return uint64_t{0};
        }();
        if (records.data.at(seq) != op->second->body) {
          return "exactly-once: the bytes of " + tag + " are not its body";
        }
      }
    }
  }
  return "";
}

// Uploads and parts: each one a sent operation's, never a refused one's.
std::string CheckUploadsSent(const Keys& keys, const Tags& by_tag) {
  for (const auto& [key, records] : keys) {
    for (const auto& [upload_id, upload] : records.uploads) {
      auto op = by_tag.find(upload_id);
      if (op == by_tag.end() || op->second->kind != S3SentOp::Kind::kCreateUpload ||
          op->second->key != key) {
        return "exactly-once: " + Quoted(key) + " holds upload " + upload_id + " no create made";
      }
      if (op->second->fate == S3SentOp::Fate::kRefused) {
        return "exactly-once: upload " + upload_id + " was refused but is in effect";
      }
    }
    for (const auto& [upload_id, parts] : records.parts) {
      for (const pb::PartRecord& part : parts) {
        auto op = by_tag.find(part.etag());
        if (op == by_tag.end() || op->second->kind != S3SentOp::Kind::kUploadPart ||
            op->second->upload_id != upload_id || op->second->part_number != part.part_number()) {
          return "exactly-once: upload " + upload_id + " holds part " + part.etag() +
                 " no upload of that part made";
        }
        if (op->second->fate == S3SentOp::Fate::kRefused) {
          return "exactly-once: part " + part.etag() + " was refused but is in effect";
        }
      }
    }
  }
  return "";
}

// Acknowledged operations still in effect unless a later one was sent
// that may have ended them.
std::string CheckAcknowledged(const Keys& keys, const std::vector<S3SentOp>& sent,
                              const Seen& seen) {
  // An acknowledged create stays until a completion or abort of it was sent.
  std::set<std::string> ended;  // upload ids
  for (const S3SentOp& op : sent) {
    if ((op.kind == S3SentOp::Kind::kCompleteUpload || op.kind == S3SentOp::Kind::kAbortUpload) &&
        op.fate != S3SentOp::Fate::kRefused) {
      ended.insert(op.upload_id);
    }
  }
  for (const S3SentOp& op : sent) {
    if (op.kind != S3SentOp::Kind::kCreateUpload || op.fate != S3SentOp::Fate::kAcked ||
        op.s3_outcome != pb::S3_OK || ended.count(op.tag) != 0) {
      continue;
    }
    auto key = keys.find(op.key);
    if (key == keys.end() || key->second.uploads.count(op.tag) == 0) {
      return "exactly-once: acknowledged upload " + op.tag + " of " + Quoted(op.key) + " is gone";
    }
  }
  // Acknowledged versioned puts, completions and markers stay unless their
  // version was deleted by id.
  std::set<std::pair<std::string, std::string>> deleted;  // key, version id
  for (const S3SentOp& op : sent) {
    if (op.kind == S3SentOp::Kind::kDeleteVersion && op.fate != S3SentOp::Fate::kRefused) {
      deleted.emplace(op.key, op.version_id);
    }
  }
  for (const S3SentOp& op : sent) {
    const bool writes_version = op.kind == S3SentOp::Kind::kPut ||
                                op.kind == S3SentOp::Kind::kDeleteLatest ||
                                op.kind == S3SentOp::Kind::kCompleteUpload;
    if (op.fate != S3SentOp::Fate::kAcked || op.s3_outcome != pb::S3_OK ||
        op.versioning != pb::VERSIONING_ENABLED || !writes_version) {
      continue;
    }
    if (deleted.count({op.key, op.version_id}) != 0) continue;
    auto it = seen.find(op.tag);
    if (it == seen.end()) {
      return "exactly-once: acknowledged operation " + op.tag + " (version " + op.version_id +
             " of " + Quoted(op.key) + ") is not in effect";
    }
    if (it->second.second != op.version_id) {
      return "exactly-once: operation " + op.tag + " holds version " + it->second.second +
             ", acknowledged as " + op.version_id;
    }
  }

  return "";
}

// The listing shows every live key once, in order.
std::string CheckListing(const std::vector<RecordRow>& rows, uint64_t bucket_id,
                         const std::vector<std::string>& live) {
  pb::S3ListRequest request;
  request.set_bucket_id(bucket_id);
  request.set_max_keys(1000);
  RowSource source(rows);
  auto listed = s3::model::ListPartition(source, request);
  if (!listed.ok()) return "listing: " + listed.status().ToString();
  std::vector<std::string> keys_listed;
  for (const pb::S3ListItem& item : listed->items()) {
    if (!item.has_entry()) return "listing: a common prefix without a delimiter";
    keys_listed.push_back(item.entry().key());
  }
  if (keys_listed != live) {
    std::string got, want;
    for (const auto& k : keys_listed) got += " " + Quoted(k);
    for (const auto& k : live) want += " " + Quoted(k);
    return "listing: listed [" + got + " ] but the live keys are [" + want + " ]";
  }
  return "";
}

}  // namespace

std::string CheckS3State(const std::vector<RecordRow>& rows, uint64_t bucket_id,
                         const std::vector<S3SentOp>& sent) {
  Keys keys;
  pb::BucketUsage usage;
  if (std::string bad = Collect(rows, bucket_id, &keys, &usage); !bad.empty()) return bad;
  pb::BucketUsage scanned;
  std::map<std::string, std::vector<pb::ObjectVersion>> versions_of;
  std::vector<std::string> live;
  std::string bad = ScanKeys(keys, &scanned, &versions_of, &live);
  Tags by_tag;
  for (const S3SentOp& op : sent) by_tag[op.tag] = &op;
  Seen seen;
  if (bad.empty()) bad = CheckVersionTags(keys, versions_of, by_tag, &seen);
  if (bad.empty()) bad = CheckUploadsSent(keys, by_tag);
  if (bad.empty()) bad = CheckAcknowledged(keys, sent, seen);
  if (bad.empty() && usage.SerializeAsString() != scanned.SerializeAsString()) {
    bad = "usage: the record says {" + usage.ShortDebugString() + "}, a scan sums {" +
          scanned.ShortDebugString() + "}";
  }
  if (bad.empty()) bad = CheckListing(rows, bucket_id, live);
  return bad;
}

}  // namespace tessera::sim
