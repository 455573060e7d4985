// MessageSender: where a replication group's outbound messages (consensus
// and snapshot transfer) go. Split from group_host.h so that the snapshot
// transfer classes can use it without including GroupHost.
//
// Thread safety: implementations are thread-safe and non-blocking.
#pragma once

#include "tessera/consensus.pb.h"

namespace tessera::node {

// Thread-safe, non-blocking; may drop (the protocols tolerate loss).
class MessageSender {
 public:
  virtual ~MessageSender() = default;
  virtual void Send(pb::Message message) = 0;
};

}  // namespace tessera::node
