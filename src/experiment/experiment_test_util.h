// Shared fixtures of the experiment module's unit tests: a three-AZ layout
// and an experiment in protobuf text.
#pragma once

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <string>

#include "cluster/layout.h"
#include "tessera/experiment.pb.h"

namespace tessera::experiment {

inline constexpr char kTestLayoutText[] = R"(
name: "t"
azs: ["az1", "az2", "az3"]
nodes { name: "az1-n1" az: "az1" host: "127.0.0.1" peer_port: 1 http_port: 2 }
nodes { name: "az2-n1" az: "az2" host: "127.0.0.1" peer_port: 3 http_port: 4 }
nodes { name: "az3-n1" az: "az3" host: "127.0.0.1" peer_port: 5 http_port: 6 }
meta { name: "meta-az1" az: "az1" host: "127.0.0.1" peer_port: 7 http_port: 8 }
meta { name: "meta-az2" az: "az2" host: "127.0.0.1" peer_port: 9 http_port: 10 }
meta { name: "meta-az3" az: "az3" host: "127.0.0.1" peer_port: 11 http_port: 12 }
routers { name: "router-1" az: "az1" host: "127.0.0.1" kv_port: 13 http_port: 14 s3_port: 15
          s3_tls_port: 16 kv_tls_port: 17 http_tls_port: 18 }
)";

inline pb::ClusterLayout TestLayout() {
  auto layout = cluster::ParseLayout(kTestLayoutText);
  EXPECT_TRUE(layout.ok()) << layout.status().ToString();
  return layout.ok() ? *layout : pb::ClusterLayout();
}

inline pb::Experiment ParseExperiment(const std::string& text) {
  pb::Experiment e;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &e)) << text;
  return e;
}

}  // namespace tessera::experiment
