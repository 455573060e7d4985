// Test helpers shared by the s3/auth tests: the AWS documentation's example
// credentials and clock.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "s3/auth/auth_context.h"

namespace tessera::s3::auth::testing {

inline constexpr std::string_view kAccessKey = "AKIAIOSFODNN7EXAMPLE";
inline constexpr std::string_view kSecretKey = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
// 20130524T000000Z, the time of every SigV4 example in the S3 docs.
inline constexpr int64_t kExampleTime = 1369353600;

inline CredentialLookup ExampleLookup() {
  return [](std::string_view access_key) -> std::optional<std::string> {
    if (access_key == kAccessKey) return std::string(kSecretKey);
    return std::nullopt;
  };
}

inline AuthConfig ExampleConfig(int64_t now = kExampleTime, std::string region = "us-east-1") {
  AuthConfig config;
  config.region = std::move(region);
  config.now_unix_s = now;
  return config;
}

}  // namespace tessera::s3::auth::testing
