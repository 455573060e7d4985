// An in-memory partition state for the S3 model tests: StateAccess for ops
// (writes land at once; the tests apply one op per "slot") and RecordSource
// for listings.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "s3/model/listing.h"
#include "s3/model/state_access.h"

namespace tessera::s3::model {

class MemoryState : public StateAccess, public RecordSource {
 public:
  Result<std::optional<std::string>> Get(const std::string& key) override {
    auto it = rows_.find(key);
    if (it == rows_.end()) return std::optional<std::string>();
    return std::optional<std::string>(it->second);
  }
  void Put(const std::string& key, std::string value) override { rows_[key] = std::move(value); }
  void Delete(const std::string& key) override { rows_.erase(key); }

  Result<Rows> ScanState(const std::string& start, const std::string& end,
                         size_t limit) override {
    Rows out;
    for (auto it = rows_.lower_bound(start); it != rows_.end() && out.size() < limit; ++it) {
      if (!end.empty() && it->first >= end) break;
      out.emplace_back(it->first, it->second);
    }
    return out;
  }

  Result<std::vector<RecordRow>> Scan(const std::string& start, const std::string& end,
                                      size_t limit) const override {
    ++scans_;
    std::vector<RecordRow> out;
    for (auto it = rows_.lower_bound(start); it != rows_.end() && out.size() < limit; ++it) {
      if (!end.empty() && it->first >= end) break;
      out.push_back({it->first, it->second});
    }
    return out;
  }

  // In place, counting what a listing touches.
  Status Walk(const std::string& start, const std::string& end, size_t limit,
              const KeyFilter& wants_value, const RowVisitor& visit) const override {
    ++walks_;
    size_t visited = 0;
    for (auto it = rows_.lower_bound(start); it != rows_.end() && visited < limit; ++it) {
      if (!end.empty() && it->first >= end) break;
      ++visited;
      ++walked_rows_;
      const bool wanted = !wants_value || wants_value(it->first);
      if (wanted) values_read_.push_back(it->first);
      if (!visit(it->first, wanted ? std::string_view(it->second) : std::string_view())) break;
    }
    return Status::Ok();
  }

  const std::map<std::string, std::string>& rows() const { return rows_; }
  size_t scans() const { return scans_; }
  size_t walks() const { return walks_; }
  size_t walked_rows() const { return walked_rows_; }
  // The keys whose values walks handed out, in order.
  const std::vector<std::string>& values_read() const { return values_read_; }

 private:
  std::map<std::string, std::string> rows_;
  mutable size_t scans_ = 0;
  mutable size_t walks_ = 0;
  mutable size_t walked_rows_ = 0;
  mutable std::vector<std::string> values_read_;
};

}  // namespace tessera::s3::model
