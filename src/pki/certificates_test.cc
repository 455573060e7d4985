// Goal: a CA is a CA (and only signs); an issued certificate is not a CA,
// names exactly its subject and hosts, carries the usages asked for and
// verifies against its CA alone under strict checks; the Ensure functions
// keep a good pair and replace a missing, mismatched, misnamed, expiring or
// foreign-issued one; every defect is reported by CheckIssued; bad
// arguments are refused.
#include "pki/certificates.h"

#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

namespace tessera::pki {
namespace {

struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
using X509Ptr = std::unique_ptr<X509, X509Free>;

X509Ptr ReadCert(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) return nullptr;
  X509* x = PEM_read_X509(f, nullptr, nullptr, nullptr);
  std::fclose(f);
  return X509Ptr(x);
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class CertificatesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tessera_pki_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    ca_ = {Path("ca.pem"), Path("ca.key")};
    ASSERT_TRUE(GenerateAuthority(ca_, "Test CA", 30).ok());
    server_.common_name = "localhost";
    server_.dns_names = {"localhost", "*.s3.localhost"};
    server_.ip_addresses = {"127.0.0.1"};
    process_.organizational_unit = "router";
    process_.common_name = "100";
    process_.ip_addresses = {"127.0.0.1"};
    process_.client_auth = true;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  KeyPairFiles Pair(const std::string& stem) const { return {Path(stem + ".pem"), Path(stem + ".key")}; }

