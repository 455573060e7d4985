#include "cli/cluster_flags.h"

#include <cstdint>
#include <cstdlib>

#include "cli/knob_flag.h"
#include "cli/s3_command.h"
#include "common/fault_clock.h"
#include "common/limits.h"

namespace tessera::cli {
std::string DefaultClusterDir() {
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "/tmp") + "/.tessera/local";
}

namespace {

constexpr const char* kLayoutHelp =
    "cluster layout (protobuf text format); default: the one `cluster up` recorded in --dir, "
    "else the cluster/local.textproto shipped with tessera. Refused when it differs from the "
    "recorded one";

struct Action {
  const char* name;
  const char* help;
  const char* targets_help;  // nullptr: takes no targets
};

constexpr Action kActions[] = {
    {"up", "start the cluster, wait until every partition has a leader, stay in the foreground", nullptr},
    {"plan", "show the processes `up` starts", nullptr},
    {"down", "stop every process of the cluster", nullptr},
    {"status", "processes with AZ and state; partitions with replicas, leader, applied index, lag", nullptr},
    {"kill", "SIGKILL processes", "process names or AZs"},
    {"stop", "pause processes (SIGSTOP)", "process names or AZs"},
    {"resume", "resume paused processes (SIGCONT)", "process names or AZs"},
    {"restart", "stop and start processes again", "process names or AZs"},
    {"partition", "cut two processes or AZs apart (both ways unless --one-way)", "A B"},
    {"heal", "remove every network and disk fault", nullptr},
    {"slow-disk", "delay every synced log write of processes by --ms", "process names or AZs"},
    {"full-disk", "make every synced write of processes fail, as on a full disk (until heal)",
     "process names or AZs"},
    {"clock", "offset the wall clock (--offset-ms) and skew the consensus clock (--skew-ppm) of processes; 0 clears",
     "process names or AZs (storage nodes and meta replicas)"},
    {"digest", "per hosted group of storage nodes: applied index and a checksum of the whole state",
     "process names or AZs"},
    {"drain", "move every replica off storage nodes (the autoadmin does it) and wait until they hold none",
     "storage node names"},
    {"add-node", "start a new storage node and add it to the running cluster (the autoadmin moves replicas onto it)",
     "NAME of the new storage node"},
};

}  // namespace

CLI::App* AddClusterCommands(CLI::App& app, ClusterCommandArgs& args) {
  args.dir = DefaultClusterDir();
  CLI::App* cluster = app.add_subcommand("cluster", "the local three-AZ cluster");
  cluster->require_subcommand(1);
  for (const Action& a : kActions) {
    CLI::App* sub = cluster->add_subcommand(a.name, a.help);
    sub->add_option("--layout", args.layout_path, kLayoutHelp);
    sub->add_option("--dir", args.dir, "cluster directory: data, logs, pids, secret, credentials");
    if (a.targets_help != nullptr) sub->add_option("targets", args.targets, a.targets_help)->required();
    sub->add_option("--as", args.caller,
                    "NAME: call the processes with the certificate of process NAME instead of "
                    "the operator's (probes of the access rules)");
    const std::string name = a.name;
    if (name == "up") {
      sub->add_flag("--detach", args.detach, "return once the cluster is ready");
      AddKnobFlag(sub, knobs::kClusterPartitions, args.partitions);
      sub->add_option("--kv-split", args.kv_splits,
                      "KEY: split the default table kv at KEY instead of --partitions even "
                      "ranges (repeatable, strictly ascending)")
          ->take_all()
          ->allow_extra_args(false);
      sub->add_option("--s3-split", args.s3_splits,
                      "BUCKET_ID:OBJECT_KEY: also split the S3 table at that object key and at "
                      "the bucket's bounds (repeatable; for tests)")
          ->take_all()
          ->allow_extra_args(false);
    }
    if (name == "partition") sub->add_flag("--one-way", args.one_way, "cut only A -> B");
    if (name == "status") {
      sub->add_flag("--json", args.json,
                    "one JSON object (processes, partitions with their replicas) instead of text");
    }
    if (name == "slow-disk") sub->add_option("--ms", args.slow_ms, "added fsync delay")->required();
    if (name == "clock") {
      sub->add_option("--offset-ms", args.clock_offset_ms,
                      "added to the wall clock the processes read (a clock jump), either way")
          ->check(CLI::Range(-fault_clock::kOffsetMsMax, fault_clock::kOffsetMsMax));
      sub->add_option("--skew-ppm", args.clock_skew_ppm,
                      "the consensus hosts' monotonic time runs this many millionths faster "
                      "(negative: slower)")
          ->check(CLI::Range(-fault_clock::kSkewPpmMax, fault_clock::kSkewPpmMax));
    }
    if (name == "drain") {
      sub->add_flag("--undo", args.drain_undo, "stop draining: the nodes may receive replicas again");
      sub->add_flag("--no-wait", args.drain_no_wait, "return once meta recorded the drain");
      AddKnobFlag(sub, knobs::kClusterDrainTimeoutS, args.drain_timeout_s);
    }
    if (name == "add-node") {
      sub->add_option("--az", args.add_az, "the new node's AZ (one of the layout's)")->required();
      sub->add_option("--host", args.add_host, "loopback address (default: the AZ's nodes' host)");
      sub->add_option("--peer-port", args.add_peer_port, "internal RPC port (default: the next free one)")
          ->check(CLI::Range(1, 65535));
      sub->add_option("--http-port", args.add_http_port, "metrics and health port (default: the next free one)")
          ->check(CLI::Range(1, 65535));
    }
    sub->callback([&args, name] { args.action = name; });
  }
  return cluster;
}

