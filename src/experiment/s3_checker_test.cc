// Goal: the S3 object checker passes correct histories (unknown outcomes,
// a listing racing a DELETE) and fails known-bad ones: a lost write, a
// stale read, a failed write that became visible, a resurrected object, a
// ghost key, a duplicate or missing key in a listing, a corrupt body, a
// lost copy, a failed copy made visible, a copy whose body is not its
// source's, a lost version, a version read after its delete by id, a
// version reading another write; and the bodies of the workload verify byte for byte.
#include "experiment/s3_checker.h"

#include <gtest/gtest.h>

#include "experiment/s3_object_body.h"

namespace tessera::experiment {
namespace {

OpRecord Op(OpKind kind, uint32_t p, const std::string& key, uint64_t t0, uint64_t t1,
            OpOutcome outcome = OpOutcome::kOk) {
  static uint64_t index = 0;
  OpRecord op;
  op.index = ++index;
  op.process = p;
  op.kind = kind;
  op.key = key;
  op.invoke_us = t0;
  op.complete_us = t1;
  op.outcome = outcome;
  return op;
}

OpRecord Put(uint32_t p, const std::string& key, const std::string& id, uint64_t t0, uint64_t t1,
             OpOutcome outcome = OpOutcome::kOk) {
  OpRecord op = Op(OpKind::kS3Put, p, key, t0, t1, outcome);
  op.value = id;
  return op;
}

OpRecord Get(uint32_t p, const std::string& key, std::optional<std::string> id, uint64_t t0,
             uint64_t t1, OpKind kind = OpKind::kS3Get) {
  OpRecord op = Op(kind, p, key, t0, t1);
  op.read = std::move(id);
  return op;
}

OpRecord Delete(uint32_t p, const std::string& key, uint64_t t0, uint64_t t1,
                OpOutcome outcome = OpOutcome::kOk) {
  return Op(OpKind::kS3Delete, p, key, t0, t1, outcome);
}

OpRecord List(uint32_t p, const std::string& prefix, std::vector<std::string> listed, uint64_t t0,
              uint64_t t1) {
  OpRecord op = Op(OpKind::kS3List, p, prefix, t0, t1);
  op.listed = std::move(listed);
  return op;
}

pb::CheckerResult Check(const std::vector<OpRecord>& ops) { return CheckS3Objects(ops, 0); }

TEST(S3Checker, CorrectHistoriesPass) {
  const std::vector<OpRecord> ops = {
      Get(1, "p0/a", std::nullopt, 0, 5),
      Put(1, "p0/a", "w1", 10, 20),
      Put(2, "p0/b", "w2", 12, 22),
      Get(3, "p0/a", "w1", 25, 30, OpKind::kS3Head),
      List(3, "p0/", {"p0/a", "p0/b"}, 31, 35),
      Put(1, "p0/a", "w3", 40, 50, OpOutcome::kInfo),   // took effect at 60
      Put(2, "p0/b", "w4", 41, 51, OpOutcome::kFail),   // certainly did not
      Get(3, "p0/a", "w1", 52, 55),
      Get(3, "p0/a", "w3", 60, 65),
      Get(3, "p0/b", "w2", 60, 65),
      Delete(2, "p0/b", 70, 80),
      // A list concurrent with the DELETE may or may not show the key.
      List(1, "p0/", {"p0/a"}, 72, 78),
      List(1, "p0/", {"p0/a", "p0/b"}, 73, 79),
      Get(3, "p0/b", std::nullopt, 85, 90),
      Delete(2, "p0/a", 91, 95, OpOutcome::kInfo),      // never took effect
      List(1, "p0/", {"p0/a"}, 96, 99),
      List(1, "p1/", {}, 96, 99),
      Get(3, "p0/a", "w3", 100, 105),
  };
  const pb::CheckerResult r = Check(ops);
  EXPECT_TRUE(r.passed()) << r.summary();
  EXPECT_EQ(r.name(), "s3");
}

TEST(S3Checker, LostWriteFails) {
  const pb::CheckerResult r =
      Check({Put(1, "k", "w1", 0, 10), Put(1, "k", "w2", 20, 30), Get(2, "k", "w1", 40, 50)});
  EXPECT_FALSE(r.passed());
  EXPECT_NE(r.summary().find("NOT linearizable: object k"), std::string::npos) << r.summary();
}

TEST(S3Checker, MultipartPutsAreWritesToo) {
  OpRecord multipart = Put(1, "p/k", "w2", 20, 30);
  multipart.kind = OpKind::kS3MultipartPut;
  EXPECT_TRUE(Check({Put(1, "p/k", "w1", 0, 10), multipart, Get(2, "p/k", "w2", 40, 50),
                     List(2, "p/", {"p/k"}, 40, 50)})
                  .passed());
  // Lost: the multipart write's object reads as the older single PUT's.
  EXPECT_FALSE(Check({Put(1, "p/k", "w1", 0, 10), multipart, Get(2, "p/k", "w1", 40, 50)}).passed());
}

TEST(S3Checker, AcknowledgedPutReadAsAbsentFails) {
  const pb::CheckerResult r = Check({Put(1, "k", "w1", 0, 10), Get(2, "k", std::nullopt, 20, 30)});
  EXPECT_FALSE(r.passed()) << r.summary();
}

TEST(S3Checker, StaleReadFails) {
  // Two reads in order see the new and then the old value.
  const pb::CheckerResult r =
      Check({Put(1, "k", "w1", 0, 10), Put(1, "k", "w2", 20, 60), Get(2, "k", "w2", 30, 35),
             Get(3, "k", "w1", 40, 45, OpKind::kS3Head)});
  EXPECT_FALSE(r.passed()) << r.summary();
}

TEST(S3Checker, DeletedObjectReadAfterTheDeleteFails) {
  const pb::CheckerResult r =
      Check({Put(1, "k", "w1", 0, 10), Delete(1, "k", 20, 30), Get(2, "k", "w1", 40, 50)});
  EXPECT_FALSE(r.passed()) << r.summary();
}

TEST(S3Checker, AWriteThatFailedDefinitelyIsNeverVisible) {
  const pb::CheckerResult r =
      Check({Put(1, "k", "w1", 0, 10, OpOutcome::kFail), Get(2, "k", "w1", 40, 50)});
  EXPECT_FALSE(r.passed()) << r.summary();
}

TEST(S3Checker, GhostKeyInAListingFails) {
  const pb::CheckerResult never_written =
      Check({Put(1, "p/a", "w1", 0, 10), List(2, "p/", {"p/a", "p/zz"}, 20, 30)});
  EXPECT_FALSE(never_written.passed());
  EXPECT_NE(never_written.summary().find("listed p/zz, which no PUT wrote (ghost)"),
            std::string::npos)
      << never_written.summary();
  // Written only by a PUT that failed definitely, or outside the prefix.
  EXPECT_FALSE(Check({Put(1, "p/a", "w1", 0, 10, OpOutcome::kFail), List(2, "p/", {"p/a"}, 20, 30)})
                   .passed());
  EXPECT_FALSE(Check({Put(1, "q/a", "w1", 0, 10), List(2, "p/", {"q/a"}, 20, 30)}).passed());
  // Written only by a PUT invoked after the list ended.
  EXPECT_FALSE(Check({List(2, "p/", {"p/a"}, 0, 5), Put(1, "p/a", "w1", 10, 20)}).passed());
}

TEST(S3Checker, DuplicateKeyInAListingFails) {
  const pb::CheckerResult r =
      Check({Put(1, "p/a", "w1", 0, 10), List(2, "p/", {"p/a", "p/a"}, 20, 30)});
  EXPECT_FALSE(r.passed());
  EXPECT_NE(r.summary().find("twice"), std::string::npos) << r.summary();
}

TEST(S3Checker, MissingKeyInAListingFails) {
  const pb::CheckerResult r = Check({Put(1, "p/a", "w1", 0, 10), Put(1, "p/b", "w2", 0, 10),
                                     List(2, "p/", {"p/b"}, 20, 30)});
  EXPECT_FALSE(r.passed());
  EXPECT_NE(r.summary().find("missed p/a"), std::string::npos) << r.summary();
  // Deleted, then written again: the last acknowledged write is the PUT.
  EXPECT_FALSE(Check({Put(1, "p/a", "w1", 0, 10), Delete(1, "p/a", 11, 12),
                      Put(1, "p/a", "w2", 13, 14), List(2, "p/", {}, 20, 30)})
                   .passed());
  // An unknown DELETE invoked before the list ended excuses the absence.
  EXPECT_TRUE(Check({Put(1, "p/a", "w1", 0, 10), Delete(1, "p/a", 11, 12, OpOutcome::kInfo),
                     List(2, "p/", {}, 20, 30)})
                  .passed());
}

TEST(S3Checker, CorruptBodyFails) {
  OpRecord get = Get(2, "k", "w1", 20, 30);
  get.anomaly = "write w1: byte 700 of 9000 differs";
  const pb::CheckerResult r = Check({Put(1, "k", "w1", 0, 10), get});
  EXPECT_FALSE(r.passed());
  EXPECT_NE(r.summary().find("corruption: get"), std::string::npos) << r.summary();
}

TEST(S3Checker, AHistoryWithoutAnAcknowledgedPutFails) {
  EXPECT_FALSE(Check({}).passed());
  EXPECT_FALSE(Check({Put(1, "k", "w1", 0, 10, OpOutcome::kInfo), Get(2, "k", std::nullopt, 20, 30)})
                   .passed());
}

TEST(S3Checker, OtherWorkloadsAreLeftOut) {
  OpRecord reg;
  reg.kind = OpKind::kRead;
  reg.key = "k";
  reg.read = "never-written";
  reg.outcome = OpOutcome::kOk;
  EXPECT_TRUE(Check({Put(1, "k", "w1", 0, 10), reg}).passed());
}

TEST(S3ObjectBody, BodiesVerifyAndEveryChangeIsCaught) {
  for (uint64_t max : {uint64_t{100}, uint64_t{70'000}}) {
    const std::string body = ObjectBody("p0/k3", "w0-c1-7", 1, max);
    EXPECT_EQ(body.size(), ObjectBodySize("p0/k3", "w0-c1-7", 1, max));
    EXPECT_GE(body.size(), body.find('\n') + 1);
    auto id = VerifyObjectBody("p0/k3", body);
    ASSERT_TRUE(id.ok()) << id.status().ToString();
    EXPECT_EQ(*id, "w0-c1-7");
  }
  const std::string body = ObjectBody("p0/k3", "w0-c1-7", 20'000, 20'000);
  EXPECT_EQ(body.size(), 20'000u);
  // The same (key, write id) always gives the same body; another id another one.
  EXPECT_EQ(body, ObjectBody("p0/k3", "w0-c1-7", 20'000, 20'000));
  EXPECT_NE(body.substr(100), ObjectBody("p0/k3", "w0-c1-8", 20'000, 20'000).substr(100));

  std::string flipped = body;
  flipped[12'345] ^= 1;
  auto bad = VerifyObjectBody("p0/k3", flipped);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("byte 12345"), std::string::npos) << bad.status().ToString();
  EXPECT_FALSE(VerifyObjectBody("p0/k3", body.substr(0, 19'999)).ok());           // truncated
  EXPECT_FALSE(VerifyObjectBody("p0/k4", body).ok());                             // another key's
  EXPECT_FALSE(VerifyObjectBody("p0/k3", "").ok());
  EXPECT_FALSE(VerifyObjectBody("p0/k3", "garbage\n").ok());
  EXPECT_FALSE(VerifyObjectBody("p0/k3", std::string(20'000, 'x')).ok());
}

OpRecord Copy(uint32_t p, const std::string& key, const std::string& id, uint64_t t0, uint64_t t1,
              OpOutcome outcome = OpOutcome::kOk) {
  OpRecord op = Op(OpKind::kS3Copy, p, key, t0, t1, outcome);
  op.value = id;
  return op;
}

TEST(S3Checker, CopiesAreWritesOfTheirSourcesWriteId) {
  const std::vector<OpRecord> ops = {
      Put(1, "p0/a", "w1", 0, 10),
      Copy(2, "p0/a", "w0-c2-1s", 20, 30),
      Get(1, "p0/a", "w0-c2-1s", 40, 50),
  };
  const pb::CheckerResult r = Check(ops);
  EXPECT_TRUE(r.passed()) << r.summary();
  EXPECT_NE(r.summary().find("1 puts, 1 copies"), std::string::npos) << r.summary();
}

TEST(S3Checker, ALostCopyFails) {
  // The copy was acknowledged, then a read still sees the object before it.
  const std::vector<OpRecord> ops = {
      Put(1, "p0/a", "w1", 0, 10),
      Copy(2, "p0/a", "w0-c2-1s", 20, 30),
      Get(1, "p0/a", "w1", 40, 50),
  };
  const pb::CheckerResult r = Check(ops);
  EXPECT_FALSE(r.passed());
  EXPECT_NE(r.summary().find("NOT linearizable"), std::string::npos) << r.summary();
}

TEST(S3Checker, AFailedCopyThatBecameVisibleFails) {
  const std::vector<OpRecord> ops = {
      Put(1, "p0/a", "w1", 0, 10),
      Copy(2, "p0/a", "w0-c2-1s", 20, 30, OpOutcome::kFail),
      Get(1, "p0/a", "w0-c2-1s", 40, 50),
  };
  EXPECT_FALSE(Check(ops).passed());
}

TEST(S3Checker, ACopyWhoseBodyDiffersIsCorruption) {
  // What the workload reads after a copy: the body must be the source's.
  const std::string sources = "run/w0-src/";
  const std::string copy_id = std::string("w0-c2-1") + kCopySourceMark;
  ASSERT_TRUE(IsCopySourceWriteId(copy_id));
  EXPECT_FALSE(IsCopySourceWriteId("w0-c2-1"));
  EXPECT_EQ(BodyKeyOf("run/w0-p0/k01", copy_id, sources), "run/w0-src/" + copy_id);
  EXPECT_EQ(BodyKeyOf("run/w0-p0/k01", "w0-c2-2", sources), "run/w0-p0/k01");
  const std::string source_body =
      ObjectBody(CopySourceKey(sources, copy_id), copy_id, 100, 200);
  auto good = VerifyObjectBody(BodyKeyOf("run/w0-p0/k01", copy_id, sources), source_body);
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  EXPECT_EQ(*good, copy_id);
  // A copy that delivered the destination's old body, or another source's.
  const std::string old_body = ObjectBody("run/w0-p0/k01", "w0-c1-4", 100, 200);
  EXPECT_FALSE(VerifyObjectBody(BodyKeyOf("run/w0-p0/k01", copy_id, sources), old_body).ok());
  const std::string other_id = std::string("w0-c3-9") + kCopySourceMark;
  const std::string other = ObjectBody(CopySourceKey(sources, other_id), other_id, 100, 200);
  EXPECT_FALSE(VerifyObjectBody(BodyKeyOf("run/w0-p0/k01", copy_id, sources), other).ok());
  // Recorded as the read's anomaly, it fails the checker.
  OpRecord read = Get(1, "run/w0-p0/k01", copy_id, 40, 50);
  read.anomaly = "the body does not verify";
  const pb::CheckerResult r = Check({Copy(2, "run/w0-p0/k01", copy_id, 20, 30), read});
  EXPECT_FALSE(r.passed());
  EXPECT_NE(r.summary().find("corruption"), std::string::npos) << r.summary();
}

OpRecord Version(OpKind kind, uint32_t p, const std::string& key, const std::string& version,
                 uint64_t t0, uint64_t t1, OpOutcome outcome = OpOutcome::kOk) {
  OpRecord op = Op(kind, p, key, t0, t1, outcome);
  op.version_id = version;
  return op;
}
OpRecord VersionPut(const std::string& key, const std::string& version, const std::string& id,
                    uint64_t t0, uint64_t t1) {
  OpRecord op = Version(OpKind::kS3VersionPut, 1, key, version, t0, t1);
  op.value = id;
  return op;
}
OpRecord VersionGet(const std::string& key, const std::string& version,
                    std::optional<std::string> id, uint64_t t0, uint64_t t1) {
  OpRecord op = Version(OpKind::kS3VersionGet, 2, key, version, t0, t1);
  op.read = std::move(id);
  return op;
}

// Versions ride along a history with one acknowledged plain PUT.
pb::CheckerResult CheckVersions(std::vector<OpRecord> ops) {
  ops.push_back(Put(9, "p0/z", "w-plain", 0, 1));
  return Check(ops);
}

TEST(S3Checker, VersionsReadBackByIdUntilDeleted) {
  const pb::CheckerResult r = CheckVersions({
      VersionPut("p0/a", "v1", "w1", 10, 20),
      VersionPut("p0/a", "v2", "w2", 30, 40),  // a newer version leaves v1 readable by id
      VersionGet("p0/a", "v1", "w1", 50, 60),
      Version(OpKind::kS3VersionDelete, 3, "p0/a", "v1", 70, 80),
      VersionGet("p0/a", "v1", std::nullopt, 90, 100),
      // A DELETE of unknown outcome, racing: either answer is fine.
      Version(OpKind::kS3VersionDelete, 3, "p0/a", "v2", 110, 130, OpOutcome::kInfo),
      VersionGet("p0/a", "v2", "w2", 115, 120),
      VersionGet("p0/a", "v2", std::nullopt, 140, 150),
  });
  EXPECT_TRUE(r.passed()) << r.summary();
  EXPECT_NE(r.summary().find("versions: 2 puts, 4 gets by id, 1 deletes by id"), std::string::npos)
      << r.summary();
}

TEST(S3Checker, ALostVersionFails) {
  const pb::CheckerResult r = CheckVersions({
      VersionPut("p0/a", "v1", "w1", 10, 20),
      VersionPut("p0/a", "v2", "w2", 30, 40),
      VersionGet("p0/a", "v1", std::nullopt, 50, 60),
  });
  EXPECT_FALSE(r.passed());
  EXPECT_NE(r.summary().find("lost version: version v1 of p0/a"), std::string::npos) << r.summary();
}

TEST(S3Checker, AVersionReadableAfterItsDeleteByIdFails) {
  const pb::CheckerResult r = CheckVersions({
      VersionPut("p0/a", "v1", "w1", 10, 20),
      Version(OpKind::kS3VersionDelete, 3, "p0/a", "v1", 30, 40),
      VersionGet("p0/a", "v1", "w1", 50, 60),
  });
  EXPECT_FALSE(r.passed());
  EXPECT_NE(r.summary().find("deleted version readable"), std::string::npos) << r.summary();
}

TEST(S3Checker, AVersionReadingAnotherWriteFails) {
  const pb::CheckerResult r = CheckVersions({
      VersionPut("p0/a", "v1", "w1", 10, 20),
      VersionPut("p0/a", "v2", "w2", 30, 40),
      VersionGet("p0/a", "v1", "w2", 50, 60),
  });
  EXPECT_FALSE(r.passed());
  EXPECT_NE(r.summary().find("wrong version"), std::string::npos) << r.summary();
}

}  // namespace
}  // namespace tessera::experiment
