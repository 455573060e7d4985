#include "cli/kv_command.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <ostream>

#include <spdlog/spdlog.h>

#include "cli/cluster_record.h"
#include "cluster/layout.h"
#include "cluster/process_table.h"
#include "common/limits.h"
#include "router/http_api.h"
#include "router/token.h"
#include "router/token_revocations.h"
#include "tessera/kv_client.h"

namespace tessera::cli {
namespace {

int64_t NowUnix() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int Failed(std::ostream& err, const KvStatus& status) {
  if (status.code() == KvCode::kThroughputExceeded) {
    err << "tessera kv: throughput exceeded (" << status.message() << ")\n";
    return 4;
  }
  err << "tessera kv: " << status.ToString() << "\n";
  return 3;
}

KvConsistency ConsistencyOf(const KvCommandArgs& a) {
  return a.eventual ? KvConsistency::kEventual : KvConsistency::kStrong;
}

// Pages through the range until `limit` items or its end; prints the HTTP
// API's scan JSON (router::ScanJson).
int Scan(KvClient& client, const KvCommandArgs& a, std::ostream& out, std::ostream& err) {
  router::ScanPage all;
  std::optional<std::string> next = a.key;
  while (next && all.items.size() < a.limit) {
    const uint32_t want = static_cast<uint32_t>(
        std::min<size_t>(a.limit - all.items.size(), limits::kRouterScanItemsMax));
    KvResult<KvScanPage> page = client.Scan(a.table, *next, a.end_key, want, ConsistencyOf(a));
    if (!page.ok()) return Failed(err, page.status());
    for (KvItem& item : page->items) {
      pb::KvItem& added = all.items.emplace_back();
      added.set_key(std::move(item.key));
      added.set_value(std::move(item.value));
      added.set_version(item.version);
    }
    next = std::move(page->next);
  }
  all.next = std::move(next);
  out << router::ScanJson(all);
  return 0;
}

}  // namespace

int RunKvCommand(const KvCommandArgs& a, std::ostream& out, std::ostream& err) {
  spdlog::set_level(spdlog::level::err);
  if (a.action == "table") {
    KvTableArgs table = a.table_cmd;
    table.layout_path = a.layout_path;
    table.dir = a.dir;
    return RunKvTableCommand(table, out, err);
  }
  if (a.action == "partition") {
    KvPartitionArgs partition = a.partition_cmd;
    partition.layout_path = a.layout_path;
    partition.dir = a.dir;
    return RunKvPartitionCommand(partition, out, err);
  }
  if (a.action == "token") {
    std::optional<router::KvGrant> narrowed;
    if (!a.token_tables.empty() || a.token_read_only) {
      auto grant = router::KvGrant::Of({a.token_tables.begin(), a.token_tables.end()}, a.token_read_only);
      if (!grant.ok()) {
        err << "tessera kv: " << grant.status().ToString() << "\n";
        return 2;
      }
      narrowed = std::move(grant).value();
    }
    auto token = router::IssueTokenFromDir(a.dir, a.token_ttl_s, NowUnix(), a.token_access_key, narrowed);
    if (!token.ok()) {
      err << "tessera kv: " << token.status().ToString() << "\n";
      return 3;
    }
    out << *token << "\n";
    return 0;
  }
  auto credentials = router::LoadCredentials(a.dir + "/credentials");
  if (!credentials.ok() || credentials->size() == 0) {
    err << "tessera kv: "
        << (credentials.ok() ? "no credential in " + a.dir + "/credentials" : credentials.status().ToString())
        << "\n";
    return 3;
  }
  if (a.action == "revoke") {
    const Status revoked =
        router::RevokeToken(a.dir + "/revoked_tokens", *credentials, a.revoked_token, NowUnix());
    if (!revoked.ok()) {
      err << "tessera kv revoke: " << revoked.ToString() << "\n";
      return revoked.code() == StatusCode::kInvalidArgument ? 2 : 3;
    }
    out << "revoked (refused by every router within about a second)\n";
    return 0;
  }
  auto layout = ChooseLayout(a.dir, a.layout_path);
  if (!layout.ok()) {
    err << "tessera kv: " << layout.status().ToString() << "\n";
    return 2;
  }
  const cluster::ProcessEntry router =
      cluster::ProcessTable(layout->layout).OfRole(cluster::ProcessRole::kRouter).front();
  const router::Credential credential = credentials->First();
  KvResult<std::unique_ptr<KvClient>> client =
      KvClient::Connect(router.host, static_cast<uint16_t>(router.peer_port), credential.access_key,
                        credential.secret_key);
  if (!client.ok()) {
    err << "tessera kv: router " << router.host << ":" << router.peer_port << ": "
        << client.status().ToString() << "\n";
    return 3;
  }
  KvClient& kv = **client;
  if (a.action == "put") {
    KvResult<uint64_t> version = kv.Put(a.table, a.key, a.value);
    if (!version.ok()) return Failed(err, version.status());
    out << "ok version " << *version << "\n";
    return 0;
  }
  if (a.action == "del") {
    KvResult<uint64_t> version = kv.Delete(a.table, a.key);
    if (!version.ok()) return Failed(err, version.status());
    out << "ok\n";
    return 0;
  }
  if (a.action == "scan") return Scan(kv, a, out, err);
  KvResult<std::optional<KvValue>> got = kv.Get(a.table, a.key, ConsistencyOf(a));
  if (!got.ok()) return Failed(err, got.status());
  if (!got->has_value()) {
    err << "not found\n";
    return 1;
  }
  out << KvGetOutput((*got)->value, a.raw, a.out_is_terminal);
  return 0;
}

std::string KvGetOutput(const std::string& value, bool raw, bool terminal) {
  if (raw || !terminal || (!value.empty() && value.back() == '\n')) return value;
  return value + "\n";
}

}  // namespace tessera::cli
