// The auth library's value-or-S3Error shapes are the S3 layer's one
// definition in s3/protocol/s3_result.h.
#pragma once

#include "s3/protocol/s3_result.h"  // IWYU pragma: export
