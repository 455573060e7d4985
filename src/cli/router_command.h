// `tessera router`: runs one stateless router of a cluster layout until
// SIGTERM or SIGINT. The router NAME (a `routers` entry of the layout) logs
// to DIR/logs/NAME.log, reads the cluster secret from DIR/secret and the
// KV API credentials from DIR/credentials, and serves the HTTP/JSON KV API,
// /metrics and /health on its http port (docs/router.md), and S3 on its
// s3_port (HTTP) and s3_tls_port (HTTPS, with DIR/tls/cert.pem and
// DIR/tls/key.pem, made self-signed by `tessera cluster up`).
// It composes the router with the S3 layer, so it lives with the CLI.
#pragma once

#include <string>

#include "tessera/cluster.pb.h"

namespace tessera::router {

struct RouterCommandArgs {
  std::string layout_path;
  std::string name;
  std::string dir;
  // Empty: the layout's router_settings, else the knobs' defaults
  // (router.s3_region, router.s3_base_domain: <bucket>.<domain> is
  // virtual-hosted style, every other Host path style).
  std::string region;       // the S3 region served
  std::string base_domain;  // S3 virtual-hosted-style domain
  // S3 admission budgets (requests/s per bucket / per user, and bursts);
  // negative: the layout's router_settings, else the built-in default.
  // 0: unlimited (rates) or one second's worth (bursts).
  double s3_bucket_rate = -1;
  double s3_bucket_burst = -1;
  double s3_user_rate = -1;
  double s3_user_burst = -1;
};

// The S3 base domain routers serve without --base-domain: the layout's
// router_settings.s3_base_domain, else knob router.s3_base_domain's default
// (`cluster up` makes the TLS certificate for it and prints it).
std::string DefaultS3BaseDomain(const pb::RouterSettings& settings);

// Returns the process exit code: 0 after a clean shutdown, 2 for bad
// arguments or a setup failure (the reason on stderr and in the log).
int RunRouterCommand(const RouterCommandArgs& args);

}  // namespace tessera::router
