#include "cli/config_command.h"

#include <ostream>

#include "knobs/knob_render.h"

namespace tessera::cli {

CLI::App* AddConfigCommands(CLI::App& app, ConfigCommandArgs& args) {
  CLI::App* config = app.add_subcommand("config", "the configuration Tessera knows about");
  config->require_subcommand(1);
  CLI::App* knobs = config->add_subcommand(
      "knobs", "every tunable: name, default, bounds, layout field, flag, meaning (docs/knobs.md)");
  CLI::Option* markdown = knobs->add_flag("--markdown", args.markdown, "as docs/knobs.md (Markdown)");
  CLI::Option* json = knobs->add_flag("--json", args.json, "as a JSON array, one object per knob");
  markdown->excludes(json);
  return config;
}

int RunConfigCommand(const ConfigCommandArgs& args, std::ostream& out) {
  out << (args.markdown ? knobs::RenderKnobsMarkdown()
          : args.json   ? knobs::RenderKnobsJson()
                        : knobs::RenderKnobsText());
  return 0;
}

}  // namespace tessera::cli
