#include "s3/front/blob_writer.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "common/check.h"
#include "common/crc32c.h"
#include "common/limits.h"

namespace tessera::s3::front {

std::shared_ptr<BlobWriter> BlobWriter::Create(blob::BlobClient& blobs, size_t blob_bytes,
                                               std::string owner, uint64_t expected_bytes) {
  return std::make_shared<BlobWriter>(blobs, blob_bytes, std::move(owner), expected_bytes);
}

BlobWriter::BlobWriter(blob::BlobClient& blobs, size_t blob_bytes, std::string owner,
                       uint64_t expected_bytes)
    : blobs_(blobs),
      blob_bytes_(blob_bytes),
      owner_(std::move(owner)),
      expected_bytes_(expected_bytes) {
  TESSERA_CHECK(blob_bytes_ >= 1 && blob_bytes_ <= limits::kBlobBytesMax);
}

void BlobWriter::Write(std::string data, ReadyCallback ready) {
  std::vector<std::function<void()>> calls;
  {
    std::lock_guard lock(mu_);
    TESSERA_CHECK(!finishing_ && !ready_);
    if (!error_.ok() || abandoned_) {
      const Status error = error_.ok() ? Status::Aborted("blob writer abandoned") : error_;
      calls.push_back([ready = std::move(ready), error] { ready(error); });
    } else {
      Buffer(std::move(data));
      calls = StartPending();
      if (pending_.empty()) {
        calls.push_back([ready = std::move(ready)] { ready(Status::Ok()); });
      } else {
        ready_ = std::move(ready);  // the window is full: wait for a blob
      }
    }
  }
  RunCallbacks(std::move(calls));
}

void BlobWriter::Finish(DoneCallback done) {
  std::vector<std::function<void()>> calls;
  {
    std::lock_guard lock(mu_);
    TESSERA_CHECK(!finishing_ && !ready_);
    finishing_ = true;
    done_ = std::move(done);
    if (!buffer_.empty() && error_.ok() && !abandoned_) CutBlob();
    calls = StartPending();
    if (auto due = Completion()) calls.push_back(std::move(due));
  }
  RunCallbacks(std::move(calls));
}

void BlobWriter::Abandon() {
  std::vector<blob::BlobId> to_delete;
  std::vector<std::function<void()>> calls;
  {
    std::lock_guard lock(mu_);
    abandoned_ = true;
    pending_.clear();
    buffer_.clear();
    for (const Slot& slot : slots_) {
      if (!slot.done || slot.ref.blob_id().empty()) continue;
      if (auto id = blob::BlobId::Parse(slot.ref.blob_id()); id.ok()) to_delete.push_back(*id);
    }
    if (ready_) {
      calls.push_back([ready = std::move(ready_)] { ready(Status::Aborted("blob writer abandoned")); });
      ready_ = nullptr;
    }
    if (auto due = Completion()) calls.push_back(std::move(due));
  }
  for (const blob::BlobId& id : to_delete) blobs_.Delete(id, [](const Result<blob::BlobClient::DeleteOutcome>&) {});
  RunCallbacks(std::move(calls));
}

uint64_t BlobWriter::bytes_written() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

size_t BlobWriter::blobs_started() const {
  std::lock_guard lock(mu_);
  size_t started = 0;
  for (const Slot& slot : slots_) started += slot.ref.blob_id().empty() ? 0 : 1;
  return started;
}

size_t BlobWriter::max_in_flight_seen() const {
  std::lock_guard lock(mu_);
  return max_in_flight_seen_;
}

void BlobWriter::Buffer(std::string data) {
  // The bytes still to come when the caller's count holds.
  auto expected_rest = [this] { return expected_bytes_ > bytes_ ? expected_bytes_ - bytes_ : 0; };
  if (buffer_.empty() && data.size() <= blob_bytes_ &&
      (data.size() == blob_bytes_ || (expected_bytes_ != 0 && data.size() >= expected_rest()))) {
    // A whole blob, or the object's last bytes: kept without a copy.
    bytes_ += data.size();
    buffer_ = std::move(data);
  } else {
    std::string_view rest = data;
    while (!rest.empty()) {
      // Each blob's buffer is sized once: the rest of the object, at most
      // blob_bytes_.
      if (buffer_.empty()) {
        buffer_.reserve(static_cast<size_t>(
            std::min<uint64_t>(blob_bytes_, std::max<uint64_t>(expected_rest(), rest.size()))));
      }
      const size_t take = std::min(rest.size(), blob_bytes_ - buffer_.size());
      buffer_.append(rest.substr(0, take));
      rest.remove_prefix(take);
      bytes_ += take;
      if (buffer_.size() == blob_bytes_) CutBlob();
    }
  }
  if (buffer_.size() == blob_bytes_) CutBlob();
}

void BlobWriter::CutBlob() {
  pending_.emplace_back(slots_.size(), std::move(buffer_));
  slots_.emplace_back();
  buffer_ = std::string();
}

std::vector<std::function<void()>> BlobWriter::StartPending() {
  std::vector<std::function<void()>> starts;
  size_t taken = 0;
  while (taken < pending_.size() && in_flight_ < limits::kS3BlobWritesInFlightMax &&
         error_.ok() && !abandoned_) {
    auto& [index, data] = pending_[taken++];
    const blob::BlobId id = blobs_.NextBlobId();
    pb::BlobRef& ref = slots_[index].ref;
    ref.set_blob_id(id.ToString());
    ref.set_size(data.size());
    ref.set_crc32c(Crc32c(data));
    ++in_flight_;
    max_in_flight_seen_ = std::max(max_in_flight_seen_, in_flight_);
    starts.push_back([self = shared_from_this(), id, index = index, crc = ref.crc32c(),
                      data = std::move(data)]() mutable {
      self->blobs_.Put(
          id, self->owner_, std::move(data),
          [self, index](Status st) { self->OnBlobDone(index, std::move(st)); }, crc);
    });
  }
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(taken));
  return starts;
}

