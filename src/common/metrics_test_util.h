// Test helper: reading one series back from a metrics registry's text.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>

#include "common/metrics.h"

namespace tessera::metrics::testing {

// The value of one series as rendered, e.g. `name` or
// `name{op="put"}` (labels in name order); 0 when absent.
inline uint64_t SeriesValue(const Registry& registry, const std::string& series) {
  std::istringstream lines(registry.RenderText());
  std::string line;
  while (std::getline(lines, line)) {
    if (line.size() > series.size() && line.compare(0, series.size(), series) == 0 &&
        line[series.size()] == ' ') {
      return std::stoull(line.substr(series.size() + 1));
    }
  }
  return 0;
}

}  // namespace tessera::metrics::testing
