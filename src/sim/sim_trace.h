// Tracer: the simulator's event trace. Every event is folded into a 64-bit
// digest (always, cheaply, from its numbers) and, when an output stream is
// given, also written as one readable line: virtual time, who, what. Nothing
// in a line depends on anything but the seed, so traces diff cleanly.
//
// Thread safety: none; owned by one simulation.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

#include "consensus/options.h"
#include "tessera/consensus.pb.h"

namespace tessera::sim {

class Tracer {
 public:
  explicit Tracer(std::ostream* out) : out_(out) {}

  bool enabled() const { return out_ != nullptr; }
  uint64_t hash() const { return hash_; }

  void Mix(uint64_t value) {
    hash_ ^= value + 0x9e3779b97f4a7c15ULL + (hash_ << 6) + (hash_ >> 2);
    hash_ *= 0xff51afd7ed558ccdULL;
  }

  // Records an event; `describe` builds the line's text only when tracing.
  template <typename Describe>
  void Event(consensus::TimeUs now, std::string_view who, uint64_t code, uint64_t a,
             uint64_t b, Describe&& describe) {
    Mix(now);
    Mix(code);
    Mix(a);
    Mix(b);
    if (out_ != nullptr) Write(now, who, describe());
  }

 private:
  void Write(consensus::TimeUs now, std::string_view who, const std::string& text);

  std::ostream* out_;
  uint64_t hash_ = 0xcbf29ce484222325ULL;
};

// "12.345678s" for a virtual time in microseconds.
std::string FormatTime(consensus::TimeUs time_us);
// "c3:17" for the 17th request id of client 3 (client << 40 | sequence).
std::string FormatRequestId(uint64_t request_id);
// "3.1" for ballot (round 3, replica 1).
std::string FormatBallot(const pb::Ballot& ballot);
// One-line summary of a consensus message for the trace.
std::string DescribeMessage(const pb::Message& message);
// A digest of the fields DescribeMessage shows.
uint64_t MessageDigest(const pb::Message& message);

}  // namespace tessera::sim
