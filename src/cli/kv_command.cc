#include "cli/kv_command.h"

#include <chrono>
#include <ostream>

#include <spdlog/spdlog.h>

#include "cluster/layout.h"
#include "cluster/process_table.h"
#include "router/http_client.h"
#include "router/token.h"
#include "router/uri.h"

namespace tessera::cli {
namespace {

int64_t NowUnix() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string Target(const KvCommandArgs& a) {
  std::string t = "/kv/" + router::PercentEncode(a.table);
  if (a.action == "scan") {
    t += "?limit=" + std::to_string(a.limit);
    if (!a.key.empty()) t += "&start=" + router::PercentEncode(a.key);
    if (!a.end_key.empty()) t += "&end=" + router::PercentEncode(a.end_key);
    if (a.eventual) t += "&consistency=eventual";
    return t;
  }
  t += "/" + router::PercentEncode(a.key);
  if (a.action == "get" && a.eventual) t += "?consistency=eventual";
  return t;
}

}  // namespace

int RunKvCommand(const KvCommandArgs& a, std::ostream& out, std::ostream& err) {
  spdlog::set_level(spdlog::level::err);
  auto token = router::IssueTokenFromDir(a.dir, a.token_ttl_s, NowUnix());
  if (!token.ok()) {
    err << "tessera kv: " << token.status().ToString() << "\n";
    return 3;
  }
  if (a.action == "token") {
    out << *token << "\n";
    return 0;
  }
  auto layout = cluster::LoadLayout(a.layout_path);
  if (!layout.ok()) {
    err << "tessera kv: " << layout.status().ToString() << "\n";
    return 2;
  }
  auto routers = cluster::ProcessTable(*layout).OfRole(cluster::ProcessRole::kRouter);
  router::HttpClient client(routers.front().host, static_cast<uint16_t>(routers.front().http_port));
  const std::string method = a.action == "put" ? "PUT" : a.action == "del" ? "DELETE" : "GET";
  auto reply = client.Request(method, Target(a), {{"Authorization", "Bearer " + *token}},
                              a.action == "put" ? a.value : "");
  if (!reply.ok()) {
    err << "tessera kv: router " << routers.front().host << ":" << routers.front().http_port
        << ": " << reply.status().ToString() << "\n";
    return 3;
  }
  if (a.action == "get" && reply->status == 404) {
    err << "not found\n";
    return 1;
  }
  if (reply->status >= 300) {
    err << "tessera kv: HTTP " << reply->status << ": " << reply->body << "\n";
    return 3;
  }
  if (a.action == "get" || a.action == "scan") out << reply->body;
  if (a.action == "scan" && !reply->body.empty() && reply->body.back() != '\n') out << "\n";
  if (a.action == "put") {
    const std::string version = reply->Header("X-Tessera-Version");
    out << "ok" << (version.empty() ? "" : " version " + version) << "\n";
  }
  if (a.action == "del") out << "ok\n";
  return 0;
}

}  // namespace tessera::cli
