// Simulated clients: each has one outstanding get, put or compare-and-set on
// a handful of keys, sent to the replica it believes leads; NotLeader hints
// are followed, failures retried elsewhere, and an op that outlives the
// client timeout ends with an unknown outcome. Every op is recorded as a
// chaos::KvOperation for the linearizability checker.
#include <algorithm>
#include <utility>

#include "sim/simulation.h"

namespace tessera::sim {

namespace {

constexpr uint64_t kRequestSeqBits = 40;  // request id = client << 40 | seq (FormatRequestId)

// Values are "c<client>-<op serial>", then padding when large.
std::string ShortValue(const std::string& value) {
  const size_t padding = value.find('+');
  return padding == std::string::npos
             ? value
             : value.substr(0, padding) + "(+" + std::to_string(value.size() - padding) + " bytes)";
}

std::string DescribeOp(const chaos::KvOperation& op) {
  switch (op.type) {
    case chaos::KvOpType::kGet: return "get " + op.key;
    case chaos::KvOpType::kPut: return "put " + op.key + "=" + ShortValue(op.value);
    case chaos::KvOpType::kCas: break;
  }
  return "cas " + op.key + " " + (op.expected ? ShortValue(*op.expected) : std::string("<absent>")) +
         "->" + ShortValue(op.value);
}

// What a compare-and-set would do against `state` (the ack-before-quorum
// bug answers clients from it before the command is chosen).
bool SpeculateCas(const KvState& state, const std::string& command_bytes) {
  pb::sim::KvCommand command;
  if (!command.ParseFromString(command_bytes) || command.op() != pb::sim::KV_CAS) return false;
  const std::optional<std::string> current = state.Get(command.key());
  return command.expect_present() ? current == command.expected() : !current.has_value();
}

}  // namespace

bool Simulation::ClientsMayStart() const { return !(healed_ && post_heal_write_); }

ReplicaId Simulation::RandomReplica(ReplicaId other_than) {
  std::vector<ReplicaId> ids = ProvisionedReplicas();
  std::erase(ids, other_than);
  return ids.empty() ? other_than : ids[client_prng_.Below(ids.size())];
}

void Simulation::StartClients() {
  for (uint32_t id = 1; id <= plan_.clients; ++id) {
    SimClient client;
    client.id = id;
    client.leader_guess = 1 + static_cast<ReplicaId>(client_prng_.Below(config_.replicas));
    clients_.push_back(std::move(client));
    ScheduleSimple(client_prng_.Below(plan_.think_max_us + 1), EventKind::kClient, id, 0);
  }
}

void Simulation::OnClientEvent(SimClient& client, uint64_t serial) {
  if (serial == 0) {
    if (!client.op) StartOp(client);
    return;
  }
  if (client.op && client.op->serial == serial && !client.op->in_flight) Attempt(client);
}

void Simulation::StartOp(SimClient& client) {
  if (!ClientsMayStart()) return;
  ClientOp op;
  op.serial = next_op_serial_++;
  chaos::KvOperation record;
  record.client_id = client.id;
  record.invoke_time = HistoryTime();
  record.key = "k" + std::to_string(client_prng_.Below(plan_.keys));
  const uint64_t roll = client_prng_.Below(100);
  record.type = roll < 40 ? chaos::KvOpType::kGet
                          : (roll < 75 ? chaos::KvOpType::kPut : chaos::KvOpType::kCas);
  op.is_write = record.type != chaos::KvOpType::kGet;
  if (op.is_write) {
    record.value = "c" + std::to_string(client.id) + "-" + std::to_string(op.serial);
    if (plan_.large_value_percent > 0 && client_prng_.Chance(plan_.large_value_percent)) {
      // Large values exercise the byte limits of Accept batches and snapshots.
      record.value += '+';
      record.value.append(client_prng_.Range(16 << 10, 256 << 10), 'x');
    }
    if (record.type == chaos::KvOpType::kCas) {
      auto seen = client.last_seen.find(record.key);
      if (seen != client.last_seen.end() && client_prng_.Chance(75)) record.expected = seen->second;
    }
    op.command = EncodeKvCommand(client.id, record.key, record.value,
                                 record.type == chaos::KvOpType::kCas, record.expected);
  }
  tracer_.Event(now_, "c" + std::to_string(client.id), 40, op.serial, 0,
                [&] { return "invoke " + DescribeOp(record); });
  op.history_index = history_.size();
  history_.push_back(std::move(record));
  history_discarded_.push_back(false);
  ScheduleSimple(now_ + plan_.client_timeout_us, EventKind::kClientDeadline, client.id, op.serial);
  client.op = std::move(op);
  Attempt(client);
}

void Simulation::Attempt(SimClient& client) {
  ++client.op->attempts;
  ReplicaHost& host = Host(client.leader_guess);
  if (!host.up()) {
    RetryLater(client, RandomReplica(host.id), false);
    return;
  }
  if (host.paused(now_)) {  // no answer yet; a client waits, then tries again
    RetryLater(client, host.id, false);
    return;
  }
  if (client.op->is_write) {
    AttemptWrite(client, host);
  } else {
    AttemptRead(client, host);
  }
}

void Simulation::AttemptWrite(SimClient& client, ReplicaHost& host) {
  ClientOp& op = *client.op;
  const uint64_t request_id = (uint64_t{client.id} << kRequestSeqBits) | client.next_request_seq++;
  Result<Slot> slot = host.replica->Propose(LocalNow(host), op.command, request_id);
  if (!slot.ok()) {
    if (slot.status().code() == StatusCode::kNotLeader) {
      FollowNotLeader(client, slot.status());
    } else {
      RetryLater(client, host.id, false);
    }
    Drain(host);
    return;
  }
  op.in_flight = true;
  op.attempt_replica = host.id;
  op.attempt_request_id = request_id;
  host.write_waiters.emplace(*slot, WriteWaiter{client.id, op.serial, request_id});
  tracer_.Event(now_, "c" + std::to_string(client.id), 41, *slot, request_id, [&] {
    return "proposed at " + Who(host.id) + " slot=" + std::to_string(*slot) +
           " rid=" + FormatRequestId(request_id);
  });
  Drain(host);
}

void Simulation::AttemptRead(SimClient& client, ReplicaHost& host) {
  ClientOp& op = *client.op;
  const std::string& key = history_[op.history_index].key;
  if (config_.bug == SimBug::kStaleRead) {
    CompleteRead(client, host.id, host.kv.Get(key));
    return;
  }
  Result<Slot> index = host.replica->LeaseReadIndex(LocalNow(host));
  if (!index.ok()) {
    if (index.status().code() == StatusCode::kNotLeader) {
      FollowNotLeader(client, index.status());
    } else {
      RetryLater(client, host.id, false);
    }
    return;
  }
  if (host.kv.applied_index() >= *index) {
    CompleteRead(client, host.id, host.kv.Get(key));
    return;
  }
  op.in_flight = true;
  op.attempt_replica = host.id;
  host.read_waiters.push_back(ReadWaiter{client.id, op.serial, *index});
}

void Simulation::FollowNotLeader(SimClient& client, const Status& status) {
  const ReplicaId hint = status.leader_hint();
  if (hint != 0 && hint <= replica_ids_ && hint != client.leader_guess) {
    RetryLater(client, hint, true);
  } else {
    RetryLater(client, RandomReplica(client.leader_guess), false);
  }
}

void Simulation::RetryLater(SimClient& client, ReplicaId next_replica, bool hinted) {
  client.leader_guess = next_replica;
  const TimeUs backoff = hinted ? 500 + client_prng_.Below(1'000)
                                : 5'000 + client_prng_.Below(plan_.retry_backoff_max_us);
  ScheduleSimple(now_ + backoff, EventKind::kClient, client.id, client.op->serial);
}

void Simulation::CompleteWrite(SimClient& client, Slot slot, uint64_t request_id,
                               bool cas_succeeded) {
  chaos::KvOperation& record = history_[client.op->history_index];
  record.completed = true;
  record.return_time = HistoryTime();
  record.cas_succeeded = cas_succeeded;
  auto [acked, inserted] = acked_.try_emplace(slot, AckedWrite{request_id, client.id, now_});
  if (!inserted && acked->second.request_id != request_id) {
    Violate(Invariant::kDurability,
            "slot " + std::to_string(slot) + " acknowledged for rid " +
                FormatRequestId(acked->second.request_id) + " and for rid " +
                FormatRequestId(request_id));
    return;
  }
  if (record.type == chaos::KvOpType::kPut || cas_succeeded) {
    client.last_seen[record.key] = record.value;
  }
  ++result_.stats.writes_ok;
  if (healed_ && !post_heal_write_ && record.invoke_time >= plan_.heal_at_us * kHistoryStepsPerUs) {
    post_heal_write_ = true;
    result_.stats.recovered_after_heal_us = now_ - plan_.heal_at_us;
  }
  tracer_.Event(now_, "c" + std::to_string(client.id), 42, slot, cas_succeeded, [&] {
    return "ok " + DescribeOp(record) + " slot=" + std::to_string(slot) +
           (record.type == chaos::KvOpType::kCas ? (cas_succeeded ? " swapped" : " not swapped")
                                                 : "");
  });
  FinishOp(client);
}

void Simulation::CompleteRead(SimClient& client, ReplicaId replica,
                              const std::optional<std::string>& value) {
  chaos::KvOperation& record = history_[client.op->history_index];
  record.completed = true;
  record.return_time = HistoryTime();
  record.read = value;
  if (value) {
    client.last_seen[record.key] = *value;
  } else {
    client.last_seen.erase(record.key);
  }
  ++result_.stats.lease_reads;
  tracer_.Event(now_, "c" + std::to_string(client.id), 43, replica, value ? value->size() : 0,
                [&] { return "ok " + DescribeOp(record) + " = " +
                             (value ? ShortValue(*value) : std::string("<absent>")) +
                             " at " + Who(replica); });
  FinishOp(client);
}

void Simulation::FinishOp(SimClient& client) {
  client.op.reset();
  ScheduleSimple(now_ + client_prng_.Below(plan_.think_max_us + 1), EventKind::kClient, client.id, 0);
}

// The op's outcome is unknown when a write attempt is pending; otherwise it
// never took effect (reads have none) and leaves the history.
void Simulation::AbandonOp(SimClient& client, const char* why) {
  ClientOp& op = *client.op;
  const bool unknown = op.is_write && op.in_flight;
  if (unknown) {
    ++result_.stats.writes_unknown;
  } else {
    history_discarded_[op.history_index] = true;
  }
  tracer_.Event(now_, "c" + std::to_string(client.id), 44, op.serial, unknown, [&] {
    return std::string(why) + ": " + DescribeOp(history_[op.history_index]) +
           (unknown ? " outcome unknown" : " dropped");
  });
  FinishOp(client);
}

void Simulation::OnClientDeadline(SimClient& client, uint64_t serial) {
  if (!client.op || client.op->serial != serial) return;
  const ClientOp& op = *client.op;
  if (op.in_flight) {
    ReplicaHost& host = Host(op.attempt_replica);
    std::erase_if(host.write_waiters,
                  [&](const auto& item) { return item.second.op_serial == serial; });
    std::erase_if(host.read_waiters,
                  [&](const ReadWaiter& waiter) { return waiter.op_serial == serial; });
  }
  AbandonOp(client, "timeout");
}

void Simulation::OnWriteSlotApplied(ReplicaHost& host, Slot slot, const SlotResult* result) {
  auto [begin, end] = host.write_waiters.equal_range(slot);
  if (begin == end) return;
  std::vector<WriteWaiter> waiters;
  for (auto it = begin; it != end; ++it) waiters.push_back(it->second);
  host.write_waiters.erase(begin, end);
  for (const WriteWaiter& waiter : waiters) {
    SimClient& client = clients_[waiter.client - 1];
    if (!client.op || client.op->serial != waiter.op_serial) continue;
    if (result != nullptr && result->request_id == waiter.request_id) {
      CompleteWrite(client, slot, waiter.request_id, result->cas_succeeded);
      continue;
    }
    // The slot holds another value: this attempt can never take effect.
    client.op->in_flight = false;
    tracer_.Event(now_, "c" + std::to_string(client.id), 45, slot, waiter.request_id, [&] {
      return "slot " + std::to_string(slot) + " at " + Who(host.id) +
             " went to another value; retrying";
    });
    RetryLater(client, host.id, false);
  }
}

void Simulation::ServeReadWaiters(ReplicaHost& host) {
  if (host.read_waiters.empty()) return;
  std::vector<ReadWaiter> ready;
  std::erase_if(host.read_waiters, [&](const ReadWaiter& waiter) {
    if (waiter.read_index > host.kv.applied_index()) return false;
    ready.push_back(waiter);
    return true;
  });
  for (const ReadWaiter& waiter : ready) {
    SimClient& client = clients_[waiter.client - 1];
    if (!client.op || client.op->serial != waiter.op_serial) continue;
    CompleteRead(client, host.id, host.kv.Get(history_[client.op->history_index].key));
  }
}

void Simulation::FailWaitersOnCrash(ReplicaHost& host) {
  std::vector<std::pair<uint32_t, uint64_t>> affected;  // (client, op serial)
  for (const auto& [slot, waiter] : host.write_waiters) {
    affected.emplace_back(waiter.client, waiter.op_serial);
  }
  for (const ReadWaiter& waiter : host.read_waiters) {
    affected.emplace_back(waiter.client, waiter.op_serial);
  }
  host.write_waiters.clear();
  host.read_waiters.clear();
  for (const auto& [id, serial] : affected) {
    SimClient& client = clients_[id - 1];
    if (!client.op || client.op->serial != serial) continue;
    if (client.op->is_write) {
      AbandonOp(client, "replica crashed");  // the proposal may still commit
    } else {
      client.op->in_flight = false;
      RetryLater(client, RandomReplica(host.id), false);
    }
  }
}

// Bug: acknowledge a write once the proposer's own copy is durable.
void Simulation::AckBeforeQuorum(ReplicaHost& host) {
  std::vector<std::pair<Slot, WriteWaiter>> acked;
  for (const auto& [slot, waiter] : host.write_waiters) {
    auto entry = host.disk.image().log.find(slot);
    if (entry != host.disk.image().log.end() && entry->second.request_id() == waiter.request_id) {
      acked.emplace_back(slot, waiter);
    }
  }
  for (const auto& [slot, waiter] : acked) {
    std::erase_if(host.write_waiters,
                  [&](const auto& item) { return item.second.op_serial == waiter.op_serial; });
    SimClient& client = clients_[waiter.client - 1];
    if (!client.op || client.op->serial != waiter.op_serial) continue;
    CompleteWrite(client, slot, waiter.request_id, SpeculateCas(host.kv, client.op->command));
    if (!result_.ok) return;
  }
}

}  // namespace tessera::sim
