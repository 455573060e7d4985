#!/usr/bin/env python3
"""`tessera experiment report DIR` writes report.html, and headless Chromium
renders it: the verdict, the tables and every gnuplot plot.

The result directory is made here (a 20 s run of KV register operations
with a fault window from 6 s to 13 s, a checker failing inside it), so the
test needs no cluster.

Goal: prove that
  1. `experiment report DIR` exits with the verdict's code (1: the fixture
     run failed) and writes DIR/report.html, self-contained (no script, no
     external link);
  2. Chromium's DOM of the page holds the one-line verdict, the replay
     command, the availability row of the fault window and the layout's
     processes with their AZs;
  3. each of the three plots (latency, throughput, errors) is an inline SVG
     whose plotted series are path elements with data and a bounding box of
     real size once laid out, and the fault window is shaded;
  4. without gnuplot on PATH the report still renders, with a notice in
     place of each plot, and the command's exit code is still the verdict's.
Skipped, with a message, when Chromium (Debian package chromium) or gnuplot
(gnuplot-nox) is not installed.
"""

import json
import os
import random
import re
import shutil
import subprocess
import tempfile
import unittest

TESSERA_BIN = os.environ.get("TESSERA_BIN", "tessera")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
GNUPLOT = shutil.which("gnuplot")

DURATION_S = 20
FAULT = (6_000_000, 13_000_000)
COMMAND = "tessera experiment run experiments/az-partition.textproto --seed 4242 --duration 20"

# Injected into a copy of the page only: measures what Chromium laid out and
# writes it into the DOM that --dump-dom prints.
MEASURE = """
<script>
window.addEventListener('load', () => {
  const out = {};
  for (const fig of document.querySelectorAll('figure.plot')) {
    const svg = fig.querySelector('svg');
    const entry = {svg: !!svg, paths: 0, plotted: 0, series_w: 0, series_h: 0, shaded: 0};
    if (svg) {
      const box = svg.getBoundingClientRect();
      entry.width = box.width; entry.height = box.height;
      for (const p of svg.querySelectorAll('path')) {
        if ((p.getAttribute('d') || '').length > 20) entry.paths++;
      }
      // gnuplot puts each plotted series in <g id="gnuplot_plot_N">.
      for (const g of svg.querySelectorAll('g[id*="gnuplot_plot_"]')) {
        const b = g.getBBox();
        if (b.width > 0 || b.height > 0) entry.plotted++;
        entry.series_w = Math.max(entry.series_w, b.width);
        entry.series_h = Math.max(entry.series_h, b.height);
      }
      // The fault window: a wide polygon of the shading colour (#f4c7c3).
      for (const r of svg.querySelectorAll('polygon')) {
        const fill = (r.getAttribute('fill') || '').replace(/\s/g, '');
        if (fill === 'rgb(244,199,195)' && r.getBBox().width > 100) entry.shaded++;
      }
    }
    out[fig.id] = entry;
  }
  const pre = document.createElement('pre');
  pre.id = 'render-check';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>
"""


def jline(record):
    return json.dumps(record, separators=(",", ":")) + "\n"


def make_result_dir(path):
    """A run's result files: history.jsonl, faults.jsonl, verdict.json, layout."""
    os.makedirs(path)
    rng = random.Random(4242)
    lines = []
    index = 0
    ok = failed = unknown = 0
    for t_ms in range(0, DURATION_S * 1000, 20):  # 50 operations/s
        t_us = t_ms * 1000
        op = rng.choice(["read", "read", "write", "cas"])
        consistency = rng.choice(["strong", "eventual"]) if op == "read" else ""
        in_fault = FAULT[0] <= t_us < FAULT[1]
        latency_us = int(rng.lognormvariate(7, 0.6))  # about a millisecond
        outcome = "ok"
        if in_fault and rng.random() < 0.3:
            outcome, latency_us = ("info", 1_000_000) if op != "read" else ("fail", 800_000)
        ok += outcome == "ok"
        failed += outcome == "fail"
        unknown += outcome == "info"
        base = {"process": index % 4, "op": op, "consistency": consistency, "key": "k0",
                "value": f"w0-c0-{index}", "index": str(index)}
        lines.append((t_us, 0, jline({**base, "type": "invoke", "time_us": str(t_us)})))
        lines.append((t_us + latency_us, 1,
                      jline({**base, "type": outcome, "time_us": str(t_us + latency_us),
                             "error": "" if outcome == "ok" else "Timeout: no answer"})))
        index += 1
    with open(os.path.join(path, "history.jsonl"), "w") as f:
        f.writelines(line for _, _, line in sorted(lines))
    with open(os.path.join(path, "faults.jsonl"), "w") as f:
        f.write(jline({"event": "start", "kind": "partition-az", "targets": ["az2"],
                       "time_us": str(FAULT[0])}))
        f.write(jline({"event": "end", "kind": "partition-az", "targets": ["az2"],
                       "time_us": str(FAULT[1])}))
        f.write(jline({"event": "heal", "time_us": str(DURATION_S * 1_000_000)}))
    verdict = {
        "experiment": "az-partition", "seed": "4242", "duration_s": DURATION_S, "passed": False,
        "command": COMMAND,
        "checkers": [
            {"name": "linearizable", "passed": False,
             "summary": "key k0: strong read of <w0-c0-17> & no write wrote it"},
            {"name": "availability", "passed": True, "summary": "..."},
        ],
        "windows": [
            {"label": "partition-az az2 [6.0 s, 13.0 s)", "start_us": str(FAULT[0]),
             "end_us": str(FAULT[1]), "ops": "350", "ok": "245", "ok_share": 0.7,
             "longest_write_gap_ms": "2100", "latency_ms_p50": 1.2, "latency_ms_p99": 812.5},
            {"label": "outside faults", "start_us": "0", "end_us": str(DURATION_S * 1_000_000),
             "ops": "650", "ok": "650", "ok_share": 1.0, "longest_write_gap_ms": "100",
             "latency_ms_p50": 1.1, "latency_ms_p99": 3.4},
        ],
        "ops": str(index), "ok": str(ok), "failed": str(failed), "unknown": str(unknown),
    }
    with open(os.path.join(path, "verdict.json"), "w") as f:
        json.dump(verdict, f)
    shutil.copy(os.path.join(REPO, "cluster", "local.textproto"),
                os.path.join(path, "layout.textproto"))
    return f"FAIL az-partition seed 4242, {DURATION_S} s: {index} ops ({ok} ok, {failed} failed, " \
           f"{unknown} unknown)"


