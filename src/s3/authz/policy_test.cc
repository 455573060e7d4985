// Goal: bucket policies parse into the model or fail with S3's
// MalformedPolicy message, evaluation follows IAM's rule (explicit Deny
// wins, Allow, else nothing), and every condition operator has a matching
// and a non-matching case.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "s3/authz/authorize.h"
#include "s3/authz/policy.h"
#include "s3/authz/policy_eval.h"
#include "s3/authz/policy_values.h"

namespace tessera::s3::authz {
namespace {

const std::string kAliceId(64, 'a');
const std::string kBobId(64, 'b');

std::string Doc(const std::string& statements) {
  return R"({"Version":"2012-10-17","Statement":)" + statements + "}";
}

std::string Stmt(const std::string& body) { return "[{" + body + "}]"; }

TEST(ParsePolicy, Malformed) {
  struct Case {
    std::string document;
    std::string message;
  };
  const std::string any = R"("Effect":"Allow","Principal":"*","Action":"s3:GetObject",)";
  const std::vector<Case> cases = {
      {"", "Policies must be valid JSON and the first byte must be '{'"},
      {"[1]", "Policies must be valid JSON and the first byte must be '{'"},
      {"{not json", "Policies must be valid JSON and the first byte must be '{'"},
      {R"({"Version":"2012-10-17"})", "Missing required field Statement"},
      {R"({"Version":"1999-01-01","Statement":[]})", "The policy must contain a valid version string"},
      {R"({"Statement":[],"Extra":1})", "Unknown field Extra"},
      {Doc(Stmt(R"("Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*")")),
       "Missing required field Principal"},
      {Doc(Stmt(R"("Effect":"Alow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*")")),
       "Invalid effect: Alow"},
      {Doc(Stmt(any + R"("Resource":"arn:aws:s3:::other/*")")), "Policy has invalid resource"},
      {Doc(Stmt(any + R"("Resource":"b/*")")), "Policy has invalid resource"},
      {Doc(Stmt(R"("Effect":"Allow","Principal":"*","Action":"ec2:RunInstances","Resource":"arn:aws:s3:::b")")),
       "Policy has invalid action"},
      {Doc(Stmt(R"("Effect":"Allow","Principal":"*","Resource":"arn:aws:s3:::b")")),
       "Missing required field Action"},
      {Doc(Stmt(R"("Effect":"Allow","Principal":"*","Action":"s3:*")")),
       "Missing required field Resource"},
      {Doc(Stmt(R"("Effect":"Allow","Principal":{"AWS":"alice"},"Action":"s3:*","Resource":"arn:aws:s3:::b")")),
       "Invalid principal in policy"},
      {Doc(Stmt(R"("Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"s3:*","Resource":"arn:aws:s3:::b")")),
       "Invalid principal in policy"},
      {Doc(Stmt(any + R"("Resource":"arn:aws:s3:::b","Condition":{"StringFoo":{"aws:UserAgent":"x"}})")),
       "Invalid Condition type : StringFoo"},
      {Doc(Stmt(any + R"("Resource":"arn:aws:s3:::b","Condition":{"StringEquals":{"aws:Nope":"x"}})")),
       "Policy has an invalid condition key"},
      {Doc(Stmt(any + R"("Resource":"arn:aws:s3:::b","Condition":{"IpAddress":{"aws:SourceIp":"300.1.1.1"}})")),
       "Invalid Condition value for IpAddress : aws:SourceIp"},
      {"{" + std::string(20 << 10, ' ') + "}", "Policy exceeds the maximum allowed document size."},
      {R"({"Statement":[[[[[[[[[[1]]]]]]]]]]})", "Invalid policy syntax."},
  };
  for (const Case& c : cases) {
    const auto policy = ParsePolicy(c.document, "b");
    ASSERT_FALSE(policy.ok()) << c.document;
    EXPECT_EQ(policy.error().code, S3ErrorCode::kMalformedPolicy) << c.document;
    EXPECT_EQ(policy.error().Message(), c.message) << c.document;
  }
}

TEST(ParsePolicy, Model) {
  const auto policy = ParsePolicy(
      R"({"Version":"2012-10-17","Id":"p1","Statement":{"Sid":"s","Effect":"Deny",
          "NotPrincipal":{"AWS":["arn:aws:iam::)" + kAliceId + R"(:root","arn:aws:iam::)" + kBobId +
          R"(:user/bob"],"CanonicalUser":")" + kBobId + R"("},
          "NotAction":["S3:Get*"],"Resource":["arn:aws:s3:::b","arn:aws:s3:::b/*"],
          "Condition":{"ForAnyValue:StringLikeIfExists":{"s3:prefix":["a/*",5,true]}}}})",
      "b");
  ASSERT_TRUE(policy.ok()) << policy.error().Message();
  EXPECT_EQ(policy->id, "p1");
  ASSERT_EQ(policy->statements.size(), 1u);
  const Statement& s = policy->statements[0];
  EXPECT_EQ(s.sid, "s");
  EXPECT_EQ(s.effect, Effect::kDeny);
  EXPECT_TRUE(s.not_principal);
  EXPECT_EQ(s.principals.canonical_ids, (std::vector<std::string>{kAliceId, kBobId}));
  EXPECT_EQ(s.principals.user_names, std::vector<std::string>{"bob"});
  EXPECT_TRUE(s.not_action);
  EXPECT_EQ(s.actions, std::vector<std::string>{"s3:get*"});
  ASSERT_EQ(s.conditions.size(), 1u);
  EXPECT_EQ(s.conditions[0].op, ConditionOp::kStringLike);
  EXPECT_EQ(s.conditions[0].qualifier, SetQualifier::kForAnyValue);
  EXPECT_TRUE(s.conditions[0].if_exists);
  EXPECT_EQ(s.conditions[0].key, "s3:prefix");
  EXPECT_EQ(s.conditions[0].values, (std::vector<std::string>{"a/*", "5", "true"}));
}

TEST(GlobMatch, Wildcards) {
  EXPECT_TRUE(GlobMatch("a*", "abc"));
  EXPECT_TRUE(GlobMatch("*", ""));
  EXPECT_TRUE(GlobMatch("a?c", "abc"));
  EXPECT_FALSE(GlobMatch("a?c", "ac"));
  EXPECT_TRUE(GlobMatch("*b*d", "abcbd"));
  EXPECT_FALSE(GlobMatch("*b*d", "abcbe"));
  EXPECT_FALSE(GlobMatch("abc", "ABC"));
}

PolicyRequest Req(const std::string& user, const std::string& action, const std::string& key) {
  PolicyRequest r;
  r.anonymous = user.empty();
  r.user = user;
  r.canonical_id = user == "alice" ? kAliceId : user == "bob" ? kBobId : "";
  r.action = action;
  r.resource = ResourceArn("b", key);
  return r;
}

TEST(EvaluatePolicy, AllowDenyNone) {
  const auto policy = ParsePolicy(Doc(R"([
    {"Sid":"read","Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/public/*"},
    {"Sid":"bob","Effect":"Allow","Principal":{"AWS":")" + kBobId + R"("},"Action":"s3:Put*","Resource":"arn:aws:s3:::b/*"},
    {"Sid":"nodel","Effect":"Deny","Principal":"*","Action":"s3:DeleteObject","Resource":"arn:aws:s3:::b/*"},
    {"Sid":"notres","Effect":"Deny","Principal":{"CanonicalUser":")" + kBobId + R"("},"Action":"*","NotResource":"arn:aws:s3:::b/*"}
  ])"), "b");
  ASSERT_TRUE(policy.ok()) << policy.error().Message();
  using K = PolicyVerdict::Kind;
  struct Case {
    const char* name;
    PolicyRequest request;
    K kind;
    std::string sid;
  };
  const std::vector<Case> cases = {
      {"anonymous public read", Req("", "s3:GetObject", "public/x"), K::kAllow, "read"},
      {"anonymous private read", Req("", "s3:GetObject", "private/x"), K::kNone, ""},
      {"action case-insensitive", Req("", "S3:GETOBJECT", "public/x"), K::kAllow, "read"},
      {"bob puts", Req("bob", "s3:PutObject", "k"), K::kAllow, "bob"},
      {"alice puts: nothing", Req("alice", "s3:PutObject", "k"), K::kNone, ""},
      {"deny wins over allow", Req("bob", "s3:DeleteObject", "k"), K::kDeny, "nodel"},
      {"deny for anyone", Req("alice", "s3:DeleteObject", "k"), K::kDeny, "nodel"},
      {"NotResource: bucket itself", Req("bob", "s3:ListBucket", ""), K::kDeny, "notres"},
      {"NotResource: alice not named", Req("alice", "s3:ListBucket", ""), K::kNone, ""},
  };
  for (const Case& c : cases) {
    const PolicyVerdict v = EvaluatePolicy(*policy, c.request);
    EXPECT_EQ(v.kind, c.kind) << c.name;
    EXPECT_EQ(v.sid, c.sid) << c.name;
  }
}

TEST(EvaluatePolicy, NotPrincipalAndNotAction) {
  const auto policy = ParsePolicy(Doc(R"([
    {"Sid":"d","Effect":"Deny","NotPrincipal":{"AWS":"arn:aws:iam::)" + kAliceId + R"(:user/alice"},"NotAction":"s3:Get*","Resource":"arn:aws:s3:::b/*"}
  ])"), "b");
  ASSERT_TRUE(policy.ok()) << policy.error().Message();
  EXPECT_EQ(EvaluatePolicy(*policy, Req("bob", "s3:PutObject", "k")).kind, PolicyVerdict::Kind::kDeny);
  EXPECT_EQ(EvaluatePolicy(*policy, Req("", "s3:PutObject", "k")).kind, PolicyVerdict::Kind::kDeny);
  EXPECT_EQ(EvaluatePolicy(*policy, Req("bob", "s3:GetObject", "k")).kind, PolicyVerdict::Kind::kNone);
  EXPECT_EQ(EvaluatePolicy(*policy, Req("alice", "s3:PutObject", "k")).kind, PolicyVerdict::Kind::kNone);
}

// One condition, a request with `values`, whether the statement applies.
bool Applies(const std::string& condition, const ConditionValues& values) {
  const auto policy = ParsePolicy(
      Doc(Stmt(R"("Effect":"Allow","Principal":"*","Action":"s3:*","Resource":"arn:aws:s3:::b/*","Condition":)" +
               condition)),
      "b");
  EXPECT_TRUE(policy.ok()) << condition << ": " << (policy.ok() ? "" : policy.error().Message());
  if (!policy.ok()) return false;
  PolicyRequest r = Req("alice", "s3:GetObject", "k");
  r.values = values;
  return StatementApplies(policy->statements[0], r);
}

TEST(Conditions, EveryOperatorMatchesAndMisses) {
  struct Case {
    std::string condition;
    ConditionValues values;
    bool applies;
  };
  const ConditionValues none;
  const std::vector<Case> cases = {
      {R"({"StringEquals":{"aws:UserAgent":"boto"}})", {{"aws:useragent", {"boto"}}}, true},
      {R"({"StringEquals":{"aws:UserAgent":"boto"}})", {{"aws:useragent", {"Boto"}}}, false},
      {R"({"StringEquals":{"aws:UserAgent":"boto"}})", none, false},
      {R"({"StringNotEquals":{"aws:UserAgent":["a","b"]}})", {{"aws:useragent", {"c"}}}, true},
      {R"({"StringNotEquals":{"aws:UserAgent":["a","b"]}})", {{"aws:useragent", {"b"}}}, false},
      {R"({"StringNotEquals":{"aws:UserAgent":"a"}})", none, true},
      {R"({"StringEqualsIgnoreCase":{"aws:UserAgent":"BOTO"}})", {{"aws:useragent", {"boto"}}}, true},
      {R"({"StringEqualsIgnoreCase":{"aws:UserAgent":"BOTO"}})", {{"aws:useragent", {"curl"}}}, false},
      {R"({"StringNotEqualsIgnoreCase":{"aws:UserAgent":"BOTO"}})", {{"aws:useragent", {"boto"}}}, false},
      {R"({"StringLike":{"s3:prefix":"home/*"}})", {{"s3:prefix", {"home/a"}}}, true},
      {R"({"StringLike":{"s3:prefix":"home/*"}})", {{"s3:prefix", {"other/"}}}, false},
      {R"({"StringNotLike":{"s3:prefix":"home/*"}})", {{"s3:prefix", {"other/"}}}, true},
      {R"({"StringNotLike":{"s3:prefix":"home/*"}})", {{"s3:prefix", {"home/x"}}}, false},
      {R"({"NumericEquals":{"s3:max-keys":"10"}})", {{"s3:max-keys", {"10"}}}, true},
      {R"({"NumericEquals":{"s3:max-keys":10}})", {{"s3:max-keys", {"11"}}}, false},
      {R"({"NumericNotEquals":{"s3:max-keys":10}})", {{"s3:max-keys", {"11"}}}, true},
      {R"({"NumericNotEquals":{"s3:max-keys":10}})", {{"s3:max-keys", {"10"}}}, false},
      {R"({"NumericLessThan":{"s3:max-keys":10}})", {{"s3:max-keys", {"9"}}}, true},
      {R"({"NumericLessThan":{"s3:max-keys":10}})", {{"s3:max-keys", {"10"}}}, false},
      {R"({"NumericLessThanEquals":{"s3:max-keys":10}})", {{"s3:max-keys", {"10"}}}, true},
      {R"({"NumericLessThanEquals":{"s3:max-keys":10}})", {{"s3:max-keys", {"11"}}}, false},
      {R"({"NumericGreaterThan":{"s3:max-keys":10}})", {{"s3:max-keys", {"11"}}}, true},
      {R"({"NumericGreaterThan":{"s3:max-keys":10}})", {{"s3:max-keys", {"10"}}}, false},
      {R"({"NumericGreaterThanEquals":{"s3:max-keys":10}})", {{"s3:max-keys", {"10"}}}, true},
      {R"({"NumericGreaterThanEquals":{"s3:max-keys":10}})", {{"s3:max-keys", {"x"}}}, false},
      {R"({"DateEquals":{"aws:CurrentTime":"2026-01-01T00:00:00Z"}})", {{"aws:currenttime", {"1767225600"}}}, true},
      {R"({"DateEquals":{"aws:CurrentTime":"2026-01-01"}})", {{"aws:currenttime", {"2026-01-01T00:00:01Z"}}}, false},
      {R"({"DateNotEquals":{"aws:CurrentTime":"2026-01-01"}})", {{"aws:currenttime", {"2026-01-02"}}}, true},
      {R"({"DateNotEquals":{"aws:CurrentTime":"2026-01-01"}})", {{"aws:currenttime", {"2026-01-01"}}}, false},
      {R"({"DateLessThan":{"aws:CurrentTime":"2026-01-01T01:00:00+01:00"}})", {{"aws:currenttime", {"2025-12-31T23:59:59Z"}}}, true},
      {R"({"DateLessThan":{"aws:CurrentTime":"2026-01-01T01:00:00+01:00"}})", {{"aws:currenttime", {"2026-01-01T00:00:00Z"}}}, false},
      {R"({"DateLessThanEquals":{"aws:CurrentTime":"2026-01-01"}})", {{"aws:currenttime", {"2026-01-01"}}}, true},
      {R"({"DateLessThanEquals":{"aws:CurrentTime":"2026-01-01"}})", {{"aws:currenttime", {"2026-01-02"}}}, false},
      {R"({"DateGreaterThan":{"aws:EpochTime":"1000"}})", {{"aws:epochtime", {"1001"}}}, true},
      {R"({"DateGreaterThan":{"aws:EpochTime":"1000"}})", {{"aws:epochtime", {"1000"}}}, false},
      {R"({"DateGreaterThanEquals":{"aws:EpochTime":"1000"}})", {{"aws:epochtime", {"1000"}}}, true},
      {R"({"DateGreaterThanEquals":{"aws:EpochTime":"1000"}})", {{"aws:epochtime", {"999.5"}}}, false},
      {R"({"Bool":{"aws:SecureTransport":"true"}})", {{"aws:securetransport", {"true"}}}, true},
      {R"({"Bool":{"aws:SecureTransport":true}})", {{"aws:securetransport", {"false"}}}, false},
      {R"({"Bool":{"aws:SecureTransport":"false"}})", none, false},
      {R"({"IpAddress":{"aws:SourceIp":"127.0.0.1/32"}})", {{"aws:sourceip", {"127.0.0.1"}}}, true},
      {R"({"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}})", {{"aws:sourceip", {"127.0.0.1"}}}, false},
      {R"({"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}})", {{"aws:sourceip", {"::ffff:10.1.2.3"}}}, true},
      {R"({"IpAddress":{"aws:SourceIp":"2001:db8::/32"}})", {{"aws:sourceip", {"2001:db8::1"}}}, true},
      {R"({"IpAddress":{"aws:SourceIp":"2001:db8::/32"}})", {{"aws:sourceip", {"2001:db9::1"}}}, false},
      {R"({"NotIpAddress":{"aws:SourceIp":"10.0.0.0/8"}})", {{"aws:sourceip", {"127.0.0.1"}}}, true},
      {R"({"NotIpAddress":{"aws:SourceIp":["10.0.0.0/8","127.0.0.0/8"]}})", {{"aws:sourceip", {"127.0.0.1"}}}, false},
      {R"({"ArnLike":{"aws:SourceArn":"arn:aws:s3:::x*"}})", {{"aws:sourcearn", {"arn:aws:s3:::xy"}}}, true},
      {R"({"ArnEquals":{"aws:SourceArn":"arn:aws:s3:::x"}})", {{"aws:sourcearn", {"arn:aws:s3:::xy"}}}, false},
      {R"({"Null":{"s3:x-amz-acl":"true"}})", none, true},
      {R"({"Null":{"s3:x-amz-acl":"true"}})", {{"s3:x-amz-acl", {"private"}}}, false},
      {R"({"Null":{"s3:x-amz-acl":"false"}})", {{"s3:x-amz-acl", {"private"}}}, true},
      {R"({"StringEqualsIfExists":{"s3:x-amz-acl":"private"}})", none, true},
      {R"({"StringEqualsIfExists":{"s3:x-amz-acl":"private"}})", {{"s3:x-amz-acl", {"public-read"}}}, false},
      {R"({"ForAnyValue:StringEquals":{"s3:RequestObjectTagKeys":["a","b"]}})", {{"s3:requestobjecttagkeys", {"x", "b"}}}, true},
      {R"({"ForAnyValue:StringEquals":{"s3:RequestObjectTagKeys":["a","b"]}})", {{"s3:requestobjecttagkeys", {"x", "y"}}}, false},
      {R"({"ForAnyValue:StringEquals":{"s3:RequestObjectTagKeys":"a"}})", none, false},
      {R"({"ForAllValues:StringEquals":{"s3:RequestObjectTagKeys":["a","b"]}})", {{"s3:requestobjecttagkeys", {"a", "b"}}}, true},
      {R"({"ForAllValues:StringEquals":{"s3:RequestObjectTagKeys":["a","b"]}})", {{"s3:requestobjecttagkeys", {"a", "c"}}}, false},
      {R"({"ForAllValues:StringEquals":{"s3:RequestObjectTagKeys":"a"}})", none, true},
      {R"({"StringEquals":{"s3:ExistingObjectTag/team":"x","aws:UserAgent":"u"}})", {{"s3:existingobjecttag/team", {"x"}}, {"aws:useragent", {"u"}}}, true},
      {R"({"StringEquals":{"s3:ExistingObjectTag/team":"x","aws:UserAgent":"u"}})", {{"s3:existingobjecttag/team", {"x"}}}, false},
      {R"({"BinaryEquals":{"aws:UserAgent":"QUJD"}})", {{"aws:useragent", {"QUJD"}}}, true},
      {R"({"BinaryEquals":{"aws:UserAgent":"QUJD"}})", {{"aws:useragent", {"QUJE"}}}, false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Applies(c.condition, c.values), c.applies) << c.condition;
  }
}

TEST(PolicyValues, Parsers) {
  EXPECT_EQ(ParseDate("1970-01-02"), 86400.0);
  EXPECT_EQ(ParseDate("2026-12-07T10:00:00.5Z"), ParseDate("2026-12-07T11:00:00.5+01:00"));
  EXPECT_FALSE(ParseDate("2026-13-01").has_value());
  EXPECT_FALSE(ParseDate("yesterday").has_value());
  EXPECT_FALSE(ParseNumber("1e").has_value());
  EXPECT_FALSE(ParseCidr("1.2.3.4/33").has_value());
  EXPECT_FALSE(ParseCidr("::1/129").has_value());
  const auto v6 = ParseCidr("::1");
  ASSERT_TRUE(v6.has_value());
  EXPECT_TRUE(InCidr("[::1]", *v6));
}

// Policy variables: substituted in Resource and condition values, as literal
// text, only under Version 2012-10-17; a variable without a value matches nothing.
TEST(PolicyVariables, SubstitutedInResourcesAndConditions) {
  struct Case {
    const char* name;
    std::string version;
    std::string statement;  // the body after Effect/Principal/Action
    std::string key;
    ConditionValues values;
    bool applies;
  };
  const ConditionValues alice = {{"aws:username", {"alice"}}, {"aws:sourceip", {"10.1.2.3"}}};
  const ConditionValues star_user = {{"aws:username", {"a*"}}};
  const std::string home = R"("Resource":"arn:aws:s3:::b/home/${aws:username}/*")";
  const std::vector<Case> cases = {
      {"home dir", "2012-10-17", home, "home/alice/x", alice, true},
      {"other home", "2012-10-17", home, "home/bob/x", alice, false},
      {"no user: no match", "2012-10-17", home, "home//x", {}, false},
      {"case-insensitive name", "2012-10-17", R"("Resource":"arn:aws:s3:::b/home/${AWS:UserName}/*")", "home/alice/x", alice, true},
      {"substituted text is literal", "2012-10-17", home, "home/abc/x", star_user, false},
      {"substituted text matches itself", "2012-10-17", home, "home/a*/x", star_user, true},
      {"old version: text", "2008-10-17", home, "home/alice/x", alice, false},
      {"old version: literal text matches", "2008-10-17", home, "home/${aws:username}/x", alice, true},
      {"escape ${*} is a literal star", "2012-10-17", R"("Resource":"arn:aws:s3:::b/x${*}")", "x*", {}, true},
      {"escape ${*} is no wildcard", "2012-10-17", R"("Resource":"arn:aws:s3:::b/x${*}")", "xy", {}, false},
      {"escape ${?} and ${$}", "2012-10-17", R"("Resource":"arn:aws:s3:::b/${?}${$}")", "?$", {}, true},
      {"unknown variable", "2012-10-17", R"("Resource":"arn:aws:s3:::b/${aws:nothing}*")", "x", alice, false},
      {"one of two resources", "2012-10-17", R"("Resource":["arn:aws:s3:::b/${aws:nothing}","arn:aws:s3:::b/p/*"])", "p/x", {}, true},
      {"condition prefix", "2012-10-17", R"("Resource":"arn:aws:s3:::b","Condition":{"StringLike":{"s3:prefix":"home/${aws:username}/*"}})", "", {{"aws:username", {"alice"}}, {"s3:prefix", {"home/alice/d"}}}, true},
      {"condition prefix other", "2012-10-17", R"("Resource":"arn:aws:s3:::b","Condition":{"StringLike":{"s3:prefix":"home/${aws:username}/*"}})", "", {{"aws:username", {"alice"}}, {"s3:prefix", {"home/bob/d"}}}, false},
      {"condition without value does not hold", "2012-10-17", R"("Resource":"*","Condition":{"StringNotEquals":{"aws:UserAgent":"${aws:username}"}})", "k", {{"aws:useragent", {"x"}}}, false},
      {"condition equals", "2012-10-17", R"("Resource":"*","Condition":{"StringEquals":{"aws:UserAgent":"ip ${aws:SourceIp}"}})", "k", {{"aws:useragent", {"ip 10.1.2.3"}}, {"aws:sourceip", {"10.1.2.3"}}}, true},
      {"secure transport", "2012-10-17", R"("Resource":"arn:aws:s3:::b/${aws:SecureTransport}/*")", "true/k", {{"aws:securetransport", {"true"}}}, true},
  };
  for (const Case& c : cases) {
    const std::string doc = R"({"Version":")" + c.version +
                            R"(","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:*",)" +
                            c.statement + "}]}";
    const auto policy = ParsePolicy(doc, "b");
    ASSERT_TRUE(policy.ok()) << c.name << ": " << policy.error().Message();
    PolicyRequest r = Req("alice", "s3:GetObject", c.key);
    r.values = c.values;
    EXPECT_EQ(StatementApplies(policy->statements[0], r), c.applies) << c.name;
  }
}

TEST(Conditions, ExistingObjectTag) {
  const std::string tagged = R"({"StringEquals":{"s3:ExistingObjectTag/Public":"yes"}})";
  EXPECT_TRUE(Applies(tagged, {{"s3:existingobjecttag/public", {"yes"}}}));
  EXPECT_FALSE(Applies(tagged, {{"s3:existingobjecttag/public", {"no"}}}));
  EXPECT_FALSE(Applies(tagged, {{"s3:existingobjecttag/other", {"yes"}}}));
  EXPECT_FALSE(Applies(tagged, {}));
}

TEST(IsPublicPolicy, Definition) {
  struct Case {
    std::string statement;
    bool is_public;
  };
  const std::string head = R"("Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*",)";
  const std::vector<Case> cases = {
      {head + R"("Principal":"*")", true},
      {head + R"("Principal":{"AWS":"*"})", true},
      {head + R"("Principal":{"AWS":")" + kBobId + R"("})", false},
      {head + R"("NotPrincipal":{"AWS":")" + kBobId + R"("})", true},
      {head + R"("Principal":"*","Condition":{"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}})", false},
      {head + R"("Principal":"*","Condition":{"IpAddress":{"aws:SourceIp":"0.0.0.0/0"}})", true},
      {head + R"("Principal":"*","Condition":{"NotIpAddress":{"aws:SourceIp":"10.0.0.0/8"}})", true},
      {head + R"("Principal":"*","Condition":{"StringEquals":{"aws:SourceArn":"arn:aws:s3:::x"}})", false},
      {head + R"("Principal":"*","Condition":{"StringLike":{"aws:SourceArn":"arn:*"}})", true},
      {head + R"("Principal":"*","Condition":{"StringEquals":{"aws:UserAgent":"x"}})", true},
      {R"("Effect":"Deny","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*","Principal":"*")", false},
  };
  for (const Case& c : cases) {
    const auto policy = ParsePolicy(Doc(Stmt(c.statement)), "b");
    ASSERT_TRUE(policy.ok()) << c.statement;
    EXPECT_EQ(IsPublicPolicy(*policy), c.is_public) << c.statement;
  }
}

}  // namespace
}  // namespace tessera::s3::authz

// Goal: Authorize applies the policy rules P1-P4 of authorize.h.
namespace tessera::s3::authz {
namespace {

Request PolicyReq(const std::string& user, Action action, const std::string& key,
                  const std::string& policy_json, PublicAccessBlock pab = {}) {
  Request r;
  r.principal = user.empty() ? Principal{} : Principal{false, user, user == "alice" ? kAliceId : kBobId};
  r.action = action;
  r.bucket = "b";
  r.key = key;
  r.bucket_owner = "alice";
  auto policy = ParsePolicy(policy_json, "b");
  EXPECT_TRUE(policy.ok()) << policy_json;
  if (policy.ok()) r.bucket_policy = std::make_shared<const Policy>(std::move(policy).value());
  r.public_access_block = pab;
  return r;
}

TEST(AuthorizeWithPolicy, Rules) {
  const std::string policy = Doc(R"([
    {"Sid":"pub","Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/public/*"},
    {"Sid":"bobput","Effect":"Allow","Principal":{"AWS":")" + kBobId + R"("},"Action":["s3:PutObject","s3:PutBucketPolicy"],"Resource":["arn:aws:s3:::b/*","arn:aws:s3:::b"]},
    {"Sid":"nodelete","Effect":"Deny","Principal":"*","Action":["s3:DeleteObject","s3:*Policy"],"Resource":["arn:aws:s3:::b/*","arn:aws:s3:::b"]}
  ])");
  struct Case {
    const char* name;
    Request request;
    bool allowed;
    Reason reason;
  };
  PublicAccessBlock restrict;
  restrict.restrict_public_buckets = true;
  const std::vector<Case> cases = {
      {"anonymous public", PolicyReq("", Action::kGetObject, "public/x", policy), true, Reason::kBucketPolicyAllow},
      {"anonymous private", PolicyReq("", Action::kGetObject, "x", policy), false, Reason::kAnonymous},
      {"bob puts", PolicyReq("bob", Action::kPutObject, "x", policy), true, Reason::kBucketPolicyAllow},
      {"owner deny wins", PolicyReq("alice", Action::kDeleteObject, "x", policy), false, Reason::kBucketPolicyDeny},
      {"owner keeps policy calls", PolicyReq("alice", Action::kPutBucketPolicy, "", policy), true, Reason::kBucketOwner},
      {"bob never gets policy calls", PolicyReq("bob", Action::kPutBucketPolicy, "", policy), false, Reason::kBucketPolicyDeny},
      {"owner no statement", PolicyReq("alice", Action::kGetObject, "x", policy), true, Reason::kObjectOwner},
      {"restrict: anonymous loses", PolicyReq("", Action::kGetObject, "public/x", policy, restrict), false, Reason::kAnonymous},
      {"restrict: bob loses", PolicyReq("bob", Action::kPutObject, "x", policy, restrict), false, Reason::kNotBucketOwner},
  };
  for (const Case& c : cases) {
    const Decision d = Authorize(c.request);
    EXPECT_EQ(d.allowed, c.allowed) << c.name;
    EXPECT_EQ(d.reason, c.reason) << c.name << ": " << ReasonName(d.reason);
  }
  const Decision d = Authorize(cases[3].request);
  EXPECT_NE(DecisionLogLine(cases[3].request, d).find("statement=nodelete"), std::string::npos);
}

TEST(AuthorizeWithPolicy, PolicyCallsGrantedToAnotherUserAre405) {
  const std::string policy = Doc(R"([
    {"Sid":"bobpolicy","Effect":"Allow","Principal":{"AWS":")" + kBobId + R"("},"Action":["s3:PutBucketPolicy","s3:DeleteBucketPolicy","s3:GetBucketPolicyStatus","s3:GetBucketPublicAccessBlock"],"Resource":"arn:aws:s3:::b"}
  ])");
  struct Case {
    Action action;
    bool allowed;
    Reason reason;
  };
  const std::vector<Case> cases = {
      {Action::kPutBucketPolicy, false, Reason::kNotOwnerAccount},
      {Action::kDeleteBucketPolicy, false, Reason::kNotOwnerAccount},
      {Action::kGetBucketPolicy, false, Reason::kNotBucketOwner},  // not granted: 403
      {Action::kGetBucketPolicyStatus, false, Reason::kNotBucketOwner},
      {Action::kGetBucketPublicAccessBlock, false, Reason::kNotBucketOwner},
  };
  for (const Case& c : cases) {
    const Decision d = Authorize(PolicyReq("bob", c.action, "", policy));
    EXPECT_EQ(d.allowed, c.allowed) << ActionName(c.action);
    EXPECT_EQ(d.reason, c.reason) << ActionName(c.action) << ": " << ReasonName(d.reason);
  }
  const Decision owner = Authorize(PolicyReq("alice", Action::kDeleteBucketPolicy, "", policy));
  EXPECT_TRUE(owner.allowed);
}

TEST(AuthorizeWithPolicy, IgnorePublicAcls) {
  Request r;
  r.action = Action::kListBucket;
  r.bucket = "b";
  r.bucket_owner = "alice";
  r.bucket_acl = CannedAcl("public-read", kAliceId, kAliceId);
  EXPECT_TRUE(Authorize(r).allowed);
  r.public_access_block.ignore_public_acls = true;
  EXPECT_FALSE(Authorize(r).allowed);
  EXPECT_TRUE(IsPublicAcl(*r.bucket_acl));
  EXPECT_FALSE(IsPublicAcl(WithoutPublicGrants(*r.bucket_acl)));
  EXPECT_TRUE(IsPublicCannedAcl("authenticated-read"));
  EXPECT_FALSE(IsPublicCannedAcl("bucket-owner-read"));
}

}  // namespace
}  // namespace tessera::s3::authz
