// Whole small files (records, layouts) read and replaced as one piece.
//
// Thread safety: free functions; concurrent writers of one path must be
// serialised by the caller (the temporary file is PATH.tmp).
#pragma once

#include <string>

#include "common/result.h"

namespace tessera {

// The file's bytes. NotFound when it cannot be opened, IOError when reading
// fails.
Result<std::string> ReadTextFile(const std::string& path);

// Writes `text` to PATH.tmp, then renames it over `path`: a reader sees the
// old file or the whole new one, never a part.
Status WriteTextFileAtomically(const std::string& path, const std::string& text);

}  // namespace tessera
