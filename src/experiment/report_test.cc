// Goal: the HTML report reads a result directory back (invocation times
// paired with completions, a refused compare-and-set told apart from a
// failure, the layout's processes), counts operations per
// second by kind, shades every fault window, prefixes the ids of inlined
// SVGs, escapes every text of the run, shows a notice in place of a plot
// that was not drawn, and `WriteReport` writes DIR/report.html.
#include "experiment/report_html.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "experiment/experiment_test_util.h"
#include "experiment/gnuplot.h"
#include "experiment/history.h"
#include "experiment/report_data.h"
#include "experiment/report_plots.h"
#include "experiment/result_files.h"

namespace tessera::experiment {
namespace {

namespace fs = std::filesystem;

OpRecord Op(uint64_t index, OpKind kind, uint64_t t0_ms, uint64_t latency_ms, OpOutcome outcome) {
  OpRecord op;
  op.index = index;
  op.kind = kind;
  op.strong = index % 2 == 0;
  op.key = "k";
  op.value = "v" + std::to_string(index);
  op.invoke_us = t0_ms * 1000;
  op.complete_us = (t0_ms + latency_ms) * 1000;
  op.outcome = outcome;
  return op;
}

pb::ExperimentVerdict Verdict(bool passed) {
  pb::ExperimentVerdict v;
  v.set_experiment("az-partition");
  v.set_seed(7);
  v.set_duration_s(4);
  v.set_passed(passed);
  v.set_ops(6);
  v.set_ok(4);
  v.set_failed(1);
  v.set_unknown(1);
  v.set_command("tessera experiment run experiments/az-partition.textproto --seed 7 --duration 4");
  pb::CheckerResult* c = v.add_checkers();
  c->set_name("linearizable");
  c->set_passed(passed);
  c->set_summary("key <k> & friends");
  pb::AvailabilityWindow* w = v.add_windows();
  w->set_label("partition-az az2 [1.0 s, 2.5 s)");
  w->set_start_us(1'000'000);
  w->set_end_us(2'500'000);
  w->set_ops(3);
  w->set_ok(1);
  w->set_ok_share(1.0 / 3);
  w->set_ops_after_first_s(2);
  w->set_ok_share_after_first_s(0.5);
  pb::AvailabilityWindow* calm = v.add_windows();
  calm->set_label("outside faults");
  calm->set_end_us(4'000'000);
  calm->set_latency_ms_p99(3.0);
  calm->set_steady_latency_ms_p99(2.0);
  calm->set_p99_over_steady(1.5);
  return v;
}

class ReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "tessera-report-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    const std::vector<OpRecord> ops = {
        Op(0, OpKind::kWrite, 100, 3, OpOutcome::kOk),
        Op(1, OpKind::kRead, 200, 1, OpOutcome::kOk),
        Op(2, OpKind::kRead, 1200, 900, OpOutcome::kFail),
        Op(3, OpKind::kCas, 1300, 1000, OpOutcome::kInfo),
        Op(4, OpKind::kWrite, 2100, 50, OpOutcome::kOk),
        Op(5, OpKind::kWrite, 3100, 2, OpOutcome::kOk),
        Op(6, OpKind::kCas, 3500, 2, OpOutcome::kOk),  // refused: cas_succeeded false
    };
    ASSERT_TRUE(WriteHistory(ops, dir_ + "/" + kHistoryFile).ok());
    ASSERT_TRUE(WriteVerdict(Verdict(true), dir_).ok());
    std::ofstream(dir_ + "/layout.textproto") << kTestLayoutText;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string dir_;
};

TEST_F(ReportTest, LoadsOperationsWithTheirInvocationTimesAndTheLayout) {
  auto in = LoadReportInput(dir_);
  ASSERT_TRUE(in.ok()) << in.status().ToString();
  ASSERT_EQ(in->ops.size(), 7u);
  EXPECT_EQ(in->ops.back().outcome, "refused");
  EXPECT_TRUE(in->notes.empty());
  const ReportOp* failed_read = nullptr;
  for (const ReportOp& op : in->ops) {
    if (op.outcome == "fail") failed_read = &op;
  }
  ASSERT_NE(failed_read, nullptr);
  EXPECT_EQ(failed_read->label, "read-strong");
  EXPECT_EQ(failed_read->invoke_us, 1'200'000u);
  EXPECT_EQ(failed_read->complete_us, 2'100'000u);
  ASSERT_EQ(in->processes.size(), 7u);
  EXPECT_EQ(in->processes[0].name, "az1-n1");
  EXPECT_EQ(in->processes[0].role, "node");
  EXPECT_EQ(in->processes[0].az, "az1");
}