// `kv table create|describe|update` (kv_table_command.h).
template <class Common>
void AddKvTableCommands(CLI::App& kv, KvCommandArgs& args, Common common) {
  KvTableArgs& t = args.table_cmd;
  CLI::App* table = kv.add_subcommand("table", "create, describe or update a table (partitions, capacity)");
  table->require_subcommand(1);
  CLI::App* create = table->add_subcommand("create", "create a table (unset capacity: not throttled)");
  create->add_option("--partitions", t.partitions, "even ranges of the byte key space (default 1)");
  CLI::App* describe = table->add_subcommand("describe", "print a table's id, partitions and capacity");
  CLI::App* update = table->add_subcommand("update", "change a table's capacity (within about a second)");
  for (CLI::App* sub : {create, describe, update}) {
    common(sub);
    sub->add_option("name", t.table, "the table")->required();
    if (sub != describe) {
      sub->add_option("--rcu", t.rcu, "provisioned read units per second (1..1000000)");
      sub->add_option("--wcu", t.wcu, "provisioned write units per second (1..1000000)");
      sub->add_flag("--on-demand", t.on_demand, "on-demand capacity");
    }
    const std::string name = sub->get_name();
    sub->callback([&args, name] {
      args.action = "table";
      args.table_cmd.action = name;
    });
  }
}

// `kv partitions`, `kv partition split` (kv_partition_command.h).
template <class Common>
void AddKvPartitionCommands(CLI::App& kv, KvCommandArgs& args, Common common) {
  KvPartitionArgs& p = args.partition_cmd;
  CLI::App* list = kv.add_subcommand("partitions", "list a table's partitions (meta's map)");
  common(list);
  list->add_option("table", p.table, "the table")->required();
  list->callback([&args] {
    args.action = "partition";
    args.partition_cmd.action = "list";
  });
  CLI::App* partition = kv.add_subcommand("partition", "split a table's partition");
  partition->require_subcommand(1);
  CLI::App* split = partition->add_subcommand(
      "split", "ask the autoadmin to split a partition (at --key, or --auto at the key halving it)");
  common(split);
  split->add_option("table", p.table, "the table")->required();
  split->add_option("--key", p.key, "split the partition holding this key at it");
  split->add_flag("--auto", p.auto_key, "split at the key that halves the partition's bytes");
  split->add_option("--in", p.in_key, "with --auto: a key of the partition to split (default: the first)");
  split->add_flag("--no-wait", p.no_wait, "return once meta recorded the request");
  AddKnobFlag(split, knobs::kClusterSplitTimeoutS, p.timeout_s);
  split->callback([&args] {
    args.action = "partition";
    args.partition_cmd.action = "split";
  });
}

