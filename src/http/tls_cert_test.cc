// Goal: GenerateSelfSignedCertificate writes a key (mode 0600) and a CA:TRUE
// certificate naming exactly the requested hosts; EnsureSelfSignedCertificate
// keeps a valid pair and replaces a missing, mismatched or misnamed one;
// CheckCertificatePair reports each defect.
#include "http/tls_cert.h"

#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tessera::http {
namespace {

class TlsCertTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tessera_tls_cert_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  std::filesystem::path dir_;
};

TEST_F(TlsCertTest, GeneratesASelfSignedCaWithTheRequestedNames) {
  const std::string cert = Path("c.pem"), key = Path("k.pem");
  ASSERT_TRUE(GenerateSelfSignedCertificate(cert, key, {"localhost", "*.s3.localhost"}, {"127.0.0.1"}, 30)
                  .ok());
  struct stat st;
  ASSERT_EQ(::stat(key.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_TRUE(CheckCertificatePair(cert, key, {"localhost", "*.s3.localhost"}, {"127.0.0.1"}).ok());
  EXPECT_FALSE(std::filesystem::exists(cert + ".tmp." + std::to_string(::getpid())));

  FILE* f = std::fopen(cert.c_str(), "r");
  ASSERT_NE(f, nullptr);
  X509* x = PEM_read_X509(f, nullptr, nullptr, nullptr);
  std::fclose(f);
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(X509_check_ca(x), 1);
  EXPECT_TRUE(X509_get_key_usage(x) & KU_KEY_CERT_SIGN);
  EXPECT_TRUE(X509_get_key_usage(x) & KU_DIGITAL_SIGNATURE);
  EXPECT_EQ(X509_check_host(x, "localhost", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_host(x, "bucket.s3.localhost", 0, 0, nullptr), 1);
  // OpenSSL (and so Python, curl) ignores a wildcard over one label.
  EXPECT_EQ(X509_check_host(x, "a.localhost", 0, 0, nullptr), 0);
  EXPECT_EQ(X509_check_host(x, "example.com", 0, 0, nullptr), 0);
  EXPECT_EQ(X509_check_ip_asc(x, "127.0.0.1", 0), 1);
  EXPECT_EQ(X509_check_ip_asc(x, "10.0.0.1", 0), 0);
  // It verifies against itself as the only trust anchor.
  X509_STORE* store = X509_STORE_new();
  X509_STORE_add_cert(store, x);
  X509_STORE_CTX* ctx = X509_STORE_CTX_new();
  X509_STORE_CTX_init(ctx, store, x, nullptr);
  X509_STORE_CTX_set_flags(ctx, X509_V_FLAG_X509_STRICT);
  EXPECT_EQ(X509_verify_cert(ctx), 1) << X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx));
  X509_STORE_CTX_free(ctx);
  X509_STORE_free(store);
  X509_free(x);
}

TEST_F(TlsCertTest, EnsureKeepsAValidPairAndReplacesABadOne) {
  const std::string cert = Path("c.pem"), key = Path("k.pem");
  ASSERT_TRUE(EnsureSelfSignedCertificate(cert, key, {"localhost"}, {"127.0.0.1"}, 30).ok());
  const std::string first = Read(cert);
  ASSERT_TRUE(EnsureSelfSignedCertificate(cert, key, {"localhost"}, {"127.0.0.1"}, 30).ok());
  EXPECT_EQ(Read(cert), first) << "a valid pair was replaced";

  // A new name: replaced.
  ASSERT_TRUE(EnsureSelfSignedCertificate(cert, key, {"localhost", "s3.local"}, {}, 30).ok());
  const std::string second = Read(cert);
  EXPECT_NE(second, first);
  EXPECT_TRUE(CheckCertificatePair(cert, key, {"s3.local"}, {}).ok());

  // A key of another pair: mismatch detected, replaced.
  ASSERT_TRUE(GenerateSelfSignedCertificate(Path("c2.pem"), Path("k2.pem"), {"localhost"}, {}, 30).ok());
  std::filesystem::copy_file(Path("k2.pem"), key, std::filesystem::copy_options::overwrite_existing);
  EXPECT_EQ(CheckCertificatePair(cert, key, {"localhost"}, {}).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(EnsureSelfSignedCertificate(cert, key, {"localhost"}, {}, 30).ok());
  EXPECT_TRUE(CheckCertificatePair(cert, key, {"localhost"}, {}).ok());

  // A certificate that expires within a day is not kept.
  ASSERT_TRUE(GenerateSelfSignedCertificate(cert, key, {"localhost"}, {}, 1).ok());
  EXPECT_EQ(CheckCertificatePair(cert, key, {"localhost"}, {}).code(), StatusCode::kInvalidArgument);
}

TEST_F(TlsCertTest, CheckReportsMissingAndGarbageFiles) {
  EXPECT_EQ(CheckCertificatePair(Path("none.pem"), Path("none.key"), {"localhost"}, {}).code(),
            StatusCode::kNotFound);
  std::ofstream(Path("junk.pem")) << "not a certificate";
  std::ofstream(Path("junk.key")) << "not a key";
  EXPECT_EQ(CheckCertificatePair(Path("junk.pem"), Path("junk.key"), {"localhost"}, {}).code(),
            StatusCode::kInvalidArgument);
  ASSERT_TRUE(EnsureSelfSignedCertificate(Path("junk.pem"), Path("junk.key"), {"localhost"}, {}, 5).ok());
  EXPECT_TRUE(CheckCertificatePair(Path("junk.pem"), Path("junk.key"), {"localhost"}, {}).ok());
}

TEST_F(TlsCertTest, RejectsBadArguments) {
  const std::string cert = Path("c.pem"), key = Path("k.pem");
  EXPECT_EQ(GenerateSelfSignedCertificate(cert, key, {}, {}, 30).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(GenerateSelfSignedCertificate(cert, key, {"bad,name"}, {}, 30).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(GenerateSelfSignedCertificate(cert, key, {"localhost"}, {"300.1.1.1"}, 30).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(GenerateSelfSignedCertificate(cert, key, {"localhost"}, {}, 0).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(GenerateSelfSignedCertificate(Path("no/such/dir/c.pem"), Path("no/such/dir/k.pem"),
                                          {"localhost"}, {}, 30)
                .code(),
            StatusCode::kIOError);
}

}  // namespace
}  // namespace tessera::http
