// `tessera s3 user create NAME | user list | bucket create NAME | bucket set-capacity NAME |
// buckets | check | usage | client-config CLIENT`: the S3 users and the bucket
// registry of a running cluster, through its metadata service (the cluster
// secret in DIR/secret authenticates the calls), and configurations for S3
// clients (cli/s3_client_config.h).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace CLI {
class App;
}  // namespace CLI

namespace tessera::cli {

struct S3CommandArgs {
  // user-create | user-list | bucket-create | bucket-set-capacity | buckets | check | usage |
  // client-config
  std::string action;
  std::string layout_path;  // --layout; empty: not given (cli/cluster_record.h)
  std::string dir;
  std::string name;        // user-create: the user; bucket-create, usage: the bucket
  std::string access_key;  // user-create: optional, with secret_key
  std::string secret_key;
  std::string display_name;  // user-create: optional ("" = the name)
  std::string email;         // user-create: optional
  std::string owner;       // buckets: only this owner's ("" = all); bucket-create: its owner
  uint64_t bucket_id = 0;  // bucket-create: 0 = placed by the metadata service
  std::string region;      // bucket-create
  // bucket-create: the key layout ("ordered", "hashed:N"; empty: ordered),
  // from --key-layout or a --layout value spelled so (SortLayoutValues).
  std::string key_layout;
  // bucket-create: every --layout value as given; SortLayoutValues moves
  // the key layout out and leaves the cluster layout path in layout_path.
  std::vector<std::string> layout_values;
  bool json = false;       // check, usage: JSON output
  std::string client;      // client-config: aws | s3cmd | rclone | boto3
  std::string user;        // client-config: whose keys ("": DIR/credentials' first, user admin)
  bool https = false;      // client-config: the HTTPS endpoint and the CA bundle
  // bucket-set-capacity: as `kv table update` (signed: a negative value
  // gets our message); owner non-empty: only if the bucket is its.
  std::optional<int64_t> rcu, wcu;
  bool on_demand = false;
};

// `s3 bucket create` takes `--layout` twice over: the cluster layout file
// (as every command) and the bucket's key layout (`--layout hashed:8`).
// A value "ordered" or starting with "hashed" is the key layout, any other
// the cluster layout path. InvalidArgument for two of either kind.
Status SortLayoutValues(S3CommandArgs& a);

// Exit codes: 0 done, 2 usage, 3 failed (message on err). user create
// prints "user NAME\naccess_key AK\nsecret_key SK\ncanonical_id ID\n
// display_name DN\n" and "email E\n" when it has one; user list prints
// "NAME KEY1,KEY2 id=ID display_name=DN [email=E]" per user; bucket create prints
// the bucket's line as `buckets` does (with " (already owned by you)" when
// the owner already had it: exit 0; another owner's name, a used id, or
// the owner's bucket with another id than --id: 3);
// the lists print one line per user / bucket; check prints the blob
// checker's report (cli/s3_check.h) and exits 1 when it finds a mismatch;
// usage prints "NAME objects=N bytes=N versions=N uploads=N part_bytes=N
// (P partitions)" (or one JSON object), summed over the `_s3` partitions;
// client-config prints the client's configuration for the first router
// with an S3 port (HTTPS: its TLS port, trusting DIR/tls/ca.pem), the
// layout's region and the user's first access key (needs the metadata
// service only with --user).
int RunS3Command(const S3CommandArgs& args, std::ostream& out, std::ostream& err);

// Adds `s3 user create|list`, `s3 bucket create` and `s3 buckets` to `app`, filling `args`
// (defined with the other flag wiring in cluster_flags.cc). Returns the
// `s3` subcommand (test `*cmd` after parsing).
CLI::App* AddS3Commands(CLI::App& app, S3CommandArgs& args);

}  // namespace tessera::cli
