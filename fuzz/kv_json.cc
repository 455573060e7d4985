// Fuzz target: the KV HTTP API's JSON body parser (src/router/json.h).
// Checked on every input that parses into valid UTF-8 (the parser passes
// raw non-UTF-8 bytes through as they came; JsonQuote takes UTF-8 only):
// each member survives a round trip (JsonQuote of its name and value
// parses back to the same object); and JsonQuote of any valid UTF-8 is one
// well-formed JSON string.
#include <cstdint>
#include <string>
#include <string_view>

#include "router/json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera::router;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = ParseJsonStringObject(text);
  bool utf8 = parsed.ok();
  if (parsed.ok()) {
    for (const auto& [name, value] : *parsed) utf8 = utf8 && IsValidUtf8(name) && IsValidUtf8(value);
  }
  if (utf8) {
    std::string again = "{";
    for (const auto& [name, value] : *parsed) {
      if (again.size() > 1) again += ",";
      again += JsonQuote(name) + ":" + JsonQuote(value);
    }
    again += "}";
    auto reparsed = ParseJsonStringObject(again);
    if (!reparsed.ok() || *reparsed != *parsed) __builtin_trap();
  }
  if (IsValidUtf8(text)) {
    auto quoted = ParseJsonStringObject("{\"v\":" + JsonQuote(text) + "}");
    if (!quoted.ok() || quoted->at("v") != text) __builtin_trap();
  }
  return 0;
}
