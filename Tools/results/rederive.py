#!/usr/bin/env python3
"""The raw logs behind the project's published real-run figures, kept in results/NAME.tar.xz, and the
figures derived from them again.

A real run takes an hour of a quiet machine and cannot be repeated to the millisecond; its session and
origin logs can be kept. Each archive holds one run's raw logs (session logs, origin logs, the run's
manifest, the trace files it replayed); `check` unpacks it into a temporary folder and derives the
published figure from it with the same committed step that published it, then compares, byte for byte
(a docs block, a report embedded in a doc, or a results key). Derived files (reports, simulated logs)
are not archived: they are what `check` derives.

  python3 Tools/results/rederive.py list
  python3 Tools/results/rederive.py check [NAME ...] [--bin .build/debug]
  python3 Tools/results/rederive.py unpack NAME DIR
  python3 Tools/results/rederive.py pack NAME FOLDER       (a maintainer archiving a new run)

results/README.md says which run each archive is, where its figures are published and how it was
collected.
"""

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
RESULTS = os.path.join(REPO, "results")

def abr_run(what: str) -> dict:
    """A real ABR evaluation run (Tools/abr/evaluate.py run): its folder's raw members, its block in docs/abr.md."""
    return dict(kind="abr", members=["manifest.json", "ladder", "sessions", "traces"], doc="docs/abr.md", what=what)


# Each published run: what its archive holds (paths in the run's folder), and where its figures are published.
RUNS = {
    "abr-real": abr_run("the first rule and the default rule (its 10 s buffer reserve) against GStreamer, 12 traces in real time"),
    "abr-real-predictor": abr_run("the first rule's predictor on and off against GStreamer, 12 traces in real time"),
    "abr-real-predictor-mpc": abr_run("the default rule's predictor on and off against GStreamer, 12 traces in real time"),
    "abr-real-cap-release": abr_run("the default rule with the startup cap's release against GStreamer, 12 traces in real time"),
    "abr-real-predictor-release": abr_run("the default rule's predictor on and off with the startup cap's release, against GStreamer, 12 traces in real time"),
    "fleet-workers": dict(
        kind="fleet", members=["manifest.json"] + [f"round-{k}" for k in range(1, 7)], doc="docs/scale.md",
        what="one hlsplay --sessions worker against two, 6 rounds of demux-only fleet runs"),
    "characterization-grid": dict(
        kind="grid", members=["s1", "s2"], doc="docs/characterization.md",
        what="the characterization grid (162 sessions) and its scenarios, as two shards"),
    "held-out-third-round-rerun": dict(
        kind="vsim", members=["logs", "manifest.jsonl", "run.log", "runs", "traces"],
        results="Tools/train/results-v2.json", key="virtualSimVsRealStartGateRerun",
        spec="Tools/train/specs/held-out-third-round.json",
        # The same sessions' controller-on half scored as a later held-out set (heldout_round.py report).
        also=["heldout"], heldOutKey="heldOutThirdRound",
        what="the third on/off round's 192 real sessions, compared with hlsplay simulate and scored as a "
             "later held-out set"),
}


def archive_path(name: str) -> str:
    return os.path.join(RESULTS, name + ".tar.xz")


def _normalized(info: tarfile.TarInfo) -> tarfile.TarInfo:
    # The same files give the same archive: no owner, no time.
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mtime = 0
    return info


def pack(name: str, folder: str) -> None:
    run = RUNS[name]
    missing = [m for m in run["members"] if not os.path.exists(os.path.join(folder, m))]
    if missing:
        raise SystemExit(f"pack {name}: {folder} has no {', '.join(missing)}")
    os.makedirs(RESULTS, exist_ok=True)
    with tarfile.open(archive_path(name), mode="w:xz", preset=9) as tar:
        for member in run["members"]:
            top = os.path.join(folder, member)
            paths = [top] if os.path.isfile(top) else sorted(
                os.path.join(d, f) for d, _, files in os.walk(top) for f in files)
            for path in paths:
                arcname = os.path.join(name, os.path.relpath(path, folder))
                tar.add(path, arcname=arcname, recursive=False, filter=_normalized)
    print(f"{archive_path(name)}: {os.path.getsize(archive_path(name)) / 1e6:.1f} MB")


