// GacAllocator: one global admission control instance's view of its tables
// and the routers that use them, and the shares it hands out
// (docs/admission.md, "Global admission control").
//
// Contract:
//  1. SetTables gives the tables' capacities (meta.tables); a table not
//     listed is forgotten with everything learned about it.
//  2. Report records one router's use since its previous report (admitted
//     and refused units over elapsed_ms) and answers, for each reported
//     table the GAC knows, the router's share for the next interval:
//     a. a provisioned table's capacity C is split max-min fairly over the
//        routers heard from within three intervals: a router's demand is
//        what it admitted plus what it refused, per second; no router gets
//        more than its demand while another's is unmet, and what demand
//        leaves over is split evenly (headroom to grow). The shares sum to
//        C (each computed when its router reports).
//     b. an on-demand table's capacity is twice its peak: the peak starts
//        at on_demand_initial_rcu/wcu and follows the highest consumption
//        (admitted units per second over its routers) seen, so a step to
//        twice the previous peak is admitted at once and capacity grows
//        after it.
//     c. an unset table is granted nothing (capacity UNSET: not charged).
//  3. The table's consumption (sum of the routers' admitted rates) is
//     answered with each grant: the estimate nodes and operators read.
//  4. State is ephemeral: a fresh allocator answers as soon as it has the
//     tables; until every router has reported once, shares may sum above C
//     for one interval.
//  5. An observer's report (a storage node, for adaptive capacity) records
//     nothing and grants no share: each known table's capacity and
//     consumption only.
//
// Pure: time comes in; no clock, no I/O, no lock.
// Thread safety: none; the owner serialises calls.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "gac/gac_options.h"
#include "tessera/cluster_rpc.pb.h"
#include "tessera/gac.pb.h"

namespace tessera::gac {

using Clock = std::chrono::steady_clock;

// Max-min fair shares of `capacity` (>= 0) among `demands` (each >= 0),
// in the same order: demands are met smallest first while an even split
// allows; what is left after all are met is split evenly. Sums to
// `capacity` (for non-empty demands).
std::vector<double> FairShares(double capacity, std::span<const double> demands);

class GacAllocator {
 public:
  explicit GacAllocator(GacOptions options);

  void SetTables(const pb::TablesResponse& tables);
  bool has_tables() const { return has_tables_; }

  // InvalidArgument-style failures are the caller's (size limits); here
  // every report is answered.
  pb::GacReportResponse Report(const pb::GacReportRequest& request, Clock::time_point now);

  // What the GAC knows of one table (metrics, status).
  struct TableView {
    std::string table;
    double read_capacity = 0;   // units/s; on-demand: twice the peak
    double write_capacity = 0;
    double read_units_per_s = 0;  // consumption over the routers heard from
    double write_units_per_s = 0;
    std::map<uint32_t, std::pair<double, double>> grants;  // router -> (rcu, wcu)
  };
  std::vector<TableView> View(Clock::time_point now) const;

 private:
  struct RouterUse {
    double read_demand = 0, write_demand = 0;  // per second
    double read_used = 0, write_used = 0;      // per second
    double read_grant = 0, write_grant = 0;
    Clock::time_point at;
  };
  struct Table {
    pb::TableCapacity capacity;
    double read_peak = 0, write_peak = 0;  // on-demand
    std::map<uint32_t, RouterUse> routers;
  };
  double ElapsedSeconds(uint32_t elapsed_ms) const;
  void Forget(Table& table, Clock::time_point now) const;  // routers silent too long
  std::pair<double, double> Capacity(const Table& table) const;
  pb::GacTableGrant Grant(const std::string& name, Table& table, uint32_t router) const;
  pb::GacTableGrant Observed(const std::string& name, const Table& table) const;  // contract 5

  const GacOptions options_;
  bool has_tables_ = false;
  std::map<std::string, Table> tables_;
};

}  // namespace tessera::gac
