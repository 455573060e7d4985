// GetObject / HeadObject (one strong s3.get read of the version and, for
// GET, its inline bytes; preconditions, Range, then the bytes served from
// the inline data or streamed blob by blob, each read from the
// nearest replica with checksum verification), DeleteObject (one op), and
// the object sub-resources clients probe (?acl, ?tagging).
#include <algorithm>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/check.h"
#include "common/limits.h"
#include "http/headers.h"
#include "s3/front/composite_checksum.h"
#include "s3/front/delete_conditions.h"
#include "s3/model/full_object_checksum.h"
#include "s3/front/s3_call.h"
#include "s3/front/s3_front.h"
#include "s3/front/small_body.h"
#include "s3/protocol/xml_documents.h"

namespace tessera::s3::front {
namespace {

http::Headers ObjectHeaders(const S3Call& call, const pb::ObjectVersion& v) {
  http::Headers h;
  h.emplace_back("ETag", QuoteEtag(v.etag()));
  h.emplace_back("Last-Modified", FormatHttpDate(v.last_modified_ms()));
  h.emplace_back("Accept-Ranges", "bytes");
  h.emplace_back("Content-Type", v.content_type().empty() ? "binary/octet-stream" : v.content_type());
  auto add = [&h](const char* name, const std::string& value) {
    if (!value.empty()) h.emplace_back(name, value);
  };
  add("Content-Encoding", v.content_encoding());
  add("Content-Disposition", v.content_disposition());
  add("Cache-Control", v.cache_control());
  add("Content-Language", v.content_language());
  add("Expires", v.expires());
  for (const pb::MetadataPair& m : v.user_metadata()) {
    h.emplace_back("x-amz-meta-" + m.name(), m.value());
  }
  if (call.bucket_info.versioning() != pb::VERSIONING_UNSET) {
    h.emplace_back("x-amz-version-id", v.version_id());
  }
  // GetObject and HeadObject name how many tags the object has.
  if (v.tags_size() > 0) {
    h.emplace_back("x-amz-tagging-count", std::to_string(v.tags_size()));
  }
  return h;
}

// Applies the response-* overrides (replacing the stored header).
void ApplyOverrides(const S3Call& call, http::Headers& headers) {
  for (auto& [name, value] : ResponseHeaderOverrides(call.query)) {
    std::erase_if(headers, [&name](const auto& h) { return HeaderNameEquals(h.first, name); });
    headers.emplace_back(name, value);
  }
}

// Streams bytes [first, last] of a blob-backed object, blob by blob, in
// pieces of at most kS3ReadPieceBytes, reading ahead: while one piece is
// written to the client the next ones are already being read from the
// nodes, so neither side waits for the other (D42). The blob holding
// `first` is found by binary search over the blobs' start offsets (an
// object may have tens of thousands of blobs); after that the stream walks
// forward.
//
// Invariants: pieces reach the client in object order, one WriteBody at a
// time; at most kS3ReadPiecesInFlight pieces (being read, read and waiting,
// or being written) exist at once, which bounds a GET's memory; every piece
// but the one the stream may always hold took its bytes from the router's
// ReadAheadBudget and gives them back when written or dropped; once the
// stream failed (a read failed, the blob list is short, the client went
// away) nothing more is read or written, and a failure after the head was
// sent aborts the connection (the client sees a truncated body).
//
// Threads: read callbacks come from channel threads (or inline from Read),
// write callbacks from the connection's executor; mutex_ orders them. Read
// and the exchange are called without holding mutex_ (Read may call back
// inline).
class BlobStreamer : public std::enable_shared_from_this<BlobStreamer> {
 public:
  // `first` <= `last`, both inside the object.
  BlobStreamer(CallPtr call, pb::ObjectVersion object, uint64_t first, uint64_t last)
      : call_(std::move(call)), object_(std::move(object)), next_(first), last_(last) {
    starts_.reserve(object_.blobs_size());
    uint64_t offset = 0;
    for (const pb::BlobRef& ref : object_.blobs()) {
      starts_.push_back(offset);
      offset += ref.size();
    }
    // The blob whose range holds next_: the last start <= next_.
    auto it = std::upper_bound(starts_.begin(), starts_.end(), next_);
    blob_ = it == starts_.begin() ? 0 : static_cast<size_t>(it - starts_.begin()) - 1;
  }

