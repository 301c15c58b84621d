#!/usr/bin/env python3
"""Fleet load: one large demux-only load test spread over workers as `hlsplay --sessions N` runs (docs/scale.md).

A load of TOTAL sessions is cut into `--workers` (or --tasks) runs of about TOTAL / W sessions each; every
run is a sessions-bench.py run (its run_once: a fresh unshaped hls-origin --live on its own loopback port
and one `hlsplay --sessions N --no-decode`, measured from /proc and the client's rusage), run by
Tools/lib/distribute.py on a local process pool (default) or on the Dask cluster at --scheduler, each into
OUT/runs/NNN (run.json). The runs are then merged into OUT/fleet.json and one table: per run and in total,
sessions, stalls, client CPU seconds per media second per session, client cores, memory per session;
fleet.json also records the commit, the binaries' sha256, the load average and UTC time at start and end.

  Tools/bench/fleet.py --total 200 --workers 2 --media-seconds 30 --ramp 10 --out /tmp/fleet
  /opt/hlsplay/python/bin/python3 Tools/bench/fleet.py --total 10000 --tasks 40 --scheduler tcp://HOST:8786

Each run plays its sessions against an origin on its own machine (loopback), as sessions-bench.py does:
it measures the client, not a CDN. Release binaries (swift build -c release).
"""
import argparse
import importlib
import importlib.util
import json
import os
import pathlib
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import distribute  # noqa: E402
import hlsplay_tools  # noqa: E402


def _sessions_bench():
    """Tools/bench/sessions-bench.py as a module (its name has a hyphen)."""
    mod = sys.modules.get("sessions_bench")
    if mod is None:
        spec = importlib.util.spec_from_file_location("sessions_bench", os.path.join(HERE, "sessions-bench.py"))
        mod = importlib.util.module_from_spec(spec)
        sys.modules["sessions_bench"] = mod
        spec.loader.exec_module(mod)
    return mod


def utc_now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def split_sessions(total, tasks):
    """total sessions into `tasks` runs as equal as can be, the larger first: split_sessions(10, 3) == [4, 3, 3]."""
    if tasks < 1 or total < tasks:
        raise ValueError(f"cannot split {total} sessions into {tasks} runs of at least one session")
    base, extra = divmod(total, tasks)
    return [base + (1 if k < extra else 0) for k in range(tasks)]


