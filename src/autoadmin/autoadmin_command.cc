#include "autoadmin/autoadmin_command.h"

#include <spdlog/spdlog.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <filesystem>
#include <future>
#include <iostream>
#include <thread>

#include "autoadmin/autoadmin_service.h"
#include "cluster/added_nodes.h"
#include "cluster/cluster_client.h"
#include "cluster/cluster_pki.h"
#include "cluster/layout.h"
#include "cluster/process_logging.h"
#include "cluster/process_table.h"
#include "common/metrics.h"
#include "http/http_server.h"
#include "router/http_client.h"

namespace tessera::autoadmin {
namespace {

namespace asio = boost::asio;

AutoadminOptions OptionsFor(const pb::ClusterLayout& layout, const cluster::ProcessEntry& self) {
  AutoadminOptions o;
  o.self_id = self.id;
  o.name = self.name;
  const pb::AutoadminSettings& s = layout.autoadmin_settings();
  if (s.has_dead_after_ms()) o.dead_after_ms = s.dead_after_ms();
  if (s.has_poll_interval_ms()) o.poll_interval_ms = s.poll_interval_ms();
  if (s.has_lease_ms()) o.lease_ms = s.lease_ms();
  if (s.has_max_concurrent()) o.planner.max_concurrent = s.max_concurrent();
  if (s.has_gray_sync_p99_ms()) o.gray.sync_p99_us = uint64_t{s.gray_sync_p99_ms()} * 1000;
  if (s.has_degraded_for_ms()) o.gray.degraded_for_ms = s.degraded_for_ms();
  if (s.has_min_free_mib()) o.gray.min_free_bytes = uint64_t{s.min_free_mib()} << 20;
  if (s.has_gray_replace_after_ms()) o.planner.gray_replace_after_ms = s.gray_replace_after_ms();
  if (s.has_lag_for_ms()) o.lag_for_ms = s.lag_for_ms();
  if (s.has_balance_leaders()) o.planner.balance_leaders = s.balance_leaders();
  if (s.has_log_replicas()) o.planner.log_replicas = s.log_replicas();
  if (s.has_peer_timeout_percent()) o.gray.peer_timeouts.timeout_percent = s.peer_timeout_percent();
  if (s.has_split_bytes()) o.planner.split_bytes = s.split_bytes();
  if (s.has_split_load()) o.planner.split_load = s.split_load();
  if (s.has_split_after_s()) o.planner.split_after_ms = uint64_t{s.split_after_s()} * 1000;
  if (s.has_split_boost_percent()) o.planner.split_boost_percent = s.split_boost_percent();
  if (s.has_placement_interval_ms()) o.placement_interval_ms = s.placement_interval_ms();
  if (s.has_split_consumption_percent()) {
    o.planner.split_consumption_percent = s.split_consumption_percent();
  }
  if (s.has_merge_bytes()) o.planner.merge_bytes = s.merge_bytes();
  if (s.has_merge_after_s()) o.planner.merge_after_ms = uint64_t{s.merge_after_s()} * 1000;
  if (s.has_merge_load_percent()) o.planner.merge_load_percent = s.merge_load_percent();
  if (s.has_balance_threshold_percent()) {
    o.planner.balance.threshold_percent = s.balance_threshold_percent();
  }
  if (s.has_balance_bytes_floor_mib()) {
    o.planner.balance.bytes_floor = uint64_t{s.balance_bytes_floor_mib()} << 20;
  }
  if (s.has_balance_load_floor()) o.planner.balance.load_floor = s.balance_load_floor();
  return o;
}

int Fail(const std::string& what) {
  spdlog::error("autoadmin.start_failed status=\"{}\"", what);
  std::cerr << "tessera autoadmin: " << what << "\n";
  return 2;
}

}  // namespace

int RunAutoadminCommand(const AutoadminCommandArgs& args) {
  const std::string& fault = args.testing_exit_at_split_step;
  if (!fault.empty() && fault != "reserve" && fault != "order" && fault != "create_one" &&
      fault != "before_commit") {
    std::cerr << "tessera autoadmin: --testing-exit-at-split-step must be reserve, order, create_one or "
                 "before_commit\n";
    return 2;
  }
  auto layout = cluster::LoadLayout(args.layout_path);
  if (!layout.ok()) {
    std::cerr << "tessera autoadmin: " << layout.status().ToString() << "\n";
    return 2;
  }
  auto loaded = cluster::TableWithAddedNodes(*layout, args.dir);
  if (!loaded.ok()) {
    std::cerr << "tessera autoadmin: " << loaded.status().ToString() << "\n";
    return 2;
  }
  const cluster::ProcessTable& table = *loaded;
  const auto self = table.ByName(args.name);
  if (!self || self->role != cluster::ProcessRole::kAutoadmin) {
    std::cerr << "tessera autoadmin: '" << args.name << "' is not an autoadmin entry of the layout\n";
    return 2;
  }
  std::error_code ec;
  std::filesystem::create_directories(args.dir + "/logs", ec);
  if (Status logging = cluster::SetUpProcessLogging(args.dir, args.name, "autoadmin"); !logging.ok()) {
    std::cerr << "tessera autoadmin: " << logging.ToString() << "\n";
    return 2;
  }
  auto identity = cluster::LoadIdentity(args.dir, self->name, self->id, "autoadmin");
  if (!identity.ok()) return Fail(identity.status().ToString());
  auto client = cluster::ClusterClient::Create(table, *identity);
  if (!client.ok()) return Fail(client.status().ToString());

  metrics::Registry registry;
  AutoadminOptions options = OptionsFor(*layout, *self);
  options.testing_exit_at_split_step = fault;
  auto service = AutoadminService::Start(table, **client, registry, std::move(options));
  if (!service.ok()) return Fail(service.status().ToString());

  asio::io_context io;
  auto work = asio::make_work_guard(io);
  std::thread io_thread([&io] { io.run(); });
  http::HttpServerOptions http_options;
  http_options.host = self->host;
  http_options.port = static_cast<uint16_t>(self->http_port);
  AutoadminService* svc = service->get();
  http::HttpServer http(io, http_options, [&registry, svc](http::Request request, http::Respond respond) {
    if (request.path == "/metrics") {
      http::Response r = http::Response::Text(200, registry.RenderText());
      r.content_type = "text/plain; version=0.0.4; charset=utf-8";
      return respond(std::move(r));
    }
    if (request.path == "/status") return respond(http::Response::Text(200, svc->StatusText()));
    if (request.path == "/health") return respond(http::Response::Text(200, "ok\n"));
    respond(http::Response::Text(404, "not found\n"));
  });
  int code = 0;
  if (Status started = http.Start(); !started.ok()) {
    code = Fail("http: " + started.ToString());
  } else {
    std::promise<int> signalled;
    asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&signalled](const boost::system::error_code& e, int signal) {
      signalled.set_value(e ? 0 : signal);
    });
    const int signal = signalled.get_future().get();
    spdlog::info("autoadmin.stopping signal={}", signal);
    http.Stop();
  }
  (*service)->Stop();
  work.reset();
  io.stop();
  io_thread.join();
  spdlog::info("autoadmin.exit code={}", code);
  spdlog::shutdown();
  return code;
}

int RunAutoadminStatus(const std::string& layout_path, std::ostream& out, std::ostream& err) {
  auto layout = cluster::LoadLayout(layout_path);
  if (!layout.ok()) {
    err << "tessera autoadmin status: " << layout.status().ToString() << "\n";
    return 2;
  }
  const auto instances = cluster::ProcessTable(*layout).OfRole(cluster::ProcessRole::kAutoadmin);
  if (instances.empty()) {
    err << "tessera autoadmin status: the layout has no autoadmin entry\n";
    return 2;
  }
  int answered = 0;
  for (const cluster::ProcessEntry& e : instances) {
    router::HttpClient http(e.host, static_cast<uint16_t>(e.http_port), std::chrono::seconds(3));
    auto reply = http.Request("GET", "/status");
    if (!reply.ok() || reply->status != 200) {
      out << "autoadmin " << e.name << " (" << e.id << "): not answering ("
          << (reply.ok() ? "HTTP " + std::to_string(reply->status) : reply.status().ToString())
          << ")\n";
      continue;
    }
    ++answered;
    out << reply->body;
  }
  return answered > 0 ? 0 : 1;
}

}  // namespace tessera::autoadmin
