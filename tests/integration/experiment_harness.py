"""What the `tessera experiment` integration tests share: the binary, the
catalogue, running the CLI and reading result files."""

import json
import os
import subprocess

TESSERA_BIN = os.environ.get("TESSERA_BIN", "tessera")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CATALOGUE = os.path.join(REPO, "experiments")


def run(*args, timeout=60):
    """`tessera ARGS...`, output as text."""
    return subprocess.run([TESSERA_BIN, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, errors="replace", timeout=timeout)


def run_catalogue(name, out, seed=7, timeout=300):
    """`tessera experiment run experiments/NAME.textproto --out OUT --seed SEED`."""
    return run("experiment", "run", os.path.join(CATALOGUE, name + ".textproto"),
               "--out", out, "--seed", str(seed), timeout=timeout)


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]