def run_unit(unit, out_dir):
    """One `hlsplay --sessions N --no-decode` run (sessions-bench.py's run_once) into out_dir/run.json."""
    bench = _sessions_bench()
    args = argparse.Namespace(root=pathlib.Path(unit["root"]), window=unit["window"], ramp=unit["ramp"],
                              variant=unit["variant"], media_seconds=unit["mediaSeconds"], keep_logs=unit["keepLogs"])
    bindir = pathlib.Path(unit["bin"])
    work = pathlib.Path(out_dir)
    result = bench.run_once(args, "demux", unit["sessions"], bindir / "hls-origin", bindir / "hlsplay", work)
    result.update({"run": unit["run"], "host": os.uname().nodename, "cores": os.cpu_count()})
    with open(work / "run.json", "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
    return result


def merge_runs(runs):
    """The fleet's totals from its runs' results: sums, and per-session cost over all of them."""
    played = sum(r.get("playedSeconds") or 0 for r in runs)
    cpu = sum(r.get("clientCPUSeconds") or 0 for r in runs)
    sessions = sum(r["sessions"] for r in runs)
    reasons = {}
    for r in runs:
        for k, v in (r.get("exitReasons") or {}).items():
            reasons[k] = reasons.get(k, 0) + v
    return {
        "runs": len(runs), "sessions": sessions, "exitReasons": reasons,
        "stalls": sum(r.get("stalls") or 0 for r in runs),
        "sessionsWithStalls": sum(r.get("sessionsWithStalls") or 0 for r in runs),
        "playedSeconds": round(played, 1), "clientCPUSeconds": round(cpu, 2),
        "cpuSecondsPerMediaSecondPerSession": round(cpu / played, 5) if played else None,
        "rssPerSessionBytes": (sum(r.get("peakRSSBytes") or 0 for r in runs) // sessions) if sessions else None,
        "clientCores": round(sum(r.get("clientCores") or 0 for r in runs), 3),
        "originCPUSeconds": round(sum(r.get("originCPUSeconds") or 0 for r in runs), 2),
        "hosts": sorted({r.get("host") for r in runs}),
    }


def row(name, r):
    mb = 1 << 20
    cost = r.get("cpuSecondsPerMediaSecondPerSession")
    rss = r.get("rssPerSessionBytes")
    return (f"| {name} | {r['sessions']} | {r.get('stalls')} | {cost * 1000:.2f} ms | " if cost is not None else
            f"| {name} | {r['sessions']} | {r.get('stalls')} | — | ") + \
        (f"{r.get('clientCores')} | {rss / mb:.1f} MB | {r.get('loadAverageMean', '—')} |" if rss else "— | — | — |")


def main(argv=None):
    p = argparse.ArgumentParser(prog="fleet.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--total", type=int, required=True, help="sessions in the whole load test")
    p.add_argument("--workers", type=int, default=None, help="local pool size (default: one per CPU)")
    p.add_argument("--tasks", type=int, default=None, help="runs to cut the load into (default: --workers)")
    p.add_argument("--scheduler", default=None, help="Dask scheduler address, e.g. tcp://10.0.0.5:8786")
    p.add_argument("--media-seconds", type=float, default=60)
    p.add_argument("--ramp", type=float, default=20)
    p.add_argument("--variant", type=int, default=3)
    p.add_argument("--window", type=int, default=6)
    p.add_argument("--root", default=os.path.join(hlsplay_tools.REPO, "Samples", "build", "ladder-2s"))
    p.add_argument("--bin", default=os.path.join(hlsplay_tools.REPO, ".build", "release"))
    p.add_argument("--keep-logs", action="store_true")
    p.add_argument("--out", default="/tmp/hlsplay-fleet")
    a = p.parse_args(argv)
    if a.scheduler and not a.tasks:
        p.error("--scheduler needs --tasks: how many runs to cut the load into (one per worker)")
    workers = a.workers or distribute.local_workers()
    tasks = a.tasks or workers
    sizes = split_sessions(a.total, tasks)
    units = [{"run": k + 1, "sessions": n, "mediaSeconds": a.media_seconds, "ramp": a.ramp, "variant": a.variant,
              "window": a.window, "root": os.path.abspath(a.root), "bin": os.path.abspath(a.bin), "keepLogs": a.keep_logs}
             for k, n in enumerate(sizes)]
    # run_unit by module name (never __main__): pool processes and Dask workers resolve it by reference.
    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    this = importlib.import_module("fleet")
    lib = os.path.dirname(os.path.abspath(distribute.__file__))
    upload = [os.path.join(lib, "hlsplay_tools.py"), os.path.join(lib, "distribute.py"),
              os.path.join(HERE, "sessions-bench.py"), os.path.abspath(this.__file__)]
    provenance = hlsplay_tools.run_provenance({"hlsplay": os.path.join(a.bin, "hlsplay"),
                                               "hls-origin": os.path.join(a.bin, "hls-origin")})
    started, started_at, load_at_start = time.time(), utc_now(), list(os.getloadavg())
    results = distribute.run_units(units, this.run_unit, lambda k, u: os.path.join(a.out, "runs", f"{k + 1:03d}"),
                                   scheduler=a.scheduler, workers=workers, upload=upload)
    runs = [r.record for r in results]
    total = merge_runs(runs)
    total["wallSeconds"] = round(time.time() - started, 1)
    with open(os.path.join(a.out, "fleet.json"), "w") as f:
        json.dump({"units": units, "runs": runs, "total": total, "provenance": provenance,
                   "startedAt": started_at, "endedAt": utc_now(), "loadAverageAtStart": load_at_start,
                   "loadAverageAtEnd": list(os.getloadavg()),
                   "backend": {"kind": "dask", "scheduler": a.scheduler} if a.scheduler else
                   {"kind": "local", "workers": workers}}, f, indent=1, sort_keys=True)
    where = f"the cluster at {a.scheduler}" if a.scheduler else f"{workers} local processes"
    print(f"{a.total} demux-only sessions as {tasks} runs on {where}, {a.media_seconds:g} s of live media each, "
          f"ramp {a.ramp:g} s, variant {a.variant}\n")
    print("| run | sessions | stalls | client CPU per media s per session | client cores | RSS per session | load |")
    print("|---|---|---|---|---|---|---|")
    for r in runs:
        print(row(f"{r['run']} ({r['host']})", r))
    print(row("total", total))
    print(f"\nexit reasons {total['exitReasons']}; wall {total['wallSeconds']} s; {a.out}/fleet.json")
    return 0 if total["stalls"] == 0 and set(total["exitReasons"]) == {"durationReached"} else 1


if __name__ == "__main__":
    sys.exit(main())