  ~BlobStreamer() {
    size_t held = writing_budgeted_;
    for (const Piece& p : pieces_) held += p.budgeted ? p.length : 0;
    if (held > 0) call_->front.read_ahead().Release(held);
  }

  void Start() { Pump(); }

 private:
  struct Piece {
    uint64_t length = 0;
    bool budgeted = false;  // its length is held in the ReadAheadBudget
    std::optional<Result<SharedBytes>> data;  // set once its read answered
  };
  struct ReadOrder {
    blob::BlobId id;
    uint64_t offset = 0;
    uint64_t length = 0;
    uint64_t sequence = 0;
    blob::ReadPriority priority = blob::ReadPriority::kClientWaiting;
  };
  enum class Next { kNothing, kWrite, kFinish, kAbort };

  // Starts what can start now: the write of the front piece once it is
  // read, reads while there is room, the end of the body after the last
  // piece was written.
  void Pump() {
    std::vector<ReadOrder> reads;
    SharedBytes piece;
    Next next = Next::kNothing;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (done_) return;
      if (!writing_ && !pieces_.empty() && pieces_.front().data) {
        Result<SharedBytes> data = std::move(*pieces_.front().data);
        const uint64_t length = pieces_.front().length;
        TESSERA_CHECK(writing_budgeted_ == 0);
        writing_budgeted_ = pieces_.front().budgeted ? length : 0;
        pieces_.pop_front();
        ++front_sequence_;
        if (data.ok() && data->size() == length) {
          piece = std::move(data).value();
          writing_ = true;
          next = Next::kWrite;
        } else {
          next = Next::kAbort;
        }
      }
      if (next != Next::kAbort && !PlanReadsLocked(reads)) next = Next::kAbort;
      if (next == Next::kNothing && !writing_ && pieces_.empty() && next_ > last_) next = Next::kFinish;
      if (next == Next::kAbort || next == Next::kFinish) done_ = true;
    }
    switch (next) {
      case Next::kAbort:
        return call_->exchange->Abort();
      case Next::kFinish:
        return call_->exchange->FinishResponse([](Status) {});
      case Next::kWrite:
        call_->exchange->WriteBody(std::move(piece), [self = shared_from_this()](Status st) {
          self->OnWritten(st);
        });
        break;
      case Next::kNothing:
        break;
    }
    for (ReadOrder& order : reads) {
      call_->front.blobs().Read(
          order.id, order.offset, order.length,
          [self = shared_from_this(), sequence = order.sequence](Result<SharedBytes> data) {
            self->OnRead(sequence, std::move(data));
          },
          order.priority);
    }
  }

  // Queues reads of the next pieces while fewer than kS3ReadPiecesInFlight
  // exist and the read-ahead budget has room for all but the first; false
  // when the blob list cannot serve the range.
  bool PlanReadsLocked(std::vector<ReadOrder>& reads) {
    while (next_ <= last_ && pieces_.size() + (writing_ ? 1 : 0) < limits::kS3ReadPiecesInFlight) {
      while (blob_ < starts_.size() && next_ >= starts_[blob_] + object_.blobs(blob_).size()) {
        ++blob_;
      }
      if (blob_ >= starts_.size()) return false;  // blobs short of the size
      const pb::BlobRef& ref = object_.blobs(static_cast<int>(blob_));
      const uint64_t offset = next_ - starts_[blob_];
      const uint64_t length =
          std::min<uint64_t>({ref.size() - offset, last_ - next_ + 1, limits::kS3ReadPieceBytes});
      auto id = blob::BlobId::Parse(ref.blob_id());
      if (!id.ok()) return false;
      const bool ahead = !pieces_.empty() || writing_;
      if (ahead && !call_->front.read_ahead().TryAcquire(length)) break;
      // The piece the client waits for goes to its node ahead of read-ahead.
      reads.push_back(ReadOrder{*id, offset, length, front_sequence_ + pieces_.size(),
                                ahead ? blob::ReadPriority::kReadAhead : blob::ReadPriority::kClientWaiting});
      pieces_.push_back(Piece{length, ahead, std::nullopt});
      next_ += length;
    }
    return true;
  }

