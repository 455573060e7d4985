#include "knobs/knobs.h"

namespace tessera::knobs {

std::string_view KnobProcessName(KnobProcess process) {
  switch (process) {
    case KnobProcess::kNode: return "node";
    case KnobProcess::kMeta: return "meta";
    case KnobProcess::kRouter: return "router";
    case KnobProcess::kAutoadmin: return "autoadmin";
    case KnobProcess::kGac: return "gac";
    case KnobProcess::kCluster: return "cluster";
  }
  return "?";
}

std::string_view KnobUnitName(KnobUnit unit) {
  switch (unit) {
    case KnobUnit::kMs: return "ms";
    case KnobUnit::kS: return "s";
    case KnobUnit::kBytes: return "bytes";
    case KnobUnit::kMib: return "MiB";
    case KnobUnit::kCount: return "";
    case KnobUnit::kSlots: return "slots";
    case KnobUnit::kThreads: return "threads";
    case KnobUnit::kPerS: return "requests/s";
    case KnobUnit::kUnitsPerS: return "units/s";
    case KnobUnit::kFraction: return "";
    case KnobUnit::kRequests: return "requests";
    case KnobUnit::kPercent: return "%";
    case KnobUnit::kBool: return "";
    case KnobUnit::kText: return "";
  }
  return "?";
}

const KnobInfo* FindKnob(std::string_view name) {
  for (const KnobInfo& k : kAllKnobs) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

const KnobInfo* FindKnobByLayoutField(std::string_view path) {
  if (path.empty()) return nullptr;
  for (const KnobInfo& k : kAllKnobs) {
    if (k.layout_field == path) return &k;
  }
  return nullptr;
}

}  // namespace tessera::knobs
