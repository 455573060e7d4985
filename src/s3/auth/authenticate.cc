#include "s3/auth/authenticate.h"

#include "s3/auth/request_parts.h"
#include "s3/auth/sigv2.h"
#include "s3/auth/sigv4.h"

namespace tessera::s3::auth {
namespace {

enum class Mechanism { kNone, kV4Header, kV2Header, kV4Query, kV2Query };

bool HasV4Query(std::string_view query) {
  return HasQueryParam(query, "X-Amz-Algorithm") || HasQueryParam(query, "X-Amz-Credential") ||
         HasQueryParam(query, "X-Amz-Signature");
}

bool HasV2Query(std::string_view query) {
  return HasQueryParam(query, "AWSAccessKeyId") || HasQueryParam(query, "Signature");
}

S3Result<Mechanism> HeaderMechanism(std::string_view value) {
  value = Trim(value);
  auto scheme_is = [&](std::string_view scheme) {
    return value.substr(0, scheme.size()) == scheme &&
           (value.size() == scheme.size() || value[scheme.size()] == ' ' ||
            value[scheme.size()] == '\t');
  };
  if (scheme_is("AWS4-HMAC-SHA256")) return Mechanism::kV4Header;
  if (scheme_is("AWS")) return Mechanism::kV2Header;
  if (scheme_is("AWS4-ECDSA-P256-SHA256")) {
    return S3Error(S3ErrorCode::kNotImplemented, "SigV4a (ECDSA) is not implemented.");
  }
  return S3Error(S3ErrorCode::kInvalidArgument, "Unsupported Authorization Type");
}

S3Result<Mechanism> MechanismOf(const RequestHead& request) {
  const std::string_view query = QueryOf(request.target);
  const bool v4_query = HasV4Query(query), v2_query = HasV2Query(query);
  auto header = FindHeader(request.headers, "authorization");
  // An empty Authorization header is no credential at all: AWS answers the
  // request as anonymous (AccessDenied where anonymity is not allowed).
  if (header && Trim(*header).empty()) header.reset();
  if ((header && (v4_query || v2_query)) || (v4_query && v2_query)) {
    return S3Error(S3ErrorCode::kInvalidArgument,
                   "Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, "
                   "Signature query string parameter or the Authorization header should be "
                   "specified");
  }
  if (header) return HeaderMechanism(*header);
  if (v4_query) return Mechanism::kV4Query;
  if (v2_query) return Mechanism::kV2Query;
  return Mechanism::kNone;
}

}  // namespace

S3Result<AuthContext> Authenticate(const RequestHead& request,
                                   std::string_view virtual_host_bucket,
                                   const AuthConfig& config, const CredentialLookup& lookup) {
  S3Result<Mechanism> mechanism = MechanismOf(request);
  if (!mechanism.ok()) return mechanism.error();
  switch (*mechanism) {
    case Mechanism::kV4Header: return VerifySigV4Header(request, config, lookup);
    case Mechanism::kV2Header:
      return VerifySigV2Header(request, virtual_host_bucket, config, lookup);
    case Mechanism::kV4Query: return VerifySigV4Query(request, config, lookup);
    case Mechanism::kV2Query:
      return VerifySigV2Query(request, virtual_host_bucket, config, lookup);
    case Mechanism::kNone: break;
  }
  AuthContext context;
  context.anonymous = true;
  return context;
}

}  // namespace tessera::s3::auth
