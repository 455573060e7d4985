#include "node/snapshot_sender.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <deque>
#include <random>

#include "common/check.h"
#include "knobs/knobs.h"
#include "storage/snapshot_staging.h"

namespace tessera::node {

struct SnapshotSender::Transfer {
  consensus::ReplicaId to = 0;
  uint64_t snapshot_id = 0;
  std::unique_ptr<storage::GroupSnapshot> snapshot;
  pb::SnapshotManifest manifest;  // totals of the chunks built so far
  bool exhausted = false;         // every pair is in a built chunk
  bool read_failed = false;       // the snapshot could not be read
  uint64_t next_seq = 0;          // the next chunk to build
  uint64_t acked = 0;             // chunks 0..acked-1 are staged on `to`
  struct Chunk {
    pb::Message message;
    size_t bytes = 0;
  };
  std::deque<Chunk> unacked;  // chunks acked..next_seq-1, less `held`
  // The chunk next_seq-1, built and held back by the node's pacer.
  std::optional<Chunk> held;
  uint64_t last_progress_us = 0;
  uint64_t last_send_us = 0;
};

namespace {

size_t ClampChunkBytes(size_t bytes) {
  return std::clamp<size_t>(bytes, knobs::kNodeSnapshotChunkBytes.min, knobs::kNodeSnapshotChunkBytes.max);
}

uint64_t RandomId() {
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) ^ device();
}

}  // namespace

SnapshotPacer::SnapshotPacer(uint64_t bytes_per_s)
    : bytes_per_s_(bytes_per_s),
      burst_bytes_(static_cast<double>(bytes_per_s) / 10),
      tokens_(burst_bytes_) {
  TESSERA_CHECK(bytes_per_s > 0);
}

void SnapshotPacer::Refill(uint64_t now_us) {
  if (last_us_ == 0 || now_us < last_us_) last_us_ = now_us;
  tokens_ = std::min(burst_bytes_, tokens_ + static_cast<double>(now_us - last_us_) *
                                                 static_cast<double>(bytes_per_s_) / 1e6);
  last_us_ = now_us;
}

bool SnapshotPacer::Ready(uint64_t now_us) {
  std::lock_guard lock(mu_);
  Refill(now_us);
  return tokens_ >= 0;
}

void SnapshotPacer::Take(size_t bytes) {
  std::lock_guard lock(mu_);
  tokens_ -= static_cast<double>(bytes);
}

SnapshotSender::SnapshotSender(storage::NodeStore* store, uint64_t group_id,
                               consensus::ReplicaId self, MessageSender* out,
                               SnapshotTransferOptions options, SnapshotCounters* counters)
    : store_(store),
      group_id_(group_id),
      self_(self),
      out_(out),
      options_(options),
      counters_(counters),
      next_id_(RandomId()) {
  TESSERA_CHECK(options_.window_chunks >= 1 &&
                options_.window_chunks <= limits::kSnapshotChunksInFlightMax);
}

SnapshotSender::~SnapshotSender() = default;

void SnapshotSender::Start(uint64_t now_us, consensus::ReplicaId to) {
  std::lock_guard lock(mu_);
  if (closed_ || transfers_.count(to) || transfers_.size() >= limits::kSnapshotTransfersPerGroupMax) return;
  auto snapshot = store_->OpenSnapshot(group_id_);
  if (!snapshot.ok()) {
    spdlog::warn("node.snapshot_open_failed group={} to={} reason=\"{}\"", group_id_, to,
                 snapshot.status().ToString());
    return;
  }
  auto t = std::make_unique<Transfer>();
  t->to = to;
  if (++next_id_ == 0) ++next_id_;
  t->snapshot_id = next_id_;
  t->snapshot = std::move(snapshot).value();
  t->manifest.set_snapshot_id(t->snapshot_id);
  t->manifest.set_applied_index(t->snapshot->applied_index());
  if (t->snapshot->range_end()) {
    t->manifest.mutable_range_end()->set_end_key(*t->snapshot->range_end());
  }
  t->last_progress_us = now_us;
  spdlog::info("node.snapshot_transfer_started group={} to={} snapshot={} applied_index={}",
               group_id_, to, t->snapshot_id, t->snapshot->applied_index());
  auto [it, inserted] = transfers_.emplace(to, std::move(t));
  TESSERA_CHECK(inserted);
  FillWindow(now_us, *it->second);
  if (it->second->read_failed) Abandon(it, "snapshot read failed");
}