CLI::App* AddKvCommands(CLI::App& app, KvCommandArgs& args) {
  args.dir = DefaultClusterDir();
  CLI::App* kv = app.add_subcommand("kv", "the key-value API of a running cluster (via its router)");
  kv->require_subcommand(1);
  auto common = [&args](CLI::App* sub) {
    sub->add_option("--layout", args.layout_path, kLayoutHelp);
    sub->add_option("--dir", args.dir, "cluster directory (credentials)");
  };
  CLI::App* token = kv->add_subcommand("token", "print a bearer token for the HTTP KV API");
  common(token);
  token->add_option("--ttl", args.token_ttl_s, "validity in seconds (at most 30 days)")
      ->check(CLI::Range(int64_t{1}, limits::kRouterTokenLifetimeSecondsMax));
  token->add_option("--access-key", args.token_access_key, "the credential to sign with (default: the first)");
  token->add_option("--table", args.token_tables, "grant only this table (repeatable)");
  token->add_flag("--read-only", args.token_read_only, "grant reads only");
  CLI::App* revoke = kv->add_subcommand(
      "revoke", "refuse a bearer token from now on, on every router (within about a second)");
  common(revoke);
  revoke->add_option("token", args.revoked_token, "the token (as `tessera kv token` printed it)")->required();
  CLI::App* put = kv->add_subcommand("put", "write a value");
  common(put);
  put->add_option("table", args.table)->required();
  put->add_option("key", args.key)->required();
  put->add_option("value", args.value)->required();
  CLI::App* get = kv->add_subcommand("get", "read a value (strongly consistent unless --eventual)");
  common(get);
  get->add_option("table", args.table)->required();
  get->add_option("key", args.key)->required();
  get->add_flag("--eventual", args.eventual, "read any replica's applied state");
  get->add_flag("--raw", args.raw,
                "print exactly the value's bytes (default: a newline is added on a terminal "
                "when the value does not end with one)");
  CLI::App* del = kv->add_subcommand("del", "delete a key");
  common(del);
  del->add_option("table", args.table)->required();
  del->add_option("key", args.key)->required();
  CLI::App* scan = kv->add_subcommand("scan", "list keys in order across partitions (JSON)");
  common(scan);
  scan->add_option("table", args.table)->required();
  scan->add_option("--start", args.key, "first key (inclusive)");
  scan->add_option("--end", args.end_key, "last key (exclusive)");
  scan->add_option("--limit", args.limit, "at most this many keys")->check(CLI::Range(1, 10000));
  scan->add_flag("--eventual", args.eventual, "read any replica's applied state");
  for (CLI::App* sub : {token, revoke, put, get, del, scan}) {
    const std::string name = sub->get_name();
    sub->callback([&args, name] { args.action = name; });
  }
  AddKvTableCommands(*kv, args, common);
  AddKvPartitionCommands(*kv, args, common);
  return kv;
}

