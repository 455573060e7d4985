// Self-signed TLS certificates for the HTTPS listener (StreamServer), made
// with the OpenSSL C API.
//
// The certificate is its own CA (basicConstraints critical CA:TRUE,
// keyUsage critical digitalSignature+keyCertSign, extendedKeyUsage
// serverAuth, subject/authority key identifiers), so a client can trust it
// directly as its CA bundle: AWS_CA_BUNDLE / `aws --ca-bundle`, boto3
// `verify=`, curl `--cacert`, Python `ssl.create_default_context(cafile=)`
// (also with VERIFY_X509_STRICT). Key: EC P-256. Signature: SHA-256.
// Subject alternative names: the given DNS names and IP addresses; the
// subject CN is the first DNS name (or "tessera").
//
// Files are written atomically (temporary file in the same directory,
// fsync, rename); the key file has mode 0600, the certificate 0644.
//
// Thread safety: reentrant; but two calls writing the same paths at once
// may leave a certificate from one with the key of the other (the caller
// serialises them, e.g. one process owns its certificate directory).
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace tessera::http {

// Writes a new key and a certificate valid from now (minus 5 minutes of
// clock skew) for `days` days. InvalidArgument: no names at all, a bad IP
// address literal, days outside [1, kTlsCertificateDaysMax]. IOError: a
// file cannot be written.
Status GenerateSelfSignedCertificate(const std::string& cert_path, const std::string& key_path,
                                     std::vector<std::string> dns_names,
                                     std::vector<std::string> ip_addresses, int days);

// Keeps an existing pair when both files load, the key matches the
// certificate, it is valid now and for at least one more day, and it covers
// every requested name and address; otherwise generates a new pair.
Status EnsureSelfSignedCertificate(const std::string& cert_path, const std::string& key_path,
                                   std::vector<std::string> dns_names,
                                   std::vector<std::string> ip_addresses, int days);

// OK when cert_path holds a certificate valid now whose key is in key_path
// and whose names cover dns_names and ip_addresses; NotFound when a file is
// missing, InvalidArgument otherwise (with the reason).
Status CheckCertificatePair(const std::string& cert_path, const std::string& key_path,
                            const std::vector<std::string>& dns_names,
                            const std::vector<std::string>& ip_addresses);

}  // namespace tessera::http