  std::filesystem::path dir_;
  KeyPairFiles ca_;
  CertificateSpec server_;
  CertificateSpec process_;
};

TEST_F(CertificatesTest, TheAuthorityIsACaThatOnlySigns) {
  X509Ptr ca = ReadCert(ca_.cert_path);
  ASSERT_NE(ca, nullptr);
  EXPECT_EQ(X509_check_ca(ca.get()), 1);
  EXPECT_TRUE(X509_get_key_usage(ca.get()) & KU_KEY_CERT_SIGN);
  EXPECT_FALSE(X509_get_key_usage(ca.get()) & KU_DIGITAL_SIGNATURE);
  EXPECT_EQ(X509_get_pathlen(ca.get()), 0);
  struct stat st;
  ASSERT_EQ(::stat(ca_.key_path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(CertificatesTest, AnIssuedServerCertificateIsALeafNamingItsHosts) {
  const KeyPairFiles leaf = Pair("server");
  ASSERT_TRUE(Issue(ca_, leaf, server_, 30).ok());
  struct stat st;
  ASSERT_EQ(::stat(leaf.key_path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_FALSE(std::filesystem::exists(leaf.cert_path + ".tmp." + std::to_string(::getpid())));
  EXPECT_TRUE(CheckIssued(ca_.cert_path, leaf, server_).ok());

  X509Ptr x = ReadCert(leaf.cert_path);
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(X509_check_ca(x.get()), 0) << "an issued certificate must not be a CA";
  EXPECT_FALSE(X509_get_key_usage(x.get()) & KU_KEY_CERT_SIGN);
  EXPECT_TRUE(X509_get_extended_key_usage(x.get()) & XKU_SSL_SERVER);
  EXPECT_FALSE(X509_get_extended_key_usage(x.get()) & XKU_SSL_CLIENT);
  EXPECT_EQ(X509_check_host(x.get(), "localhost", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_host(x.get(), "bucket.s3.localhost", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_host(x.get(), "a.localhost", 0, 0, nullptr), 0);
  EXPECT_EQ(X509_check_host(x.get(), "example.com", 0, 0, nullptr), 0);
  EXPECT_EQ(X509_check_ip_asc(x.get(), "127.0.0.1", 0), 1);
  EXPECT_EQ(X509_check_ip_asc(x.get(), "10.0.0.1", 0), 0);
}

TEST_F(CertificatesTest, AProcessCertificateCarriesRoleAndIdForBothEnds) {
  const KeyPairFiles leaf = Pair("router-1");
  ASSERT_TRUE(Issue(ca_, leaf, process_, 30).ok());
  EXPECT_TRUE(CheckIssued(ca_.cert_path, leaf, process_).ok());
  X509Ptr x = ReadCert(leaf.cert_path);
  ASSERT_NE(x, nullptr);
  char text[128];
  X509_NAME_get_text_by_NID(X509_get_subject_name(x.get()), NID_organizationalUnitName, text, sizeof(text));
  EXPECT_STREQ(text, "router");
  X509_NAME_get_text_by_NID(X509_get_subject_name(x.get()), NID_commonName, text, sizeof(text));
  EXPECT_STREQ(text, "100");
  EXPECT_TRUE(X509_get_extended_key_usage(x.get()) & XKU_SSL_CLIENT);
  EXPECT_TRUE(X509_get_extended_key_usage(x.get()) & XKU_SSL_SERVER);

  // Another role or id is another subject.
  CertificateSpec other = process_;
  other.organizational_unit = "node";
  EXPECT_EQ(CheckIssued(ca_.cert_path, leaf, other).code(), StatusCode::kInvalidArgument);
  other = process_;
  other.common_name = "1";
  EXPECT_EQ(CheckIssued(ca_.cert_path, leaf, other).code(), StatusCode::kInvalidArgument);
  other = process_;
  other.client_auth = false;
  EXPECT_EQ(CheckIssued(ca_.cert_path, leaf, other).code(), StatusCode::kInvalidArgument);
}

TEST_F(CertificatesTest, ACertificateOfAnotherAuthorityDoesNotVerify) {
  const KeyPairFiles other_ca{Path("other-ca.pem"), Path("other-ca.key")};
  ASSERT_TRUE(GenerateAuthority(other_ca, "Other CA", 30).ok());
  const KeyPairFiles leaf = Pair("leaf");
  ASSERT_TRUE(Issue(other_ca, leaf, server_, 30).ok());
  EXPECT_TRUE(CheckIssued(other_ca.cert_path, leaf, server_).ok());
  const Status foreign = CheckIssued(ca_.cert_path, leaf, server_);
  EXPECT_EQ(foreign.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(foreign.message().find("does not verify"), std::string::npos) << foreign.ToString();
  // Ensure re-issues it from the right CA.
  ASSERT_TRUE(EnsureIssued(ca_, leaf, server_, 30).ok());
  EXPECT_TRUE(CheckIssued(ca_.cert_path, leaf, server_).ok());
}

TEST_F(CertificatesTest, EnsureKeepsAGoodPairAndReplacesABadOne) {
  const KeyPairFiles leaf = Pair("leaf");
  ASSERT_TRUE(EnsureIssued(ca_, leaf, server_, 30).ok());
  const std::string first = Read(leaf.cert_path);
  ASSERT_TRUE(EnsureIssued(ca_, leaf, server_, 30).ok());
  EXPECT_EQ(Read(leaf.cert_path), first) << "a good pair was replaced";

  // A new name: replaced.
  server_.dns_names.push_back("s3.local");
  ASSERT_TRUE(EnsureIssued(ca_, leaf, server_, 30).ok());
  EXPECT_NE(Read(leaf.cert_path), first);
  EXPECT_TRUE(CheckIssued(ca_.cert_path, leaf, server_).ok());

  // The key of another pair: mismatch detected, replaced.
  const KeyPairFiles other = Pair("other");
  ASSERT_TRUE(Issue(ca_, other, server_, 30).ok());
  std::filesystem::copy_file(other.key_path, leaf.key_path,
                             std::filesystem::copy_options::overwrite_existing);
  EXPECT_EQ(CheckIssued(ca_.cert_path, leaf, server_).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(EnsureIssued(ca_, leaf, server_, 30).ok());
  EXPECT_TRUE(CheckIssued(ca_.cert_path, leaf, server_).ok());

  // One that expires within a day is not kept.
  ASSERT_TRUE(Issue(ca_, leaf, server_, 1).ok());
  EXPECT_EQ(CheckIssued(ca_.cert_path, leaf, server_).code(), StatusCode::kInvalidArgument);

  // A CA is kept when good, replaced when not one.
  const std::string ca_text = Read(ca_.cert_path);
  ASSERT_TRUE(EnsureAuthority(ca_, "Test CA", 30).ok());
  EXPECT_EQ(Read(ca_.cert_path), ca_text);
  std::filesystem::copy_file(leaf.cert_path, ca_.cert_path, std::filesystem::copy_options::overwrite_existing);
  std::filesystem::copy_file(leaf.key_path, ca_.key_path, std::filesystem::copy_options::overwrite_existing);
  ASSERT_TRUE(EnsureAuthority(ca_, "Test CA", 30).ok());
  X509Ptr ca = ReadCert(ca_.cert_path);
  ASSERT_NE(ca, nullptr);
  EXPECT_EQ(X509_check_ca(ca.get()), 1);
}

TEST_F(CertificatesTest, CheckReportsMissingAndGarbageFiles) {
  EXPECT_EQ(CheckIssued(ca_.cert_path, Pair("none"), server_).code(), StatusCode::kNotFound);
  std::ofstream(Path("junk.pem")) << "not a certificate";
  std::ofstream(Path("junk.key")) << "not a key";
  EXPECT_EQ(CheckIssued(ca_.cert_path, Pair("junk"), server_).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(EnsureIssued(ca_, Pair("junk"), server_, 5).ok());
  EXPECT_TRUE(CheckIssued(ca_.cert_path, Pair("junk"), server_).ok());
}

TEST_F(CertificatesTest, RejectsBadArguments) {
  const KeyPairFiles leaf = Pair("leaf");
  CertificateSpec bad = server_;
  bad.common_name.clear();
  EXPECT_EQ(Issue(ca_, leaf, bad, 30).code(), StatusCode::kInvalidArgument);
  bad = server_;
  bad.dns_names = {"bad,name"};
  EXPECT_EQ(Issue(ca_, leaf, bad, 30).code(), StatusCode::kInvalidArgument);
  bad = server_;
  bad.ip_addresses = {"300.1.1.1"};
  EXPECT_EQ(Issue(ca_, leaf, bad, 30).code(), StatusCode::kInvalidArgument);
  bad = server_;
  bad.server_auth = false;
  EXPECT_EQ(Issue(ca_, leaf, bad, 30).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Issue(ca_, leaf, server_, 0).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(GenerateAuthority({Path("c.pem"), Path("c.key")}, "", 30).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(Issue({Path("none.pem"), Path("none.key")}, leaf, server_, 30).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(Issue(ca_, Pair("no/such/dir/leaf"), server_, 30).code(), StatusCode::kIOError);
}

}  // namespace
}  // namespace tessera::pki
