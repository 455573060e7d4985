// Bucket policies and the public access block (see the policy functions in
// s3_call.h): PUT/GET/DELETE ?policy, GET ?policyStatus and
// PUT/GET/DELETE ?publicAccessBlock keep their parts of the bucket's
// configuration record (BucketConfig.policy / public_access_block, one
// SetBucketConfigOp each), and the facts the access decision reads from
// them (PolicyFactsOf, policy_facts.h; PolicyConditionValues).
#include <chrono>
#include <cinttypes>
#include <ctime>
#include <utility>

#include <spdlog/spdlog.h>

#include "common/limits.h"
#include "s3/front/s3_call.h"
#include "s3/front/s3_front.h"
#include "s3/front/small_body.h"
#include "s3/protocol/http_rules.h"
#include "s3/protocol/xml_documents.h"

namespace tessera::s3::front {
namespace {

// Stores the op (its bucket id set here) and answers `status` with no body.
void Store(CallPtr call, pb::SetBucketConfigOp op, unsigned status) {
  op.set_bucket_id(call->bucket_info.bucket_id());
  call->front.SetBucketConfig(std::move(op), [call, status](Result<pb::S3OpResult> result) {
    if (!result.ok()) return call->Fail(result.status());
    if (result->outcome() != pb::S3_OK) return call->Fail(OpOutcomeError(*call, *result));
    call->Respond(status, {{"Content-Length", "0"}}, "");
  });
}

authz::PublicAccessBlock BlockOf(const pb::BucketConfig* config) {
  authz::PublicAccessBlock block;
  if (config == nullptr || !config->has_public_access_block()) return block;
  const pb::PublicAccessBlockConfig& c = config->public_access_block();
  block.block_public_acls = c.block_public_acls();
  block.ignore_public_acls = c.ignore_public_acls();
  block.block_public_policy = c.block_public_policy();
  block.restrict_public_buckets = c.restrict_public_buckets();
  return block;
}

// The value of query parameter `name`, if present.
std::optional<std::string> ParamValue(const S3Call& call, std::string_view name) {
  const QueryParam* p = call.Param(name);
  if (p == nullptr) return std::nullopt;
  return p->value;
}

// The address part of "ip:port" / "[v6]:port".
std::string AddressOf(std::string_view remote) {
  if (remote.starts_with('[')) {
    const size_t close = remote.find(']');
    return std::string(remote.substr(1, close == std::string_view::npos ? close : close - 1));
  }
  const size_t colon = remote.rfind(':');
  if (colon != std::string_view::npos && remote.find(':') == colon) {
    return std::string(remote.substr(0, colon));
  }
  return std::string(remote);
}

// "2026-12-07T13:00:00Z".
std::string IsoTime(int64_t epoch_s) {
  const std::time_t t = static_cast<std::time_t>(epoch_s);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// x-amz-tagging (URL-encoded "k1=v1&k2=v2") as s3:RequestObjectTag/<k>
// and s3:RequestObjectTagKeys values.
void AddRequestTags(const S3Call& call, authz::ConditionValues& values) {
  const auto tagging = call.Header("x-amz-tagging");
  if (!tagging) return;
  std::vector<std::string> keys;
  std::string_view rest = *tagging;
  while (!rest.empty() && keys.size() < limits::kS3ObjectTagsMax) {
    const size_t amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    const size_t eq = pair.find('=');
    auto key = PercentDecode(pair.substr(0, eq), /*plus_as_space=*/true);
    auto value = PercentDecode(
        eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1), true);
    if (!key.ok() || !value.ok() || key->empty()) continue;  // the handler refuses it
    values.emplace_back("s3:requestobjecttag/" + Lower(*key), std::vector<std::string>{*value});
    keys.push_back(*key);
  }
  values.emplace_back("s3:requestobjecttagkeys", std::move(keys));
}

}  // namespace

authz::ConditionValues PolicyConditionValues(const S3Call& call, authz::Action action) {
  authz::ConditionValues v;
  const auto one = [&v](std::string key, std::string value) {
    v.emplace_back(std::move(key), std::vector<std::string>{std::move(value)});
  };
  one("aws:sourceip", AddressOf(call.head().remote_address));
  one("aws:securetransport", call.head().tls ? "true" : "false");
  const auto now = std::chrono::system_clock::now();
  const int64_t epoch_s =
      std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  one("aws:epochtime", std::to_string(epoch_s));
  one("aws:currenttime", IsoTime(epoch_s));  // as ${aws:CurrentTime} substitutes it
  if (auto agent = call.Header("user-agent")) one("aws:useragent", std::string(*agent));
  if (auto referer = call.Header("referer")) one("aws:referer", std::string(*referer));
  if (call.principal.anonymous) {
    one("aws:principaltype", "Anonymous");
  } else {
    one("aws:principaltype", "User");
    one("aws:username", call.principal.user);
    one("aws:userid", call.principal.canonical_id);
  }
  if (action == authz::Action::kListBucket || action == authz::Action::kListBucketVersions ||
      action == authz::Action::kListBucketMultipartUploads) {
    if (auto p = ParamValue(call, "prefix")) one("s3:prefix", *p);
    if (auto d = ParamValue(call, "delimiter")) one("s3:delimiter", *d);
    if (auto m = ParamValue(call, "max-keys")) one("s3:max-keys", *m);
  }
  if (auto acl = call.Header("x-amz-acl")) one("s3:x-amz-acl", std::string(*acl));
  if (auto id = ParamValue(call, "versionId")) one("s3:versionid", *id);
  if (auto sha = call.Header("x-amz-content-sha256")) one("s3:x-amz-content-sha256", std::string(*sha));
  if (!call.principal.anonymous) {
    one("s3:signatureversion", call.auth.sigv2 ? "AWS" : "AWS4-HMAC-SHA256");
    one("s3:authtype", call.auth.presigned ? "REST-QUERY-STRING" : "REST-HEADER");
  }
  for (const char* header : {"x-amz-copy-source", "x-amz-metadata-directive",
                             "x-amz-storage-class", "x-amz-server-side-encryption"}) {
    if (auto value = call.Header(header)) one(std::string("s3:") + header, std::string(*value));
  }
  AddRequestTags(call, v);
  return v;
}

void AddExistingObjectTags(const pb::ObjectVersion& v, authz::ConditionValues& values) {
  for (const pb::MetadataPair& tag : v.tags()) {
    values.emplace_back("s3:existingobjecttag/" + Lower(tag.name()),
                        std::vector<std::string>{tag.value()});
  }
}

PolicyFacts PolicyFactsOf(const pb::BucketConfig* config, std::string_view bucket) {
  PolicyFacts facts;
  facts.public_access_block = BlockOf(config);
  if (config == nullptr || !config->has_policy()) return facts;
  auto policy = authz::ParsePolicy(config->policy(), bucket);
  if (policy.ok()) {
    facts.policy = std::make_shared<const authz::Policy>(std::move(policy).value());
    facts.policy_public = authz::IsPublicPolicy(*facts.policy);
    return facts;
  }
  // Validated when put, so only a newer router's policy lands here: fail
  // closed, a Deny of everything (the owner keeps its policy calls).
  spdlog::warn("s3.policy.unreadable bucket={} error=\"{}\"", bucket, policy.error().Message());
  authz::Policy deny_all;
  authz::Statement s;
  s.sid = "unreadable-policy";
  s.effect = authz::Effect::kDeny;
  s.principals.everyone = true;
  s.actions = {"*"};
  s.resources = {"*"};
  deny_all.statements.push_back(std::move(s));
  facts.policy = std::make_shared<const authz::Policy>(std::move(deny_all));
  return facts;
}

void PutBucketPolicy(CallPtr call) {
  WithAuthorizedBucket(call, authz::Action::kPutBucketPolicy, [call] {
    ReadSmallBody(call, limits::kS3BucketPolicyBytesMax, [call](S3Result<std::string> body) {
      if (!body.ok()) {
        if (body.error().code == S3ErrorCode::kEntityTooLarge) {
          return call->Fail(S3Error(S3ErrorCode::kMalformedPolicy,
                                    "Policy exceeds the maximum allowed document size."));
        }
        return call->Fail(body.error());
      }
      auto policy = authz::ParsePolicy(*body, call->bucket);
      if (!policy.ok()) return call->Fail(policy.error());
      if (BlockOf(call->bucket_config.get()).block_public_policy &&
          authz::IsPublicPolicy(*policy)) {
        return call->Fail(S3Error(S3ErrorCode::kAccessDenied));
      }
      pb::SetBucketConfigOp op;
      op.set_set_policy(true);
      op.set_policy(*body);
      Store(call, std::move(op), 204);
    });
  });
}

void GetBucketPolicy(CallPtr call) {
  WithAuthorizedBucket(call, authz::Action::kGetBucketPolicy, [call] {
    if (!call->bucket_config || !call->bucket_config->has_policy()) {
      return call->Fail(S3Error(S3ErrorCode::kNoSuchBucketPolicy).With("BucketName", call->bucket));
    }
    call->Respond(200, {{"Content-Type", "application/json"}}, call->bucket_config->policy());
  });
}

void DeleteBucketPolicy(CallPtr call) {
  WithAuthorizedBucket(call, authz::Action::kDeleteBucketPolicy, [call] {
    pb::SetBucketConfigOp op;
    op.set_set_policy(true);
    Store(call, std::move(op), 204);
  });
}

void GetBucketPolicyStatus(CallPtr call) {
  WithAuthorizedBucket(call, authz::Action::kGetBucketPolicyStatus, [call] {
    if (!call->bucket_config || !call->bucket_config->has_policy()) {
      return call->Fail(S3Error(S3ErrorCode::kNoSuchBucketPolicy).With("BucketName", call->bucket));
    }
    call->RespondXml(200, PolicyStatusXml(call->bucket_facts->policy_public));
  });
}

void PutPublicAccessBlock(CallPtr call) {
  WithAuthorizedBucket(call, authz::Action::kPutBucketPublicAccessBlock, [call] {
    ReadSmallBody(call, limits::kS3XmlBodyBytesMax, [call](S3Result<std::string> body) {
      if (!body.ok()) return call->Fail(body.error());
      auto settings = ParsePublicAccessBlockConfiguration(*body);
      if (!settings.ok()) return call->Fail(settings.error());
      pb::SetBucketConfigOp op;
      op.set_set_public_access_block(true);
      pb::PublicAccessBlockConfig* c = op.mutable_public_access_block();
      c->set_block_public_acls(settings->block_public_acls);
      c->set_ignore_public_acls(settings->ignore_public_acls);
      c->set_block_public_policy(settings->block_public_policy);
      c->set_restrict_public_buckets(settings->restrict_public_buckets);
      Store(call, std::move(op), 200);
    });
  });
}

void GetPublicAccessBlock(CallPtr call) {
  WithAuthorizedBucket(call, authz::Action::kGetBucketPublicAccessBlock, [call] {
    if (!call->bucket_config || !call->bucket_config->has_public_access_block()) {
      return call->Fail(S3Error(S3ErrorCode::kNoSuchPublicAccessBlockConfiguration)
                            .With("BucketName", call->bucket));
    }
    const authz::PublicAccessBlock b = BlockOf(call->bucket_config.get());
    call->RespondXml(200, PublicAccessBlockConfigurationXml(PublicAccessBlockSettings{
                              b.block_public_acls, b.ignore_public_acls, b.block_public_policy,
                              b.restrict_public_buckets}));
  });
}

void DeletePublicAccessBlock(CallPtr call) {
  WithAuthorizedBucket(call, authz::Action::kPutBucketPublicAccessBlock, [call] {
    pb::SetBucketConfigOp op;
    op.set_set_public_access_block(true);
    Store(call, std::move(op), 204);
  });
}

}  // namespace tessera::s3::front
