// CLI11 wiring of `tessera cluster <action>`.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/cluster_command.h"
#include "cli/kv_command.h"

namespace tessera::cli {

// ~/.tessera/local: where every cluster, node, meta, router and kv command
// keeps (or finds) the cluster directory unless --dir says otherwise.
std::string DefaultClusterDir();

// Adds the `cluster` subcommand and its actions to `app`, filling `args`.
// Returns the `cluster` subcommand (test `*cmd` after parsing).
CLI::App* AddClusterCommands(CLI::App& app, ClusterCommandArgs& args);

// Adds `kv token|put|get|del|scan`, filling `args`.
CLI::App* AddKvCommands(CLI::App& app, KvCommandArgs& args);

}  // namespace tessera::cli
