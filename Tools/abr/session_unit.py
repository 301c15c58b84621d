"""One session of an ABR evaluation as a unit of Tools/lib/distribute.py (Tools/abr/evaluate.py runs
them; docs/cluster.md). A module of its own, importing nothing from the repository and computing no path
from where it lies: Dask workers get this file by upload (which imports it again, on a LocalCluster in the
client's own process too), so it must mean the same wherever it is loaded from."""
import os
import subprocess
import time

# How long one simulated session may take in wall time before it is interrupted (a session of a few
# minutes of media simulates in seconds; this bounds a wedged one on a loaded machine).
SIMULATE_TIMEOUT_SECONDS = 900
# The name of a session's log in the folder its unit runs in; the runner moves it to
# logs/ALGORITHM/TRACE.repN.jsonl.
UNIT_LOG = "session.jsonl"


def simulate_unit(unit, out_dir):
    """`hlsplay simulate LADDER --trace T --abr A --duration D --log OUT_DIR/session.jsonl --json` (niced
    when unit["nice"]), with the binary, ladder and trace at the absolute paths the unit names (on a
    cluster worker: the same paths there). The record's command names the log by its place in the
    results folder (unit["log"]), whichever process or machine ran it, so a manifest does not depend on
    where its sessions ran."""
    log = os.path.join(out_dir, UNIT_LOG)
    cmd = [unit["binary"], "simulate", unit["ladder"], "--trace", unit["trace"], "--abr", unit["algorithm"],
           "--duration", str(unit["durationSeconds"]), "--log", log, "--json"] + list(unit["extra"])
    started = time.monotonic()
    try:
        p = subprocess.run((["nice", "-n", "19"] if unit["nice"] else []) + cmd, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=SIMULATE_TIMEOUT_SECONDS)
        status, err = p.returncode, p.stderr
    except subprocess.TimeoutExpired:
        status, err = None, f"timed out after {SIMULATE_TIMEOUT_SECONDS} s"
    cmd[cmd.index(log)] = unit["log"]
    return dict(command=cmd, exitStatus=status, wallSeconds=round(time.monotonic() - started, 3),
                stderr=(err or "").strip()[-400:] or None)
