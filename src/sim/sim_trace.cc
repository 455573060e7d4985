#include "sim/sim_trace.h"

#include <cstdio>

namespace tessera::sim {

void Tracer::Write(consensus::TimeUs now, std::string_view who, const std::string& text) {
  *out_ << FormatTime(now) << ' ' << who << ' ' << text << '\n';
}

std::string FormatTime(consensus::TimeUs time_us) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%4llu.%06llus",
                static_cast<unsigned long long>(time_us / 1'000'000),
                static_cast<unsigned long long>(time_us % 1'000'000));
  return buffer;
}

std::string FormatRequestId(uint64_t request_id) {
  return "c" + std::to_string(request_id >> 40) + ":" +
         std::to_string(request_id & ((uint64_t{1} << 40) - 1));
}

std::string FormatBallot(const pb::Ballot& ballot) {
  return std::to_string(ballot.round()) + "." + std::to_string(ballot.replica());
}

namespace {

std::string DescribeBody(const pb::Message& m) {
  switch (m.body_case()) {
    case pb::Message::kPrepare:
      return "prepare from=" + std::to_string(m.prepare().from_slot()) +
             " chosen=" + std::to_string(m.prepare().chosen_index()) +
             (m.prepare().has_released_ballot()
                  ? " released=" + FormatBallot(m.prepare().released_ballot())
                  : std::string());
    case pb::Message::kPromise:
      return std::string("promise ") + (m.promise().granted() ? "granted" : "refused") +
             " promised=" + FormatBallot(m.promise().promised()) +
             " chosen=" + std::to_string(m.promise().chosen_index()) +
             " entries=" + std::to_string(m.promise().entries_size()) +
             (m.promise().partial() ? " partial" : "") +
             (m.promise().lease_active() ? " lease-active" : "");
    case pb::Message::kAccept:
      return "accept first=" + std::to_string(m.accept().first_slot()) +
             " n=" + std::to_string(m.accept().entries_size()) +
             " commit=" + std::to_string(m.accept().commit_index()) +
             " seq=" + std::to_string(m.accept().seq());
    case pb::Message::kAccepted:
      return std::string("accepted ") + (m.accepted().ok() ? "ok" : "no") +
             " promised=" + FormatBallot(m.accepted().promised()) +
             " matched=" + std::to_string(m.accepted().matched_slot()) +
             " seq=" + std::to_string(m.accepted().seq());
    case pb::Message::kPreVote:
      return "pre-vote round=" + std::to_string(m.pre_vote().next_round());
    case pb::Message::kPreVoteReply:
      return std::string("pre-vote-reply ") +
             (m.pre_vote_reply().granted() ? "granted" : "refused");
    case pb::Message::kInstallSnapshot:
      return "install-snapshot last=" +
             std::to_string(m.install_snapshot().meta().last_slot()) +
             " bytes=" + std::to_string(m.install_snapshot().data().size());
    case pb::Message::kTimeoutNow:
      return "timeout-now";
    case pb::Message::BODY_NOT_SET:
      break;
  }
  return "empty";
}

uint64_t BodyDigest(const pb::Message& m) {
  switch (m.body_case()) {
    case pb::Message::kPrepare:
      return m.prepare().from_slot() * 31 + m.prepare().chosen_index();
    case pb::Message::kPromise:
      return (m.promise().granted() ? 1 : 2) + m.promise().chosen_index() * 31 +
             static_cast<uint64_t>(m.promise().entries_size()) * 1009;
    case pb::Message::kAccept:
      return m.accept().first_slot() * 31 + m.accept().commit_index() * 1009 +
             static_cast<uint64_t>(m.accept().entries_size()) + (m.accept().seq() << 20);
    case pb::Message::kAccepted:
      return (m.accepted().ok() ? 1 : 2) + m.accepted().matched_slot() * 31 +
             (m.accepted().seq() << 20);
    case pb::Message::kPreVote:
      return m.pre_vote().next_round();
    case pb::Message::kPreVoteReply:
      return m.pre_vote_reply().granted() ? 1 : 2;
    case pb::Message::kInstallSnapshot:
      return m.install_snapshot().meta().last_slot() * 31 +
             m.install_snapshot().data().size();
    case pb::Message::kTimeoutNow:
      return 3;
    case pb::Message::BODY_NOT_SET:
      break;
  }
  return 0;
}

}  // namespace

std::string DescribeMessage(const pb::Message& message) {
  return "r" + std::to_string(message.from()) + "->r" + std::to_string(message.to()) + " b=" +
         FormatBallot(message.ballot()) + " " + DescribeBody(message);
}

uint64_t MessageDigest(const pb::Message& message) {
  return (static_cast<uint64_t>(message.body_case()) << 56) ^
         (static_cast<uint64_t>(message.from()) << 48) ^
         (static_cast<uint64_t>(message.to()) << 40) ^ (message.ballot().round() << 8) ^
         message.ballot().replica() ^ (BodyDigest(message) * 0x9e3779b97f4a7c15ULL);
}

}  // namespace tessera::sim
