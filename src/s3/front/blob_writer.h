// BlobWriter: the pipelined writer of an object's (or a part's) bytes.
// Accepts bytes in order, cuts them into blobs of `blob_bytes` (the last
// one shorter), writes up to limits::kS3BlobWritesInFlightMax blobs at
// once through the BlobClient, and keeps their BlobRefs in object order.
// Every blob is written for one OWNER: the `_s3` key prefix of the object
// that will reference it (decision D21: a blob has exactly one owner
// object; copies copy bytes, never blob ids).
//
// Contract:
//  1. Write(data, ready): appends `data`; `ready` is called exactly once,
//     with OK when the caller may Write again (at once when the window has
//     room, else when an in-flight blob completes), or with the first
//     error of any blob write (later writes are refused with it). Callers
//     must wait for `ready` before the next Write: that is the backpressure
//     that bounds memory to about (kS3BlobWritesInFlightMax + 1) blobs plus
//     one Write's data.
//  2. Finish(done): writes the remaining buffered bytes as the last blob
//     (none when empty), waits for every blob in flight, then answers the
//     BlobRefs in object order, or the first error. Call once, after the
//     last Write's `ready`; no Write after it.
//  3. Abandon(): best-effort deletion of every blob this writer wrote or is
//     writing (in-flight ones are deleted when they complete). For a body
//     that failed or an op refused before it referenced the blobs; a blob
//     that survives is an orphan for the GC sweeper. Callbacks still
//     pending are still called (with Aborted).
//  4. Errors: Throttled from the blob client stays Throttled (S3 SlowDown);
//     other failures are Unavailable.
//
// Thread safety: one caller at a time (the upload's callback chain), but
// blob completions arrive on channel threads: internal state is guarded by
// a mutex, and callbacks run without it held. Hold it by shared_ptr (Create).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "blob/blob_client.h"
#include "common/result.h"
#include "common/status.h"
#include "tessera/s3.pb.h"

namespace tessera::s3::front {

class BlobWriter : public std::enable_shared_from_this<BlobWriter> {
 public:
  using ReadyCallback = std::function<void(Status)>;
  using DoneCallback = std::function<void(Result<std::vector<pb::BlobRef>>)>;

  // `blob_bytes` in 1..limits::kBlobBytesMax (CHECKed); `owner`: the owning
  // object's `_s3` key prefix (model::ObjectPrefix(bucket_id, key));
  // `expected_bytes`: how many bytes the caller means to write (sizes each
  // blob's buffer once, so appends never reallocate; 0 when unknown).
  static std::shared_ptr<BlobWriter> Create(blob::BlobClient& blobs, size_t blob_bytes,
                                            std::string owner, uint64_t expected_bytes);

  void Write(std::string data, ReadyCallback ready);
  void Finish(DoneCallback done);
  void Abandon();

  // Bytes accepted so far (buffered, in flight or written).
  uint64_t bytes_written() const;
  // Blobs started so far (in flight or written): tests count them.
  size_t blobs_started() const;
  // The most blobs that were ever in flight at once (tests assert the
  // window is used and respected).
  size_t max_in_flight_seen() const;

  BlobWriter(blob::BlobClient& blobs, size_t blob_bytes, std::string owner,
             uint64_t expected_bytes);

 private:
  struct Slot {
    pb::BlobRef ref;
    bool done = false;
  };
  // Appends `data` to buffer_, cutting each blob into pending_ as it
  // fills (mu_ held).
  void Buffer(std::string data);
  // Moves buffer_ (not empty) into pending_ as the next blob (mu_ held).
  void CutBlob();
  // Starts pending blobs while the window has room; returns the starts to
  // run after the lock is released (mu_ held).
  std::vector<std::function<void()>> StartPending();
  void OnBlobDone(size_t index, Status status);
  void RunCallbacks(std::vector<std::function<void()>> calls);
  std::function<void()> Completion();  // the finish/ready callbacks now due (mu_ held)

  blob::BlobClient& blobs_;
  const size_t blob_bytes_;
  const std::string owner_;
  const uint64_t expected_bytes_;
  mutable std::mutex mu_;  // guards everything below
  std::string buffer_;                              // bytes not yet cut (< blob_bytes_)
  std::vector<std::pair<size_t, std::string>> pending_;  // cut, not started: slot index, data
  std::vector<Slot> slots_;                         // every blob, in object order
  size_t in_flight_ = 0;
  size_t max_in_flight_seen_ = 0;
  uint64_t bytes_ = 0;  // accepted by Write
  Status error_;
  bool abandoned_ = false;
  bool finishing_ = false;
  ReadyCallback ready_;   // a Write waiting for room
  DoneCallback done_;     // Finish waiting for the last blobs
};

}  // namespace tessera::s3::front
