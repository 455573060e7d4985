#include "s3/authz/policy.h"

#include <algorithm>
#include <array>
#include <utility>

#include <nlohmann/json.hpp>

#include "common/limits.h"
#include "s3/authz/policy_values.h"

namespace tessera::s3::authz {
namespace {

using Json = nlohmann::json;

S3Error Malformed(std::string message) {
  return S3Error(S3ErrorCode::kMalformedPolicy, std::move(message));
}

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The deepest nesting of arrays and objects, counted outside strings
// (checked before the JSON parser recurses into the document).
size_t NestingDepth(std::string_view text) {
  size_t depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '{' || c == '[') deepest = std::max(deepest, ++depth);
    else if ((c == '}' || c == ']') && depth > 0) --depth;
  }
  return deepest;
}

// A string or an array of strings; nullopt for anything else.
std::optional<std::vector<std::string>> Strings(const Json& value) {
  std::vector<std::string> out;
  if (value.is_string()) {
    out.push_back(value.get<std::string>());
    return out;
  }
  if (!value.is_array() || value.empty()) return std::nullopt;
  for (const Json& v : value) {
    if (!v.is_string()) return std::nullopt;
    out.push_back(v.get<std::string>());
  }
  return out;
}

// A condition value: a string, number or boolean, or an array of them.
std::optional<std::vector<std::string>> ConditionValues(const Json& value) {
  auto scalar = [](const Json& v) -> std::optional<std::string> {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
    if (v.is_number()) return v.dump();
    return std::nullopt;
  };
  std::vector<std::string> out;
  if (!value.is_array()) {
    auto s = scalar(value);
    if (!s) return std::nullopt;
    out.push_back(std::move(*s));
    return out;
  }
  if (value.empty()) return std::nullopt;
  for (const Json& v : value) {
    auto s = scalar(v);
    if (!s) return std::nullopt;
    out.push_back(std::move(*s));
  }
  return out;
}

