// `tessera kv partitions TABLE` and `tessera kv partition split TABLE
// (--key K | --auto [--in K]) [--no-wait] [--timeout S]`: a KV table's
// partitions, and a split an operator asks for (docs/partition-splits.md).
//
// partitions prints one line per partition of meta's map, in key order:
//   group G epoch E [START, END) replicas N,N,N
// (keys quoted, bytes outside printable ASCII as \xHH; an empty END is the
// end of the key space).
// split asks meta to record the split (meta.request_split: the partition
// holding --key split at --key, or with --auto the partition holding --in
// (default: the table's first) at the key its leader chooses); the active
// autoadmin carries it out in its next round. Unless --no-wait it waits
// (at most --timeout, knob cluster.split_timeout_s) until meta's map shows both
// halves, and prints them as `partitions` does; a request the autoadmin
// refused (it is gone, the map unchanged) fails with the hint to read
// `tessera autoadmin status`.
// Exit codes: 0 done, 2 bad input (unknown table, a key that is a
// partition's start), 3 failed or timed out; the message on err.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "knobs/knobs.h"
#include "tessera/cluster_rpc.pb.h"

namespace tessera::cli {

struct KvPartitionArgs {
  std::string action;  // list | split
  std::string layout_path;
  std::string dir;
  std::string table;
  std::string key;              // split --key
  bool auto_key = false;        // split --auto
  std::string in_key;           // split --auto --in: a key of the partition to split
  bool no_wait = false;
  uint32_t timeout_s = knobs::kClusterSplitTimeoutS.default_value;
};

// One line per partition, as the header says.
std::string PartitionLines(const std::vector<pb::PartitionDescriptor>& partitions);

int RunKvPartitionCommand(const KvPartitionArgs& args, std::ostream& out, std::ostream& err);

}  // namespace tessera::cli