TEST_F(ReportTest, MissingVerdictIsNotFoundAndMissingHistoryIsANote) {
  EXPECT_EQ(LoadReportInput(dir_ + "/nothing").status().code(), StatusCode::kNotFound);
  fs::remove(dir_ + "/" + kHistoryFile);
  fs::remove(dir_ + "/layout.textproto");
  auto in = LoadReportInput(dir_);
  ASSERT_TRUE(in.ok());
  EXPECT_TRUE(in->ops.empty());
  EXPECT_EQ(in->notes.size(), 2u);
}

TEST_F(ReportTest, PerSecondCountsByKindAndOutcome) {
  auto in = LoadReportInput(dir_);
  ASSERT_TRUE(in.ok());
  const auto ok = PerSecond(in->ops, 4, {"ok"});
  ASSERT_EQ(ok.count("write"), 1u);
  EXPECT_EQ(ok.at("write"), (std::vector<uint64_t>{1, 0, 1, 1}));
  const auto answered = PerSecond(in->ops, 4, {"ok", "refused"});
  EXPECT_EQ(answered.at("cas"), (std::vector<uint64_t>{0, 0, 0, 1}));
  const auto errors = PerSecond(in->ops, 4, {"fail", "info"});
  EXPECT_EQ(errors.at("read-strong"), (std::vector<uint64_t>{0, 0, 1, 0}));
  EXPECT_EQ(errors.at("cas"), (std::vector<uint64_t>{0, 0, 1, 0}));
  EXPECT_EQ(errors.at("write"), (std::vector<uint64_t>{0, 0, 0, 0}));
}

TEST_F(ReportTest, PlotSpecsShadeFaultsAndSplitOutcomes) {
  auto in = LoadReportInput(dir_);
  ASSERT_TRUE(in.ok());
  const std::vector<PlotSpec> specs = PlotSpecs(*in);
  ASSERT_EQ(specs.size(), 3u);
  const PlotSpec& latency = specs[0];
  EXPECT_EQ(latency.id, "latency");
  EXPECT_NE(latency.script.find("set terminal svg"), std::string::npos);
  EXPECT_NE(latency.script.find("set logscale y"), std::string::npos);
  EXPECT_NE(latency.script.find("rect from 1.000, graph 0 to 2.500, graph 1"), std::string::npos);
  EXPECT_EQ(latency.data_files.at("latency-ok.dat"),
            "0.100000 3.000\n0.200000 1.000\n2.100000 50.000\n3.100000 2.000\n");
  EXPECT_EQ(latency.data_files.at("latency-fail.dat"), "1.200000 900.000\n");
  EXPECT_EQ(latency.data_files.at("latency-info.dat"), "1.300000 1000.000\n");
  EXPECT_EQ(latency.data_files.at("latency-refused.dat"), "3.500000 2.000\n");
  EXPECT_NE(latency.script.find("'unknown (1)'"), std::string::npos);
  EXPECT_EQ(specs[1].id, "throughput");
  EXPECT_NE(specs[1].data_files.at("throughput.dat").find("0.5 "), std::string::npos);
  EXPECT_EQ(specs[2].id, "errors");
}

TEST(ReportSvgTest, InlineSvgDropsThePrologAndPrefixesIds) {
  const std::string svg =
      "<?xml version=\"1.0\"?>\n<!DOCTYPE svg>\n<svg width=\"9\"><defs><path id='gpPt0'/></defs>"
      "<g id=\"gnuplot_canvas\"><use xlink:href='#gpPt0'/><rect clip-path=\"url(#c1)\"/></g></svg>";
  const std::string out = InlineSvg(svg, "latency");
  EXPECT_EQ(out.rfind("<svg", 0), 0u);
  EXPECT_NE(out.find("id='latency-gpPt0'"), std::string::npos);
  EXPECT_NE(out.find("id=\"latency-gnuplot_canvas\""), std::string::npos);
  EXPECT_NE(out.find("href='#latency-gpPt0'"), std::string::npos);
  EXPECT_NE(out.find("url(#latency-c1)"), std::string::npos);
  EXPECT_EQ(InlineSvg("no svg here", "x"), "");
}

