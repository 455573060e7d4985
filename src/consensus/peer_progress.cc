#include "consensus/peer_progress.h"

#include <algorithm>

#include "common/check.h"
#include "common/limits.h"

namespace tessera::consensus {

bool PeerProgress::WindowOpen() const {
  if (next > match + limits::kInflightSlotsPerPeerMax) return false;
  return inflight_.empty() || inflight_bytes_ < limits::kInflightBytesPerPeerMax;
}

void PeerProgress::RecordSent(Slot last_slot, size_t bytes) {
  TESSERA_CHECK(last_slot >= next);
  TESSERA_CHECK(inflight_.empty() || inflight_.back().last_slot < last_slot);
  inflight_.push_back({last_slot, bytes});
  inflight_bytes_ += bytes;
  next = last_slot + 1;
}

void PeerProgress::Acknowledged(Slot matched) {
  match = std::max(match, matched);
  next = std::max(next, match + 1);
  while (!inflight_.empty() && inflight_.front().last_slot <= match) {
    inflight_bytes_ -= inflight_.front().bytes;
    inflight_.pop_front();
  }
}

void PeerProgress::RewindTo(Slot from) {
  TESSERA_CHECK(from >= 1);
  next = from;
  // A record ending at or after `from` covers slots that are sent again.
  while (!inflight_.empty() && inflight_.back().last_slot >= from) {
    inflight_bytes_ -= inflight_.back().bytes;
    inflight_.pop_back();
  }
}

void PeerProgress::SkipThrough(Slot through) {
  next = std::max(next, through + 1);
  while (!inflight_.empty() && inflight_.front().last_slot <= through) {
    inflight_bytes_ -= inflight_.front().bytes;
    inflight_.pop_front();
  }
}

}  // namespace tessera::consensus
