#include "http/tls_cert.h"

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
#include <cerrno>
#include <ctime>
#include <memory>
#include <string>
#include <string_view>

#include "common/limits.h"
#include "common/posix_file.h"
#include "common/result.h"
#include "http/headers.h"

namespace tessera::http {
namespace {

struct Free {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
  void operator()(BIGNUM* p) const { BN_free(p); }
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
  void operator()(GENERAL_NAMES* p) const { GENERAL_NAMES_free(p); }
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

Status ValidateNames(const std::vector<std::string>& dns_names, const std::vector<std::string>& ips) {
  if (dns_names.empty() && ips.empty()) return Status::InvalidArgument("tls cert: no names");
  for (const auto& name : dns_names) {
    if (!ValidDnsName(name)) return Status::InvalidArgument("tls cert: bad DNS name: " + name);
  }
  for (const auto& ip : ips) {
    if (IpBytes(ip).empty()) return Status::InvalidArgument("tls cert: bad IP address: " + ip);
  }
  return Status::Ok();
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
    return Status::IOError("tls cert: cannot write " + path + ": " + written.message());
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
    return Status::InvalidArgument("tls cert: extension " + std::string(OBJ_nid2sn(nid)) + "=" +
                                   value + ": " + OpenSslError());
  }
  return Status::Ok();
}

Status SetSubjectAndValidity(X509* cert, const std::vector<std::string>& dns_names, int days) {
  if (X509_set_version(cert, 2) != 1) return Status::IOError("tls cert: version: " + OpenSslError());
  Owned<BIGNUM> serial(BN_new());
  if (!serial || BN_rand(serial.get(), 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1 ||
      BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert)) == nullptr) {
    return Status::IOError("tls cert: serial: " + OpenSslError());
  }
  // Valid from 5 minutes ago, for clients whose clock is a little behind.
  if (X509_gmtime_adj(X509_getm_notBefore(cert), -300) == nullptr ||
      X509_time_adj_ex(X509_getm_notAfter(cert), days, 0, nullptr) == nullptr) {
    return Status::IOError("tls cert: validity: " + OpenSslError());
  }
  X509_NAME* name = X509_get_subject_name(cert);
  const std::string common_name = dns_names.empty() ? "tessera" : dns_names.front();
  if (X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
                                 reinterpret_cast<const unsigned char*>("Tessera"), -1, -1, 0) != 1 ||
      X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                 reinterpret_cast<const unsigned char*>(common_name.c_str()), -1,
                                 -1, 0) != 1 ||
      X509_set_issuer_name(cert, name) != 1) {
    return Status::IOError("tls cert: subject: " + OpenSslError());
  }
  return Status::Ok();
}

Status AddExtensions(X509* cert, const std::vector<std::string>& dns_names,
                     const std::vector<std::string>& ip_addresses) {
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  std::string names;
  for (const auto& dns : dns_names) names += (names.empty() ? "DNS:" : ",DNS:") + dns;
  for (const auto& ip : ip_addresses) names += (names.empty() ? "IP:" : ",IP:") + ip;
  TESSERA_RETURN_IF_ERROR(AddExtension(cert, &ctx, NID_basic_constraints, "critical,CA:TRUE"));
  TESSERA_RETURN_IF_ERROR(
      AddExtension(cert, &ctx, NID_key_usage, "critical,digitalSignature,keyCertSign"));
  TESSERA_RETURN_IF_ERROR(AddExtension(cert, &ctx, NID_ext_key_usage, "serverAuth"));
  TESSERA_RETURN_IF_ERROR(AddExtension(cert, &ctx, NID_subject_key_identifier, "hash"));
  TESSERA_RETURN_IF_ERROR(AddExtension(cert, &ctx, NID_authority_key_identifier, "keyid:always"));
  return AddExtension(cert, &ctx, NID_subject_alt_name, names);
}

Result<Owned<X509>> LoadCertificate(const std::string& path) {
  Owned<BIO> bio(BIO_new_file(path.c_str(), "r"));
  if (!bio) return Status::InvalidArgument("tls cert: cannot open " + path + ": " + OpenSslError());
  Owned<X509> cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert) return Status::InvalidArgument("tls cert: no PEM certificate in " + path);
  return cert;
}

