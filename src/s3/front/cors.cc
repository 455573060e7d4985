// CORS (see the CORS handlers in s3_call.h): PUT/GET/DELETE ?cors keep the
// rules in the bucket's configuration record (BucketConfig, one
// SetBucketConfigOp each); preflight OPTIONS requests are answered from
// them; actual requests that carry an Origin get the Access-Control-*
// headers of the rule that admits them. Reads go through the front's
// bucket configuration cache (S3Front::BucketConfigOf).
#include <utility>

#include "common/limits.h"
#include "s3/front/s3_call.h"
#include "s3/front/s3_front.h"
#include "s3/front/small_body.h"
#include "s3/protocol/cors_rules.h"
#include "s3/protocol/xml_documents.h"

namespace tessera::s3::front {
namespace {

constexpr std::string_view kCorsNotEnabled = "CORSResponse: CORS is not enabled for this bucket.";

std::vector<CorsRule> RulesOf(const pb::BucketConfig& config) {
  std::vector<CorsRule> rules;
  rules.reserve(config.cors_rules_size());
  for (const pb::CorsRule& r : config.cors_rules()) {
    CorsRule rule;
    rule.id = r.id();
    rule.allowed_origins.assign(r.allowed_origins().begin(), r.allowed_origins().end());
    rule.allowed_methods.assign(r.allowed_methods().begin(), r.allowed_methods().end());
    rule.allowed_headers.assign(r.allowed_headers().begin(), r.allowed_headers().end());
    rule.expose_headers.assign(r.expose_headers().begin(), r.expose_headers().end());
    if (r.has_max_age_s()) rule.max_age_s = r.max_age_s();
    rules.push_back(std::move(rule));
  }
  return rules;
}

void AddRecords(const std::vector<CorsRule>& rules, pb::SetBucketConfigOp* op) {
  for (const CorsRule& rule : rules) {
    pb::CorsRule* r = op->add_cors_rules();
    r->set_id(rule.id);
    for (const std::string& o : rule.allowed_origins) r->add_allowed_origins(o);
    for (const std::string& m : rule.allowed_methods) r->add_allowed_methods(m);
    for (const std::string& h : rule.allowed_headers) r->add_allowed_headers(h);
    for (const std::string& h : rule.expose_headers) r->add_expose_headers(h);
    if (rule.max_age_s) r->set_max_age_s(*rule.max_age_s);
  }
}

// Stores `rules` (none: deletes the configuration) and answers `status`.
void StoreRules(CallPtr call, const std::vector<CorsRule>& rules, unsigned status) {
  pb::SetBucketConfigOp op;
  op.set_bucket_id(call->bucket_info.bucket_id());
  op.set_set_cors(true);
  AddRecords(rules, &op);
  if (op.ByteSizeLong() > limits::kS3BucketConfigBytesMax) {
    return call->Fail(S3Error(S3ErrorCode::kEntityTooLarge,
                              "The CORS configuration is larger than a bucket configuration "
                              "may be (" + std::to_string(limits::kS3BucketConfigBytesMax) +
                              " bytes)."));
  }
  call->front.SetBucketConfig(std::move(op), [call, status](Result<pb::S3OpResult> result) {
    if (!result.ok()) return call->Fail(result.status());
    if (result->outcome() != pb::S3_OK) return call->Fail(OpOutcomeError(*call, *result, {}));
    call->Respond(status, {{"Content-Length", "0"}}, "");
  });
}

S3Error PreflightRefused(const S3Call& call, std::string_view message = {}) {
  return S3Error(S3ErrorCode::kAccessForbidden, std::string(message))
      .With("Method", std::string(call.Header("access-control-request-method").value_or("")))
      .With("ResourceType", call.key.empty() ? "BUCKET" : "OBJECT");
}

// The bucket's configuration, after its descriptor (NoSuchBucket first).
void WithBucketConfig(CallPtr call,
                      std::function<void(Result<BucketConfigCache::Config>)> next) {
  call->front.registry().GetBucket(
      call->bucket, [call, next = std::move(next)](Result<pb::BucketDescriptor> bucket) {
        if (!bucket.ok()) return next(bucket.status());
        call->front.BucketConfigOf(bucket->bucket_id(), call->bucket,
                                   [next](Result<BucketConfigCache::Cached> config) {
                                     if (!config.ok()) return next(config.status());
                                     next(std::move(config->record));
                                   });
      });
}

}  // namespace

void PutBucketCors(CallPtr call) {
  WithAuthorizedBucket(call, authz::Action::kPutBucketCors, [call] {
    ReadSmallBody(call, limits::kS3XmlBodyBytesMax, [call](S3Result<std::string> body) {
      if (!body.ok()) return call->Fail(body.error());
      auto rules = ParseCorsConfiguration(*body);
      if (!rules.ok()) return call->Fail(rules.error());
      StoreRules(call, *rules, 200);
    });
  });
}

void GetBucketCors(CallPtr call) {
  WithAuthorizedBucket(call, authz::Action::kGetBucketCors, [call] {
    const pb::BucketConfig& config = *call->bucket_config;
    if (config.cors_rules().empty()) {
      return call->Fail(S3Error(S3ErrorCode::kNoSuchCORSConfiguration)
                            .With("BucketName", call->bucket));
    }
    call->RespondXml(200, CorsConfigurationXml(RulesOf(config)));
  });
}

void DeleteBucketCors(CallPtr call) {
  WithAuthorizedBucket(call, authz::Action::kPutBucketCors, [call] { StoreRules(call, {}, 204); });
}

void AnswerPreflight(CallPtr call) {
  const auto origin = call->Header("origin");
  if (!origin || origin->empty()) return call->Fail(S3Error(S3ErrorCode::kBadRequest));
  const auto method = call->Header("access-control-request-method");
  if (!method || method->empty()) {
    return call->Fail(S3Error(S3ErrorCode::kBadRequest,
                              "Invalid Access-Control-Request-Method: null"));
  }
  if (call->bucket.empty()) return call->Fail(PreflightRefused(*call, kCorsNotEnabled));
  WithBucketConfig(call, [call](Result<BucketConfigCache::Config> config) {
    if (!config.ok()) {
      if (config.status().code() == StatusCode::kNotFound) {
        return call->Fail(S3Error(S3ErrorCode::kNoSuchBucket));
      }
      return call->Fail(config.status());
    }
    if ((*config)->cors_rules().empty()) return call->Fail(PreflightRefused(*call, kCorsNotEnabled));
    const std::vector<CorsRule> rules = RulesOf(**config);
    const std::string admitted_origin(call->Header("origin").value_or(""));
    const std::vector<std::string> headers =
        SplitCorsHeaderList(call->Header("access-control-request-headers").value_or(""));
    const auto match = MatchCorsRule(rules, admitted_origin,
                                     call->Header("access-control-request-method").value_or(""),
                                     headers);
    if (!match) return call->Fail(PreflightRefused(*call));
    http::Headers answer;
    for (auto& h :
         CorsResponseHeaders(rules[*match], admitted_origin, headers, /*preflight=*/true)) {
      answer.push_back(std::move(h));
    }
    answer.emplace_back("Content-Length", "0");
    call->Respond(200, std::move(answer), "");
  });
}

void WithCorsHeaders(CallPtr call, std::function<void()> next) {
  const auto origin = call->Header("origin");
  if (!origin || origin->empty() || call->bucket.empty()) return next();
  WithBucketConfig(call, [call, next = std::move(next)](Result<BucketConfigCache::Config> config) {
    // Without the bucket (or rules) the request goes on without CORS
    // headers; its handler answers what it finds.
    if (config.ok() && !(*config)->cors_rules().empty()) {
      const std::vector<CorsRule> rules = RulesOf(**config);
      const std::string request_origin(call->Header("origin").value_or(""));
      if (auto match = MatchCorsRule(rules, request_origin, call->head().method, {})) {
        for (auto& h :
             CorsResponseHeaders(rules[*match], request_origin, {}, /*preflight=*/false)) {
          call->cors_headers.push_back(std::move(h));
        }
      }
    }
    next();
  });
}

}  // namespace tessera::s3::front
