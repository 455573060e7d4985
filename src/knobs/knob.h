// One tunable ("knob"): its name, unit, default, bounds, where an operator
// or a layout sets it, and what it means. The knobs themselves are declared
// once, in knobs/knobs.h; docs/knobs.md is generated from that table.
//
// A Knob<T> is a typed constexpr value: code reads `kX.default_value` (a T),
// never a string. KnobInfo is the same description with the value's type
// erased, for the table that `tessera config knobs` prints and that layout
// validation walks.
//
// Thread safety: immutable constexpr data.
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>

namespace tessera::knobs {

// The process (or command) that reads the knob.
enum class KnobProcess { kNode, kMeta, kRouter, kAutoadmin, kGac, kCluster };

enum class KnobUnit { kMs, kS, kBytes, kMib, kCount, kSlots, kThreads, kPerS, kUnitsPerS, kRequests, kPercent, kFraction, kBool, kText };

// How the value is typed (the type of Knob<T>, and of its layout field).
enum class KnobKind { kUnsigned, kDouble, kBool, kText };

std::string_view KnobProcessName(KnobProcess process);
// Unit last, as in the names: "ms", "bytes", "requests/s"; "" for kCount,
// kBool and kText (a count needs no unit).
std::string_view KnobUnitName(KnobUnit unit);

template <typename T>
constexpr KnobKind KindOf() {
  if constexpr (std::is_same_v<T, bool>) return KnobKind::kBool;
  else if constexpr (std::is_same_v<T, double>) return KnobKind::kDouble;
  else if constexpr (std::is_same_v<T, std::string_view>) return KnobKind::kText;
  else {
    static_assert(std::is_unsigned_v<T>, "knobs are unsigned, double, bool or text");
    return KnobKind::kUnsigned;
  }
}

// Invariant (checked by static_assert where each knob is declared, and by
// knobs_test): min <= default_value <= max; text knobs have no bounds.
template <typename T>
struct Knob {
  std::string_view name;  // "<process>.<setting>", unit last: "node.gc_interval_ms"
  KnobProcess process;
  KnobUnit unit;
  T default_value;
  T min;
  T max;
  // Where it is set; "" when not. layout_field: the ClusterLayout field path
  // ("node_settings.gc_interval_ms"). flag: the command and flag that
  // override the layout ("tessera node --gc-interval-ms"). options_field:
  // the Options struct field the process fills from it, whose default this
  // knob's default is.
  std::string_view layout_field;
  std::string_view flag;
  std::string_view options_field;
  std::string_view meaning;  // one line; says what 0 means when 0 is special

  constexpr bool Allows(T value) const {
    if constexpr (std::is_same_v<T, std::string_view> || std::is_same_v<T, bool>) {
      return true;
    } else {
      return min <= value && value <= max;
    }
  }
  constexpr bool DefaultWithinBounds() const { return Allows(default_value); }
};

// A knob's value with its type erased (exactly one member is meaningful,
// by `kind`). uint64_t and double hold every knob's values exactly.
struct KnobValue {
  KnobKind kind = KnobKind::kUnsigned;
  uint64_t unsigned_value = 0;
  double double_value = 0;
  bool bool_value = false;
  std::string_view text_value;

  template <typename T>
  static constexpr KnobValue Of(T value) {
    KnobValue v;
    v.kind = KindOf<T>();
    if constexpr (std::is_same_v<T, bool>) v.bool_value = value;
    else if constexpr (std::is_same_v<T, double>) v.double_value = value;
    else if constexpr (std::is_same_v<T, std::string_view>) v.text_value = value;
    else v.unsigned_value = value;
    return v;
  }
};

struct KnobInfo {
  std::string_view name;
  KnobProcess process;
  KnobUnit unit;
  KnobKind kind;
  KnobValue default_value;
  KnobValue min;  // meaningful for kUnsigned and kDouble only
  KnobValue max;
  std::string_view layout_field;
  std::string_view flag;
  std::string_view options_field;
  std::string_view meaning;

  bool has_bounds() const { return kind == KnobKind::kUnsigned || kind == KnobKind::kDouble; }
};

template <typename T>
constexpr KnobInfo Describe(const Knob<T>& k) {
  return KnobInfo{k.name,
                  k.process,
                  k.unit,
                  KindOf<T>(),
                  KnobValue::Of<T>(k.default_value),
                  KnobValue::Of<T>(k.min),
                  KnobValue::Of<T>(k.max),
                  k.layout_field,
                  k.flag,
                  k.options_field,
                  k.meaning};
}

}  // namespace tessera::knobs
