#include "s3/auth/post_policy.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include <nlohmann/json.hpp>

#include "common/base64.h"
#include "s3/protocol/http_rules.h"

namespace tessera::s3::auth {
namespace {

using nlohmann::json;

S3Error Invalid(std::string why) {
  return S3Error(S3ErrorCode::kInvalidPolicyDocument, "Invalid Policy: " + std::move(why));
}

S3Error Denied(std::string why) {
  return S3Error(S3ErrorCode::kAccessDenied, "Invalid according to Policy: " + std::move(why));
}

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// Fields every form may carry without a condition naming them.
bool Exempt(std::string_view lower_name) {
  return lower_name == "policy" || lower_name == "file" || lower_name == "x-amz-signature" ||
         lower_name == "signature" || lower_name == "awsaccesskeyid" ||
         lower_name.substr(0, 9) == "x-ignore-";
}

// "$key" -> "key"; S3 requires the "$".
std::optional<std::string> FieldOf(const json& v) {
  if (!v.is_string()) return std::nullopt;
  const std::string& s = v.get_ref<const std::string&>();
  if (s.size() < 2 || s[0] != '$') return std::nullopt;
  return Lower(std::string_view(s).substr(1));
}

std::optional<uint64_t> Bound(const json& v) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer()) {
    const int64_t n = v.get<int64_t>();
    if (n < 0) return std::nullopt;
    return static_cast<uint64_t>(n);
  }
  if (v.is_string()) {  // S3 accepts the bounds as decimal strings too
    const std::string& s = v.get_ref<const std::string&>();
    if (s.empty() || s.size() > 19 || !std::all_of(s.begin(), s.end(), ::isdigit)) return std::nullopt;
    return std::stoull(s);
  }
  return std::nullopt;
}

S3Status AddCondition(const json& c, PostPolicy* policy) {
  if (c.is_object()) {  // {"field": "value"}: equality
    if (c.size() != 1) return Invalid("Invalid Simple-Condition: Simple-Conditions must have exactly one property specified.");
    const auto it = c.begin();
    if (!it.value().is_string()) return Invalid("Invalid Simple-Condition: value must be a string.");
    policy->conditions.push_back(PostCondition{PostCondition::Kind::kEquals, Lower(it.key()),
                                               it.value().get<std::string>(), c.dump()});
    return S3Status::Ok();
  }
  if (!c.is_array() || c.empty() || !c[0].is_string()) {
    return Invalid("Invalid condition: " + c.dump());
  }
  const std::string op = Lower(c[0].get<std::string>());
  if (op == "content-length-range") {
    if (c.size() != 3) return Invalid("Invalid content-length-range: " + c.dump());
    const auto lo = Bound(c[1]);
    const auto hi = Bound(c[2]);
    if (!lo || !hi || *lo > *hi) return Invalid("Invalid content-length-range: " + c.dump());
    policy->content_length_range = {*lo, *hi};
    return S3Status::Ok();
  }
  if (op != "eq" && op != "starts-with") {
    return Invalid("Invalid condition: unknown operation " + c[0].dump());
  }
  if (c.size() != 3) return Invalid("Invalid " + op + " condition: wrong number of arguments: " + c.dump());
  const auto field = FieldOf(c[1]);
  if (!field) return Invalid("Invalid " + op + " condition: the field must start with $: " + c.dump());
  if (!c[2].is_string()) return Invalid("Invalid " + op + " condition: value must be a string: " + c.dump());
  policy->conditions.push_back(PostCondition{
      op == "eq" ? PostCondition::Kind::kEquals : PostCondition::Kind::kStartsWith, *field,
      c[2].get<std::string>(), c.dump()});
  return S3Status::Ok();
}

}  // namespace

S3Result<PostPolicy> ParsePostPolicy(std::string_view base64_policy) {
  auto text = Base64Decode(base64_policy);
  if (!text.ok()) return Invalid("Invalid 'policy' field: not base64.");
  const json doc = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return Invalid("Invalid JSON.");
  const auto expiration = doc.find("expiration");
  if (expiration == doc.end()) return Invalid("Policy missing expiration.");
  if (!expiration->is_string()) return Invalid("Invalid 'expiration' value: " + expiration->dump());
  PostPolicy policy;
  const auto expires = ParseIso8601(expiration->get_ref<const std::string&>());
  if (!expires) return Invalid("Invalid 'expiration' value: '" + expiration->get<std::string>() + "'");
  policy.expiration_ms = *expires;
  const auto conditions = doc.find("conditions");
  if (conditions == doc.end()) return Invalid("Policy missing conditions.");
  if (!conditions->is_array()) return Invalid("Invalid 'conditions' value: must be a list.");
  for (const json& c : *conditions) {
    if (S3Status st = AddCondition(c, &policy); !st.ok()) return st.error();
  }
  return policy;
}

S3Status CheckPostPolicy(const PostPolicy& policy, const PostFields& fields, std::string_view bucket,
                         int64_t now_ms) {
  if (now_ms >= policy.expiration_ms) return Denied("Policy expired.");
  auto value_of = [&](std::string_view lower_name) -> std::string {
    if (lower_name == "bucket") return std::string(bucket);
    for (const auto& [name, value] : fields) {
      if (Lower(name) == lower_name) return value;
    }
    return {};
  };
  for (const PostCondition& c : policy.conditions) {
    const std::string value = value_of(c.field);
    const bool met = c.kind == PostCondition::Kind::kEquals
                         ? value == c.value
                         : std::string_view(value).substr(0, c.value.size()) == c.value;
    if (!met) return Denied("Policy Condition failed: " + c.text);
  }
  for (const auto& [name, value] : fields) {
    const std::string lower = Lower(name);
    if (Exempt(lower) || lower == "bucket") continue;
    const bool named = std::any_of(policy.conditions.begin(), policy.conditions.end(),
                                   [&](const PostCondition& c) { return c.field == lower; });
    if (!named) return Denied("Extra input fields: " + name);
  }
  return S3Status::Ok();
}

S3Status CheckContentLength(const PostPolicy& policy, uint64_t size) {
  if (!policy.content_length_range) return S3Status::Ok();
  const auto [lo, hi] = *policy.content_length_range;
  if (size < lo) {
    return S3Error(S3ErrorCode::kEntityTooSmall)
        .With("MinSizeAllowed", std::to_string(lo))
        .With("ProposedSize", std::to_string(size));
  }
  if (size > hi) {
    return S3Error(S3ErrorCode::kEntityTooLarge)
        .With("MaxSizeAllowed", std::to_string(hi))
        .With("ProposedSize", std::to_string(size));
  }
  return S3Status::Ok();
}

}  // namespace tessera::s3::auth
