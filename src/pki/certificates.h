// X.509 certificates for Tessera's TLS, made with the OpenSSL C API: a
// certificate authority (CA) per purpose, and the certificates it issues.
//
// A cluster has two CAs (docs/security.md): one for the routers' HTTPS
// listeners, which S3 and KV clients trust (`--ca-bundle DIR/tls/ca.pem`),
// and one for the cluster's own RPC, which issues one certificate per
// process naming its role and peer id (rpc/tls.h reads them back).
//
// * A CA: basicConstraints critical CA:TRUE pathlen:0, keyUsage critical
//   keyCertSign+cRLSign, subject key identifier; self-signed.
// * An issued certificate: basicConstraints critical CA:FALSE, keyUsage
//   critical digitalSignature, extendedKeyUsage serverAuth and/or
//   clientAuth, subject and authority key identifiers, subjectAltName with
//   the given DNS names and IP addresses (when any); subject
//   O=Tessera, OU=<unit> (when given), CN=<common name>.
// Keys: EC P-256. Signatures: SHA-256. Valid from 5 minutes ago (clients
// whose clock is a little behind) for the given days.
//
// Files are written atomically (temporary file in the same directory,
// fsync, rename, fsync of the directory); keys have mode 0600,
// certificates 0644.
//
// Thread safety: reentrant; two calls writing the same paths at once may
// leave a certificate from one with the key of the other (the caller
// serialises them: `tessera cluster up` owns the cluster directory).
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace tessera::pki {

// A certificate and its private key, as PEM files.
struct KeyPairFiles {
  std::string cert_path;
  std::string key_path;
};

// What an issued certificate says.
struct CertificateSpec {
  std::string organizational_unit;        // OU; empty: none
  std::string common_name;                // CN; not empty
  std::vector<std::string> dns_names;     // subjectAltName DNS entries ("*." wildcards allowed)
  std::vector<std::string> ip_addresses;  // subjectAltName IP entries (literals)
  bool server_auth = true;                // extendedKeyUsage serverAuth
  bool client_auth = false;               // extendedKeyUsage clientAuth
};

// Writes a new CA key and self-signed CA certificate named `common_name`.
// InvalidArgument: an empty name, days outside [1, kTlsCertificateDaysMax].
// IOError: a file cannot be written.
Status GenerateAuthority(const KeyPairFiles& ca, const std::string& common_name, int days);

// Keeps an existing CA whose files load, match, are a CA, and stay valid
// for at least one more day; otherwise generates a new one (which makes
// every certificate it issued before fail CheckIssued).
Status EnsureAuthority(const KeyPairFiles& ca, const std::string& common_name, int days);

// Writes a new key and a certificate for `spec`, signed by `ca`.
// InvalidArgument: a bad spec (no common name, neither usage, a bad DNS
// name or IP literal), days outside [1, kTlsCertificateDaysMax], CA files
// that do not load. IOError: a file cannot be written.
Status Issue(const KeyPairFiles& ca, const KeyPairFiles& out, const CertificateSpec& spec, int days);

// OK when `out` holds a certificate valid now and for at least one more
// day, whose key is out.key_path, that verifies against the CA certificate
// alone (strict X.509 checks), says exactly spec's OU and CN, and names
// every DNS name and IP address of spec. NotFound when a file is missing,
// InvalidArgument otherwise (with the reason).
Status CheckIssued(const std::string& ca_cert_path, const KeyPairFiles& out,
                   const CertificateSpec& spec);

// Keeps `out` when CheckIssued passes; otherwise issues a new one.
Status EnsureIssued(const KeyPairFiles& ca, const KeyPairFiles& out, const CertificateSpec& spec,
                    int days);

}  // namespace tessera::pki
