// Goal: CORS rules are parsed, refused and matched as S3 does: first rule
// wins, one wildcard per pattern, header names case-insensitive, origins
// not, and the answer's Access-Control-* headers follow the matched rule.
#include "s3/protocol/cors_rules.h"

#include <gtest/gtest.h>

#include "s3/protocol/xml_documents.h"

namespace tessera::s3 {
namespace {

std::string HeaderOf(const std::vector<HeaderField>& headers, std::string_view name) {
  for (const auto& [n, v] : headers) {
    if (n == name) return v;
  }
  return "<absent>";
}

constexpr char kTwoRules[] = R"(<CORSConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <CORSRule>
    <ID>site</ID>
    <AllowedOrigin>https://*.example.com</AllowedOrigin>
    <AllowedMethod>PUT</AllowedMethod>
    <AllowedMethod>GET</AllowedMethod>
    <AllowedHeader>x-amz-*</AllowedHeader>
    <AllowedHeader>Content-Type</AllowedHeader>
    <ExposeHeader>ETag</ExposeHeader>
    <MaxAgeSeconds>3000</MaxAgeSeconds>
  </CORSRule>
  <CORSRule>
    <AllowedOrigin>*</AllowedOrigin>
    <AllowedMethod>GET</AllowedMethod>
  </CORSRule>
</CORSConfiguration>)";

TEST(CorsRules, ParseAndRenderRoundTrip) {
  auto rules = ParseCorsConfiguration(kTwoRules);
  ASSERT_TRUE(rules.ok()) << rules.error().Message();
  ASSERT_EQ(rules->size(), 2u);
  EXPECT_EQ((*rules)[0].id, "site");
  EXPECT_EQ((*rules)[0].allowed_methods, (std::vector<std::string>{"PUT", "GET"}));
  EXPECT_EQ((*rules)[0].max_age_s, 3000);
  EXPECT_FALSE((*rules)[1].max_age_s);
  auto again = ParseCorsConfiguration(CorsConfigurationXml(*rules));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *rules);
}

TEST(CorsRules, BadConfigurationsAreRefusedAsS3Does) {
  const auto error_of = [](const std::string& rules) {
    auto parsed = ParseCorsConfiguration("<CORSConfiguration>" + rules + "</CORSConfiguration>");
    return parsed.ok() ? std::string("ok")
                       : std::string(CodeName(parsed.error().code)) + ": " +
                             std::string(parsed.error().Message());
  };
  EXPECT_EQ(error_of(""), "MalformedXML: " + std::string(DefaultMessage(S3ErrorCode::kMalformedXML)));
  EXPECT_EQ(error_of("<CORSRule><AllowedMethod>GET</AllowedMethod></CORSRule>").substr(0, 12),
            "MalformedXML");
  EXPECT_EQ(error_of("<CORSRule><AllowedOrigin>*</AllowedOrigin></CORSRule>").substr(0, 12),
            "MalformedXML");
  EXPECT_EQ(error_of("<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>PATCH"
                     "</AllowedMethod></CORSRule>"),
            "InvalidRequest: Found unsupported HTTP method in CORS config. Unsupported method "
            "is PATCH");
  EXPECT_EQ(error_of("<CORSRule><AllowedOrigin>http://*.*</AllowedOrigin><AllowedMethod>GET"
                     "</AllowedMethod></CORSRule>"),
            "InvalidRequest: AllowedOrigin \"http://*.*\" can not have more than one wildcard.");
  EXPECT_EQ(error_of("<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET"
                     "</AllowedMethod><AllowedHeader>*-*</AllowedHeader></CORSRule>"),
            "InvalidRequest: AllowedHeader \"*-*\" can not have more than one wildcard.");
  EXPECT_EQ(error_of("<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET"
                     "</AllowedMethod><MaxAgeSeconds>soon</MaxAgeSeconds></CORSRule>")
                .substr(0, 12),
            "MalformedXML");
  std::string many;
  for (size_t i = 0; i <= kCorsRulesMax; ++i) {
    many += "<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod>"
            "</CORSRule>";
  }
  EXPECT_EQ(error_of(many).substr(0, 14), "InvalidRequest");
  EXPECT_EQ(ParseCorsConfiguration("<Other/>").error().code, S3ErrorCode::kMalformedXML);
}