def unpack(name: str, into: str) -> str:
    path = archive_path(name)
    if not os.path.exists(path):
        raise SystemExit(f"{path}: no such archive (rederive.py list)")
    with tarfile.open(path, "r:xz") as tar:
        members = tar.getmembers()
        # Only files and folders under NAME/ (Debian 12's Python 3.11.2 has no extraction filters to say so).
        for m in members:
            parts = m.name.split("/")
            if not (m.isfile() or m.isdir()) or m.name.startswith("/") or ".." in parts or parts[0] != name:
                raise SystemExit(f"{path}: refusing member {m.name!r}")
        tar.extractall(into, members=members)
    return os.path.join(into, name)


def run_tool(args: list) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-B"] + args, cwd=REPO, capture_output=True, text=True)


def check_abr(name: str, folder: str, _bin: str) -> str | None:
    """The docs block Tools/abr/evaluate.py writes from the run's folder."""
    out = run_tool([os.path.join(REPO, "Tools/abr/evaluate.py"), "check", folder, os.path.join(REPO, RUNS[name]["doc"])])
    return None if out.returncode == 0 else (out.stderr.strip() or out.stdout.strip())


def check_grid(name: str, folder: str, _bin: str) -> str | None:
    """The report `grid.py merge` writes from the shards, as the doc embeds it (below its title line)."""
    merged = os.path.join(folder, "merged")
    out = run_tool([os.path.join(REPO, "Tools/characterize/grid.py"), "merge", os.path.join(folder, "s1"),
                    os.path.join(folder, "s2"), "--out", merged])
    if out.returncode != 0:
        return f"grid.py merge failed: {out.stderr.strip()}"
    with open(os.path.join(merged, "report.md")) as fh:
        report = fh.read().splitlines()[2:]
    with open(os.path.join(REPO, RUNS[name]["doc"])) as fh:
        doc = fh.read().splitlines()
    if not report:
        return "the merged report is empty"
    if report[0] not in doc:
        return f"{RUNS[name]['doc']} does not hold the report's first line: {report[0]!r}"
    at = doc.index(report[0])
    for i, line in enumerate(report):
        if at + i >= len(doc) or doc[at + i] != line:
            shown = doc[at + i] if at + i < len(doc) else "(end of file)"
            return f"{RUNS[name]['doc']} line {at + i + 1} differs from the derived report: {shown!r} against {line!r}"
    return None


def compare_key(published_file: str, derived_file: str, key: str, ignore=()) -> str | None:
    """None when the results key derived into `derived_file` is the one published in `published_file` (a path
    in the repository), fields in `ignore` aside; else which of its fields differ."""
    with open(derived_file) as fh:
        derived = json.load(fh)[key]
    with open(os.path.join(REPO, published_file)) as fh:
        published = json.load(fh)[key]
    for d in (derived, published):
        for field in ignore:
            d.pop(field, None)
    if derived == published:
        return None
    differing = sorted(k for k in set(derived) | set(published) if derived.get(k) != published.get(k))
    return f"{published_file} key {key} differs from the derived one in: {', '.join(differing)}"


