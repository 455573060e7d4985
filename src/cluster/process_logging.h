// Logging of a cluster process (node, meta, router): spdlog to
// DIR/logs/NAME.log, UTC timestamps, flushed at info, as the default logger.
#pragma once

#include <string>

#include "common/status.h"

namespace tessera::cluster {

// IOError when the log directory or file cannot be opened.
Status SetUpProcessLogging(const std::string& dir, const std::string& name,
                           const std::string& role);

}  // namespace tessera::cluster
