// Which HTTP field names and values may be written into a message as they
// are: the one rule against response splitting, shared by the HTTP servers
// (the last check before bytes go out: a field that fails is left out) and
// the S3 front (the first check where input enters: a request carrying such
// a field is refused).
//
// Thread safety: pure functions.
#pragma once

#include <string_view>

namespace tessera {

// Non-empty, and no control character, space, DEL or ':'.
bool IsWritableFieldName(std::string_view name);
// No control character but horizontal tab (so no CR, LF or NUL), and no DEL.
bool IsWritableFieldValue(std::string_view value);

}  // namespace tessera
