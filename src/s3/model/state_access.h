// StateAccess: what an S3 operation may do to its partition's state while
// the state machine applies it. Reads see every write made earlier in the
// same apply batch (the state as of the previous slot plus this op's own
// writes); writes take effect together with the rest of the batch, all or
// nothing. Values are the records' serialized protobufs.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"

namespace tessera::s3::model {

class StateAccess {
 public:
  virtual ~StateAccess() = default;
  virtual Result<std::optional<std::string>> Get(const std::string& key) = 0;
  virtual void Put(const std::string& key, std::string value) = 0;
  virtual void Delete(const std::string& key) = 0;
  // (key, value) rows with keys in [start, end) in key order, at most
  // `limit`, as of this op (earlier writes of the batch included).
  using Rows = std::vector<std::pair<std::string, std::string>>;
  virtual Result<Rows> ScanState(const std::string& start, const std::string& end,
                                 size_t limit) = 0;
};

}  // namespace tessera::s3::model
