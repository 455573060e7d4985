#include "s3/authz/policy_eval.h"

#include <algorithm>

#include "s3/authz/policy_values.h"

namespace tessera::s3::authz {
namespace {

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

bool PrincipalMatches(const Principals& p, const PolicyRequest& r) {
  if (p.everyone) return true;
  if (r.anonymous) return false;
  return std::find(p.canonical_ids.begin(), p.canonical_ids.end(), r.canonical_id) !=
             p.canonical_ids.end() ||
         std::find(p.user_names.begin(), p.user_names.end(), r.user) != p.user_names.end();
}

bool ActionMatches(const std::vector<std::string>& patterns, std::string_view action) {
  std::string lower(action);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return std::any_of(patterns.begin(), patterns.end(),
                     [&](const std::string& p) { return GlobMatch(p, lower); });
}

bool ResourceMatches(const std::vector<std::string>& patterns, std::string_view resource) {
  return std::any_of(patterns.begin(), patterns.end(),
                     [&](const std::string& p) { return GlobMatch(p, resource); });
}

bool Negated(ConditionOp op) {
  switch (op) {
    case ConditionOp::kStringNotEquals:
    case ConditionOp::kStringNotEqualsIgnoreCase:
    case ConditionOp::kStringNotLike:
    case ConditionOp::kNumericNotEquals:
    case ConditionOp::kDateNotEquals:
    case ConditionOp::kNotIpAddress:
    case ConditionOp::kArnNotEquals:
    case ConditionOp::kArnNotLike: return true;
    default: return false;
  }
}

// The positive form of `op` (StringNotEquals -> StringEquals ...).
ConditionOp Positive(ConditionOp op) {
  switch (op) {
    case ConditionOp::kStringNotEquals: return ConditionOp::kStringEquals;
    case ConditionOp::kStringNotEqualsIgnoreCase: return ConditionOp::kStringEqualsIgnoreCase;
    case ConditionOp::kStringNotLike: return ConditionOp::kStringLike;
    case ConditionOp::kNumericNotEquals: return ConditionOp::kNumericEquals;
    case ConditionOp::kDateNotEquals: return ConditionOp::kDateEquals;
    case ConditionOp::kNotIpAddress: return ConditionOp::kIpAddress;
    case ConditionOp::kArnNotEquals: return ConditionOp::kArnEquals;
    case ConditionOp::kArnNotLike: return ConditionOp::kArnLike;
    default: return op;
  }
}

template <typename Parse, typename Cmp>
bool CompareParsed(std::string_view request, std::string_view policy, Parse parse, Cmp cmp) {
  const auto a = parse(request), b = parse(policy);
  return a && b && cmp(*a, *b);
}

// A positive operator on one request value and one policy value.
bool Holds(ConditionOp op, std::string_view v, std::string_view p) {
  using O = ConditionOp;
  switch (op) {
    case O::kStringEquals:
    case O::kArnEquals:
    case O::kBinaryEquals: return v == p;
    case O::kStringEqualsIgnoreCase: return EqualsIgnoreCase(v, p);
    case O::kStringLike:
    case O::kArnLike: return GlobMatch(p, v);
    case O::kNumericEquals: return CompareParsed(v, p, ParseNumber, std::equal_to<>());
    case O::kNumericLessThan: return CompareParsed(v, p, ParseNumber, std::less<>());
    case O::kNumericLessThanEquals: return CompareParsed(v, p, ParseNumber, std::less_equal<>());
    case O::kNumericGreaterThan: return CompareParsed(v, p, ParseNumber, std::greater<>());
    case O::kNumericGreaterThanEquals:
      return CompareParsed(v, p, ParseNumber, std::greater_equal<>());
    case O::kDateEquals: return CompareParsed(v, p, ParseDate, std::equal_to<>());
    case O::kDateLessThan: return CompareParsed(v, p, ParseDate, std::less<>());
    case O::kDateLessThanEquals: return CompareParsed(v, p, ParseDate, std::less_equal<>());
    case O::kDateGreaterThan: return CompareParsed(v, p, ParseDate, std::greater<>());
    case O::kDateGreaterThanEquals: return CompareParsed(v, p, ParseDate, std::greater_equal<>());
    case O::kBool: return CompareParsed(v, p, ParseBoolText, std::equal_to<>());
    case O::kIpAddress: {
      const auto block = ParseCidr(p);
      return block && InCidr(v, *block);
    }
    default: return false;  // negated forms never reach here; Null is handled apart
  }
}

// One request value against the condition (any policy value; negated: none).
bool ValueSatisfies(const Condition& c, std::string_view v) {
  const ConditionOp positive = Positive(c.op);
  const bool any = std::any_of(c.values.begin(), c.values.end(),
                               [&](const std::string& p) { return Holds(positive, v, p); });
  return Negated(c.op) ? !any : any;
}

const std::vector<std::string>* Lookup(const ConditionValues& values, const std::string& key) {
  for (const auto& [name, list] : values) {
    if (name == key) return list.empty() ? nullptr : &list;
  }
  return nullptr;
}

bool ConditionHolds(const Condition& c, const ConditionValues& values) {
  const std::vector<std::string>* present = Lookup(values, c.key);
  if (c.op == ConditionOp::kNull) {
    // "true": the key must be absent; "false": present.
    const bool want_absent = ParseBoolText(c.values.front()).value_or(false);
    return want_absent == (present == nullptr);
  }
  if (present == nullptr) {
    return c.if_exists || Negated(c.op) || c.qualifier == SetQualifier::kForAllValues;
  }
  switch (c.qualifier) {
    case SetQualifier::kNone: return ValueSatisfies(c, present->front());
    case SetQualifier::kForAnyValue:
      return std::any_of(present->begin(), present->end(),
                         [&](const std::string& v) { return ValueSatisfies(c, v); });
    case SetQualifier::kForAllValues:
      return std::all_of(present->begin(), present->end(),
                         [&](const std::string& v) { return ValueSatisfies(c, v); });
  }
  return false;
}

}  // namespace

std::string ResourceArn(std::string_view bucket, std::string_view key) {
  std::string arn = "arn:aws:s3:::";
  arn += bucket;
  if (!key.empty()) {
    arn += '/';
    arn += key;
  }
  return arn;
}

bool StatementApplies(const Statement& s, const PolicyRequest& r) {
  if (PrincipalMatches(s.principals, r) == s.not_principal) return false;
  if (ActionMatches(s.actions, r.action) == s.not_action) return false;
  if (ResourceMatches(s.resources, r.resource) == s.not_resource) return false;
  return std::all_of(s.conditions.begin(), s.conditions.end(),
                     [&](const Condition& c) { return ConditionHolds(c, r.values); });
}

PolicyVerdict EvaluatePolicy(const Policy& policy, const PolicyRequest& request) {
  PolicyVerdict verdict;
  for (size_t i = 0; i < policy.statements.size(); ++i) {
    const Statement& s = policy.statements[i];
    if (!StatementApplies(s, request)) continue;
    if (s.effect == Effect::kDeny) {
      return PolicyVerdict{PolicyVerdict::Kind::kDeny, static_cast<int>(i), s.sid};
    }
    if (verdict.kind == PolicyVerdict::Kind::kNone) {
      verdict = PolicyVerdict{PolicyVerdict::Kind::kAllow, static_cast<int>(i), s.sid};
    }
  }
  return verdict;
}

}  // namespace tessera::s3::authz