bool IsHex64(std::string_view id) {
  return id.size() == 64 && std::all_of(id.begin(), id.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

bool IsAccountId(std::string_view id) {
  return IsHex64(id) || (id.size() == 12 && std::all_of(id.begin(), id.end(), [](char c) {
                           return c >= '0' && c <= '9';
                         }));
}

// One {"AWS": ...} value into `out`; false when S3 would not accept it.
bool AddAwsPrincipal(const std::string& value, Principals* out) {
  if (value == "*") {
    out->everyone = true;
    return true;
  }
  if (IsAccountId(value)) {
    out->canonical_ids.push_back(value);
    return true;
  }
  constexpr std::string_view kIam = "arn:aws:iam::";
  if (!value.starts_with(kIam)) return false;
  const std::string_view rest = std::string_view(value).substr(kIam.size());
  const size_t colon = rest.find(':');
  if (colon == std::string_view::npos) return false;
  const std::string_view account = rest.substr(0, colon);
  const std::string_view resource = rest.substr(colon + 1);
  if (!IsAccountId(account)) return false;
  if (resource == "root") {
    out->canonical_ids.emplace_back(account);
    return true;
  }
  if (resource.starts_with("user/") && resource.size() > 5) {
    out->user_names.emplace_back(resource.substr(5));
    return true;
  }
  return false;
}

S3Result<Principals> ParsePrincipals(const Json& value) {
  const S3Error invalid = Malformed("Invalid principal in policy");
  Principals out;
  if (value.is_string()) {
    if (value.get<std::string>() != "*") return invalid;
    out.everyone = true;
    return out;
  }
  if (!value.is_object() || value.empty()) return invalid;
  for (const auto& [type, names] : value.items()) {
    auto list = Strings(names);
    if (!list) return invalid;
    for (const std::string& name : *list) {
      if (type == "AWS") {
        if (!AddAwsPrincipal(name, &out)) return invalid;
      } else if (type == "CanonicalUser") {
        if (!IsHex64(name)) return invalid;
        out.canonical_ids.push_back(name);
      } else {
        return invalid;  // Service, Federated: Tessera has neither
      }
    }
  }
  return out;
}

bool IsActionPattern(std::string_view action) {
  if (action == "*") return true;
  if (!action.starts_with("s3:") || action.size() == 3) return false;
  return std::all_of(action.begin() + 3, action.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '*' || c == '?';
  });
}

// A resource of this bucket: "*", or arn:aws:s3:::<bucket pattern>[/<key>]
// where the bucket pattern matches `bucket`.
bool IsBucketResource(std::string_view resource, std::string_view bucket) {
  if (resource == "*") return true;
  constexpr std::string_view kS3 = "arn:aws:s3:::";
  if (!resource.starts_with(kS3)) return false;
  const std::string_view rest = resource.substr(kS3.size());
  const std::string_view bucket_part = rest.substr(0, rest.find('/'));
  return !bucket_part.empty() && GlobMatch(bucket_part, bucket);
}

struct OpName {
  std::string_view name;
  ConditionOp op;
};
constexpr std::array<OpName, 27> kOps{{
    {"StringEquals", ConditionOp::kStringEquals},
    {"StringNotEquals", ConditionOp::kStringNotEquals},
    {"StringEqualsIgnoreCase", ConditionOp::kStringEqualsIgnoreCase},
    {"StringNotEqualsIgnoreCase", ConditionOp::kStringNotEqualsIgnoreCase},
    {"StringLike", ConditionOp::kStringLike},
    {"StringNotLike", ConditionOp::kStringNotLike},
    {"NumericEquals", ConditionOp::kNumericEquals},
    {"NumericNotEquals", ConditionOp::kNumericNotEquals},
    {"NumericLessThan", ConditionOp::kNumericLessThan},
    {"NumericLessThanEquals", ConditionOp::kNumericLessThanEquals},
    {"NumericGreaterThan", ConditionOp::kNumericGreaterThan},
    {"NumericGreaterThanEquals", ConditionOp::kNumericGreaterThanEquals},
    {"DateEquals", ConditionOp::kDateEquals},
    {"DateNotEquals", ConditionOp::kDateNotEquals},
    {"DateLessThan", ConditionOp::kDateLessThan},
    {"DateLessThanEquals", ConditionOp::kDateLessThanEquals},
    {"DateGreaterThan", ConditionOp::kDateGreaterThan},
    {"DateGreaterThanEquals", ConditionOp::kDateGreaterThanEquals},
    {"Bool", ConditionOp::kBool},
    {"IpAddress", ConditionOp::kIpAddress},
    {"NotIpAddress", ConditionOp::kNotIpAddress},
    {"ArnEquals", ConditionOp::kArnEquals},
    {"ArnNotEquals", ConditionOp::kArnNotEquals},
    {"ArnLike", ConditionOp::kArnLike},
    {"ArnNotLike", ConditionOp::kArnNotLike},
    {"BinaryEquals", ConditionOp::kBinaryEquals},
    {"Null", ConditionOp::kNull},
}};

// "ForAnyValue:StringLikeIfExists" into its three parts.
std::optional<Condition> ParseOperator(std::string_view text) {
  Condition c;
  constexpr std::string_view kAny = "ForAnyValue:", kAll = "ForAllValues:";
  if (text.starts_with(kAny)) {
    c.qualifier = SetQualifier::kForAnyValue;
    text.remove_prefix(kAny.size());
  } else if (text.starts_with(kAll)) {
    c.qualifier = SetQualifier::kForAllValues;
    text.remove_prefix(kAll.size());
  }
  constexpr std::string_view kIfExists = "IfExists";
  if (text.ends_with(kIfExists) && text != "Null") {
    c.if_exists = true;
    text.remove_suffix(kIfExists.size());
  }
  for (const OpName& op : kOps) {
    if (op.name == text) {
      if (op.op == ConditionOp::kNull && c.if_exists) return std::nullopt;
      c.op = op.op;
      return c;
    }
  }
  return std::nullopt;
}

// Condition keys S3 accepts in a bucket policy (lower case); the ones
// ending in '/' take a tag key after it.
constexpr std::array<std::string_view, 46> kKnownKeys{{
    "aws:sourceip", "aws:securetransport", "aws:currenttime", "aws:epochtime",
    "aws:useragent", "aws:referer", "aws:username", "aws:userid", "aws:principaltype",
    "aws:sourcearn", "aws:sourcevpc", "aws:sourcevpce", "aws:sourceowner", "aws:sourceaccount",
    "aws:principalorgid", "aws:principalaccount", "aws:principalarn", "aws:tokenissuetime",
    "aws:multifactorauthpresent", "aws:multifactorauthage", "aws:requestedregion",
    "aws:viaawsservice", "aws:tagkeys", "aws:requesttag/", "aws:resourcetag/",
    "aws:principaltag/", "s3:prefix", "s3:delimiter", "s3:max-keys", "s3:x-amz-acl",
    "s3:versionid", "s3:signatureversion", "s3:authtype", "s3:x-amz-content-sha256",
    "s3:signatureage", "s3:tlsversion", "s3:x-amz-server-side-encryption",
    "s3:x-amz-copy-source", "s3:x-amz-metadata-directive", "s3:x-amz-storage-class",
    "s3:locationconstraint", "s3:existingobjecttag/", "s3:requestobjecttag/",
    "s3:requestobjecttagkeys", "s3:dataaccesspointarn", "s3:dataaccesspointaccount",
}};

bool IsKnownKey(std::string_view key) {
  for (std::string_view known : kKnownKeys) {
    if (known.ends_with('/') ? key.starts_with(known) && key.size() > known.size()
                             : key == known) {
      return true;
    }
  }
  return key.starts_with("s3:x-amz-grant-");
}

// The values must be of the operator's type.
bool ValuesFit(ConditionOp op, const std::vector<std::string>& values) {
  return std::all_of(values.begin(), values.end(), [op](const std::string& v) {
    switch (op) {
      case ConditionOp::kBool:
      case ConditionOp::kNull: return ParseBoolText(v).has_value();
      case ConditionOp::kNumericEquals:
      case ConditionOp::kNumericNotEquals:
      case ConditionOp::kNumericLessThan:
      case ConditionOp::kNumericLessThanEquals:
      case ConditionOp::kNumericGreaterThan:
      case ConditionOp::kNumericGreaterThanEquals: return ParseNumber(v).has_value();
      case ConditionOp::kDateEquals:
      case ConditionOp::kDateNotEquals:
      case ConditionOp::kDateLessThan:
      case ConditionOp::kDateLessThanEquals:
      case ConditionOp::kDateGreaterThan:
      case ConditionOp::kDateGreaterThanEquals: return ParseDate(v).has_value();
      case ConditionOp::kIpAddress:
      case ConditionOp::kNotIpAddress: return ParseCidr(v).has_value();
      default: return true;
    }
  });
}

S3Status ParseConditions(const Json& value, std::vector<Condition>* out) {
  if (!value.is_object()) return Malformed("Invalid policy syntax.");
  for (const auto& [op_text, keys] : value.items()) {
    auto op = ParseOperator(op_text);
    if (!op) return Malformed("Invalid Condition type : " + op_text);
    if (!keys.is_object() || keys.empty()) return Malformed("Invalid policy syntax.");
    for (const auto& [key, raw] : keys.items()) {
      if (!IsKnownKey(Lower(key))) return Malformed("Policy has an invalid condition key");
      auto values = ConditionValues(raw);
      if (!values || !ValuesFit(op->op, *values)) {
        return Malformed("Invalid Condition value for " + op_text + " : " + key);
      }
      Condition c = *op;
      c.key = Lower(key);
      c.values = std::move(*values);
      out->push_back(std::move(c));
    }
  }
  return S3Status::Ok();
}

// Principal / NotPrincipal of one statement.
S3Status ParseStatementPrincipal(const Json& s, Statement* out) {
  const bool has = s.contains("Principal"), has_not = s.contains("NotPrincipal");
  if (has == has_not) {
    return Malformed(has ? "Invalid policy syntax." : "Missing required field Principal");
  }
  out->not_principal = has_not;
  auto principals = ParsePrincipals(s[has ? "Principal" : "NotPrincipal"]);
  if (!principals.ok()) return principals.error();
  out->principals = std::move(principals).value();
  return S3Status::Ok();
}

// Action / NotAction (or Resource / NotResource): exactly one, a string or
// a list of them, each passing `valid`.
template <typename Valid>
S3Status ParseList(const Json& s, const char* name, const char* not_name, std::string_view bad,
                   Valid valid, bool* negated, std::vector<std::string>* out) {
  const bool has = s.contains(name), has_not = s.contains(not_name);
  if (!has && !has_not) return Malformed(std::string("Missing required field ") + name);
  if (has && has_not) return Malformed("Invalid policy syntax.");
  *negated = has_not;
  auto list = Strings(s[has ? name : not_name]);
  if (!list) return Malformed(std::string(bad));
  for (const std::string& item : *list) {
    if (!valid(item)) return Malformed(std::string(bad));
  }
  *out = std::move(*list);
  return S3Status::Ok();
}

bool HasVariable(const std::string& text) { return text.find("${") != std::string::npos; }

// Whether `s` has a policy variable in a Resource or condition value.
bool StatementHasVariables(const Statement& s) {
  return std::any_of(s.resources.begin(), s.resources.end(), HasVariable) ||
         std::any_of(s.conditions.begin(), s.conditions.end(), [](const Condition& c) {
           return std::any_of(c.values.begin(), c.values.end(), HasVariable);
         });
}

S3Result<Statement> ParseStatement(const Json& s, std::string_view bucket, bool variables) {
  if (!s.is_object()) return Malformed("Invalid policy syntax.");
  static constexpr std::array<std::string_view, 9> kFields{
      {"Sid", "Effect", "Principal", "NotPrincipal", "Action", "NotAction", "Resource",
       "NotResource", "Condition"}};
  for (const auto& [field, unused] : s.items()) {
    if (std::find(kFields.begin(), kFields.end(), field) == kFields.end()) {
      return Malformed("Unknown field " + field);
    }
  }
  Statement out;
  if (s.contains("Sid")) {
    if (!s["Sid"].is_string()) return Malformed("Invalid policy syntax.");
    out.sid = s["Sid"].get<std::string>();
  }
  if (!s.contains("Effect")) return Malformed("Missing required field Effect");
  const Json& effect = s["Effect"];
  if (!effect.is_string() || (effect != "Allow" && effect != "Deny")) {
    return Malformed("Invalid effect: " + (effect.is_string() ? effect.get<std::string>()
                                                               : effect.dump()));
  }
  out.effect = effect == "Allow" ? Effect::kAllow : Effect::kDeny;
  if (S3Status p = ParseStatementPrincipal(s, &out); !p.ok()) return p.error();
  if (S3Status a = ParseList(s, "Action", "NotAction", "Policy has invalid action",
                             [](const std::string& action) { return IsActionPattern(Lower(action)); },
                             &out.not_action, &out.actions);
      !a.ok()) {
    return a.error();
  }
  for (std::string& a : out.actions) a = Lower(a);
  if (S3Status r = ParseList(s, "Resource", "NotResource", "Policy has invalid resource",
                             [bucket](const std::string& resource) { return IsBucketResource(resource, bucket); },
                             &out.not_resource, &out.resources);
      !r.ok()) {
    return r.error();
  }
  if (s.contains("Condition")) {
    if (S3Status c = ParseConditions(s["Condition"], &out.conditions); !c.ok()) return c.error();
  }
  out.variables = variables && StatementHasVariables(out);
  return out;
}

}  // namespace

