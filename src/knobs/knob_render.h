// The knob registry (knobs.h) as text: what `tessera config knobs` prints.
// RenderKnobsMarkdown is docs/knobs.md byte for byte (a test compares them).
//
// Thread safety: pure functions.
#pragma once

#include <string>

#include "knobs/knob.h"

namespace tessera::knobs {

// A value as the table shows it: bytes in KiB/MiB/GiB when exact
// ("4 MiB"), text quoted, bool as true/false.
std::string FormatKnobValue(const KnobValue& value, KnobUnit unit);
// "0..3600000 ms", "1 KiB..4 MiB"; "-" for bool and text knobs.
std::string FormatKnobBounds(const KnobInfo& knob);

// One knob per block, at most about 100 columns wide.
std::string RenderKnobsText();
std::string RenderKnobsMarkdown();
// A JSON array of objects, one per knob, values typed (numbers, booleans,
// strings).
std::string RenderKnobsJson();

}  // namespace tessera::knobs
