// The `tessera` binary: one entry point, a subcommand per role and tool.
// Only this layer reads flags; everything below takes plain structs.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>

#include "cli/cluster_command.h"
#include "sim/sim_command.h"

namespace {

std::string DefaultClusterDir() {
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "/tmp") + "/.tessera/local";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Tessera: an S3-compatible object store on Multi-Paxos replication groups"};
  app.require_subcommand(1);

  tessera::sim::SimCommandArgs sim;
  CLI::App* sim_cmd = app.add_subcommand(
      "sim", "run the deterministic simulation of replication groups over a range of seeds");
  sim_cmd->add_option("--replicas", sim.replicas, "replicas per group (3 or 5)")
      ->check(CLI::Range(3, 9));
  sim_cmd->add_option("--seed-start", sim.seed_start, "first seed");
  sim_cmd->add_option("--seeds", sim.seeds, "number of seeds")->check(CLI::PositiveNumber);
  sim_cmd->add_flag("--trace", sim.trace, "print each seed's event trace");
  sim_cmd->add_option("--bug", sim.bug,
                      "inject a host-side bug to show the checkers catch it ('list' names them)");

  tessera::cli::ClusterCommandArgs cluster;
  cluster.layout_path = "cluster/local.textproto";
  cluster.dir = DefaultClusterDir();
  CLI::App* cluster_cmd = app.add_subcommand("cluster", "the local three-AZ cluster");
  cluster_cmd->require_subcommand(1);
  for (const char* action : {"up", "plan"}) {
    CLI::App* sub = cluster_cmd->add_subcommand(
        action, std::string(action) == "up" ? "start the cluster in the foreground"
                                            : "show what `up` starts");
    sub->add_option("--layout", cluster.layout_path, "cluster layout (protobuf text format)");
    sub->add_option("--dir", cluster.dir, "cluster directory: data, logs, credentials, pids");
    sub->callback([&cluster, action] { cluster.action = action; });
  }

  CLI11_PARSE(app, argc, argv);

  if (*sim_cmd) return tessera::sim::RunSimCommand(sim, std::cout);
  if (*cluster_cmd) return tessera::cli::RunClusterCommand(cluster, std::cout, std::cerr);
  return 2;
}
