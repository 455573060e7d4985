#include "storage/rocks_status.h"

#include <string>

namespace tessera::storage {

Status FromRocks(const rocksdb::Status& status, std::string_view context) {
  if (status.ok()) return Status::Ok();
  std::string message = std::string(context) + ": " + status.ToString();
  if (status.IsCorruption()) return Status::Corruption(std::move(message));
  if (status.IsNotFound()) return Status::NotFound(std::move(message));
  if (status.IsInvalidArgument() || status.IsNotSupported()) {
    return Status::InvalidArgument(std::move(message));
  }
  if (status.IsBusy() || status.IsTryAgain() || status.IsTimedOut()) {
    return Status::Unavailable(std::move(message));
  }
  return Status::IOError(std::move(message));
}

}  // namespace tessera::storage