void BlobWriter::OnBlobDone(size_t index, Status status) {
  std::vector<std::function<void()>> calls;
  std::optional<blob::BlobId> orphan;
  {
    std::lock_guard lock(mu_);
    --in_flight_;
    slots_[index].done = true;
    if (!status.ok() && error_.ok()) {
      error_ = status.code() == StatusCode::kThrottled ? status
                                                        : Status::Unavailable(status.message());
    }
    if (abandoned_) {
      if (auto id = blob::BlobId::Parse(slots_[index].ref.blob_id()); id.ok()) orphan = *id;
    }
    calls = StartPending();
    if (ready_ && (pending_.empty() || !error_.ok())) {
      calls.push_back([ready = std::move(ready_), error = error_] { ready(error); });
      ready_ = nullptr;
    }
    if (auto due = Completion()) calls.push_back(std::move(due));
  }
  if (orphan) blobs_.Delete(*orphan, [](const Result<blob::BlobClient::DeleteOutcome>&) {});
  RunCallbacks(std::move(calls));
}

std::function<void()> BlobWriter::Completion() {
  if (!finishing_ || !done_ || in_flight_ > 0) return nullptr;
  if (error_.ok() && !abandoned_ && !pending_.empty()) return nullptr;
  DoneCallback done = std::move(done_);
  done_ = nullptr;
  if (!error_.ok() || abandoned_) {
    const Status error = error_.ok() ? Status::Aborted("blob writer abandoned") : error_;
    return [done = std::move(done), error] { done(error); };
  }
  std::vector<pb::BlobRef> refs;
  refs.reserve(slots_.size());
  for (const Slot& slot : slots_) refs.push_back(slot.ref);
  return [done = std::move(done), refs = std::move(refs)]() mutable { done(std::move(refs)); };
}

void BlobWriter::RunCallbacks(std::vector<std::function<void()>> calls) {
  for (auto& call : calls) call();
}

}  // namespace tessera::s3::front