  void OnRead(uint64_t sequence, Result<SharedBytes> data) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (done_) return;
      TESSERA_CHECK(sequence >= front_sequence_ && sequence - front_sequence_ < pieces_.size());
      pieces_[sequence - front_sequence_].data = std::move(data);
    }
    Pump();
  }

  void OnWritten(Status st) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      writing_ = false;
      if (writing_budgeted_ > 0) call_->front.read_ahead().Release(std::exchange(writing_budgeted_, 0));
      if (!st.ok()) done_ = true;  // the client went away; the exchange is dead
    }
    Pump();
  }

  CallPtr call_;
  const pb::ObjectVersion object_;
  std::vector<uint64_t> starts_;  // starts_[i]: object offset of blob i
  std::mutex mutex_;              // guards everything below
  size_t blob_ = 0;               // the blob holding next_ (or before it)
  uint64_t next_;                 // first byte not yet asked for
  const uint64_t last_;
  std::deque<Piece> pieces_;      // asked for, not yet written, in order
  uint64_t front_sequence_ = 0;   // sequence number of pieces_.front()
  bool writing_ = false;          // a WriteBody is in flight
  size_t writing_budgeted_ = 0;   // budget bytes of the piece being written
  bool done_ = false;             // finished, aborted or the client gone
};

// ?partNumber=N of GET/HEAD: the byte range of part N (1-based). A
// multipart object's parts start at part_offsets; any other object is one
// part. InvalidArgument for a malformed number, InvalidPartNumber (416) past
// the last part.
S3Result<ByteRange> PartRange(const pb::ObjectVersion& v, std::string_view text) {
  uint64_t n = 0;
  const bool digits = !text.empty() && text.size() <= 5 &&
                      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (digits) n = std::stoull(std::string(text));
  if (!digits || n < 1 || n > limits::kS3PartNumberMax) {
    return PartNumberArgumentError(std::string(text));
  }
  const uint64_t parts = v.part_offsets_size() > 0 ? v.part_offsets_size() : 1;
  const S3Error unsatisfiable = S3Error(S3ErrorCode::kInvalidPartNumber)
                                    .With("PartNumberRequested", std::to_string(n))
                                    .With("ActualPartCount", std::to_string(parts));
  if (n > parts || v.size() == 0) return unsatisfiable;
  const uint64_t first = v.part_offsets_size() > 0 ? v.part_offsets(static_cast<int>(n - 1)) : 0;
  const uint64_t end = n < parts ? v.part_offsets(static_cast<int>(n)) : v.size();
  if (end <= first) return unsatisfiable;
  return ByteRange{first, end - 1};
}

}  // namespace

