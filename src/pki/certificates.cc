#include "pki/certificates.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <ctime>
#include <memory>
#include <string>
#include <string_view>

#include "common/limits.h"
#include "common/posix_file.h"
#include "common/result.h"

namespace tessera::pki {
namespace {

struct Free {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
  void operator()(BIGNUM* p) const { BN_free(p); }
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
  void operator()(GENERAL_NAMES* p) const { GENERAL_NAMES_free(p); }
  void operator()(X509_STORE* p) const { X509_STORE_free(p); }
  void operator()(X509_STORE_CTX* p) const { X509_STORE_CTX_free(p); }
};
template <class T>
using Owned = std::unique_ptr<T, Free>;

// The most recent OpenSSL error as text (and clears the queue).
std::string OpenSslError() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "unknown OpenSSL error";
  char text[256];
  ERR_error_string_n(code, text, sizeof(text));
  return text;
}

bool ValidDnsName(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '.' || c == '*';
  });
}

// The address bytes of an IPv4 or IPv6 literal (4 or 16), or empty.
std::string IpBytes(const std::string& address) {
  unsigned char bytes[16];
  if (inet_pton(AF_INET, address.c_str(), bytes) == 1) return std::string(reinterpret_cast<char*>(bytes), 4);
  if (inet_pton(AF_INET6, address.c_str(), bytes) == 1) return std::string(reinterpret_cast<char*>(bytes), 16);
  return {};
}

std::string Directory(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Writes `content` to `path` through a temporary file in the same
// directory: fsync, chmod `mode`, rename, fsync the directory.
Status WriteFileAtomically(const std::string& path, const std::string& content, mode_t mode) {
  const std::string temp = path + ".tmp." + std::to_string(::getpid());
  Status written = [&]() -> Status {
    posix::Fd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode));
    if (!fd.valid()) return posix::ErrnoStatus("create " + temp, errno);
    if (::fchmod(fd.get(), mode) != 0) return posix::ErrnoStatus("chmod " + temp, errno);
    TESSERA_RETURN_IF_ERROR(posix::WriteAll(fd.get(), content, temp));
    TESSERA_RETURN_IF_ERROR(posix::Fsync(fd.get(), temp));
    if (fd.Close() != 0) return posix::ErrnoStatus("close " + temp, errno);
    if (::rename(temp.c_str(), path.c_str()) != 0) return posix::ErrnoStatus("rename " + temp, errno);
    return Status::Ok();
  }();
  if (!written.ok()) {
    ::unlink(temp.c_str());
    return Status::IOError("pki: cannot write " + path + ": " + written.message());
  }
  return posix::SyncDirectory(Directory(path));
}

std::string BioText(BIO* bio) {
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(size));
}

Status AddExtension(X509* cert, X509V3_CTX* ctx, int nid, const std::string& value) {
  Owned<X509_EXTENSION> ext(X509V3_EXT_nconf_nid(nullptr, ctx, nid, value.c_str()));
  if (!ext || X509_add_ext(cert, ext.get(), -1) != 1) {
    return Status::InvalidArgument("pki: extension " + std::string(OBJ_nid2sn(nid)) + "=" +
                                   value + ": " + OpenSslError());
  }
  return Status::Ok();
}


Status CheckDays(int days) {
  if (days < 1 || days > limits::kTlsCertificateDaysMax) {
    return Status::InvalidArgument("pki: days must be in [1, " +
                                   std::to_string(limits::kTlsCertificateDaysMax) + "]");
  }
  return Status::Ok();
}

