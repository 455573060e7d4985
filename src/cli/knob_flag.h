// A command-line flag that sets a knob (knobs/knobs.h): its name is the one
// the knob's `flag` names, its help the knob's meaning and default, and its
// bounds the knob's, so flag, layout and docs/knobs.md cannot disagree.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <string_view>

#include "knobs/knob_render.h"
#include "knobs/knobs.h"

namespace tessera::cli {

// "--gc-interval-ms" of "tessera node --gc-interval-ms".
inline std::string KnobFlagName(std::string_view flag) {
  const size_t space = flag.rfind(' ');
  return std::string(space == std::string_view::npos ? flag : flag.substr(space + 1));
}

// `knob.flag` must name `command` ("tessera <command> --flag").
template <typename T, typename Field>
CLI::Option* AddKnobFlag(CLI::App* command, const knobs::Knob<T>& knob, Field& field) {
  const knobs::KnobInfo info = knobs::Describe(knob);
  std::string help = std::string(knob.meaning) + " (default " +
                     knobs::FormatKnobValue(info.default_value, knob.unit);
  if (const std::string_view unit = knobs::KnobUnitName(knob.unit); !unit.empty() && knob.unit != knobs::KnobUnit::kBytes) {
    help += " " + std::string(unit);
  }
  help += "; knob " + std::string(knob.name) + ")";
  CLI::Option* option = command->add_option(KnobFlagName(knob.flag), field, help);
  if constexpr (knobs::KindOf<T>() == knobs::KnobKind::kUnsigned || knobs::KindOf<T>() == knobs::KnobKind::kDouble) {
    option->check(CLI::Range(knob.min, knob.max));
  }
  return option;
}

}  // namespace tessera::cli
