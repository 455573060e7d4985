#include "cluster/process_logging.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>

#include <filesystem>

namespace tessera::cluster {

Status SetUpProcessLogging(const std::string& dir, const std::string& name,
                           const std::string& role) {
  std::error_code ec;
  std::filesystem::create_directories(dir + "/logs", ec);
  if (ec) return Status::IOError("cannot create " + dir + "/logs: " + ec.message());
  try {
    auto logger = spdlog::basic_logger_mt(role, dir + "/logs/" + name + ".log");
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%fZ %l %v", spdlog::pattern_time_type::utc);
    logger->flush_on(spdlog::level::info);
    spdlog::set_default_logger(logger);
  } catch (const spdlog::spdlog_ex& e) {
    return Status::IOError(std::string("cannot open the log: ") + e.what());
  }
  return Status::Ok();
}

}  // namespace tessera::cluster