CLI::App* AddS3Commands(CLI::App& app, S3CommandArgs& args) {
  args.dir = DefaultClusterDir();
  CLI::App* s3 = app.add_subcommand("s3", "S3 users and buckets of a running cluster (via meta)");
  s3->require_subcommand(1);
  auto common = [&args](CLI::App* sub) {
    sub->add_option("--layout", args.layout_path, kLayoutHelp);
    sub->add_option("--dir", args.dir, "cluster directory (secret)");
  };
  CLI::App* user = s3->add_subcommand("user", "S3 users and their access keys");
  user->require_subcommand(1);
  CLI::App* create = user->add_subcommand("create", "create a user; prints its access and secret key");
  common(create);
  create->add_option("name", args.name, "user name ([A-Za-z0-9+=,.@_-], at most 64)")->required();
  create->add_option("--access-key", args.access_key, "use this access key (with --secret-key)");
  create->add_option("--secret-key", args.secret_key, "use this secret key (with --access-key)");
  create->add_option("--display-name", args.display_name,
                     "the DisplayName S3 shows for the user (default: the name)");
  create->add_option("--email", args.email, "the email grants by email address resolve to");
  create->callback([&args] { args.action = "user-create"; });
  CLI::App* list = user->add_subcommand("list", "users and their access keys (no secrets)");
  common(list);
  list->callback([&args] { args.action = "user-list"; });
  CLI::App* bucket = s3->add_subcommand("bucket", "S3 buckets");
  bucket->require_subcommand(1);
  CLI::App* bucket_create = bucket->add_subcommand(
      "create", "create a bucket (with --id: exactly that bucket id, e.g. to sit in chosen "
                "partitions of the S3 table); prints its line as `s3 buckets` does");
  bucket_create->add_option("--layout", args.layout_values,
                            "the bucket's key layout: ordered (default) or hashed:N (N in 2..255: "
                            "keys spread over N hash ranges); any other value: the " +
                                std::string(kLayoutHelp))
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  bucket_create->add_option("--key-layout", args.key_layout,
                            "the bucket's key layout (as --layout ordered|hashed:N)");
  bucket_create->add_option("--dir", args.dir, "cluster directory (secret)");
  bucket_create->add_option("name", args.name, "bucket name (S3 naming rules)")->required();
  bucket_create->add_option("--owner", args.owner, "the owning user")->required();
  bucket_create->add_option("--id", args.bucket_id, "bucket id (default: placed by meta)")
      ->check(CLI::Range(uint64_t{1}, UINT64_MAX));
  bucket_create->add_option("--region", args.region, "the bucket's region");
  bucket_create->callback([&args] { args.action = "bucket-create"; });
  CLI::App* set_capacity = bucket->add_subcommand(
      "set-capacity", "set a bucket's capacity in read and write units (docs/admission.md); "
                      "prints its line as `s3 buckets` does");
  common(set_capacity);
  set_capacity->add_option("name", args.name, "bucket name")->required();
  set_capacity->add_option("--rcu", args.rcu, "read units per second (1..1000000)");
  set_capacity->add_option("--wcu", args.wcu, "write units per second (1..1000000)");
  set_capacity->add_flag("--on-demand", args.on_demand, "on-demand: twice the bucket's peak");
  set_capacity->add_option("--owner", args.owner, "change it only if this user owns the bucket");
  set_capacity->callback([&args] { args.action = "bucket-set-capacity"; });
  CLI::App* buckets = s3->add_subcommand("buckets", "every bucket: id, owner, region, versioning, capacity");
  common(buckets);
  buckets->add_option("--owner", args.owner, "only this user's buckets");
  buckets->callback([&args] { args.action = "buckets"; });
  CLI::App* check = s3->add_subcommand(
      "check", "blob files on every node against the blobs the S3 records reference (exit 1: mismatch)");
  common(check);
  check->add_flag("--json", args.json, "print the counts as JSON");
  check->callback([&args] { args.action = "check"; });
  CLI::App* usage = s3->add_subcommand(
      "usage", "a bucket's usage summed over the S3 partitions: objects, bytes, versions, "
               "multipart uploads in progress and their part bytes");
  common(usage);
  usage->add_option("name", args.name, "bucket name")->required();
  usage->add_flag("--json", args.json, "print one JSON object");
  usage->callback([&args] { args.action = "usage"; });
  CLI::App* client_config = s3->add_subcommand(
      "client-config", "print a configuration the S3 client takes as is: an aws CLI profile, an "
                       ".s3cfg, an rclone remote or a boto3 snippet");
  common(client_config);
  client_config->add_option("client", args.client, "aws, s3cmd, rclone or boto3")
      ->required()
      ->check(CLI::IsMember({"aws", "s3cmd", "rclone", "boto3"}));
  client_config->add_option("--user", args.user,
                            "the S3 user whose first access key to use (default: admin, the key "
                            "pair in --dir/credentials)");
  client_config->add_flag("--https", args.https,
                          "the HTTPS endpoint, trusting the cluster's CA (DIR/tls/ca.pem)");
  client_config->callback([&args] { args.action = "client-config"; });
  return s3;
}

}  // namespace tessera::cli
