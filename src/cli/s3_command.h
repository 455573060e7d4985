// `tessera s3 user create NAME | user list | buckets`: the S3 users and the
// bucket registry of a running cluster, through its metadata service (the
// cluster secret in DIR/secret authenticates the calls).
#pragma once

#include <iosfwd>
#include <string>

namespace CLI {
class App;
}  // namespace CLI

namespace tessera::cli {

struct S3CommandArgs {
  std::string action;  // user-create | user-list | buckets
  std::string layout_path;
  std::string dir;
  std::string name;        // user-create
  std::string access_key;  // user-create: optional, with secret_key
  std::string secret_key;
  std::string owner;       // buckets: only this owner's ("" = all)
};

// Exit codes: 0 done, 2 usage, 3 failed (message on err). user create
// prints "user NAME\naccess_key AK\nsecret_key SK\n"; the lists print one
// line per user / bucket.
int RunS3Command(const S3CommandArgs& args, std::ostream& out, std::ostream& err);

// Adds `s3 user create|list` and `s3 buckets` to `app`, filling `args`
// (defined with the other flag wiring in cluster_flags.cc). Returns the
// `s3` subcommand (test `*cmd` after parsing).
CLI::App* AddS3Commands(CLI::App& app, S3CommandArgs& args);

}  // namespace tessera::cli