void ServeObject(CallPtr call, const pb::ObjectVersion& v) {
  ReadConditions conditions;
  auto opt = [&call](const char* name) -> std::optional<std::string> {
    auto value = call->Header(name);
    if (!value) return std::nullopt;
    return std::string(*value);
  };
  conditions.if_match = opt("if-match");
  conditions.if_none_match = opt("if-none-match");
  conditions.if_modified_since = opt("if-modified-since");
  conditions.if_unmodified_since = opt("if-unmodified-since");
  http::Headers headers = ObjectHeaders(*call, v);
  switch (EvaluateReadConditions(conditions, QuoteEtag(v.etag()), v.last_modified_ms(), NowMs())) {
    case ConditionOutcome::kProceed: break;
    case ConditionOutcome::kNotModified: {
      http::Headers h = {{"ETag", QuoteEtag(v.etag())},
                         {"Last-Modified", FormatHttpDate(v.last_modified_ms())}};
      return call->Respond(304, std::move(h), "");
    }
    case ConditionOutcome::kPreconditionFailed:
      return call->Fail(PreconditionFailedError(
          std::string(DecidingCondition(conditions, ConditionOutcome::kPreconditionFailed))));
  }
  const uint64_t size = v.size();
  uint64_t first = 0;
  uint64_t last = size == 0 ? 0 : size - 1;
  unsigned status = 200;
  if (const QueryParam* part = call->Param("partNumber")) {
    if (call->Header("range")) {
      return call->Fail(S3Error(S3ErrorCode::kInvalidRequest,
                                "Cannot specify both Range header and partNumber query parameter"));
    }
    auto range = PartRange(v, part->value);
    if (!range.ok()) return call->Fail(range.error());
    first = range->first;
    last = range->last;
    status = 206;
    headers.emplace_back("Content-Range", ContentRange(*range, size));
    if (v.parts_count() > 0) {
      headers.emplace_back("x-amz-mp-parts-count", std::to_string(v.parts_count()));
    }
  } else if (auto range_header = call->Header("range")) {
    auto range = ResolveRange(*range_header, size);
    if (!range.ok()) {
      return call->Fail(range.error(), {{"Content-Range", UnsatisfiedContentRange(size)}});
    }
    if (range->has_value()) {
      first = (*range)->first;
      last = (*range)->last;
      status = 206;
      headers.emplace_back("Content-Range", ContentRange(**range, size));
    }
  }
  if (status == 200 && http::EqualsIgnoreCase(call->Header("x-amz-checksum-mode").value_or(""), "ENABLED")) {
    for (const pb::ObjectChecksum& c : v.checksums()) {
      std::string name = "x-amz-checksum-" + c.algorithm();
      std::transform(name.begin(), name.end(), name.begin(),
                     [](unsigned char ch) { return std::tolower(ch); });
      headers.emplace_back(name, c.value());
    }
    if (v.checksums_size() > 0) {
      headers.emplace_back("x-amz-checksum-type", model::IsCompositeChecksum(v.checksums(0).value())
                                                      ? "COMPOSITE"
                                                      : "FULL_OBJECT");
    }
  }
  ApplyOverrides(*call, headers);
  const uint64_t length = size == 0 ? 0 : last - first + 1;
  if (call->is_head()) {
    headers.emplace_back("Content-Length", std::to_string(length));
    return call->Respond(status, std::move(headers), "");
  }
  if (v.blobs_size() == 0) {
    return call->Respond(status, std::move(headers),
                         length == 0 ? std::string() : v.inline_data().substr(first, length));
  }
  call->MarkAnswered();
  http::Headers all = call->StandardHeaders();
  for (auto& h : headers) all.push_back(std::move(h));
  call->exchange->StartResponse(status, std::move(all), length, [call, v, first, last, length](Status st) {
    if (!st.ok()) return;
    if (length == 0) return call->exchange->FinishResponse([](Status) {});
    std::make_shared<BlobStreamer>(call, v, first, last)->Start();
  });
}

void GetObject(CallPtr call) {
  if (call->HasParam("versionId")) return GetObjectVersion(call);
  WithAuthorizedBucket(call, authz::Action::kGetObject, [call] {
    // One node read: the latest version and (GET, not HEAD) its inline bytes.
    WithLatestLiveVersion(call, /*with_data=*/!call->is_head(),
                          [call](const pb::ObjectVersion& latest) { ServeObject(call, latest); });
  });
}