def report(result_dir, env=None):
    return subprocess.run([TESSERA_BIN, "experiment", "report", result_dir],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          errors="replace", timeout=120, env=env)


def chromium(page, profile, *args):
    return subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--disable-dev-shm-usage", f"--user-data-dir={profile}", *args,
         "file://" + page],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace",
        timeout=120)


class ExperimentReportTest(unittest.TestCase):
    def setUp(self):
        if not CHROMIUM:
            self.skipTest("chromium is not installed (Debian package chromium; "
                          "scripts/install-deps.sh installs it)")
        self.root = tempfile.mkdtemp(prefix="tessera-report-test-")
        self.addCleanup(shutil.rmtree, self.root, True)
        self.dir = os.path.join(self.root, "result")
        self.verdict_line = make_result_dir(self.dir)

    def dump_dom(self, page):
        profile = tempfile.mkdtemp(prefix="chromium-", dir=self.root)
        p = chromium(page, profile, "--virtual-time-budget=5000", "--dump-dom")
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        self.assertIn("</html>", p.stdout, p.stderr[-2000:])
        return p.stdout

    def test_chromium_renders_the_verdict_tables_and_plots(self):
        if not GNUPLOT:
            self.skipTest("gnuplot is not installed (Debian package gnuplot-nox)")
        p = report(self.dir)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)  # the fixture run failed
        page = os.path.join(self.dir, "report.html")
        self.assertIn("report: " + page, p.stdout)
        self.assertNotIn("not drawn", p.stdout)
        with open(page) as f:
            html = f.read()
        self.assertNotIn("<script", html)
        self.assertIsNone(re.search(r"""(src|href)=["'](https?:|//)""", html))

        measured = os.path.join(self.root, "measured.html")
        with open(measured, "w") as f:
            f.write(html.replace("</body>", MEASURE + "</body>"))
        dom = self.dump_dom(measured)
        self.assertIn(self.verdict_line, dom)
        self.assertIn('id="verdict" class="fail"', dom)
        self.assertIn(COMMAND, dom)
        self.assertIn("partition-az az2 [6.0 s, 13.0 s)", dom)
        self.assertIn("&lt;w0-c0-17&gt; &amp; no write", dom)
        self.assertIn("<td>az3-n2</td><td>node</td><td>az3</td>", dom)

        check = re.search(r'<pre id="render-check">(.*?)</pre>', dom, re.S)
        self.assertIsNotNone(check, dom[-3000:])
        measures = json.loads(check.group(1).replace("&quot;", '"'))
        self.assertEqual(sorted(measures), ["plot-errors", "plot-latency", "plot-throughput"])
        for plot, m in measures.items():
            self.assertTrue(m["svg"], (plot, m))
            self.assertGreater(m["width"], 300, (plot, m))
            self.assertGreater(m["height"], 150, (plot, m))
            self.assertGreaterEqual(m["plotted"], 2, (plot, m))  # series drawn with extent
            self.assertGreater(m["series_w"], 100, (plot, m))
            self.assertGreater(m["paths"], 2, (plot, m))
            self.assertGreaterEqual(m["shaded"], 1, (plot, m))  # the fault window

        profile = tempfile.mkdtemp(prefix="chromium-", dir=self.root)
        shot = os.path.join(self.root, "report.png")
        s = chromium(page, profile, "--window-size=1200,2400", f"--screenshot={shot}")
        self.assertEqual(s.returncode, 0, s.stderr[-2000:])
        self.assertGreater(os.path.getsize(shot), 20_000)  # a blank page is a few KB

    def test_without_gnuplot_the_report_renders_with_a_notice(self):
        empty_path = os.path.join(self.root, "no-gnuplot-bin")
        os.makedirs(empty_path)
        p = report(self.dir, env={"PATH": empty_path, "HOME": self.root})
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("3 of 3 plots not drawn: gnuplot is not installed", p.stdout)
        dom = self.dump_dom(os.path.join(self.dir, "report.html"))
        self.assertIn(self.verdict_line, dom)
        self.assertEqual(dom.count('<p class="notice">Plot not drawn: gnuplot is not installed'),
                         3, dom)
        self.assertNotIn("<svg", dom)


if __name__ == "__main__":
    unittest.main(verbosity=2)
