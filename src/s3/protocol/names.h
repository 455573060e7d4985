// S3 name rules: which bucket names and object keys the S3 front accepts.
// Pure functions; the bounds are in common/limits.h ("s3 protocol").
//
// Thread safety: stateless; safe from any thread.
#pragma once

#include <string>
#include <string_view>

#include "s3/protocol/s3_result.h"

namespace tessera::s3 {

// AWS general-purpose bucket naming rules: 3..63 bytes of lowercase letters,
// digits, '.' and '-'; first and last character a letter or digit; no ".."
// (nor ".-" / "-." which AWS also rejects); not shaped like an IPv4 address
// (192.168.5.4); not prefixed "xn--", "sthree-", "amzn-s3-demo-"; not
// suffixed "-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3". Fails with
// InvalidBucketName (message names the rule).
S3Status ValidateBucketName(std::string_view name);

// Object keys: 1..1024 bytes (longer: KeyTooLongError; empty:
// InvalidArgument), valid UTF-8 (else InvalidURI "Couldn't parse the
// specified URI.", which is what AWS answers for a path whose bytes do not
// decode), and no NUL byte (InvalidArgument: Tessera's key layout uses 0x00
// as a separator; AWS itself accepts U+0000).
S3Status ValidateObjectKey(std::string_view key);

// True when `text` is well-formed UTF-8 (no overlongs, no surrogates, at
// most U+10FFFF).
bool IsValidUtf8(std::string_view text);

// S3's canonical user id of the Tessera user `user_name`: 64 lowercase hex
// digits, SHA-256 of "tessera-s3-user/" + user_name. A function of the name
// (decision D93), so every router renders an owner's id without a
// lookup and the metadata service stores the same value.
std::string CanonicalUserId(std::string_view user_name);

}  // namespace tessera::s3