void WithLatestLiveVersion(CallPtr call, bool with_data,
                           std::function<void(const pb::ObjectVersion&)> found) {
  call->front.index().ReadObject(
      call->bucket_info.bucket_id(), call->stored_key(), /*version_id=*/"", with_data,
      [call, found = std::move(found)](Result<std::optional<pb::ObjectVersion>> read) {
        if (!read.ok()) return call->Fail(read.status());
        const bool live = read->has_value() && !(*read)->delete_marker();
        if (!AuthorizedOnPendingObject(*call, live ? &**read : nullptr)) return;
        if (!read->has_value()) return call->Fail(S3Error(S3ErrorCode::kNoSuchKey));
        const pb::ObjectVersion& latest = **read;
        if (latest.delete_marker()) {
          // S3 says which delete marker hides the key.
          return call->Fail(S3Error(S3ErrorCode::kNoSuchKey),
                            {{"x-amz-delete-marker", "true"},
                             {"x-amz-version-id", latest.version_id()}});
        }
        found(latest);
      });
}

void DeleteObject(CallPtr call) {
  auto opt = [&call](const char* name) -> std::optional<std::string> {
    auto value = call->Header(name);
    if (!value) return std::nullopt;
    return std::string(*value);
  };
  pb::DeleteObjectOp conditions;
  if (auto set = SetDeleteConditions({opt("if-match"), opt("x-amz-if-match-last-modified-time"),
                                      opt("x-amz-if-match-size")},
                                     DeleteConditionNames{}, conditions);
      !set.ok()) {
    return call->Fail(set.error());
  }
  if (const QueryParam* version = call->Param("versionId")) {
    if (version->value.empty() || !IsVersionIdSyntax(version->value)) {
      return call->Fail(VersionIdArgumentError(version->value));
    }
  }
  WithAuthorizedBucket(call, ByVersion(*call, authz::Action::kDeleteObject, authz::Action::kDeleteObjectVersion),
                       [call, conditions] {
    pb::S3Op op;
    pb::DeleteObjectOp* del = op.mutable_delete_object();
    *del = conditions;
    del->set_bucket_id(call->bucket_info.bucket_id());
    del->set_key(call->stored_key());
    del->set_versioning(call->bucket_info.versioning());
    if (const QueryParam* version = call->Param("versionId")) del->set_version_id(version->value);
    del->set_now_ms(NowMs());
    del->set_owner(call->user);
    call->front.index().Apply(std::move(op), [call](Result<pb::S3OpResult> r) {
      if (!r.ok()) return call->Fail(r.status());
      if (r->outcome() != pb::S3_OK) return call->Fail(OpOutcomeError(*call, *r));
      http::Headers headers;
      if (r->delete_marker()) headers.emplace_back("x-amz-delete-marker", "true");
      if (!r->version_id().empty() && call->bucket_info.versioning() != pb::VERSIONING_UNSET) {
        headers.emplace_back("x-amz-version-id", r->version_id());
      }
      call->Respond(204, std::move(headers), "");
    });
  });
}

void WithSubresourceVersion(CallPtr call, std::function<void(const pb::ObjectVersion&)> found) {
  const std::string& method = call->head().method;
  const std::string http_method = method == "HEAD" ? "GET" : method;
  if (const QueryParam* version = call->Param("versionId")) {
    return WithVersion(call, call->bucket_info.bucket_id(), call->key, version->value,
                       /*with_data=*/false,
                       [call, http_method, found = std::move(found)](pb::ObjectVersion v) {
                         if (v.delete_marker()) {
                           return call->Fail(DeleteMarkerMethodError(http_method));
                         }
                         found(v);
                       });
  }
  call->front.index().ReadHead(
      call->bucket_info.bucket_id(), call->stored_key(),
      [call, http_method, found = std::move(found)](Result<std::optional<pb::ObjectHead>> head) {
        if (!head.ok()) return call->Fail(head.status());
        const bool live = head->has_value() && !(*head)->latest().delete_marker();
        if (!AuthorizedOnPendingObject(*call, live ? &(*head)->latest() : nullptr)) return;
        if (!head->has_value()) return call->Fail(S3Error(S3ErrorCode::kNoSuchKey));
        if ((*head)->latest().delete_marker()) {
          if (http_method == "GET" && call->HasParam("acl")) {
            return call->Fail(S3Error(S3ErrorCode::kNoSuchKey));
          }
          return call->Fail(DeleteMarkerMethodError(http_method));
        }
        found((*head)->latest());
      });
}

