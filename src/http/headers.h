// HTTP header fields as a list: names as sent, in the order received or to
// be written. Shared by HttpServer (whole bodies) and StreamServer.
//
// Thread safety: values; distinct objects may be used freely.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera::http {

using Headers = std::vector<std::pair<std::string, std::string>>;

// The value of the first field named `name` (ASCII case-insensitive), or
// nullopt. The view points into `headers`.
std::optional<std::string_view> FindHeader(const Headers& headers, std::string_view name);

// ASCII case-insensitive equality (HTTP field names, tokens).
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

}  // namespace tessera::http
