#include "s3/authz/policy_eval.h"

#include <algorithm>
#include <optional>

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

const std::vector<std::string>* Lookup(const ConditionValues& values, const std::string& key) {
  for (const auto& [name, list] : values) {
    if (name == key) return list.empty() ? nullptr : &list;
  }
  return nullptr;
}

// A resource or condition value with its policy variables substituted:
// `literal[i]` marks characters that came from a variable or an escape
// (never wildcards).
struct Expanded {
  std::string text;
  std::vector<bool> literal;
};

// Substitutes "${name}" in `raw` by the request's (first) value of the
// condition key `name` (any case), and the escapes ${*}, ${?} and ${$} by
// the literal character; nullopt when a variable has no value in the
// request (IAM: the element does not match). A "${" without "}" is text.
std::optional<Expanded> Expand(std::string_view raw, const ConditionValues& values) {
  Expanded out;
  const auto add = [&out](std::string_view text, bool literal) {
    out.text += text;
    out.literal.insert(out.literal.end(), text.size(), literal);
  };
  while (!raw.empty()) {
    const size_t open = raw.find("${");
    const size_t close = open == std::string_view::npos ? open : raw.find('}', open);
    if (close == std::string_view::npos) break;
    add(raw.substr(0, open), false);
    const std::string_view name = raw.substr(open + 2, close - open - 2);
    raw.remove_prefix(close + 1);
    if (name == "*" || name == "?" || name == "$") {
      add(name, true);
      continue;
    }
    std::string key(name);
    for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const std::vector<std::string>* value = Lookup(values, key);
    if (value == nullptr) return std::nullopt;
    add(value->front(), true);
  }
  add(raw, false);
  return out;
}

bool ResourceMatches(const Statement& s, std::string_view resource, const ConditionValues& values) {
  return std::any_of(s.resources.begin(), s.resources.end(), [&](const std::string& p) {
    if (!s.variables) return GlobMatch(p, resource);
    const std::optional<Expanded> e = Expand(p, values);
    return e && GlobMatchWithLiterals(e->text, e->literal, resource);
  });
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

// A positive operator on one request value and one policy value
// (`literal`: its characters that are never wildcards; null: none).
bool Holds(ConditionOp op, std::string_view v, std::string_view p,
           const std::vector<bool>* literal) {
  using O = ConditionOp;
  switch (op) {
    case O::kStringEquals:
    case O::kArnEquals:
    case O::kBinaryEquals: return v == p;
    case O::kStringEqualsIgnoreCase: return EqualsIgnoreCase(v, p);
    case O::kStringLike:
    case O::kArnLike: return literal ? GlobMatchWithLiterals(p, *literal, v) : GlobMatch(p, v);
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

// One request value against the condition's policy values (`expanded`:
// their substituted forms, null when the statement has no variables): any
// of them; negated operators: none.
bool ValueSatisfies(const Condition& c, const std::vector<Expanded>* expanded, std::string_view v) {
  const ConditionOp positive = Positive(c.op);
  bool any = false;
  if (expanded == nullptr) {
    any = std::any_of(c.values.begin(), c.values.end(),
                      [&](const std::string& p) { return Holds(positive, v, p, nullptr); });
  } else {
    any = std::any_of(expanded->begin(), expanded->end(),
                      [&](const Expanded& p) { return Holds(positive, v, p.text, &p.literal); });
  }
  return Negated(c.op) ? !any : any;
}

// The condition's values with their variables substituted; nullopt when
// one has no value in the request (the condition then does not hold).
std::optional<std::vector<Expanded>> ExpandValues(const Condition& c,
                                                  const ConditionValues& values) {
  std::vector<Expanded> out;
  out.reserve(c.values.size());
  for (const std::string& raw : c.values) {
    std::optional<Expanded> e = Expand(raw, values);
    if (!e) return std::nullopt;
    out.push_back(std::move(*e));
  }
  return out;
}

bool ConditionHolds(const Condition& c, bool variables, const ConditionValues& values) {
  std::optional<std::vector<Expanded>> expanded;
  if (variables && c.op != ConditionOp::kNull) {
    expanded = ExpandValues(c, values);
    if (!expanded) return false;
  }
  const std::vector<Expanded>* subst = expanded ? &*expanded : nullptr;
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
    case SetQualifier::kNone: return ValueSatisfies(c, subst, present->front());
    case SetQualifier::kForAnyValue:
      return std::any_of(present->begin(), present->end(),
                         [&](const std::string& v) { return ValueSatisfies(c, subst, v); });
    case SetQualifier::kForAllValues:
      return std::all_of(present->begin(), present->end(),
                         [&](const std::string& v) { return ValueSatisfies(c, subst, v); });
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
  if (ResourceMatches(s, r.resource, r.values) == s.not_resource) return false;
  return std::all_of(s.conditions.begin(), s.conditions.end(),
                     [&](const Condition& c) { return ConditionHolds(c, s.variables, r.values); });
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