void GetObjectSubresource(CallPtr call) {
  const authz::Action action =
      call->HasParam("acl")
          ? ByVersion(*call, authz::Action::kGetObjectAcl, authz::Action::kGetObjectVersionAcl)
          : ByVersion(*call, authz::Action::kGetObjectTagging, authz::Action::kGetObjectVersionTagging);
  WithAuthorizedBucket(call, action, [call] {
    WithSubresourceVersion(call, [call](const pb::ObjectVersion& v) {
      if (call->HasParam("acl")) {
        // As decisions see it: disabled ACLs answer the bucket owner's.
        const ObjectAccess access =
            ObjectAccessOf(call->bucket_info.owner(), call->bucket_config.get(), v);
        const Owner owner = OwnerOfUser(*call, access.owner);
        if (!access.acl) return call->RespondXml(200, AccessControlPolicyXml(owner));
        return call->RespondXml(200, StoredAclXml(owner, v.acl()));
      }
      std::vector<Tag> tags;
      for (const pb::MetadataPair& t : v.tags()) tags.push_back({t.name(), t.value()});
      http::Headers headers;
      AddWrittenVersionHeader(call->bucket_info, v.version_id(), headers);
      call->RespondXml(200, TaggingXml(tags), std::move(headers));
    });
  });
}

namespace {

// PutObjectTagging (`body`) or DeleteObjectTagging (`remove`) of version
// `v`, decided on: one SetTags op on that version.
void ApplyTags(CallPtr call, bool remove, const std::string& body, const pb::ObjectVersion& v) {
  pb::S3Op op;
  pb::SetTagsOp* set = op.mutable_set_tags();
  set->set_bucket_id(call->bucket_info.bucket_id());
  set->set_key(call->stored_key());
  set->set_version_id(v.version_id());  // the version decided on
  if (!remove) {
    auto tags = ParseTagging(body);
    if (!tags.ok()) return call->Fail(tags.error());
    if (auto valid = ValidateTagSet(*tags, limits::kS3ObjectTagsMax); !valid.ok()) {
      return call->Fail(valid.error());
    }
    for (const Tag& t : *tags) {
      pb::MetadataPair* pair = set->add_tags();
      pair->set_name(t.key);
      pair->set_value(t.value);
    }
  }
  call->front.index().Apply(std::move(op), [call, remove](Result<pb::S3OpResult> r) {
    if (!r.ok()) return call->Fail(r.status());
    if (r->outcome() != pb::S3_OK) return call->Fail(OpOutcomeError(*call, *r));
    http::Headers headers;
    AddWrittenVersionHeader(call->bucket_info, r->version_id(), headers);
    call->Respond(remove ? 204 : 200, std::move(headers), "");
  });
}

}  // namespace

void SetObjectTagging(CallPtr call) {
  const bool remove = call->head().method == "DELETE";
  const authz::Action action =
      remove ? ByVersion(*call, authz::Action::kDeleteObjectTagging, authz::Action::kDeleteObjectVersionTagging)
             : ByVersion(*call, authz::Action::kPutObjectTagging, authz::Action::kPutObjectVersionTagging);
  if (const QueryParam* version = call->Param("versionId")) {
    if (version->value.empty() || !IsVersionIdSyntax(version->value)) {
      return call->Fail(VersionIdArgumentError(version->value));
    }
  }
  WithAuthorizedBucket(call, action, [call, remove] {
    ReadSmallBody(call, limits::kS3XmlBodyBytesMax, [call, remove](S3Result<std::string> read) {
      if (!read.ok()) return call->Fail(read.error());
      // The version first: tagging is its owner's (the decision needs it).
      WithSubresourceVersion(call, [call, remove, body = std::move(read).value()](
                                       const pb::ObjectVersion& v) {
        ApplyTags(call, remove, body, v);
      });
    });
  });
}

}  // namespace tessera::s3::front
