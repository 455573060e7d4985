#include "node/partition_state_machine.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include <algorithm>
#include <map>
#include <memory>

#include <spdlog/spdlog.h>

#include "common/check.h"
#include "common/limits.h"
#include "node/partition_range.h"
#include "s3/model/object_ops.h"

namespace tessera::node {
namespace {

// The value and version of a serialized KvRecord, read in place (a scan's
// rows are not copied into messages first). Reads the fields in any order,
// skips unknown ones, and keeps the last occurrence of a repeated one, as
// protobuf's parser does. False when `stored` is not a well-formed KvRecord.
bool ReadKvRecord(std::string_view stored, std::string_view* value, uint64_t* version) {
  using google::protobuf::internal::WireFormatLite;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(stored.data()),
                                            static_cast<int>(stored.size()));
  *value = {};
  *version = 0;
  for (uint32_t tag = in.ReadTag(); tag != 0; tag = in.ReadTag()) {
    const int field = WireFormatLite::GetTagFieldNumber(tag);
    const auto wire_type = WireFormatLite::GetTagWireType(tag);
    if (field == pb::KvRecord::kVersionFieldNumber &&
        wire_type == WireFormatLite::WIRETYPE_VARINT) {
      if (!in.ReadVarint64(version)) return false;
    } else if (field == pb::KvRecord::kValueFieldNumber &&
               wire_type == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      uint32_t length = 0;
      if (!in.ReadVarint32(&length)) return false;
      const auto at = static_cast<size_t>(in.CurrentPosition());
      if (!in.Skip(static_cast<int>(length))) return false;
      *value = stored.substr(at, length);
    } else if (!WireFormatLite::SkipField(&in, tag)) {
      return false;
    }
  }
  return in.ConsumedEntireMessage() && in.CurrentPosition() == static_cast<int>(stored.size());
}

// The state as of the previous slot: the writes of earlier entries of the
// same Apply call, falling back to the stored state.
class Overlay {
 public:
  explicit Overlay(const PartitionStateMachine& sm) : sm_(sm) {}

  Result<std::optional<pb::KvRecord>> Get(const std::string& key) const {
    auto it = pending_.find(key);
    if (it != pending_.end()) return it->second;
    return sm_.Get(key);
  }
  void Put(const std::string& key, std::optional<pb::KvRecord> record) {
    pending_[key] = std::move(record);
  }
  // Rows in [start, end) as of now: the stored state with this batch's
  // pending writes applied, at most `limit`, values KvRecord-unwrapped.
  Result<s3::model::StateAccess::Rows> Scan(const std::string& start, const std::string& end,
                                            size_t limit) const {
    s3::model::StateAccess::Rows out;
    std::string cursor = start;
    auto pending = pending_.lower_bound(start);
    auto in_range = [&end](const std::string& key) { return end.empty() || key < end; };
    while (out.size() < limit) {
      auto stored = sm_.Scan(cursor, end, static_cast<uint32_t>(limits::kScanItemsMax - 1));
      if (!stored.ok()) return stored.status();
      const bool exhausted = stored->resume_key().empty();
      // Merge the pending writes that sort before the next stored row.
      auto take_pending_before = [&](const std::string* bound) {
        while (pending != pending_.end() && in_range(pending->first) &&
               (!bound || pending->first < *bound) && out.size() < limit) {
          if (pending->second) out.emplace_back(pending->first, pending->second->value());
          ++pending;
        }
      };
      for (const pb::KvItem& item : stored->items()) {
        take_pending_before(&item.key());
        if (out.size() >= limit) return out;
        if (pending != pending_.end() && pending->first == item.key()) {
          if (pending->second) out.emplace_back(pending->first, pending->second->value());
          ++pending;
        } else {
          out.emplace_back(item.key(), item.value());
        }
        if (out.size() >= limit) return out;
      }
      if (exhausted) {
        take_pending_before(nullptr);
        return out;
      }
      cursor = stored->resume_key();
      take_pending_before(&cursor);
    }
    return out;
  }

  std::vector<storage::Mutation> Mutations() const {
    std::vector<storage::Mutation> out;
    out.reserve(pending_.size());
    for (const auto& [key, record] : pending_) {
      out.push_back(record ? storage::Mutation::Put(key, record->SerializeAsString())
                           : storage::Mutation::Delete(key));
    }
    return out;
  }

 private:
  const PartitionStateMachine& sm_;
  std::map<std::string, std::optional<pb::KvRecord>> pending_;
};

bool ConditionHolds(const pb::KvCondition& c, const std::optional<pb::KvRecord>& current) {
  switch (c.expect_case()) {
    case pb::KvCondition::kAbsent: return !current.has_value();
    case pb::KvCondition::kVersion: return current && current->version() == c.version();
    case pb::KvCondition::kPresent: return current.has_value();
    case pb::KvCondition::EXPECT_NOT_SET: return true;
  }
  return false;
}

// An S3 op's view of the state: the overlay, with values wrapped in
// KvRecords whose version is the op's slot.
class S3StateAccess : public s3::model::StateAccess {
 public:
  S3StateAccess(Overlay& overlay, Slot slot) : overlay_(overlay), slot_(slot) {}

