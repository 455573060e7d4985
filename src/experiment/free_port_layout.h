// A copy of a layout on free loopback ports, for a fresh cluster that must
// not collide with another cluster on the machine (the developer's, or a
// test's under `ctest -j`).
//
// Ports come from below the kernel's ephemeral range (where outgoing
// connections take theirs), in blocks of kPortBlock, each claimed by an
// exclusive flock on TMPDIR/tessera-test-ports/FIRST.lock held until the
// process exits: the protocol of tests/integration/free_ports.py, so the
// two never hand out the same block at once. A block with a port something
// already listens on is skipped.
//
// Thread safety: call from one thread.
#pragma once

#include "common/result.h"
#include "tessera/cluster.pb.h"

namespace tessera::experiment {

inline constexpr uint32_t kPortBlock = 32;

// `layout` with every non-zero port of every process replaced by a free
// one. Unavailable when no free block is left.
Result<pb::ClusterLayout> WithFreePorts(pb::ClusterLayout layout);

}  // namespace tessera::experiment
