// RouterShares: a router's local token buckets, one read and one write per
// table, refilled at the share of the table's capacity its GAC granted
// (docs/admission.md, "Global admission control").
//
// Contract:
//  1. Admit charges a request's units to its table's bucket: admitted when
//     they are there (then taken), refused otherwise (nothing taken). A
//     table with no grant yet, or whose capacity is unset, is admitted
//     without a charge (the nodes' partition budgets still apply).
//  2. Every admitted and refused unit is counted for the next report;
//     TakeReport hands the counts out (and resets them) for the tables
//     `select` picks.
//  3. ApplyGrant sets a table's bucket to its new share from `now` on: rate
//     = the share, cap = one second's worth (at least one unit).
//  4. Hold: a table whose last grant is older than hold_ms (its GAC cannot
//     be reached) keeps that share until then, and afterwards falls back to
//     capacity / routers (a conservative share: all routers together stay
//     within the capacity) until a grant comes again.
//  5. A report carries an on-demand table's peak as the last grant gave it
//     (capacity / 2), so an instance that restarted learns it back.
//  6. ForgetUnknown drops the tables an answer carried no grant for (the
//     instance does not know them: no table, or a bucket without a
//     capacity) unless they are charged, so that uncharged names (many S3
//     buckets) do not fill the map of contract 7.
//  7. At most limits::kGacTablesPerReportMax tables are tracked; requests
//     to further tables are admitted without a charge.
//
// Pure: time comes in; no clock, no lock.
// Thread safety: none; the owner serialises calls.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "admission/node_admission.h"
#include "admission/token_bucket.h"
#include "gac/gac_options.h"
#include "tessera/gac.pb.h"

namespace tessera::gac {

struct RouterTicket {
  bool admitted = true;
  bool charged = false;  // false: no grant (yet) or an unset table
};

class RouterShares {
 public:
  // `routers`: how many routers share every table (the layout's), >= 1.
  RouterShares(GacOptions options, uint32_t routers);

  RouterTicket Admit(const std::string& table, admission::CapacityKind kind, double units,
                     admission::Clock::time_point now);
  // `units` more for an admitted request (a read's size once served),
  // taking only what is there.
  void ChargeMore(const std::string& table, admission::CapacityKind kind, double units,
                  admission::Clock::time_point now);

  // The counts since the last report of the tables `select` picks.
  pb::GacReportRequest TakeReport(const std::function<bool(const std::string&)>& select);
  void ApplyGrant(const pb::GacTableGrant& grant, admission::Clock::time_point now);
  // Contract 6, after the grants of `answer` (to `sent`) are applied.
  void ForgetUnknown(const pb::GacReportRequest& sent, const pb::GacReportResponse& answer);
  size_t tracked() const { return shares_.size(); }
  // Contract 4 for every table; call about once an interval.
  void ApplyHold(admission::Clock::time_point now);

  struct TableState {
    bool charged = false;   // a grant of a provisioned or on-demand table
    bool fallback = false;  // contract 4: capacity / routers
    double read_rate = 0, write_rate = 0;
  };
  std::optional<TableState> State(const std::string& table) const;

 private:
  struct Share {
    pb::TableCapacity capacity;  // as last granted; UNSET: not charged
    bool granted = false;
    bool fallback = false;
    admission::Clock::time_point granted_at;
    std::optional<admission::TokenBucket> read, write;
    double read_units = 0, write_units = 0, read_refused = 0, write_refused = 0;
  };
  void SetRates(Share& share, double read_rate, double write_rate, admission::Clock::time_point now);

  const GacOptions options_;
  const uint32_t routers_;
  std::map<std::string, Share> shares_;
};

}  // namespace tessera::gac
