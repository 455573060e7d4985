#include "s3/front/charge_rest.h"

#include <cstdint>
#include <string>

#include "gac/gac_client.h"
#include "s3/front/s3_charge.h"
#include "s3/front/s3_front.h"

namespace tessera::s3::front {

void ChargeRest(const S3Call& call, const admission::S3Charge& rest) {
  gac::GacClient* gac = call.front.gac();
  if (gac == nullptr || call.bucket.empty()) return;
  const std::string name = admission::BucketGacName(call.bucket);
  if (rest.read_units > 0) gac->ChargeMore(name, admission::CapacityKind::kRead, rest.read_units);
  if (rest.write_units > 0) gac->ChargeMore(name, admission::CapacityKind::kWrite, rest.write_units);
}

void ChargeListed(const S3Call& call, const ListPage& page) {
  uint64_t bytes = 0;
  for (const pb::S3ListItem& item : page.items) {
    bytes += item.has_entry() ? item.entry().key().size() : item.common_prefix().size();
  }
  ChargeRest(call, S3RestAfterListing(bytes));
}

}  // namespace tessera::s3::front