bool ValidNameText(std::string_view text) {
  return !text.empty() && text.size() <= 64 &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

Status ValidateSpec(const CertificateSpec& spec) {
  if (!ValidNameText(spec.common_name)) return Status::InvalidArgument("pki: bad common name");
  if (!spec.organizational_unit.empty() && !ValidNameText(spec.organizational_unit)) {
    return Status::InvalidArgument("pki: bad organizational unit");
  }
  if (!spec.server_auth && !spec.client_auth) {
    return Status::InvalidArgument("pki: a certificate needs serverAuth or clientAuth");
  }
  for (const auto& name : spec.dns_names) {
    if (!ValidDnsName(name)) return Status::InvalidArgument("pki: bad DNS name: " + name);
  }
  for (const auto& ip : spec.ip_addresses) {
    if (IpBytes(ip).empty()) return Status::InvalidArgument("pki: bad IP address: " + ip);
  }
  return Status::Ok();
}

Status AddNameEntry(X509_NAME* name, const char* field, const std::string& value) {
  if (X509_NAME_add_entry_by_txt(name, field, MBSTRING_ASC,
                                 reinterpret_cast<const unsigned char*>(value.c_str()), -1, -1,
                                 0) != 1) {
    return Status::IOError(std::string("pki: subject ") + field + ": " + OpenSslError());
  }
  return Status::Ok();
}

// Version 3, a random 127-bit serial, validity, and the subject
// O=Tessera[, OU=unit], CN=common_name.
Status SetSubjectAndValidity(X509* cert, const std::string& unit, const std::string& common_name,
                             int days) {
  if (X509_set_version(cert, 2) != 1) return Status::IOError("pki: version: " + OpenSslError());
  Owned<BIGNUM> serial(BN_new());
  if (!serial || BN_rand(serial.get(), 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1 ||
      BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert)) == nullptr) {
    return Status::IOError("pki: serial: " + OpenSslError());
  }
  // Valid from 5 minutes ago, for clients whose clock is a little behind.
  if (X509_gmtime_adj(X509_getm_notBefore(cert), -300) == nullptr ||
      X509_time_adj_ex(X509_getm_notAfter(cert), days, 0, nullptr) == nullptr) {
    return Status::IOError("pki: validity: " + OpenSslError());
  }
  X509_NAME* name = X509_get_subject_name(cert);
  TESSERA_RETURN_IF_ERROR(AddNameEntry(name, "O", "Tessera"));
  if (!unit.empty()) TESSERA_RETURN_IF_ERROR(AddNameEntry(name, "OU", unit));
  return AddNameEntry(name, "CN", common_name);
}

Result<Owned<X509>> LoadCertificate(const std::string& path) {
  Owned<BIO> bio(BIO_new_file(path.c_str(), "r"));
  if (!bio) return Status::InvalidArgument("pki: cannot open " + path + ": " + OpenSslError());
  Owned<X509> cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert) return Status::InvalidArgument("pki: no PEM certificate in " + path);
  return cert;
}

Result<Owned<EVP_PKEY>> LoadKey(const std::string& path) {
  Owned<BIO> bio(BIO_new_file(path.c_str(), "r"));
  if (!bio) return Status::InvalidArgument("pki: cannot open " + path + ": " + OpenSslError());
  Owned<EVP_PKEY> key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!key) return Status::InvalidArgument("pki: no PEM private key in " + path);
  return key;
}

// Signs `cert` and writes it and `key` to `out`.
Status SignAndWrite(X509* cert, EVP_PKEY* key, EVP_PKEY* signer, const KeyPairFiles& out) {
  if (X509_sign(cert, signer, EVP_sha256()) <= 0) {
    return Status::IOError("pki: signing: " + OpenSslError());
  }
  Owned<BIO> key_pem(BIO_new(BIO_s_mem()));
  Owned<BIO> cert_pem(BIO_new(BIO_s_mem()));
  if (!key_pem || !cert_pem ||
      PEM_write_bio_PrivateKey(key_pem.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1 ||
      PEM_write_bio_X509(cert_pem.get(), cert) != 1) {
    return Status::IOError("pki: PEM encoding: " + OpenSslError());
  }
  TESSERA_RETURN_IF_ERROR(WriteFileAtomically(out.key_path, BioText(key_pem.get()), 0600));
  return WriteFileAtomically(out.cert_path, BioText(cert_pem.get()), 0644);
}

bool FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// Both files exist, load, match each other, and the certificate is valid
// now and for at least one more day.
Result<Owned<X509>> LoadValidPair(const KeyPairFiles& files) {
  if (!FileExists(files.cert_path)) return Status::NotFound("pki: no file " + files.cert_path);
  if (!FileExists(files.key_path)) return Status::NotFound("pki: no file " + files.key_path);
  Result<Owned<X509>> cert = LoadCertificate(files.cert_path);
  if (!cert.ok()) return cert.status();
  Result<Owned<EVP_PKEY>> key = LoadKey(files.key_path);
  if (!key.ok()) return key.status();
  if (X509_check_private_key(cert->get(), key->get()) != 1) {
    ERR_clear_error();
    return Status::InvalidArgument("pki: the key in " + files.key_path +
                                   " does not match the certificate");
  }
  if (X509_cmp_current_time(X509_get0_notBefore(cert->get())) >= 0) {
    return Status::InvalidArgument("pki: " + files.cert_path + " is not valid yet");
  }
  time_t tomorrow = std::time(nullptr) + 24 * 3600;
  if (X509_cmp_time(X509_get0_notAfter(cert->get()), &tomorrow) <= 0) {
    return Status::InvalidArgument("pki: " + files.cert_path + " expires within a day");
  }
  return cert;
}

// The text of the subject's first `nid` entry, or empty.
std::string SubjectEntry(X509* cert, int nid) {
  X509_NAME* name = X509_get_subject_name(cert);
  const int index = X509_NAME_get_index_by_NID(name, nid, -1);
  if (index < 0) return {};
  const ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, index));
  return std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(data)),
                     static_cast<size_t>(ASN1_STRING_length(data)));
}

bool EqualsIgnoreAsciiCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// Does the certificate's subjectAltName list every requested name?
Status CheckNames(X509* cert, const std::vector<std::string>& dns_names,
                  const std::vector<std::string>& ip_addresses) {
  Owned<GENERAL_NAMES> names(static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr)));
  std::vector<std::string> have_dns, have_ip;
  for (int i = 0; names && i < sk_GENERAL_NAME_num(names.get()); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names.get(), i);
    if (name->type == GEN_DNS) {
      const ASN1_IA5STRING* s = name->d.dNSName;
      have_dns.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                            static_cast<size_t>(ASN1_STRING_length(s)));
    } else if (name->type == GEN_IPADD) {
      const ASN1_OCTET_STRING* s = name->d.iPAddress;
      have_ip.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                           static_cast<size_t>(ASN1_STRING_length(s)));
    }
  }
  for (const auto& dns : dns_names) {
    const bool found = std::any_of(have_dns.begin(), have_dns.end(),
                                   [&](const std::string& h) { return EqualsIgnoreAsciiCase(h, dns); });
    if (!found) return Status::InvalidArgument("pki: certificate does not name " + dns);
  }
  for (const auto& ip : ip_addresses) {
    if (std::find(have_ip.begin(), have_ip.end(), IpBytes(ip)) == have_ip.end()) {
      return Status::InvalidArgument("pki: certificate does not name " + ip);
    }
  }
  return Status::Ok();
}

// Verifies `cert` against `ca` as the only trust anchor, strictly.
Status VerifyAgainst(X509* ca, X509* cert) {
  Owned<X509_STORE> store(X509_STORE_new());
  Owned<X509_STORE_CTX> ctx(X509_STORE_CTX_new());
  if (!store || !ctx || X509_STORE_add_cert(store.get(), ca) != 1 ||
      X509_STORE_CTX_init(ctx.get(), store.get(), cert, nullptr) != 1) {
    return Status::IOError("pki: verify: " + OpenSslError());
  }
  X509_STORE_CTX_set_flags(ctx.get(), X509_V_FLAG_X509_STRICT);
  if (X509_verify_cert(ctx.get()) != 1) {
    const int error = X509_STORE_CTX_get_error(ctx.get());
    ERR_clear_error();
    return Status::InvalidArgument(std::string("pki: certificate does not verify against the CA: ") +
                                   X509_verify_cert_error_string(error));
  }
  return Status::Ok();
}

}  // namespace

Status GenerateAuthority(const KeyPairFiles& ca, const std::string& common_name, int days) {
  if (!ValidNameText(common_name)) return Status::InvalidArgument("pki: bad CA name");
  TESSERA_RETURN_IF_ERROR(CheckDays(days));
  Owned<EVP_PKEY> key(EVP_EC_gen("P-256"));
  Owned<X509> cert(X509_new());
  if (!key || !cert) return Status::IOError("pki: key generation: " + OpenSslError());
  TESSERA_RETURN_IF_ERROR(SetSubjectAndValidity(cert.get(), "", common_name, days));
  if (X509_set_issuer_name(cert.get(), X509_get_subject_name(cert.get())) != 1 ||
      X509_set_pubkey(cert.get(), key.get()) != 1) {
    return Status::IOError("pki: CA names: " + OpenSslError());
  }
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, cert.get(), cert.get(), nullptr, nullptr, 0);
  TESSERA_RETURN_IF_ERROR(
      AddExtension(cert.get(), &ctx, NID_basic_constraints, "critical,CA:TRUE,pathlen:0"));
  TESSERA_RETURN_IF_ERROR(AddExtension(cert.get(), &ctx, NID_key_usage, "critical,keyCertSign,cRLSign"));
  TESSERA_RETURN_IF_ERROR(AddExtension(cert.get(), &ctx, NID_subject_key_identifier, "hash"));
  return SignAndWrite(cert.get(), key.get(), key.get(), ca);
}