// Builds and sends chunks until the window is full or the state is
// exhausted. A read error releases the snapshot (the caller abandons).
void SnapshotSender::FillWindow(uint64_t now_us, Transfer& t) {
  const size_t chunk_bytes = ClampChunkBytes(options_.chunk_bytes);
  while ((!t.exhausted || t.held) && t.unacked.size() < options_.window_chunks) {
    if (t.held) {
      // Paced: Tick sends it once the node's bucket allows.
      if (options_.pacer && !options_.pacer->Ready(now_us)) break;
      // Waiting for the pacer with nothing unacknowledged is no stall.
      if (t.unacked.empty()) t.last_progress_us = now_us;
      if (options_.pacer) options_.pacer->Take(t.held->bytes);
      SendChunk(t.held->message, t.held->bytes);
      t.unacked.push_back(std::move(*t.held));
      t.held.reset();
      t.last_send_us = now_us;
      continue;
    }
    Transfer::Chunk chunk;
    chunk.message.set_group_id(group_id_);
    chunk.message.set_from(self_);
    chunk.message.set_to(t.to);
    pb::SnapshotChunk* body = chunk.message.mutable_snapshot_transfer()->mutable_chunk();
    body->set_snapshot_id(t.snapshot_id);
    body->set_seq(t.next_seq);
    while (chunk.bytes < chunk_bytes) {
      auto next = t.snapshot->Next();
      if (!next.ok()) {
        spdlog::error("node.snapshot_read_failed group={} reason=\"{}\"", group_id_,
                      next.status().ToString());
        t.read_failed = true;
        t.snapshot.reset();
        return;
      }
      if (!next->has_value()) {
        t.exhausted = true;
        break;
      }
      storage::KeyValue& kv = **next;
      storage::AddPairToManifest(kv.key, kv.value, &t.manifest);
      chunk.bytes += kv.key.size() + kv.value.size();
      pb::SnapshotPair* pair = body->add_pairs();
      pair->set_key(std::move(kv.key));
      pair->set_value(std::move(kv.value));
    }
    // The last pair may end a chunk exactly: an empty chunk then follows
    // only when it is chunk 0 (the receiver needs at least one).
    if (body->pairs_size() == 0 && t.next_seq > 0) break;
    ++t.next_seq;
    t.held = std::move(chunk);  // sent by the next iteration, pacer permitting
  }
  if (t.exhausted) t.snapshot.reset();  // every pair is held in the window
}

void SnapshotSender::SendChunk(const pb::Message& message, size_t bytes) {
  if (counters_) {
    counters_->chunks_sent.Increment();
    counters_->bytes_sent.Increment(bytes);
  }
  out_->Send(message);
}

std::optional<SnapshotSender::Completed> SnapshotSender::OnAck(uint64_t now_us,
                                                               consensus::ReplicaId from,
                                                               const pb::SnapshotChunkAck& ack) {
  std::lock_guard lock(mu_);
  auto it = transfers_.find(from);
  if (it == transfers_.end() || it->second->snapshot_id != ack.snapshot_id()) return std::nullopt;
  Transfer& t = *it->second;
  if (ack.staged_chunks() < t.acked) {
    Abandon(it, "receiver lost its staging");
    return std::nullopt;
  }
  if (ack.staged_chunks() > t.next_seq || ack.staged_chunks() == t.acked) return std::nullopt;
  while (t.acked < ack.staged_chunks()) {
    t.unacked.pop_front();
    ++t.acked;
  }
  t.last_progress_us = now_us;
  if (!t.exhausted || t.held) {
    FillWindow(now_us, t);
    if (t.read_failed) {
      Abandon(it, "snapshot read failed");
      return std::nullopt;
    }
  }
  if (!t.exhausted || t.held || !t.unacked.empty()) return std::nullopt;
  t.manifest.set_chunk_count(t.next_seq);
  Completed done{t.to, t.manifest.applied_index(), t.manifest.SerializeAsString()};
  spdlog::info(
      "node.snapshot_transfer_completed group={} to={} snapshot={} chunks={} pairs={} bytes={}",
      group_id_, t.to, t.snapshot_id, t.next_seq, t.manifest.pair_count(),
      t.manifest.total_bytes());
  if (counters_) counters_->transfers_completed.Increment();
  transfers_.erase(it);
  return done;
}

void SnapshotSender::Tick(uint64_t now_us) {
  std::lock_guard lock(mu_);
  for (auto it = transfers_.begin(); it != transfers_.end();) {
    auto current = it++;
    Transfer& t = *current->second;
    if (now_us >= t.last_progress_us + options_.stall_timeout_us) {
      Abandon(current, "stalled");
      continue;
    }
    if ((!t.exhausted || t.held) && t.unacked.size() < options_.window_chunks) {  // paced
      FillWindow(now_us, t);
      if (t.read_failed) {
        Abandon(current, "snapshot read failed");
        continue;
      }
    }
    if (t.unacked.empty() || now_us < t.last_send_us + options_.retransmit_us) continue;
    for (const Transfer::Chunk& chunk : t.unacked) SendChunk(chunk.message, chunk.bytes);
    t.last_send_us = now_us;
  }
}

std::optional<consensus::Slot> SnapshotSender::OldestPinnedIndex() const {
  std::lock_guard lock(mu_);
  std::optional<consensus::Slot> oldest;
  for (const auto& [to, t] : transfers_) {
    const consensus::Slot index = t->manifest.applied_index();
    if (!oldest || index < *oldest) oldest = index;
  }
  return oldest;
}

size_t SnapshotSender::transfers() const {
  std::lock_guard lock(mu_);
  return transfers_.size();
}

void SnapshotSender::AbortAll() {
  std::lock_guard lock(mu_);
  closed_ = true;
  while (!transfers_.empty()) Abandon(transfers_.begin(), "group stopped");
}

void SnapshotSender::Abandon(std::map<consensus::ReplicaId, std::unique_ptr<Transfer>>::iterator it,
                             const char* reason) {
  spdlog::info("node.snapshot_transfer_abandoned group={} to={} snapshot={} acked={} reason=\"{}\"",
               group_id_, it->first, it->second->snapshot_id, it->second->acked, reason);
  if (counters_) counters_->transfers_abandoned.Increment();
  transfers_.erase(it);
}

}  // namespace tessera::node
