#include "router/kv_grant.h"

#include <algorithm>
#include <iterator>

#include "common/check.h"
#include "common/limits.h"

namespace tessera::router {
namespace {

bool ValidTableName(std::string_view name) {
  if (name.empty() || name.size() > limits::kRouterTableBytesMax) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

}  // namespace

bool IsInternalTable(std::string_view table) { return !table.empty() && table.front() == '_'; }

Result<KvGrant> KvGrant::Of(std::set<std::string, std::less<>> tables, bool read_only) {
  if (tables.size() > limits::kRouterGrantTablesMax) {
    return Status::InvalidArgument("a grant names at most " + std::to_string(limits::kRouterGrantTablesMax) +
                                   " tables");
  }
  for (const std::string& table : tables) {
    if (!ValidTableName(table)) return Status::InvalidArgument("bad table name in grant: '" + table + "'");
    if (IsInternalTable(table)) {
      return Status::InvalidArgument("table " + table + " is internal to the cluster and cannot be granted");
    }
  }
  KvGrant grant;
  grant.tables_ = std::move(tables);
  grant.read_only_ = read_only;
  return grant;
}

Result<KvGrant> KvGrant::Parse(std::string_view text) {
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) return Status::InvalidArgument("malformed grant");
  const std::string_view mode = text.substr(0, colon);
  if (mode != "r" && mode != "rw") return Status::InvalidArgument("malformed grant");
  std::string_view list = text.substr(colon + 1);
  if (list == "*") return Of({}, mode == "r");
  std::set<std::string, std::less<>> tables;
  while (true) {
    const size_t comma = list.find(',');
    const std::string_view name = list.substr(0, comma);
    if (name.empty() || name == "*") return Status::InvalidArgument("malformed grant");
    if (tables.size() == limits::kRouterGrantTablesMax) {
      return Status::InvalidArgument("a grant names at most " +
                                     std::to_string(limits::kRouterGrantTablesMax) + " tables");
    }
    tables.emplace(name);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return Of(std::move(tables), mode == "r");
}

bool KvGrant::Allows(std::string_view table, KvAccess access) const {
  if (IsInternalTable(table) || none_) return false;
  if (access == KvAccess::kWrite && read_only_) return false;
  return tables_.empty() || tables_.count(table) > 0;
}

KvGrant KvGrant::Narrowed(const KvGrant& other) const {
  KvGrant out;
  out.read_only_ = read_only_ || other.read_only_;
  out.none_ = none_ || other.none_;
  if (out.none_) return out;
  if (tables_.empty()) {
    out.tables_ = other.tables_;
  } else if (other.tables_.empty()) {
    out.tables_ = tables_;
  } else {
    std::set_intersection(tables_.begin(), tables_.end(), other.tables_.begin(), other.tables_.end(),
                          std::inserter(out.tables_, out.tables_.end()));
    out.none_ = out.tables_.empty();
  }
  return out;
}

std::string KvGrant::ToText() const {
  TESSERA_CHECK(!none_);
  std::string out = read_only_ ? "r:" : "rw:";
  if (tables_.empty()) return out + "*";
  bool first = true;
  for (const std::string& table : tables_) {
    if (!first) out.push_back(',');
    out += table;
    first = false;
  }
  return out;
}

std::string DenialMessage(const KvGrant& grant, std::string_view table, KvAccess access) {
  const std::string name(table);
  if (IsInternalTable(table)) return "table " + name + " is internal to the cluster";
  if (grant.allows_nothing()) return "the token's grant and its credential's have no table in common";
  if (grant.Allows(table, KvAccess::kRead) && access == KvAccess::kWrite) {
    return "the credential may only read table " + name;
  }
  return "the credential may not use table " + name + " (grant " + grant.ToText() + ")";
}

}  // namespace tessera::router