  Result<std::optional<std::string>> Get(const std::string& key) override {
    auto record = overlay_.Get(key);
    if (!record.ok()) return record.status();
    if (!record->has_value()) return std::optional<std::string>();
    return std::optional<std::string>(std::move(*record->value().mutable_value()));
  }
  void Put(const std::string& key, std::string value) override {
    pb::KvRecord record;
    record.set_version(slot_);
    record.set_value(std::move(value));
    overlay_.Put(key, std::move(record));
  }
  void Delete(const std::string& key) override { overlay_.Put(key, std::nullopt); }
  Result<Rows> ScanState(const std::string& start, const std::string& end,
                         size_t limit) override {
    return overlay_.Scan(start, end, limit);
  }

 private:
  Overlay& overlay_;
  const Slot slot_;
};

Result<pb::KvApplyResult> ApplyS3(const pb::S3Op& op, Slot slot, Overlay& overlay) {
  S3StateAccess access(overlay, slot);
  auto outcome = s3::model::ApplyS3Op(op, slot, access);
  if (!outcome.ok()) return outcome.status();
  pb::KvApplyResult result;
  result.set_applied(true);
  result.set_version(slot);
  *result.mutable_s3() = std::move(outcome).value();
  return result;
}

// Applies one parsed command to the overlay; returns its result or a
// storage error. A command with a key at or above `range_end` is not applied.
Result<pb::KvApplyResult> ApplyCommand(const pb::Entry& entry, const pb::KvCommand& command,
                                       const std::optional<std::string>& range_end,
                                       Overlay& overlay) {
  pb::KvApplyResult result;
  if (range_end) {
    pb::PartitionDescriptor range;
    range.set_end_key(*range_end);
    if (!CommandInRange(range, command)) {
      result.set_wrong_partition(true);
      return result;
    }
  }
  if (command.has_s3()) return ApplyS3(command.s3(), entry.slot(), overlay);
  const pb::KvBatch& batch = command.batch();
  for (int i = 0; i < batch.conditions_size(); ++i) {
    auto current = overlay.Get(batch.conditions(i).key());
    if (!current.ok()) return current.status();
    if (!ConditionHolds(batch.conditions(i), *current)) {
      result.set_failed_condition(static_cast<uint32_t>(i));
      return result;
    }
  }
  for (const pb::KvWrite& w : batch.writes()) {
    if (w.delete_()) {
      overlay.Put(w.key(), std::nullopt);
    } else {
      pb::KvRecord record;
      record.set_version(entry.slot());
      record.set_value(w.value());
      overlay.Put(w.key(), std::move(record));
    }
  }
  result.set_applied(true);
  result.set_version(entry.slot());
  return result;
}

}  // namespace

std::string EncodeCommand(const pb::KvBatch& batch) {
  pb::KvCommand command;
  *command.mutable_batch() = batch;
  return command.SerializeAsString();
}

Result<std::vector<SlotResult>> PartitionStateMachine::Apply(const std::vector<pb::Entry>& entries) {
  TESSERA_CHECK(!entries.empty());
  auto overlay = std::make_unique<Overlay>(*this);
  std::vector<SlotResult> results;
  Slot stored = 0;  // the applied index a split already stored
  for (const pb::Entry& e : entries) {
    if (e.type() != pb::ENTRY_COMMAND) continue;
    pb::KvCommand command;
    if (!command.ParseFromString(e.command())) {  // not applied, everywhere
      results.push_back(SlotResult{e.slot(), e.request_id(), e.proposer(), pb::KvApplyResult()});
      continue;
    }
    if (command.has_split()) {
      // The commands before the split apply first, at the slot before it.
      if (e.slot() > std::max(stored + 1, entries.front().slot())) {
        TESSERA_RETURN_IF_ERROR(store_->Apply(group_, e.slot() - 1, overlay->Mutations()));
        stored = e.slot() - 1;
      }
      overlay = std::make_unique<Overlay>(*this);
      auto r = ApplySplit(command.split(), e.slot());
      if (!r.ok()) return r.status();
      if (r->applied()) stored = e.slot();
      results.push_back(SlotResult{e.slot(), e.request_id(), e.proposer(), std::move(r).value()});
      continue;
    }
    auto range_end = RangeEnd();
    if (!range_end.ok()) return range_end.status();
    auto r = ApplyCommand(e, command, *range_end, *overlay);
    if (!r.ok()) return r.status();
    results.push_back(SlotResult{e.slot(), e.request_id(), e.proposer(), std::move(r).value()});
  }
  if (entries.back().slot() > stored) {
    TESSERA_RETURN_IF_ERROR(store_->Apply(group_, entries.back().slot(), overlay->Mutations()));
  }
  return results;
}