namespace {

// GlobMatch where literal(i) says pattern[i] is a literal even if '*' / '?'.
template <typename Literal>
bool GlobMatchImpl(std::string_view pattern, Literal literal, std::string_view text) {
  // Iterative, backtracking to the last '*' only: linear space, no recursion.
  const auto star_at = [&](size_t i) { return pattern[i] == '*' && !literal(i); };
  size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && !star_at(p) &&
        ((pattern[p] == '?' && !literal(p)) || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && star_at(p)) {
      star = p++;
      mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && star_at(p)) ++p;
  return p == pattern.size();
}

}  // namespace

bool GlobMatch(std::string_view pattern, std::string_view text) {
  return GlobMatchImpl(pattern, [](size_t) { return false; }, text);
}

bool GlobMatchWithLiterals(std::string_view pattern, const std::vector<bool>& literal,
                           std::string_view text) {
  return GlobMatchImpl(
      pattern, [&literal](size_t i) { return i < literal.size() && literal[i]; }, text);
}

S3Result<Policy> ParsePolicy(std::string_view document, std::string_view bucket) {
  if (document.size() > limits::kS3BucketPolicyBytesMax) {
    return Malformed("Policy exceeds the maximum allowed document size.");
  }
  const size_t first = document.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || document[first] != '{') {
    return Malformed("Policies must be valid JSON and the first byte must be '{'");
  }
  if (NestingDepth(document) > limits::kS3BucketPolicyJsonDepthMax) {
    return Malformed("Invalid policy syntax.");
  }
  const Json json = Json::parse(document, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    return Malformed("Policies must be valid JSON and the first byte must be '{'");
  }
  Policy policy;
  for (const auto& [field, value] : json.items()) {
    if (field == "Version") {
      if (value != "2012-10-17" && value != "2008-10-17") {
        return Malformed("The policy must contain a valid version string");
      }
      policy.version = value.get<std::string>();
    } else if (field == "Id") {
      if (!value.is_string()) return Malformed("Invalid policy syntax.");
      policy.id = value.get<std::string>();
    } else if (field != "Statement") {
      return Malformed("Unknown field " + field);
    }
  }
  if (!json.contains("Statement")) return Malformed("Missing required field Statement");
  const Json& statements = json["Statement"];
  const Json list = statements.is_array() ? statements : Json::array({statements});
  if (list.empty()) return Malformed("Could not parse the policy: Statement is empty!");
  if (list.size() > limits::kS3BucketPolicyStatementsMax) {
    return Malformed("Policy exceeds the maximum allowed document size.");
  }
  for (const Json& s : list) {
    auto statement = ParseStatement(s, bucket, policy.version == "2012-10-17");
    if (!statement.ok()) return statement.error();
    policy.statements.push_back(std::move(statement).value());
  }
  return policy;
}

