#include "s3/auth/post_signature.h"

#include <algorithm>
#include <cctype>

#include "common/base64.h"
#include "s3/auth/crypto.h"
#include "s3/auth/sigv4.h"
#include "s3/auth/sigv4_internal.h"

namespace tessera::s3::auth {
namespace {

using sigv4_internal::Credential;

bool EqualsNoCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

S3Error MustContain(std::string_view field) {
  return InvalidArgumentError("Bucket POST must contain a field named '" + std::string(field) +
                                  "'.  If it is specified, please check the order of the fields.",
                              std::string(field), "");
}

S3Error Mismatch(const std::string& access_key, const std::string& policy, const std::string& provided) {
  return S3Error(S3ErrorCode::kSignatureDoesNotMatch)
      .With("AWSAccessKeyId", access_key)
      .With("StringToSign", policy)
      .With("SignatureProvided", provided);
}

S3Result<AuthContext> VerifyV4(const PostFields& fields, const std::string& policy, const AuthConfig& config,
                               const CredentialLookup& lookup) {
  const std::string* algorithm = PostField(fields, "x-amz-algorithm");
  const std::string* credential_text = PostField(fields, "x-amz-credential");
  const std::string* amz_date = PostField(fields, "x-amz-date");
  const std::string* signature = PostField(fields, "x-amz-signature");
  if (algorithm == nullptr) return MustContain("x-amz-algorithm");
  if (*algorithm != sigv4_internal::kAlgorithm) {
    return InvalidArgumentError("Only AWS4-HMAC-SHA256 is supported", "x-amz-algorithm", *algorithm);
  }
  if (credential_text == nullptr) return MustContain("x-amz-credential");
  if (amz_date == nullptr) return MustContain("x-amz-date");
  if (signature == nullptr) return MustContain("x-amz-signature");
  auto credential = sigv4_internal::ParseCredential(*credential_text, sigv4_internal::Form::kQuery);
  if (!credential.ok()) {
    return InvalidArgumentError(std::string(credential.error().Message()), "x-amz-credential", *credential_text);
  }
  if (S3Status st = sigv4_internal::CheckScope(*credential, *amz_date, config, sigv4_internal::Form::kQuery);
      !st.ok()) {
    return InvalidArgumentError(std::string(st.error().Message()), "x-amz-credential", *credential_text);
  }
  const auto secret = lookup(credential->access_key);
  if (!secret) return InvalidAccessKeyIdError(credential->access_key);
  const std::string key = DeriveSigningKey(*secret, credential->date8, credential->region);
  const std::string expected = HmacSha256Hex(key, policy);
  if (!ConstantTimeEquals(expected, *signature)) return Mismatch(credential->access_key, policy, *signature);
  AuthContext context;
  context.access_key = credential->access_key;
  return context;
}

S3Result<AuthContext> VerifyV2(const PostFields& fields, const std::string& policy,
                               const CredentialLookup& lookup) {
  const std::string* access_key = PostField(fields, "AWSAccessKeyId");
  const std::string* signature = PostField(fields, "signature");
  if (access_key == nullptr) return MustContain("AWSAccessKeyId");
  if (signature == nullptr) return MustContain("Signature");
  const auto secret = lookup(*access_key);
  if (!secret) return InvalidAccessKeyIdError(*access_key);
  const std::string expected = Base64Encode(HmacSha1(*secret, policy));
  if (!ConstantTimeEquals(expected, *signature)) return Mismatch(*access_key, policy, *signature);
  AuthContext context;
  context.access_key = *access_key;
  context.sigv2 = true;
  return context;
}

}  // namespace

const std::string* PostField(const PostFields& fields, std::string_view name) {
  for (const auto& [n, v] : fields) {
    if (EqualsNoCase(n, name)) return &v;
  }
  return nullptr;
}

S3Result<AuthContext> AuthenticatePostForm(const PostFields& fields, const AuthConfig& config,
                                           const CredentialLookup& lookup) {
  const std::string* policy = PostField(fields, "policy");
  const bool v4 = PostField(fields, "x-amz-signature") != nullptr ||
                  PostField(fields, "x-amz-credential") != nullptr ||
                  PostField(fields, "x-amz-algorithm") != nullptr;
  const bool v2 = PostField(fields, "AWSAccessKeyId") != nullptr || PostField(fields, "signature") != nullptr;
  if (policy == nullptr) {
    if (v4 || v2) return MustContain("Policy");
    AuthContext anonymous;
    anonymous.anonymous = true;
    return anonymous;
  }
  if (v4) return VerifyV4(fields, *policy, config, lookup);
  if (v2) return VerifyV2(fields, *policy, lookup);
  return MustContain("AWSAccessKeyId");
}

}  // namespace tessera::s3::auth
