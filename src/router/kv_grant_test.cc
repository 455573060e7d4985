// Goal: a KV grant allows exactly its tables (all user tables when it names
// none) and only reads when read-only; no grant ever allows an internal
// table or can name one; narrowing never widens; the grant text round-trips
// and malformed text is refused.
#include "router/kv_grant.h"

#include <gtest/gtest.h>

#include "common/limits.h"

namespace tessera::router {
namespace {

KvGrant Grant(std::set<std::string, std::less<>> tables, bool read_only) {
  auto grant = KvGrant::Of(std::move(tables), read_only);
  EXPECT_TRUE(grant.ok()) << grant.status().ToString();
  return *grant;
}

TEST(KvGrant, DefaultAllowsEveryUserTableButNoInternalOne) {
  const KvGrant all;
  EXPECT_TRUE(all.Allows("kv", KvAccess::kWrite));
  EXPECT_TRUE(all.Allows("anything.else", KvAccess::kRead));
  for (const char* internal : {"_s3", "_meta", "_"}) {
    EXPECT_TRUE(IsInternalTable(internal));
    EXPECT_FALSE(all.Allows(internal, KvAccess::kRead)) << internal;
    EXPECT_FALSE(all.Allows(internal, KvAccess::kWrite)) << internal;
  }
  EXPECT_FALSE(IsInternalTable("s3_"));
  EXPECT_EQ(all.ToText(), "rw:*");
}

TEST(KvGrant, TablesAndReadOnlyLimitAccess) {
  const KvGrant reader = Grant({"orders", "users"}, true);
  EXPECT_TRUE(reader.Allows("orders", KvAccess::kRead));
  EXPECT_FALSE(reader.Allows("orders", KvAccess::kWrite));
  EXPECT_FALSE(reader.Allows("billing", KvAccess::kRead));
  EXPECT_EQ(reader.ToText(), "r:orders,users");
  EXPECT_NE(DenialMessage(reader, "orders", KvAccess::kWrite).find("only read"), std::string::npos);
  EXPECT_NE(DenialMessage(reader, "billing", KvAccess::kRead).find("may not use table billing"),
            std::string::npos);
  EXPECT_NE(DenialMessage(reader, "_s3", KvAccess::kRead).find("internal"), std::string::npos);
}

TEST(KvGrant, InternalOrMalformedTablesCannotBeGranted) {
  EXPECT_FALSE(KvGrant::Of({"_s3"}, false).ok());
  EXPECT_FALSE(KvGrant::Of({"bad name"}, false).ok());
  EXPECT_FALSE(KvGrant::Of({std::string(limits::kRouterTableBytesMax + 1, 'a')}, false).ok());
  std::set<std::string, std::less<>> many;
  for (size_t i = 0; i <= limits::kRouterGrantTablesMax; ++i) many.insert("t" + std::to_string(i));
  EXPECT_FALSE(KvGrant::Of(many, false).ok());
  for (const char* bad : {"", "rw", "x:*", "rw:", "r:a,,b", "rw:a,*", "r:_s3", "rw:a b"}) {
    EXPECT_FALSE(KvGrant::Parse(bad).ok()) << bad;
  }
}

TEST(KvGrant, TextRoundTrips) {
  for (const KvGrant& g : {KvGrant(), Grant({}, true), Grant({"a.b", "c-d"}, false), Grant({"x"}, true)}) {
    auto parsed = KvGrant::Parse(g.ToText());
    ASSERT_TRUE(parsed.ok()) << g.ToText();
    EXPECT_EQ(*parsed, g) << g.ToText();
  }
}

TEST(KvGrant, NarrowingNeverWidens) {
  const KvGrant credential = Grant({"a", "b"}, false);
  const KvGrant narrowed = credential.Narrowed(Grant({"b", "c"}, true));
  EXPECT_EQ(narrowed.ToText(), "r:b");
  EXPECT_FALSE(narrowed.Allows("c", KvAccess::kRead));
  EXPECT_EQ(credential.Narrowed(KvGrant()), credential);
  EXPECT_EQ(KvGrant().Narrowed(credential), credential);
  EXPECT_EQ(Grant({}, true).Narrowed(Grant({"a"}, false)).ToText(), "r:a");
  const KvGrant nothing = credential.Narrowed(Grant({"z"}, false));
  EXPECT_TRUE(nothing.allows_nothing());
  EXPECT_FALSE(nothing.Allows("a", KvAccess::kRead));
  EXPECT_FALSE(nothing.Allows("z", KvAccess::kRead));
}

}  // namespace
}  // namespace tessera::router
