// Goal: KV API targets decode keys as percent-encoded path segments and
// refuse invalid encodings; the JSON helpers round-trip what the API needs.
#include <gtest/gtest.h>

#include "router/json.h"
#include "router/uri.h"

namespace tessera::router {
namespace {

TEST(UriTest, DecodesKeysAndQueries) {
  Result<KvTarget> t = ParseKvTarget("/kv/users/a%20b%2Fc+d%00%ff?start=x%2By&limit=5&flag");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->table, "users");
  EXPECT_EQ(*t->key, std::string("a b/c+d\0\xff", 9));  // '+' stays '+' in a path
  EXPECT_EQ(t->query["start"], "x+y");
  EXPECT_EQ(t->query["limit"], "5");
  EXPECT_EQ(t->query.count("flag"), 1u);
  Result<KvTarget> scan = ParseKvTarget("/kv/users?start=a+b");
  ASSERT_TRUE(scan.ok());
  EXPECT_FALSE(scan->key.has_value());
  EXPECT_EQ(scan->query["start"], "a b");
  EXPECT_EQ(*ParseKvTarget("/kv/t/x/y")->key, "x/y");
}

TEST(UriTest, RejectsInvalidEncodingsAndNames) {
  for (const char* bad : {"/kv/t/%", "/kv/t/%4", "/kv/t/%zz", "/kv/t/a%g0", "/kv/t?x=%q1", "/kv/",
                          "/kv//k", "/kv/t/", "/kv/bad%20table/k", "/other/t/k", "/kv/t%2Fx/k"}) {
    EXPECT_EQ(ParseKvTarget(bad).status().code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_FALSE(ParseKvTarget("/kv/t/" + std::string(5000, 'k')).ok());
}

TEST(UriTest, EncodeRoundTrips) {
  const std::string bytes("a b/\0\xff~-._", 10);
  EXPECT_EQ(PercentEncode(bytes), "a%20b%2F%00%FF~-._");
  EXPECT_EQ(*PercentDecode(PercentEncode(bytes)), bytes);
}

TEST(JsonTest, ParsesStringObjects) {
  auto parsed = ParseJsonStringObject(R"( {"value": "a\"b\\c\n\u00e9\ud83d\ude00", "x":""} )");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ((*parsed)["value"], "a\"b\\c\n\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_TRUE(ParseJsonStringObject("{}").ok());
  for (const char* bad : {"", "[]", "{\"v\":1}", "{\"v\":\"x\"", "{\"v\":\"x\"} x", "{\"v\":\"\\ud800\"}",
                          "{\"v\":\"\\q\"}", "{v:\"x\"}"}) {
    EXPECT_FALSE(ParseJsonStringObject(bad).ok()) << bad;
  }
}

TEST(JsonTest, WritesStringsAndBytes) {
  EXPECT_EQ(JsonQuote("a\"\\\n\x01"), "\"a\\\"\\\\\\n\\u0001\"");
  EXPECT_EQ(JsonBytesMember("key", "k\xc3\xa9"), "\"key\":\"k\xc3\xa9\"");
  EXPECT_EQ(JsonBytesMember("key", std::string("\xff\x00" "a", 3)), "\"key_base64\":\"/wBh\"");
  EXPECT_FALSE(IsValidUtf8("\xc0\x80"));  // overlong
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));  // surrogate
  EXPECT_TRUE(IsValidUtf8("\xf0\x9f\x98\x80"));
}

}  // namespace
}  // namespace tessera::router