def check_vsim(name: str, folder: str, bin_dir: str) -> str | None:
    """The results key `vsim.py compare` writes: each real session's log against hlsplay simulate on its trace
    (the simulated side is derived again with the binary in `bin_dir`)."""
    sys.path.insert(0, os.path.join(REPO, "Tools", "train"))
    import collect
    import heldout_round
    run = RUNS[name]
    # The manifest names the trace files where the run wrote them; they are in the archive.
    manifest = os.path.join(folder, "manifest.jsonl")
    with open(manifest) as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    for r in rows:
        r["traceFile"] = os.path.join(folder, "traces", os.path.basename(r["traceFile"]))
    with open(manifest, "w") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows)
    # The ladders are the collection's recipe over Samples/build (not archived: 670 MB of media made again).
    _, coll = heldout_round.load_spec(os.path.join(REPO, run["spec"]))
    for ladder in sorted({r.get("ladder") or "ladder" for r in rows}):
        collect.make_ladder(folder, coll, low_rung=ladder == "ladder-low")
    results = os.path.join(folder, "results.json")
    with open(results, "w") as fh:
        json.dump({}, fh)
    out = run_tool([os.path.join(REPO, "Tools/train/vsim.py"), "compare", "--data", folder, "--bin", bin_dir,
                    "--phases", "onoff", "--results", results, "--results-key", run["key"]])
    if out.returncode != 0:
        return f"vsim.py compare failed: {out.stderr.strip()[-2000:]}"
    # dataDirectory: where the logs were unpacked
    return compare_key(run["results"], results, run["key"], ignore=("dataDirectory",))


def check_fleet(name: str, folder: str, _bin: str) -> str | None:
    """The docs block Tools/bench/fleet_rounds.py writes from the rounds' fleet.json files."""
    out = run_tool([os.path.join(REPO, "Tools/bench/fleet_rounds.py"), "check", folder,
                    os.path.join(REPO, RUNS[name]["doc"])])
    return None if out.returncode == 0 else (out.stderr.strip() or out.stdout.strip())


def check_heldout(name: str, folder: str, _bin: str) -> str | None:
    """The results key `heldout_round.py report` writes from the run's controller-on session logs."""
    run = RUNS[name]
    results = os.path.join(folder, "results.json")
    with open(results, "w") as fh:
        json.dump({}, fh)
    out = run_tool([os.path.join(REPO, "Tools/train/heldout_round.py"), "report", os.path.join(REPO, run["spec"]),
                    "--data", folder, "--results", results])
    if out.returncode != 0:
        return f"heldout_round.py report failed: {out.stderr.strip()[-2000:]}"
    return compare_key(run["results"], results, run["heldOutKey"])


CHECKS = {"abr": check_abr, "grid": check_grid, "vsim": check_vsim, "fleet": check_fleet, "heldout": check_heldout}


def check(names: list, bin_dir: str) -> int:
    failed = 0
    for name in names or sorted(RUNS):
        if name not in RUNS:
            raise SystemExit(f"unknown run {name!r} (rederive.py list)")
        problem = None
        # Each check on its own unpacked copy (a check may rewrite what it reads, as check_vsim does).
        for kind in [RUNS[name]["kind"]] + RUNS[name].get("also", []):
            with tempfile.TemporaryDirectory(prefix=f"hlsplay-rederive-{name}.") as tmp:
                problem = problem or CHECKS[kind](name, unpack(name, tmp), bin_dir)
        print(f"{name}: {'derived again, identical' if problem is None else 'DIFFERS: ' + problem}")
        failed += problem is not None
    return 1 if failed else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list")
    c = sub.add_parser("check", help="derive each run's published figures again from its archive and compare")
    c.add_argument("names", nargs="*")
    c.add_argument("--bin", default=os.path.join(REPO, ".build", "debug"),
                   help="hlsplay for the runs whose check simulates (default .build/debug)")
    u = sub.add_parser("unpack")
    u.add_argument("name")
    u.add_argument("into")
    p = sub.add_parser("pack")
    p.add_argument("name")
    p.add_argument("folder")
    a = ap.parse_args(argv)
    if a.cmd == "list":
        for name, run in sorted(RUNS.items()):
            where = run.get("doc") or f"{run['results']} ({run['key']})"
            size = os.path.getsize(archive_path(name)) / 1e6 if os.path.exists(archive_path(name)) else 0
            print(f"{name}: {run['what']}; published in {where}; {size:.1f} MB")
        return 0
    if a.cmd == "unpack":
        print(unpack(a.name, a.into))
        return 0
    if a.cmd == "pack":
        pack(a.name, a.folder)
        return 0
    return check(a.names, a.bin)


if __name__ == "__main__":
    sys.exit(main())
