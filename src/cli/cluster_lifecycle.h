// Starting, stopping and signalling the processes of a local cluster: what
// `tessera cluster up/down/kill/stop/resume/restart` do, as functions that
// other commands (`tessera experiment`) call on a ClusterSession.
//
// Launch order is meta, nodes, routers, autoadmin; stop order the reverse.
//
// Thread safety: as the ClusterSession (one caller at a time).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "cli/cluster_record.h"
#include "cli/cluster_session.h"
#include "common/result.h"

namespace tessera::cli {

// The S3 table's split points for `cluster up`: the even bucket-id splits
// (meta::S3TableSplitPoints), plus for each "BUCKET_ID:OBJECT_KEY" of
// `s3_splits` the points s3::model::BucketPrefix(ID), BucketPrefix(ID + 1)
// (when ID + 1 does not wrap) and ObjectPrefix(ID, OBJECT_KEY); sorted and
// de-duplicated. BUCKET_ID is a decimal uint64 > 0; OBJECT_KEY is
// everything after the first ':' (it may be empty or hold ':'), at most
// limits::kMetaSplitPointBytesMax - 8 bytes. InvalidArgument naming the
// bad value otherwise.
Result<std::vector<std::string>> S3TableSplitPointsWith(const std::vector<std::string>& s3_splits);

// `cluster up --kv-split` points: at most limits::kMetaPartitionsPerTableMax
// - 1, each 1..limits::kMetaSplitPointBytesMax bytes, strictly ascending;
// InvalidArgument naming the bad value otherwise.
Status CheckKvSplitPoints(const std::vector<std::string>& kv_splits);

// Everything `cluster up --detach` does before it prints the status: the
// settings (ChooseUpSettings), secret, credentials, certificates, the
// record, every process launched, the tables and the S3 admin user
// created, every partition led and every process running. Prints one line
// per started process to `out`. InvalidArgument for bad settings (nothing
// started); any other error has stopped every process again and says why
// (including the end of the logs of processes that exited).
Status StartCluster(ClusterSession& s, const UpSettings& given, std::ostream& out);

// Stops every process of the layout (SIGTERM, SIGKILL after a grace
// period) in the reverse launch order and removes every pid file, also
// those of processes that died. One line per stopped process to `out`.
void StopAll(ClusterSession& s, std::ostream& out);

// Sends `signal` to the running process `name` (kill -9, SIGSTOP, SIGCONT).
Status SignalProcess(ClusterSession& s, const std::string& name, int signal);

// Stops `name` if it runs and launches it again with the cluster's layout
// and directory; returns the new pid.
Result<int> RestartProcess(ClusterSession& s, const std::string& name);

// Launches `name` unless it runs (a killed process coming back). Returns
// whether it had to be launched.
Result<bool> EnsureRunning(ClusterSession& s, const std::string& name);

}  // namespace tessera::cli
