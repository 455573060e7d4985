#include "cluster/layout_knobs.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>

#include <optional>

#include "common/result.h"
#include "knobs/knob_render.h"
#include "knobs/knobs.h"

namespace tessera::cluster {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

// The field's value, typed as its knob is; nullopt for a type no knob has.
std::optional<knobs::KnobValue> FieldValue(const Message& message, const FieldDescriptor& field) {
  const auto* reflection = message.GetReflection();
  switch (field.cpp_type()) {
    case FieldDescriptor::CPPTYPE_UINT32:
      return knobs::KnobValue::Of<uint64_t>(reflection->GetUInt32(message, &field));
    case FieldDescriptor::CPPTYPE_UINT64:
      return knobs::KnobValue::Of<uint64_t>(reflection->GetUInt64(message, &field));
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return knobs::KnobValue::Of<double>(reflection->GetDouble(message, &field));
    case FieldDescriptor::CPPTYPE_BOOL:
      return knobs::KnobValue::Of<bool>(reflection->GetBool(message, &field));
    case FieldDescriptor::CPPTYPE_STRING:
      return knobs::KnobValue::Of<std::string_view>({});  // text knobs have no bounds
    default:
      return std::nullopt;
  }
}

Status CheckSettings(const std::string& prefix, const Message& settings) {
  const auto* reflection = settings.GetReflection();
  std::vector<const FieldDescriptor*> set_fields;
  reflection->ListFields(settings, &set_fields);  // present, or non-zero without presence
  for (const FieldDescriptor* field : set_fields) {
    const std::string path = prefix + "." + field->name();
    const knobs::KnobInfo* knob = knobs::FindKnobByLayoutField(path);
    const std::optional<knobs::KnobValue> value = FieldValue(settings, *field);
    if (knob == nullptr || !value || value->kind != knob->kind) {
      return Status::InvalidArgument(path + " has no knob of its type in src/knobs/knobs.h (a bug)");
    }
    if (!knobs::WithinBounds(*value, *knob)) {
      return Status::InvalidArgument(path + " = " + knobs::FormatKnobValue(*value, knob->unit) +
                                     " is out of bounds for knob " + std::string(knob->name) + ": " +
                                     knobs::FormatKnobBounds(*knob));
    }
  }
  return Status::Ok();
}

}  // namespace

std::vector<std::string> LayoutSettingsFields() {
  std::vector<std::string> fields;
  const auto* descriptor = pb::ClusterLayout::descriptor();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor* field = descriptor->field(i);
    if (field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE || field->is_repeated()) continue;
    const std::string& type = field->message_type()->name();
    if (type.size() >= 8 && type.compare(type.size() - 8, 8, "Settings") == 0) fields.push_back(field->name());
  }
  return fields;
}

Status CheckLayoutKnobs(const pb::ClusterLayout& layout) {
  const auto* descriptor = pb::ClusterLayout::descriptor();
  const auto* reflection = layout.GetReflection();
  for (const std::string& name : LayoutSettingsFields()) {
    const FieldDescriptor* field = descriptor->FindFieldByName(name);
    if (!reflection->HasField(layout, field)) continue;
    TESSERA_RETURN_IF_ERROR(CheckSettings(name, reflection->GetMessage(layout, field)));
  }
  return Status::Ok();
}

}  // namespace tessera::cluster