Result<std::optional<std::string>> PartitionStateMachine::RangeEnd() const {
  if (!range_end_) {
    auto stored = store_->RangeEnd(group_);
    if (!stored.ok()) return stored.status();
    range_end_ = std::move(stored).value();
  }
  return *range_end_;
}

Result<pb::KvApplyResult> PartitionStateMachine::ApplySplit(const pb::KvSplit& split, Slot slot) {
  pb::KvApplyResult result;
  auto range_end = RangeEnd();
  if (!range_end.ok()) return range_end.status();
  // Refused alike on every replica: the state decides, not the host.
  if (split.split_key().empty() || split.child_group_id() == 0 ||
      split.child_group_id() == group_ || (*range_end && split.split_key() >= **range_end)) {
    spdlog::warn("node.split_refused group={} slot={} child={}", group_, slot,
                 split.child_group_id());
    return result;
  }
  SplitPlan plan;
  if (split_prepare_) {
    auto prepared = split_prepare_(split, slot);
    if (!prepared.ok()) return prepared.status();
    plan = std::move(prepared).value();
  }
  pb::SplitMarker marker;
  marker.set_child_group_id(split.child_group_id());
  marker.set_split_key(split.split_key());
  marker.set_split_slot(slot);
  *marker.mutable_membership() = plan.membership;
  TESSERA_RETURN_IF_ERROR(store_->ApplySplit(group_, marker, plan.descriptor_writes));
  range_end_ = std::optional<std::string>(split.split_key());
  spdlog::info("node.split_applied group={} slot={} child={}", group_, slot, split.child_group_id());
  if (split_applied_) split_applied_(split, slot);
  result.set_applied(true);
  result.set_version(slot);
  return result;
}

Status PartitionStateMachine::SkipTo(Slot last) { return store_->Apply(group_, last, {}); }

Result<std::optional<pb::KvRecord>> PartitionStateMachine::Get(const std::string& key) const {
  auto stored = store_->Get(group_, key);
  if (!stored.ok()) {
    if (stored.status().code() == StatusCode::kNotFound) return std::optional<pb::KvRecord>();
    return stored.status();
  }
  pb::KvRecord record;
  if (!record.ParseFromString(*stored)) {
    return Status::Corruption("unparseable KvRecord in group " + std::to_string(group_));
  }
  return std::optional<pb::KvRecord>(std::move(record));
}

namespace {

Status MovedBySplit(GroupId group) {
  return Status::WrongPartition("a split moved the read's keys out of group " + std::to_string(group));
}

}  // namespace

Status PartitionStateMachine::CheckKeyInRange(std::string_view key) const {
  auto end = RangeEnd();
  if (!end.ok()) return end.status();
  if (end->has_value() && key >= **end) return MovedBySplit(group_);
  return Status::Ok();
}

Status PartitionStateMachine::CheckEndInRange(std::string_view end_key) const {
  auto end = RangeEnd();
  if (!end.ok()) return end.status();
  if (end->has_value() && (end_key.empty() || end_key > **end)) return MovedBySplit(group_);
  return Status::Ok();
}

Result<pb::KvScanResponse> PartitionStateMachine::Scan(const std::string& start_key,
                                                       const std::string& end_key, uint32_t limit,
                                                       const storage::ValueFilter& wants_value) const {
  if (limit == 0) return Status::InvalidArgument("scan limit must be positive");
  const size_t capped = std::min<size_t>(limit, limits::kScanItemsMax - 1);
  pb::KvScanResponse out;
  size_t rows = 0;
  // One row more than asked tells whether the range continues.
  TESSERA_RETURN_IF_ERROR(VisitRows(
      start_key, end_key, capped + 1, wants_value,
      [&](std::string_view key, const RecordView* record) {
        if (rows++ == capped) {
          out.set_resume_key(std::string(key));
          return false;
        }
        pb::KvItem* item = out.add_items();
        item->set_key(std::string(key));
        if (record == nullptr) return true;  // left unread by the filter: the key only
        item->set_value(std::string(record->value));
        item->set_version(record->version);
        return true;
      }));
  return out;
}

Status PartitionStateMachine::VisitRows(std::string_view start_key, std::string_view end_key,
                                        size_t limit, const storage::ValueFilter& wants_value,
                                        const RowVisitor& visit) const {
  bool corrupt = false;
  TESSERA_RETURN_IF_ERROR(store_->Visit(
      group_, start_key, end_key, limit, wants_value,
      [&](std::string_view key, std::string_view stored) {
        // A stored KvRecord always carries its version (a slot >= 1), so an
        // empty value is one the filter left unread: no second filter call.
        if (stored.empty()) return visit(key, nullptr);
        RecordView record;
        if (!ReadKvRecord(stored, &record.value, &record.version)) {
          corrupt = true;
          return false;
        }
        return visit(key, &record);
      }));
  if (corrupt) return Status::Corruption("unparseable KvRecord in group " + std::to_string(group_));
  return Status::Ok();
}

}  // namespace tessera::node
