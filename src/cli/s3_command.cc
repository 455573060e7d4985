#include "cli/s3_command.h"

#include <cctype>
#include <chrono>
#include <filesystem>
#include <algorithm>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <tuple>
#include <utility>

#include <spdlog/spdlog.h>

#include "cli/cluster_session.h"
#include "cli/kv_table_command.h"
#include "cli/partition_calls.h"
#include "cli/s3_check.h"
#include "cli/s3_client_config.h"
#include "cluster/cluster_pki.h"
#include "knobs/knobs.h"
#include "router/token.h"
#include "s3/model/key_layout.h"
#include "s3/protocol/names.h"
#include "tessera/s3.pb.h"
#include "tessera/s3_registry.pb.h"

namespace tessera::cli {
namespace {

using cluster::ProcessRole;

constexpr std::chrono::milliseconds kRpcTimeout{5'000};

const char* VersioningName(pb::BucketVersioning v) {
  switch (v) {
    case pb::VERSIONING_ENABLED: return "Enabled";
    case pb::VERSIONING_SUSPENDED: return "Suspended";
    default: return "-";
  }
}

template <typename Response, typename Request>
Result<Response> CallMeta(ClusterSession& s, const std::string& method, const Request& request) {
  auto client = s.client();
  if (!client.ok()) return client.status();
  auto raw = (*client)->CallAny(ProcessRole::kMeta, method, request.SerializeAsString(), kRpcTimeout);
  if (!raw.ok()) return raw.status();
  Response response;
  if (!response.ParseFromString(*raw)) return Status::Corruption("unparsable " + method + " answer");
  return response;
}

Status UserCreate(ClusterSession& s, const S3CommandArgs& a, std::ostream& out) {
  pb::CreateUserRequest request;
  request.set_name(a.name);
  request.set_access_key(a.access_key);
  request.set_secret_key(a.secret_key);
  request.set_display_name(a.display_name);
  request.set_email(a.email);
  auto r = CallMeta<pb::CreateUserResponse>(s, "meta.create_user", request);
  if (!r.ok()) return r.status();
  out << "user " << r->name() << (r->created() ? "" : " (already existed with these keys)")
      << "\naccess_key " << r->access_key() << "\nsecret_key " << r->secret_key()
      << "\ncanonical_id " << r->canonical_id() << "\ndisplay_name " << r->display_name() << "\n";
  if (!r->email().empty()) out << "email " << r->email() << "\n";
  return Status::Ok();
}

// A registry read as the most up-to-date meta replica answers it (the
// highest map_version among those that answer): a bucket or user made a
// moment ago by another command may not have reached every replica's
// cache yet, and an operator's next command must see it.
template <typename Response, typename Request>
Result<Response> NewestMetaAnswer(ClusterSession& s, const std::string& method, const Request& request) {
  auto client = s.client();
  if (!client.ok()) return client.status();
  std::optional<Response> newest;
  Status last = Status::Unavailable("no metadata replica in the layout");
  for (const cluster::ProcessEntry& e : s.table().OfRole(ProcessRole::kMeta)) {
    auto raw = (*client)->Call(e.id, method, request.SerializeAsString(), kRpcTimeout);
    Response response;
    if (!raw.ok()) {
      last = raw.status();
    } else if (!response.ParseFromString(*raw)) {
      last = Status::Corruption("unparsable " + method + " answer");
    } else if (!newest || response.map_version() > newest->map_version()) {
      newest = std::move(response);
    }
  }
  if (!newest) return last;
  return *newest;
}

Result<pb::ListUsersResponse> NewestUsers(ClusterSession& s) {
  return NewestMetaAnswer<pb::ListUsersResponse>(s, "meta.list_users", pb::ListUsersRequest());
}

Status UserList(ClusterSession& s, std::ostream& out) {
  auto r = NewestUsers(s);
  if (!r.ok()) return r.status();
  for (const pb::UserRecord& u : r->users()) {
    out << u.name();
    for (int i = 0; i < u.access_keys_size(); ++i) out << (i == 0 ? " " : ",") << u.access_keys(i);
    out << " id=" << (u.canonical_id().empty() ? s3::CanonicalUserId(u.name()) : u.canonical_id())
        << " display_name=" << (u.display_name().empty() ? u.name() : u.display_name());
    if (!u.email().empty()) out << " email=" << u.email();
    out << "\n";
  }
  return Status::Ok();
}

void PrintBucket(const pb::BucketDescriptor& b, std::ostream& out) {
  out << b.name() << " id=" << b.bucket_id() << " owner=" << b.owner()
      << " region=" << (b.region().empty() ? "-" : b.region())
      << " versioning=" << VersioningName(b.versioning())
      << " layout=" << s3::model::KeyLayoutName(s3::model::KeyLayoutOf(b));
  switch (b.capacity().mode()) {
    case pb::TableCapacity::CAPACITY_PROVISIONED:
      out << " capacity=provisioned rcu=" << b.capacity().rcu() << " wcu=" << b.capacity().wcu();
      break;
    case pb::TableCapacity::CAPACITY_ON_DEMAND: out << " capacity=on-demand"; break;
    default: out << " capacity=unset"; break;
  }
}

// `s3 bucket set-capacity`: the request as `kv table update` reads it
// (RequestedCapacity), against the bucket's current capacity.
Status BucketSetCapacity(ClusterSession& s, const S3CommandArgs& a, std::ostream& out) {
  pb::GetBucketRequest lookup;
  lookup.set_name(a.name);
  auto current = NewestMetaAnswer<pb::GetBucketResponse>(s, "meta.get_bucket", lookup);
  if (!current.ok()) return current.status();
  if (!current->found()) return Status::NotFound("bucket '" + a.name + "' does not exist");
  KvTableArgs wanted;
  wanted.rcu = a.rcu;
  wanted.wcu = a.wcu;
  wanted.on_demand = a.on_demand;
  auto capacity = RequestedCapacity(wanted, &current->bucket().capacity());
  if (!capacity.ok()) return capacity.status();
  pb::SetBucketCapacityRequest request;
  request.set_name(a.name);
  request.set_owner(a.owner);
  *request.mutable_capacity() = *capacity;
  auto r = CallMeta<pb::SetBucketCapacityResponse>(s, "meta.set_bucket_capacity", request);
  if (!r.ok()) return r.status();
  PrintBucket(r->bucket(), out);
  out << "\n";
  return Status::Ok();
}

Status BucketCreate(ClusterSession& s, const S3CommandArgs& a, std::ostream& out) {
  pb::CreateBucketRequest request;
  request.set_name(a.name);
  request.set_owner(a.owner);
  request.set_region(a.region);
  request.set_bucket_id(a.bucket_id);
  s3::model::KeyLayout layout;
  if (!a.key_layout.empty()) {
    auto parsed = s3::model::ParseKeyLayout(a.key_layout);
    if (!parsed.ok()) return parsed.status();
    layout = *parsed;
  }
  if (layout.hashed()) {
    request.set_key_layout(pb::BUCKET_KEY_LAYOUT_HASHED);
    request.set_hash_ranges(layout.hash_ranges);
  }
  auto r = CallMeta<pb::CreateBucketResponse>(s, "meta.create_bucket", request);
  if (!r.ok()) return r.status();
  if (r->too_many_buckets()) {
    return Status::InvalidArgument("user " + a.owner + " owns as many buckets as a user may "
                                   "(meta_settings.s3_user_buckets_max)");
  }
  // The owner's existing bucket is the answer even when it has another id.
  if (a.bucket_id != 0 && r->bucket().bucket_id() != a.bucket_id) {
    return Status::Conflict("bucket " + a.name + " exists with id " +
                            std::to_string(r->bucket().bucket_id()));
  }
  // So is a bucket of another layout: the layout is fixed at creation.
  if (!a.key_layout.empty() && s3::model::KeyLayoutOf(r->bucket()) != layout) {
    return Status::Conflict("bucket " + a.name + " exists with key layout " +
                            s3::model::KeyLayoutName(s3::model::KeyLayoutOf(r->bucket())));
  }
  PrintBucket(r->bucket(), out);
  out << (r->already_owned_by_you() ? " (already owned by you)" : "") << "\n";
  return Status::Ok();
}

Status Buckets(ClusterSession& s, const S3CommandArgs& a, std::ostream& out) {
  pb::ListBucketsRequest request;
  request.set_owner(a.owner);
  auto r = NewestMetaAnswer<pb::ListBucketsResponse>(s, "meta.list_buckets", request);
  if (!r.ok()) return r.status();
  for (const pb::BucketDescriptor& b : r->buckets()) {
    PrintBucket(b, out);
    out << "\n";
  }
  return Status::Ok();
}

// The bucket's usage: the sum of every `_s3` partition's usage record of
// it (each partition counts the keys it serves, docs/formats/s3-keys.md).
Status Usage(ClusterSession& s, const S3CommandArgs& a, std::ostream& out) {
  pb::GetBucketRequest lookup;
  lookup.set_name(a.name);
  auto bucket = NewestMetaAnswer<pb::GetBucketResponse>(s, "meta.get_bucket", lookup);
  if (!bucket.ok()) return bucket.status();
  if (!bucket->found()) return Status::NotFound("no bucket " + a.name);
  auto client = s.client();
  if (!client.ok()) return client.status();
  auto partitions = TablePartitions(**client, "_s3");
  if (!partitions.ok()) return partitions.status();
  pb::BucketUsage total;
  std::vector<int64_t> partition_objects;  // per `_s3` partition, in key order
  for (const pb::PartitionDescriptor& p : *partitions) {
    pb::S3UsageRequest request;
    request.set_group_id(p.group_id());
    request.set_bucket_id(bucket->bucket().bucket_id());
    auto reply = CallPartition(**client, p, "s3.usage", request.SerializeAsString());
    if (!reply.ok()) return reply.status();
    pb::BucketUsage part;
    if (!part.ParseFromString(*reply)) return Status::Corruption("unparsable s3.usage answer");
    total.set_objects(total.objects() + part.objects());
    total.set_bytes(total.bytes() + part.bytes());
    total.set_versions(total.versions() + part.versions());
    total.set_uploads(total.uploads() + part.uploads());
    total.set_part_bytes(total.part_bytes() + part.part_bytes());
    partition_objects.push_back(part.objects());
  }
  if (a.json) {
    std::string per_partition;
    for (const int64_t n : partition_objects) {
      per_partition += (per_partition.empty() ? "" : ", ") + std::to_string(n);
    }
    out << "{\"bucket\": \"" << a.name << "\", \"bucket_id\": " << bucket->bucket().bucket_id()
        << ", \"objects\": " << total.objects() << ", \"bytes\": " << total.bytes()
        << ", \"versions\": " << total.versions() << ", \"uploads\": " << total.uploads()
        << ", \"part_bytes\": " << total.part_bytes() << ", \"partitions\": "
        << partitions->size() << ", \"partition_objects\": [" << per_partition << "]}\n";
  } else {
    out << a.name << " objects=" << total.objects() << " bytes=" << total.bytes()
        << " versions=" << total.versions() << " uploads=" << total.uploads()
        << " part_bytes=" << total.part_bytes() << " (" << partitions->size()
        << " partitions)\n";
  }
  return Status::Ok();
}

// The key pair of `user`: its first access key and that key's secret, from
// meta. Without a user: DIR/credentials' first pair (user admin).
Result<std::pair<std::string, std::string>> ClientKeys(ClusterSession& s, const std::string& user) {
  if (user.empty()) {
    auto credentials = router::LoadCredentials(s.dir() + "/credentials");
    if (!credentials.ok()) return credentials.status();
    if (credentials->size() == 0) {
      return Status::NotFound("no credential in " + s.dir() + "/credentials");
    }
    const router::Credential first = credentials->First();
    return std::make_pair(first.access_key, first.secret_key);
  }
  // A user created by the previous command may reach the replicas' user
  // maps a moment later: look again, for a bounded time, before NotFound.
  constexpr int kLookupsMax = 30;
  constexpr auto kLookupPause = std::chrono::milliseconds(100);
  Result<pb::ListUsersResponse> users = NewestUsers(s);
  for (int lookups = 1; users.ok() && lookups < kLookupsMax; ++lookups) {
    const auto& listed = users->users();
    if (std::any_of(listed.begin(), listed.end(),
                    [&](const pb::UserRecord& u) { return u.name() == user; })) {
      break;
    }
    std::this_thread::sleep_for(kLookupPause);
    users = NewestUsers(s);
  }
  if (!users.ok()) return users.status();
  for (const pb::UserRecord& u : users->users()) {
    if (u.name() != user) continue;
    if (u.access_keys_size() == 0) return Status::NotFound("S3 user " + user + " has no access key");
    pb::GetUserByKeyRequest request;
    request.set_access_key(u.access_keys(0));
    request.set_min_version(users->map_version());
    auto key = CallMeta<pb::GetUserByKeyResponse>(s, "meta.get_user_by_key", request);
    if (!key.ok()) return key.status();
    if (!key->found()) return Status::NotFound("access key " + u.access_keys(0) + " vanished");
    return std::make_pair(u.access_keys(0), key->secret_key());
  }
  return Status::NotFound("no S3 user " + user + " (see tessera s3 user list)");
}

// "tessera", or "tessera-USER" with every byte outside [A-Za-z0-9_-] as '-'
// (aws profile and rclone remote names).
std::string ProfileName(const std::string& user) {
  std::string name = user.empty() ? "tessera" : "tessera-" + user;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') c = '-';
  }
  return name;
}

Status ClientConfig(ClusterSession& s, const S3CommandArgs& a, std::ostream& out) {
  auto client = ParseS3Client(a.client);
  if (!client.ok()) return client.status();
  S3ClientEndpoint endpoint;
  for (const cluster::ProcessEntry& r : s.table().OfRole(ProcessRole::kRouter)) {
    const uint32_t port = a.https ? r.s3_tls_port : r.s3_port;
    if (port == 0) continue;
    endpoint.host = a.https ? "localhost" : r.host;
    endpoint.port = port;
    break;
  }
  if (endpoint.port == 0) {
    return Status::NotFound(std::string("no router of the layout has an S3 ") +
                            (a.https ? "HTTPS" : "HTTP") + " port");
  }
  endpoint.https = a.https;
  if (a.https) {
    std::error_code ec;
    endpoint.ca_bundle = std::filesystem::absolute(cluster::HttpsCaPath(s.dir()), ec).string();
    if (ec || !std::filesystem::exists(endpoint.ca_bundle, ec)) {
      return Status::NotFound("no CA bundle " + endpoint.ca_bundle +
                              " (`tessera cluster up` creates it)");
    }
  }
  const std::string& region = s.layout().router_settings().s3_region();
  endpoint.region = region.empty() ? std::string(knobs::kRouterS3Region.default_value) : region;
  auto keys = ClientKeys(s, a.user);
  if (!keys.ok()) return keys.status();
  std::tie(endpoint.access_key, endpoint.secret_key) = *keys;
  endpoint.profile = ProfileName(a.user);
  out << RenderS3ClientConfig(*client, endpoint);
  return Status::Ok();
}

}  // namespace

Status SortLayoutValues(S3CommandArgs& a) {
  for (std::string& value : a.layout_values) {
    const bool key_layout = value == "ordered" || value.starts_with("hashed");
    std::string& slot = key_layout ? a.key_layout : a.layout_path;
    if (!slot.empty()) {
      return Status::InvalidArgument(key_layout ? "two key layouts given" : "two cluster layouts given");
    }
    slot = std::move(value);
  }
  a.layout_values.clear();
  if (a.key_layout.empty()) return Status::Ok();
  auto parsed = s3::model::ParseKeyLayout(a.key_layout);
  return parsed.ok() ? Status::Ok() : parsed.status();
}

static int RunSorted(const S3CommandArgs& a, std::ostream& out, std::ostream& err);

int RunS3Command(const S3CommandArgs& a, std::ostream& out, std::ostream& err) {
  spdlog::set_level(spdlog::level::err);
  if (a.action == "user-create" && a.access_key.empty() != a.secret_key.empty()) {
    err << "tessera s3 user create: give both --access-key and --secret-key, or neither\n";
    return 2;
  }
  S3CommandArgs sorted = a;
  if (Status st = SortLayoutValues(sorted); !st.ok()) {
    err << "tessera s3: " << st.ToString() << "\n";
    return 2;
  }
  return RunSorted(sorted, out, err);
}

static int RunSorted(const S3CommandArgs& a, std::ostream& out, std::ostream& err) {
  auto session = ClusterSession::Open(a.layout_path, a.dir);
  if (!session.ok()) {
    err << "tessera s3: " << session.status().ToString() << "\n";
    return 2;
  }
  Status st = Status::InvalidArgument("unknown action " + a.action);
  if (a.action == "user-create") st = UserCreate(**session, a, out);
  else if (a.action == "user-list") st = UserList(**session, out);
  else if (a.action == "bucket-create") st = BucketCreate(**session, a, out);
  else if (a.action == "buckets") st = Buckets(**session, a, out);
  else if (a.action == "bucket-set-capacity") st = BucketSetCapacity(**session, a, out);
  else if (a.action == "usage") st = Usage(**session, a, out);
  else if (a.action == "client-config") st = ClientConfig(**session, a, out);
  else if (a.action == "check") {
    st = RunS3Check(**session, a.json, out);
    if (st.code() == StatusCode::kConflict) return 1;  // the report says why
  }
  if (!st.ok()) {
    err << "tessera s3: " << st.ToString() << "\n";
    return st.code() == StatusCode::kInvalidArgument && a.action == "bucket-set-capacity" ? 2 : 3;
  }
  return 0;
}

}  // namespace tessera::cli
