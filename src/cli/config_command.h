// `tessera config knobs [--markdown|--json]`: the knob registry
// (knobs/knobs.h) as a terminal table, as docs/knobs.md, or as JSON.
#pragma once

#include <CLI/CLI.hpp>

#include <iosfwd>
#include <string>

namespace tessera::cli {

struct ConfigCommandArgs {
  bool markdown = false;
  bool json = false;
};

CLI::App* AddConfigCommands(CLI::App& app, ConfigCommandArgs& args);
// Exit code: 0.
int RunConfigCommand(const ConfigCommandArgs& args, std::ostream& out);

}  // namespace tessera::cli