namespace {

// A condition that confines an Allow to known sources (IsPublicPolicy).
bool Confines(const Condition& c) {
  static constexpr std::array<std::string_view, 11> kFixing{{
      "aws:sourcearn", "aws:sourcevpc", "aws:sourcevpce", "aws:sourceowner",
      "aws:sourceaccount", "aws:principalorgid", "aws:principalaccount", "aws:userid",
      "s3:dataaccesspointarn", "s3:dataaccesspointaccount", "aws:sourceip",
  }};
  if (std::find(kFixing.begin(), kFixing.end(), c.key) == kFixing.end()) return false;
  if (c.qualifier == SetQualifier::kForAllValues || c.if_exists) return false;
  auto fixed = [](const std::string& v) { return v.find_first_of("*?") == std::string::npos; };
  switch (c.op) {
    case ConditionOp::kIpAddress:
      return std::all_of(c.values.begin(), c.values.end(), [](const std::string& v) {
        auto cidr = ParseCidr(v);
        return cidr && cidr->prefix_bits > 0;
      });
    case ConditionOp::kStringEquals:
    case ConditionOp::kStringEqualsIgnoreCase:
    case ConditionOp::kArnEquals:
    case ConditionOp::kStringLike:
    case ConditionOp::kArnLike:
      return c.key != "aws:sourceip" && std::all_of(c.values.begin(), c.values.end(), fixed);
    default:
      return false;
  }
}

}  // namespace

bool IsPublicPolicy(const Policy& policy) {
  for (const Statement& s : policy.statements) {
    if (s.effect != Effect::kAllow) continue;
    if (!s.not_principal && !s.principals.everyone) continue;
    if (std::none_of(s.conditions.begin(), s.conditions.end(), Confines)) return true;
  }
  return false;
}

}  // namespace tessera::s3::authz
