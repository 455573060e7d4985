// `tessera kv token|put|get|del|scan`: the KV API of a cluster's router, for
// people and scripts. put/get/del/scan speak the native KV API on the
// router's kv_port (tessera::KvClient) with the first credential of
// DIR/credentials; token prints a bearer token for the HTTP/JSON API,
// narrowed to --table T (repeatable) and --read-only when given.
// get prints the value's bytes, plus a newline when stdout is a terminal
// and the value does not end with one (--raw: never); errors go to stderr.
// The layout is the one recorded in DIR (cli/cluster_record.h).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "cli/kv_partition_command.h"
#include "cli/kv_table_command.h"

namespace tessera::cli {

struct KvCommandArgs {
  std::string action;  // token | revoke | put | get | del | scan | table | partition
  std::string layout_path;  // --layout; empty: not given (cli/cluster_record.h)
  std::string dir;
  std::string table;
  std::string key;      // put/get/del; scan: start key
  std::string value;    // put
  std::string end_key;  // scan
  uint32_t limit = 100;  // scan
  bool eventual = false;  // get/scan: read any replica's applied state
  bool raw = false;       // get: exactly the value's bytes, even on a terminal
  bool out_is_terminal = false;  // get: `out` is a terminal (set by main)
  int64_t token_ttl_s = 3600;
  std::string token_access_key;             // token: whose credential (default: the first)
  std::vector<std::string> token_tables;    // token: only these tables (default: the credential's)
  bool token_read_only = false;             // token: reads only
  std::string revoked_token;                // revoke: the token
  KvTableArgs table_cmd;  // table create|describe|update (its dir/layout: the ones above)
  KvPartitionArgs partition_cmd;  // partitions, partition split (likewise)
};

// The text `kv get` prints for `value`: the value, and a newline when
// `terminal` and not `raw` and the value does not already end with one.
std::string KvGetOutput(const std::string& value, bool raw, bool terminal);

// Exit codes: 0 done, 1 get of an absent key, 2 usage, 3 failed, 4 throughput
// exceeded (the table's capacity; "throughput exceeded" on err); the
// message on err.
int RunKvCommand(const KvCommandArgs& args, std::ostream& out, std::ostream& err);

}  // namespace tessera::cli
