// The S3 invariants the simulator checks on a replica's applied state
// after a seed with S3 clients (s3_clients.h): the rows of one bucket (its
// object records and its usage record, as s3::model::RecordRow) and what
// the clients sent.
//
//   exactly-once  every S3 operation is in effect at most once: no two
//                 versions (or delete markers) carry the same operation
//                 tag; an operation refused before it was proposed is not
//                 in effect; every acknowledged versioned put is still a
//                 version unless a delete of that version id was sent; a
//                 version's bytes are its operation's body;
//                 a version's tags are those of a tagging operation
//                 sent for its key (never a refused one);
//                 every upload record is a create that was sent and
//                 every acknowledged one that no completion or abort was
//                 sent for is still there;
//   no ghosts     every version and data record belongs to a head, every
//                 part record to an upload record, the
//                 head's version chain reaches every version record of its
//                 key (links both ways consistent), the head's latest is
//                 the chain's newest version, and a data record exists
//                 exactly for each version stored with one;
//   usage exact   the bucket's usage record (objects, bytes, versions,
//                 uploads, part bytes) equals a full scan of the records;
//   listing       s3::model::ListPartition over the state returns every
//                 live key (latest not a delete marker) once, in order.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "s3/model/listing.h"
#include "tessera/s3.pb.h"
#include "tessera/s3_registry.pb.h"

namespace tessera::sim {

// What the clients know of one S3 operation they sent.
struct S3SentOp {
  enum class Kind {
    kPut,
    kDeleteLatest,
    kDeleteVersion,
    kCreateUpload,    // upload id: the tag
    kUploadPart,      // of upload_id; a part record whose etag is the tag
    kCompleteUpload,  // of upload_id; the object's etag is the tag
    kAbortUpload,     // of upload_id
    kSetTags,         // of version_id (empty: the latest): one tag "op" = the tag
  };
  enum class Fate {
    kAcked,    // answered: in effect (when s3_outcome is S3_OK)
    kUnknown,  // no answer that proves either way
    kRefused,  // refused before it was proposed: never in effect
  };
  Kind kind = Kind::kPut;
  std::string key;
  // Unique per operation: a put's etag, a delete marker's owner.
  std::string tag;
  std::string body;  // puts
  pb::BucketVersioning versioning = pb::VERSIONING_UNSET;
  std::string version_id;    // kDeleteVersion: the version addressed; acked: the answer's
  std::string upload_id;     // parts, completions, aborts
  uint32_t part_number = 0;  // parts
  uint64_t part_size = 0;    // parts
  std::vector<std::pair<uint32_t, std::string>> parts;  // completions: number, etag
  Fate fate = Fate::kUnknown;
  pb::S3Outcome s3_outcome = pb::S3_OK;  // acked only
};

// Empty when the rows of `bucket_id` satisfy every invariant above for the
// operations `sent`; else the first violation ("exactly-once: ...",
// "ghost: ...", "usage: ...", "listing: ...").
std::string CheckS3State(const std::vector<s3::model::RecordRow>& rows, uint64_t bucket_id,
                         const std::vector<S3SentOp>& sent);

}  // namespace tessera::sim
