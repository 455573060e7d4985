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

namespace tessera::router {

struct RouterCommandArgs {
  std::string layout_path;
  std::string name;
  std::string dir;
  std::string region = "us-east-1";  // the S3 region served
  std::string base_domain;           // S3 virtual-hosted-style domain; empty: off
};

// Returns the process exit code: 0 after a clean shutdown, 2 for bad
// arguments or a setup failure (the reason on stderr and in the log).
int RunRouterCommand(const RouterCommandArgs& args);

}  // namespace tessera::router
