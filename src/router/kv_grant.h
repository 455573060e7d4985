// KvGrant: what a KV credential, or a token narrowed from it, may do: which
// tables, and whether only to read (docs/formats/credentials.md, "Grants").
//
//   grant text = ("rw" | "r") ":" ("*" | table ("," table)*)
//
// Invariants: tables whose name starts with '_' belong to the cluster
// (`_s3` holds every tenant's S3 records and inline bytes): no grant allows
// them, whatever it names, and a grant cannot be parsed that names one.
// A narrowed grant allows nothing its credential's grant does not.
//
// Thread safety: values.
#pragma once

#include <set>
#include <string>
#include <string_view>

#include "common/result.h"

namespace tessera::router {

enum class KvAccess { kRead, kWrite };

// Whether `table` is one of the cluster's own (its name starts with '_').
bool IsInternalTable(std::string_view table);

class KvGrant {
 public:
  // Every user table, read and write: a credential line without grant
  // fields.
  KvGrant() = default;
  // `tables` empty: every user table. InvalidArgument for a name that is
  // not a table name ([A-Za-z0-9._-], 1..kRouterTableBytesMax bytes) or is
  // internal, or more than kRouterGrantTablesMax names.
  static Result<KvGrant> Of(std::set<std::string, std::less<>> tables, bool read_only);
  // Parses the grant text above. InvalidArgument when malformed.
  static Result<KvGrant> Parse(std::string_view text);

  bool Allows(std::string_view table, KvAccess access) const;
  // What both this grant and `other` allow.
  KvGrant Narrowed(const KvGrant& other) const;
  // The grant text; Parse(ToText()) equals *this. Not for a grant that
  // allows nothing (a narrowing with no table in common; CHECKed).
  std::string ToText() const;
  // Whether a narrowing left no table at all.
  bool allows_nothing() const { return none_; }

  bool all_tables() const { return tables_.empty() && !none_; }
  bool read_only() const { return read_only_; }
  const std::set<std::string, std::less<>>& tables() const { return tables_; }
  bool operator==(const KvGrant&) const = default;

 private:
  std::set<std::string, std::less<>> tables_;  // empty and !none_: every user table
  bool none_ = false;  // a narrowing left no table in common
  bool read_only_ = false;
};

// Why `grant` does not allow `access` to `table`, for the refusal both KV
// APIs answer (HTTP 403 PermissionDenied, native code PermissionDenied).
std::string DenialMessage(const KvGrant& grant, std::string_view table, KvAccess access);

}  // namespace tessera::router
