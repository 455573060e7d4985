// The `tessera` binary: one entry point, a subcommand per role and tool.
// Only this layer reads flags; everything below takes plain structs.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "cli/cluster_command.h"
#include "autoadmin/autoadmin_command.h"
#include "gac/gac_command.h"
#include "meta/meta_command.h"
#include "cli/config_command.h"
#include "cli/knob_flag.h"
#include "knobs/knobs.h"
#include "node/node_command.h"
#include "cli/router_command.h"
#include "cli/cluster_flags.h"
#include "cli/s3_command.h"
#include "experiment/experiment_command.h"
#include "experiment/experiment_limits.h"
#include "sim/host_sim_command.h"
#include "sim/sim_command.h"


int main(int argc, char** argv) {
  CLI::App app{"Tessera: an S3-compatible object store on Multi-Paxos replication groups"};
  app.require_subcommand(1);

  tessera::sim::SimCommandArgs sim;
  CLI::App* sim_cmd = app.add_subcommand(
      "sim", "run the deterministic simulation of replication groups over a range of seeds");
  sim_cmd->add_option("--replicas", sim.replicas, "replicas per group (3, 5, 7 or 9)")
      ->check(CLI::Range(3, 9));
  sim_cmd->add_option("--seed-start", sim.seed_start, "first seed");
  sim_cmd->add_option("--seeds", sim.seeds, "number of seeds")->check(CLI::PositiveNumber);
  sim_cmd->add_flag("--trace", sim.trace, "print each seed's event trace");
  sim_cmd->add_option("--duration", sim.duration_s,
                      "stop starting seeds after this many seconds (soak runs)")
      ->check(CLI::NonNegativeNumber);
  sim_cmd->add_flag("--replica-loss", sim.replica_loss,
                    "every seed loses a voter for good; the autoadmin's planner replaces it");
  sim_cmd->add_flag("--s3", sim.s3,
                    "every seed runs S3 clients and checks the S3 invariants (else a fourth do)");
  sim_cmd->add_option("--bug", sim.bug,
                      "inject a host-side bug to show the checkers catch it ('list' names them)");
  sim_cmd->add_option("--host", sim.host,
                      "production (the only one): the production GroupHost, state machine and "
                      "NodeStore with time, disks and network simulated")
      ->check(CLI::IsMember({"production"}));

  tessera::cli::ClusterCommandArgs cluster;
  CLI::App* cluster_cmd = tessera::cli::AddClusterCommands(app, cluster);
  tessera::cli::KvCommandArgs kv;
  CLI::App* kv_cmd = tessera::cli::AddKvCommands(app, kv);
  tessera::cli::S3CommandArgs s3;
  CLI::App* s3_cmd = tessera::cli::AddS3Commands(app, s3);

  tessera::cli::ConfigCommandArgs config;
  CLI::App* config_cmd = tessera::cli::AddConfigCommands(app, config);

  tessera::experiment::ExperimentCommandArgs experiment;
  CLI::App* experiment_cmd = app.add_subcommand(
      "experiment", "failure-injection experiments on a local cluster (docs/experiments.md)");
  experiment_cmd->require_subcommand(1);
  CLI::App* experiment_run = experiment_cmd->add_subcommand(
      "run", "start a cluster, run workloads and faults, heal, check; exit 0 when every checker passed");
  experiment_run->add_option("FILE", experiment.file, "experiment (protobuf text format)")->required();
  experiment_run->add_option("--out", experiment.out_dir,
                             "result directory (default: a new one under $TMPDIR)");
  uint64_t experiment_seed = 0;
  CLI::Option* experiment_seed_opt = experiment_run->add_option(
      "--seed", experiment_seed, "seed of every random choice (default: random, printed)");
  experiment_run->add_option("--duration", experiment.duration_s,
                             "seconds of workload (default: the file's)")
      ->check(CLI::Range(uint32_t{1}, tessera::experiment::kDurationSMax));
  experiment_run->add_option("--attach", experiment.attach_dir,
                             "run against the running cluster of this directory instead of a fresh one");
  experiment_run->add_flag("--netns", experiment.netns,
                           "each AZ in its own network namespace, partitions cut in the kernel "
                           "(needs root)");
  CLI::App* experiment_list = experiment_cmd->add_subcommand("list", "the catalogue of experiments");
  experiment_list->add_option("--catalogue", experiment.catalogue_dir,
                              "directory of *.textproto experiments (default: the shipped one)");
  CLI::App* experiment_report = experiment_cmd->add_subcommand(
      "report", "print the verdict and summary of a result directory");
  experiment_report->add_option("DIR", experiment.file, "result directory")->required();

  tessera::node::NodeCommandArgs node;
  node.dir = tessera::cli::DefaultClusterDir();
  CLI::App* node_cmd = app.add_subcommand("node", "run one storage node of a cluster layout");
  node_cmd->add_option("--layout", node.layout_path, "cluster layout (protobuf text format)")
      ->required();
  node_cmd->add_option("--name", node.name, "this node's name in the layout")->required();
  node_cmd->add_option("--dir", node.dir,
                       "cluster directory: secret, data/NAME/rocksdb, logs/NAME.log");
  // Knob flags: help and bounds from the registry (knobs/knobs.h).
  tessera::cli::AddKnobFlag(node_cmd, tessera::knobs::kNodeGcIntervalMs, node.gc_interval_ms);
  tessera::cli::AddKnobFlag(node_cmd, tessera::knobs::kNodeBlobSweepIntervalMs, node.blob_sweep_interval_ms);
  tessera::cli::AddKnobFlag(node_cmd, tessera::knobs::kNodeBlobMinAgeS, node.blob_min_age_s);
  tessera::cli::AddKnobFlag(node_cmd, tessera::knobs::kNodeOrphanGraceS, node.orphan_grace_s);

  tessera::meta::MetaCommandArgs meta;
  meta.dir = tessera::cli::DefaultClusterDir();
  CLI::App* meta_cmd = app.add_subcommand("meta", "run one metadata replica of a cluster layout");
  meta_cmd->add_option("--layout", meta.layout_path, "cluster layout (protobuf text format)")
      ->required();
  meta_cmd->add_option("--name", meta.name, "this replica's name in the layout")->required();
  meta_cmd->add_option("--dir", meta.dir,
                       "cluster directory: secret, data/NAME/rocksdb, logs/NAME.log");

  tessera::router::RouterCommandArgs router;
  router.dir = tessera::cli::DefaultClusterDir();
  CLI::App* router_cmd = app.add_subcommand("router", "run one router of a cluster layout");
  router_cmd->add_option("--layout", router.layout_path, "cluster layout (protobuf text format)")
      ->required();
  router_cmd->add_option("--name", router.name, "this router's name in the layout")->required();
  router_cmd->add_option("--dir", router.dir,
                         "cluster directory: secret, credentials, logs/NAME.log");
  tessera::cli::AddKnobFlag(router_cmd, tessera::knobs::kRouterS3Region, router.region);
  tessera::cli::AddKnobFlag(router_cmd, tessera::knobs::kRouterS3BaseDomain, router.base_domain);
  tessera::cli::AddKnobFlag(router_cmd, tessera::knobs::kRouterS3BucketRate, router.s3_bucket_rate);
  tessera::cli::AddKnobFlag(router_cmd, tessera::knobs::kRouterS3BucketBurst, router.s3_bucket_burst);
  tessera::cli::AddKnobFlag(router_cmd, tessera::knobs::kRouterS3UserRate, router.s3_user_rate);
  tessera::cli::AddKnobFlag(router_cmd, tessera::knobs::kRouterS3UserBurst, router.s3_user_burst);

  tessera::autoadmin::AutoadminCommandArgs autoadmin;
  autoadmin.dir = tessera::cli::DefaultClusterDir();
  CLI::App* autoadmin_cmd = app.add_subcommand(
      "autoadmin", "run one autoadmin instance of a cluster layout (replaces unhealthy replicas)");
  autoadmin_cmd->add_option("--layout", autoadmin.layout_path, "cluster layout (protobuf text format)")
      ->required();
  autoadmin_cmd->add_option("--name", autoadmin.name, "this instance's name in the layout");
  autoadmin_cmd->add_option("--dir", autoadmin.dir,
                            "cluster directory: pki, secret, logs/NAME.log");
  autoadmin_cmd
      ->add_option("--testing-exit-at-split-step", autoadmin.testing_exit_at_split_step,
                   "testing only: kill this process (SIGKILL) when a split reaches this step: "
                   "reserve, order, create_one, before_commit")
      ->group("Testing");
  CLI::App* autoadmin_status_cmd = autoadmin_cmd->add_subcommand(
      "status", "print every instance's state: the active one, unhealthy nodes, recent actions");
  autoadmin_status_cmd->fallthrough();  // --layout after `status`

  tessera::gac::GacCommandArgs gac;
  gac.dir = tessera::cli::DefaultClusterDir();
  CLI::App* gac_cmd = app.add_subcommand(
      "gac", "run one global admission control instance of a cluster layout (tables' shares per router)");
  gac_cmd->add_option("--layout", gac.layout_path, "cluster layout (protobuf text format)")->required();
  gac_cmd->add_option("--name", gac.name, "this instance's name in the layout")->required();
  gac_cmd->add_option("--dir", gac.dir, "cluster directory: pki, secret, logs/NAME.log");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    // Bad flags of `experiment` exit 2, as its other bad input does
    // (experiment/experiment_run.h); other commands keep CLI11's codes.
    return rc != 0 && experiment_cmd->parsed() ? 2 : rc;
  }

  if (*sim_cmd) {
    return tessera::sim::RunHostSimCommand(sim, std::cout);
  }
  if (*config_cmd) return tessera::cli::RunConfigCommand(config, std::cout);
  if (*node_cmd) return tessera::node::RunNodeCommand(node);
  if (*meta_cmd) return tessera::meta::RunMetaCommand(meta);
  if (*router_cmd) return tessera::router::RunRouterCommand(router);
  if (*autoadmin_status_cmd) {
    return tessera::autoadmin::RunAutoadminStatus(autoadmin.layout_path, std::cout, std::cerr);
  }
  if (*autoadmin_cmd) {
    if (autoadmin.name.empty()) {
      std::cerr << "tessera autoadmin: --name is required\n";
      return 2;
    }
    return tessera::autoadmin::RunAutoadminCommand(autoadmin);
  }
  if (*gac_cmd) return tessera::gac::RunGacCommand(gac);
  if (*cluster_cmd) return tessera::cli::RunClusterCommand(cluster, std::cout, std::cerr);
  if (*kv_cmd) {
    kv.out_is_terminal = ::isatty(STDOUT_FILENO) == 1;
    return tessera::cli::RunKvCommand(kv, std::cout, std::cerr);
  }
  if (*s3_cmd) return tessera::cli::RunS3Command(s3, std::cout, std::cerr);
  if (*experiment_cmd) {
    experiment.action = *experiment_run ? "run" : *experiment_list ? "list" : "report";
    experiment.out_is_terminal = ::isatty(STDOUT_FILENO) == 1;
    if (experiment_seed_opt->count() > 0) experiment.seed = experiment_seed;
    return tessera::experiment::RunExperimentCommand(experiment, std::cout, std::cerr);
  }
  return 2;
}