Status EnsureAuthority(const KeyPairFiles& ca, const std::string& common_name, int days) {
  Result<Owned<X509>> existing = LoadValidPair(ca);
  if (existing.ok() && X509_check_ca(existing->get()) == 1) return Status::Ok();
  return GenerateAuthority(ca, common_name, days);
}

Status Issue(const KeyPairFiles& ca, const KeyPairFiles& out, const CertificateSpec& spec, int days) {
  TESSERA_RETURN_IF_ERROR(ValidateSpec(spec));
  TESSERA_RETURN_IF_ERROR(CheckDays(days));
  Result<Owned<X509>> ca_cert = LoadCertificate(ca.cert_path);
  if (!ca_cert.ok()) return ca_cert.status();
  Result<Owned<EVP_PKEY>> ca_key = LoadKey(ca.key_path);
  if (!ca_key.ok()) return ca_key.status();
  Owned<EVP_PKEY> key(EVP_EC_gen("P-256"));
  Owned<X509> cert(X509_new());
  if (!key || !cert) return Status::IOError("pki: key generation: " + OpenSslError());
  TESSERA_RETURN_IF_ERROR(
      SetSubjectAndValidity(cert.get(), spec.organizational_unit, spec.common_name, days));
  if (X509_set_issuer_name(cert.get(), X509_get_subject_name(ca_cert->get())) != 1 ||
      X509_set_pubkey(cert.get(), key.get()) != 1) {
    return Status::IOError("pki: names: " + OpenSslError());
  }
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, ca_cert->get(), cert.get(), nullptr, nullptr, 0);
  std::string usages;
  if (spec.server_auth) usages = "serverAuth";
  if (spec.client_auth) usages += usages.empty() ? "clientAuth" : ",clientAuth";
  TESSERA_RETURN_IF_ERROR(AddExtension(cert.get(), &ctx, NID_basic_constraints, "critical,CA:FALSE"));
  TESSERA_RETURN_IF_ERROR(AddExtension(cert.get(), &ctx, NID_key_usage, "critical,digitalSignature"));
  TESSERA_RETURN_IF_ERROR(AddExtension(cert.get(), &ctx, NID_ext_key_usage, usages));
  TESSERA_RETURN_IF_ERROR(AddExtension(cert.get(), &ctx, NID_subject_key_identifier, "hash"));
  TESSERA_RETURN_IF_ERROR(AddExtension(cert.get(), &ctx, NID_authority_key_identifier, "keyid:always"));
  std::string names;
  for (const auto& dns : spec.dns_names) names += (names.empty() ? "DNS:" : ",DNS:") + dns;
  for (const auto& ip : spec.ip_addresses) names += (names.empty() ? "IP:" : ",IP:") + ip;
  if (!names.empty()) {
    TESSERA_RETURN_IF_ERROR(AddExtension(cert.get(), &ctx, NID_subject_alt_name, names));
  }
  return SignAndWrite(cert.get(), key.get(), ca_key->get(), out);
}

Status CheckIssued(const std::string& ca_cert_path, const KeyPairFiles& out,
                   const CertificateSpec& spec) {
  Result<Owned<X509>> cert = LoadValidPair(out);
  if (!cert.ok()) return cert.status();
  Result<Owned<X509>> ca = LoadCertificate(ca_cert_path);
  if (!ca.ok()) return ca.status();
  TESSERA_RETURN_IF_ERROR(VerifyAgainst(ca->get(), cert->get()));
  if (SubjectEntry(cert->get(), NID_commonName) != spec.common_name ||
      SubjectEntry(cert->get(), NID_organizationalUnitName) != spec.organizational_unit) {
    return Status::InvalidArgument("pki: " + out.cert_path + " names another subject");
  }
  const uint32_t usage = X509_get_extended_key_usage(cert->get());
  if (spec.server_auth != ((usage & XKU_SSL_SERVER) != 0) ||
      spec.client_auth != ((usage & XKU_SSL_CLIENT) != 0)) {
    return Status::InvalidArgument("pki: " + out.cert_path + " has other key usages");
  }
  return CheckNames(cert->get(), spec.dns_names, spec.ip_addresses);
}

Status EnsureIssued(const KeyPairFiles& ca, const KeyPairFiles& out, const CertificateSpec& spec,
                    int days) {
  TESSERA_RETURN_IF_ERROR(ValidateSpec(spec));
  if (CheckIssued(ca.cert_path, out, spec).ok()) return Status::Ok();
  return Issue(ca, out, spec, days);
}

}  // namespace tessera::pki