TEST_F(ReportTest, PageHasTheVerdictTablesLayoutAndNoticesEscaped) {
  auto in = LoadReportInput(dir_);
  ASSERT_TRUE(in.ok());
  const std::vector<DrawnPlot> plots = {
      {"latency", "Latency", "<svg id=\"latency-x\"><path d=\"M0,0 L1,1\"/></svg>", ""},
      {"throughput", "Throughput", "", "gnuplot is not installed (Debian package gnuplot-nox)"},
  };
  const std::string html = RenderReport(*in, plots);
  EXPECT_NE(html.find("<h1 id=\"verdict\" class=\"pass\">PASS az-partition seed 7, 4 s: 6 ops "
                      "(4 ok, 1 failed, 1 unknown)</h1>"),
            std::string::npos);
  EXPECT_NE(html.find("tessera experiment run experiments/az-partition.textproto --seed 7"),
            std::string::npos);
  EXPECT_NE(html.find("key &lt;k&gt; &amp; friends"), std::string::npos);
  EXPECT_NE(html.find("partition-az az2 [1.0 s, 2.5 s)"), std::string::npos);
  EXPECT_NE(html.find("33.3 %</td><td class=\"num\">50.0 %</td>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"num\">1.50x</td>"), std::string::npos);
  EXPECT_NE(html.find("<svg id=\"latency-x\">"), std::string::npos);
  EXPECT_NE(html.find("<p class=\"notice\">Plot not drawn: gnuplot is not installed"),
            std::string::npos);
  EXPECT_NE(html.find("<td>meta-az2</td><td>meta</td><td>az2</td>"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org"));  // only SVG namespaces
}

TEST_F(ReportTest, FailedVerdictIsMarkedFailed) {
  ASSERT_TRUE(WriteVerdict(Verdict(false), dir_).ok());
  auto in = LoadReportInput(dir_);
  ASSERT_TRUE(in.ok());
  const std::string html = RenderReport(*in, {});
  EXPECT_NE(html.find("<h1 id=\"verdict\" class=\"fail\">FAIL az-partition"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"fail\">FAIL</td>"), std::string::npos);
}

TEST(ReplayCommandTest, ShellWordQuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(ShellWord("experiments/az-partition.textproto"), "experiments/az-partition.textproto");
  EXPECT_EQ(ShellWord("my runs/it's.textproto"), "'my runs/it'\\''s.textproto'");
  EXPECT_EQ(ShellWord(""), "''");
}

TEST(GnuplotTest, MissingGnuplotIsNotFoundAndNamesThePackage) {
  const char* saved = std::getenv("PATH");
  const std::string path = saved ? saved : "";
  ::setenv("PATH", "/nonexistent-tessera-test-dir", 1);
  auto found = FindGnuplot();
  auto ran = RunGnuplot("plot x", fs::temp_directory_path().string(), std::chrono::seconds(5));
  ::setenv("PATH", path.c_str(), 1);
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.status().code(), StatusCode::kNotFound);
  EXPECT_NE(found.status().message().find("gnuplot-nox"), std::string::npos);
  EXPECT_EQ(ran.status().code(), StatusCode::kNotFound);
}

TEST_F(ReportTest, GnuplotErrorsComeBackWithItsMessage) {
  if (!FindGnuplot().ok()) GTEST_SKIP() << "gnuplot is not installed (Debian package gnuplot-nox)";
  auto bad = RunGnuplot("set terminal svg\nplot 'absent.dat' using 1:2\n", dir_,
                        std::chrono::seconds(30));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kIOError);
  EXPECT_NE(bad.status().message().find("absent.dat"), std::string::npos) << bad.status().message();
  auto good = RunGnuplot("set terminal svg\nplot x\n", dir_, std::chrono::seconds(30));
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  EXPECT_NE(good->find("<svg"), std::string::npos);
}

TEST_F(ReportTest, WriteReportWritesThePageWithPlotsOrANotice) {
  auto written = WriteReport(dir_);
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  EXPECT_EQ(written->path, dir_ + "/report.html");
  EXPECT_EQ(written->plots, 3u);
  std::ifstream in(written->path);
  std::stringstream html;
  html << in.rdbuf();
  EXPECT_NE(html.str().find("PASS az-partition seed 7"), std::string::npos);
  if (FindGnuplot().ok()) {
    EXPECT_EQ(written->plots_drawn, 3u) << written->notice;
    EXPECT_NE(html.str().find("<svg"), std::string::npos);
    EXPECT_NE(html.str().find("id=\"latency-gnuplot_canvas\""), std::string::npos);
    EXPECT_EQ(html.str().find("<?xml"), std::string::npos);
  } else {
    EXPECT_EQ(written->plots_drawn, 0u);
    EXPECT_NE(html.str().find("gnuplot-nox"), std::string::npos);
  }
}

}  // namespace
}  // namespace tessera::experiment
