// Test-only: the smallest valid cluster layout (one node, one meta replica
// per AZ "a", "b", "c", one router), for tests that parse, record or
// modify layouts.
#pragma once

namespace tessera::cluster::testing {

inline constexpr char kMinimalLayoutText[] = R"(name: "t" azs: ["a", "b", "c"]
nodes { name: "a1" az: "a" host: "127.0.0.1" peer_port: 1001 http_port: 1002 }
nodes { name: "b1" az: "b" host: "127.0.0.1" peer_port: 1003 http_port: 1004 }
nodes { name: "c1" az: "c" host: "127.0.0.1" peer_port: 1005 http_port: 1006 }
meta { name: "ma" az: "a" host: "127.0.0.1" peer_port: 1101 http_port: 1102 }
meta { name: "mb" az: "b" host: "127.0.0.1" peer_port: 1103 http_port: 1104 }
meta { name: "mc" az: "c" host: "127.0.0.1" peer_port: 1105 http_port: 1106 }
routers { name: "r" az: "a" host: "127.0.0.1" kv_port: 1201 http_port: 1202 s3_port: 1203 s3_tls_port: 1204 }
)";

}  // namespace tessera::cluster::testing