Result<Owned<EVP_PKEY>> LoadKey(const std::string& path) {
  Owned<BIO> bio(BIO_new_file(path.c_str(), "r"));
  if (!bio) return Status::InvalidArgument("tls cert: cannot open " + path + ": " + OpenSslError());
  Owned<EVP_PKEY> key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!key) return Status::InvalidArgument("tls cert: no PEM private key in " + path);
  return key;
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
                                   [&](const std::string& h) { return EqualsIgnoreCase(h, dns); });
    if (!found) return Status::InvalidArgument("tls cert: does not name " + dns);
  }
  for (const auto& ip : ip_addresses) {
    if (std::find(have_ip.begin(), have_ip.end(), IpBytes(ip)) == have_ip.end()) {
      return Status::InvalidArgument("tls cert: does not name " + ip);
    }
  }
  return Status::Ok();
}

bool FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

Status GenerateSelfSignedCertificate(const std::string& cert_path, const std::string& key_path,
                                     std::vector<std::string> dns_names,
                                     std::vector<std::string> ip_addresses, int days) {
  TESSERA_RETURN_IF_ERROR(ValidateNames(dns_names, ip_addresses));
  if (days < 1 || days > limits::kTlsCertificateDaysMax) {
    return Status::InvalidArgument("tls cert: days must be in [1, " +
                                   std::to_string(limits::kTlsCertificateDaysMax) + "]");
  }
  Owned<EVP_PKEY> key(EVP_EC_gen("P-256"));
  Owned<X509> cert(X509_new());
  if (!key || !cert) return Status::IOError("tls cert: key generation: " + OpenSslError());
  TESSERA_RETURN_IF_ERROR(SetSubjectAndValidity(cert.get(), dns_names, days));
  if (X509_set_pubkey(cert.get(), key.get()) != 1) {
    return Status::IOError("tls cert: public key: " + OpenSslError());
  }
  TESSERA_RETURN_IF_ERROR(AddExtensions(cert.get(), dns_names, ip_addresses));
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) <= 0) {
    return Status::IOError("tls cert: signing: " + OpenSslError());
  }
  Owned<BIO> key_pem(BIO_new(BIO_s_mem()));
  Owned<BIO> cert_pem(BIO_new(BIO_s_mem()));
  if (!key_pem || !cert_pem ||
      PEM_write_bio_PrivateKey(key_pem.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1 ||
      PEM_write_bio_X509(cert_pem.get(), cert.get()) != 1) {
    return Status::IOError("tls cert: PEM encoding: " + OpenSslError());
  }
  TESSERA_RETURN_IF_ERROR(WriteFileAtomically(key_path, BioText(key_pem.get()), 0600));
  return WriteFileAtomically(cert_path, BioText(cert_pem.get()), 0644);
}

Status CheckCertificatePair(const std::string& cert_path, const std::string& key_path,
                            const std::vector<std::string>& dns_names,
                            const std::vector<std::string>& ip_addresses) {
  if (!FileExists(cert_path)) return Status::NotFound("tls cert: no file " + cert_path);
  if (!FileExists(key_path)) return Status::NotFound("tls cert: no file " + key_path);
  Result<Owned<X509>> cert = LoadCertificate(cert_path);
  if (!cert.ok()) return cert.status();
  Result<Owned<EVP_PKEY>> key = LoadKey(key_path);
  if (!key.ok()) return key.status();
  if (X509_check_private_key(cert->get(), key->get()) != 1) {
    ERR_clear_error();
    return Status::InvalidArgument("tls cert: the key does not match the certificate");
  }
  if (X509_cmp_current_time(X509_get0_notBefore(cert->get())) >= 0) {
    return Status::InvalidArgument("tls cert: not valid yet");
  }
  time_t tomorrow = std::time(nullptr) + 24 * 3600;
  if (X509_cmp_time(X509_get0_notAfter(cert->get()), &tomorrow) <= 0) {
    return Status::InvalidArgument("tls cert: expires within a day");
  }
  return CheckNames(cert->get(), dns_names, ip_addresses);
}

Status EnsureSelfSignedCertificate(const std::string& cert_path, const std::string& key_path,
                                   std::vector<std::string> dns_names,
                                   std::vector<std::string> ip_addresses, int days) {
  TESSERA_RETURN_IF_ERROR(ValidateNames(dns_names, ip_addresses));
  if (CheckCertificatePair(cert_path, key_path, dns_names, ip_addresses).ok()) return Status::Ok();
  return GenerateSelfSignedCertificate(cert_path, key_path, std::move(dns_names),
                                       std::move(ip_addresses), days);
}

}  // namespace tessera::http