TEST(CorsRules, PatternsHaveOneWildcard) {
  EXPECT_TRUE(CorsPatternMatches("*", "https://a.example", false));
  EXPECT_TRUE(CorsPatternMatches("https://*.example.com", "https://a.b.example.com", false));
  EXPECT_FALSE(CorsPatternMatches("https://*.example.com", "http://a.example.com", false));
  EXPECT_FALSE(CorsPatternMatches("https://A.example", "https://a.example", false));
  EXPECT_TRUE(CorsPatternMatches("X-Amz-*", "x-amz-date", true));
  EXPECT_FALSE(CorsPatternMatches("ab*ba", "aba", false));  // head and tail may not overlap
}

TEST(CorsRules, TheFirstMatchingRuleWins) {
  auto rules = ParseCorsConfiguration(kTwoRules);
  ASSERT_TRUE(rules.ok());
  const std::vector<std::string> none;
  const auto headers = SplitCorsHeaderList(" X-Amz-Date, content-type ,,");
  EXPECT_EQ(headers, (std::vector<std::string>{"x-amz-date", "content-type"}));
  EXPECT_EQ(MatchCorsRule(*rules, "https://app.example.com", "PUT", headers), 0u);
  // A header no rule allows: the first rule fails, the second lacks PUT.
  const std::vector<std::string> other{"x-custom"};
  EXPECT_FALSE(MatchCorsRule(*rules, "https://app.example.com", "PUT", other));
  // Another origin: only the catch-all, and only for GET.
  EXPECT_EQ(MatchCorsRule(*rules, "https://elsewhere.org", "GET", none), 1u);
  EXPECT_FALSE(MatchCorsRule(*rules, "https://elsewhere.org", "PUT", none));
  EXPECT_FALSE(MatchCorsRule(*rules, "https://elsewhere.org", "DELETE", none));
}

TEST(CorsRules, AnswerHeadersFollowTheRule) {
  auto rules = ParseCorsConfiguration(kTwoRules);
  ASSERT_TRUE(rules.ok());
  const std::vector<std::string> requested{"x-amz-date"};
  auto preflight = CorsResponseHeaders((*rules)[0], "https://app.example.com", requested, true);
  EXPECT_EQ(HeaderOf(preflight, "Access-Control-Allow-Origin"), "https://app.example.com");
  EXPECT_EQ(HeaderOf(preflight, "Access-Control-Allow-Methods"), "PUT, GET");
  EXPECT_EQ(HeaderOf(preflight, "Access-Control-Allow-Headers"), "x-amz-date");
  EXPECT_EQ(HeaderOf(preflight, "Access-Control-Expose-Headers"), "ETag");
  EXPECT_EQ(HeaderOf(preflight, "Access-Control-Max-Age"), "3000");
  EXPECT_EQ(HeaderOf(preflight, "Access-Control-Allow-Credentials"), "true");
  EXPECT_NE(HeaderOf(preflight, "Vary").find("Origin"), std::string::npos);
  auto actual = CorsResponseHeaders((*rules)[1], "https://elsewhere.org", {}, false);
  EXPECT_EQ(HeaderOf(actual, "Access-Control-Allow-Origin"), "*");
  EXPECT_EQ(HeaderOf(actual, "Access-Control-Allow-Headers"), "<absent>");
  EXPECT_EQ(HeaderOf(actual, "Access-Control-Allow-Credentials"), "<absent>");
  EXPECT_EQ(HeaderOf(actual, "Access-Control-Max-Age"), "<absent>");
}

}  // namespace
}  // namespace tessera::s3
