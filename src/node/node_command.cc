#include "node/node_command.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <cctype>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <sstream>
#include <thread>
#include <vector>

#include "cluster/added_nodes.h"
#include "cluster/cluster_client.h"
#include "cluster/cluster_pki.h"
#include "cluster/io_threads.h"
#include "cluster/process_logging.h"
#include "cluster/layout.h"
#include "cluster/process_table.h"
#include "common/metrics.h"
#include "node/node_server.h"
#include "rpc/fault_injector.h"

namespace tessera::node {
namespace {

namespace asio = boost::asio;

// node_settings' admission_* fields over NodeAdmissionOptions' defaults;
// InvalidArgument naming the one out of range.
Status AdmissionOptions(const pb::NodeSettings& s, admission::NodeAdmissionOptions& out) {
  if (s.has_admission_node_rcu_per_s()) out.node_rcu_per_s = s.admission_node_rcu_per_s();
  if (s.has_admission_node_wcu_per_s()) out.node_wcu_per_s = s.admission_node_wcu_per_s();
  if (s.has_admission_partition_rcu_max()) out.partition_rcu_max = s.admission_partition_rcu_max();
  if (s.has_admission_partition_wcu_max()) out.partition_wcu_max = s.admission_partition_wcu_max();
  if (s.has_admission_burst_window_s()) out.burst_window_s = s.admission_burst_window_s();
  if (s.has_admission_node_spare_fraction()) out.node_spare_fraction = s.admission_node_spare_fraction();
  if (s.has_admission_capacity_refresh_ms()) out.capacity_refresh_ms = s.admission_capacity_refresh_ms();
  if (s.has_admission_adaptive()) out.adaptive = s.admission_adaptive();
  if (s.has_admission_adaptive_gain()) out.adaptive_gain = s.admission_adaptive_gain();
  const std::string error = admission::NodeAdmissionOptionsError(out);
  if (!error.empty()) return Status::InvalidArgument("node_settings: admission: " + error);
  return Status::Ok();
}

Result<NodeServerOptions> MakeOptions(const NodeCommandArgs& args) {
  auto layout = cluster::LoadLayout(args.layout_path);
  if (!layout.ok()) return layout.status();
  auto loaded = cluster::TableWithAddedNodes(*layout, args.dir);
  if (!loaded.ok()) return loaded.status();
  const cluster::ProcessTable& table = *loaded;
  const std::optional<cluster::ProcessEntry> self = table.ByName(args.name);
  if (!self || self->role != cluster::ProcessRole::kNode) {
    return Status::InvalidArgument("no storage node named '" + args.name + "' in " + args.layout_path +
                                   " or among the nodes added to the cluster");
  }
  auto identity = cluster::LoadIdentity(args.dir, self->name, self->id, "node");
  if (!identity.ok()) return identity.status();
  NodeServerOptions options;
  options.node_id = self->id;
  options.added = self->added;
  options.name = self->name;
  options.az = self->az;
  options.cluster_secret = identity->cluster_secret;
  options.tls = identity->tls;
  options.rpc_host = self->host;
  options.rpc_port = static_cast<uint16_t>(self->peer_port);
  options.http_host = self->host;
  options.http_port = static_cast<uint16_t>(self->http_port);
  options.store_path = args.dir + "/data/" + args.name + "/rocksdb";
  options.blob_path = args.dir + "/data/" + args.name + "/blobs";
  for (const cluster::ProcessEntry& node : table.OfRole(cluster::ProcessRole::kNode)) {
    options.peers.push_back(
        PeerAddress{node.id, node.host, static_cast<uint16_t>(node.peer_port), node.az, node.added});
  }
  for (const cluster::ProcessEntry& meta : table.OfRole(cluster::ProcessRole::kMeta)) {
    options.meta_peers.push_back(
        PeerAddress{meta.id, meta.host, static_cast<uint16_t>(meta.peer_port), meta.az});
  }
  for (const cluster::ProcessEntry& gac : table.OfRole(cluster::ProcessRole::kGac)) {
    options.gac_peers.push_back(PeerAddress{gac.id, gac.host, static_cast<uint16_t>(gac.peer_port), gac.az});
  }
  const pb::NodeSettings& settings = layout->node_settings();
  const auto pick = [](const std::optional<uint32_t>& flag, bool in_layout, uint32_t layout_value,
                       uint32_t fallback) { return flag ? *flag : in_layout ? layout_value : fallback; };
  options.gc.interval_ms = pick(args.gc_interval_ms, settings.has_gc_interval_ms(),
                                settings.gc_interval_ms(), options.gc.interval_ms);
  options.sweep.interval_ms = pick(args.blob_sweep_interval_ms, settings.has_blob_sweep_interval_ms(),
                                   settings.blob_sweep_interval_ms(), options.sweep.interval_ms);
  options.sweep.min_age_s = pick(args.blob_min_age_s, settings.has_blob_min_age_s(),
                                 settings.blob_min_age_s(), options.sweep.min_age_s);
  options.sweep.orphan_grace_s = pick(args.orphan_grace_s, settings.has_orphan_grace_s(),
                                      settings.orphan_grace_s(), options.sweep.orphan_grace_s);
  GroupHostOptions& groups = options.group_defaults;
  if (settings.has_snapshot_chunk_bytes()) groups.snapshot.chunk_bytes = settings.snapshot_chunk_bytes();
  const uint64_t stream_bytes_per_s = settings.has_snapshot_stream_bytes_per_s()
                                          ? settings.snapshot_stream_bytes_per_s()
                                          : knobs::kNodeSnapshotStreamBytesPerS.default_value;
  // One pacer for the node: every group's sender shares it.
  if (stream_bytes_per_s > 0) groups.snapshot.pacer = std::make_shared<SnapshotPacer>(stream_bytes_per_s);
  if (settings.has_compaction_trigger_slots()) {
    groups.compaction_trigger_slots = settings.compaction_trigger_slots();
  }
  if (settings.has_compaction_keep_slots()) groups.compaction_keep_slots = settings.compaction_keep_slots();
  options.fault_snapshot_install_delay_ms = settings.fault_snapshot_install_delay_ms();
  options.io_threads = settings.io_threads();
  TESSERA_RETURN_IF_ERROR(AdmissionOptions(settings, options.admission));
  if (groups.compaction_keep_slots >= groups.compaction_trigger_slots) {
    return Status::InvalidArgument("node_settings: compaction_keep_slots must be below compaction_trigger_slots");
  }
  std::error_code ec;
  std::filesystem::create_directories(args.dir + "/data/" + args.name, ec);
  if (ec) return Status::IOError("cannot create the data directory: " + ec.message());
  return options;
}

}  // namespace

int RunNodeCommand(const NodeCommandArgs& args) {
  const Status logging = cluster::SetUpProcessLogging(args.dir, args.name, "node");
  if (!logging.ok()) {
    std::cerr << "tessera node: " << logging.ToString() << "\n";
    return 1;
  }
  auto options = MakeOptions(args);
  if (!options.ok()) {
    spdlog::error("node.start_failed reason=\"{}\"", options.status().ToString());
    std::cerr << "tessera node: " << options.status().ToString() << "\n";
    return 1;
  }

  metrics::Registry registry;
  rpc::FaultInjector faults(options->node_id);
  asio::io_context io;
  auto work = asio::make_work_guard(io);
  std::promise<int> signalled;
  asio::signal_set signals(io, SIGTERM, SIGINT);
  signals.async_wait([&signalled](const boost::system::error_code& ec, int signal) {
    if (!ec) signalled.set_value(signal);
  });
  const unsigned thread_count = cluster::IoThreadsFor(options->io_threads);
  spdlog::info("node.io_threads count={}", thread_count);
  std::vector<std::thread> threads = cluster::StartIoThreads(io, thread_count);

  auto server = NodeServer::Start(io, registry, faults, std::move(options).value());
  int exit_code = 0;
  if (!server.ok()) {
    spdlog::error("node.start_failed reason=\"{}\"", server.status().ToString());
    std::cerr << "tessera node: " << server.status().ToString() << "\n";
    exit_code = 1;
  } else {
    const int signal = signalled.get_future().get();
    spdlog::info("node.signal signal={}", signal);
    (*server)->Stop();
  }
  signals.cancel();
  work.reset();
  io.stop();
  for (auto& t : threads) t.join();
  if (server.ok()) server.value().reset();  // closes the store: everything queued is written
  spdlog::info("node.exit code={}", exit_code);
  spdlog::shutdown();
  return exit_code;
}

}  // namespace tessera::node
