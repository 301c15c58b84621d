#!/usr/bin/env python3
"""One worker against two, in rounds: what a second `hlsplay --sessions` process on the machine costs per
session (docs/scale.md, "Fleet load").

    python3 Tools/bench/fleet_rounds.py run --rounds 6 --per-worker 100 --out DIR    # about 10 minutes
    python3 Tools/bench/fleet_rounds.py report DIR                   # the docs block, from DIR's fleet.json files
    python3 Tools/bench/fleet_rounds.py docs DIR docs/scale.md       # paste it between the block's markers
    python3 Tools/bench/fleet_rounds.py check DIR docs/scale.md      # fail if the doc's block is not DIR's

A round is two fleet.py runs on this machine, one after the other: one worker playing PER sessions and two
workers playing PER each (2 × PER), in the order 1, 2 in odd rounds and 2, 1 in even ones, so that a drift
of the machine's load over the run falls on both sides alike. Each run goes to DIR/round-K/wW (fleet.json
and runs/NNN/run.json: CPU from the clients' rusage, memory and load from /proc; fleet.py). The comparison
pairs the two runs of a round: client CPU seconds per media second per session, two workers minus one,
with the Wilcoxon signed-rank and sign tests and the BCa interval of the mean difference
(Tools/train/stats.py). DIR/manifest.json holds the arguments, the commit, the binaries' sha256 and the
load average and UTC time at start and end.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, os.path.join(HERE, "..", "train"))
sys.path.insert(0, HERE)
import hlsplay_tools  # noqa: E402
import stats  # noqa: E402

TOOL = "Tools/bench/fleet_rounds.py"
BLOCK = "fleet-workers"
WORKERS = (1, 2)  # the two sides: one `--sessions` process, two


def run_dir(root, k, workers):
    return os.path.join(root, f"round-{k}", f"w{workers}")


def run(a):
    import fleet
    os.makedirs(a.out, exist_ok=True)
    manifest = dict(rounds=a.rounds, perWorker=a.per_worker, mediaSeconds=a.media_seconds, ramp=a.ramp,
                    variant=a.variant, bin=os.path.abspath(a.bin), startedAt=fleet.utc_now(),
                    loadAverageAtStart=list(os.getloadavg()),
                    provenance=hlsplay_tools.run_provenance({"hlsplay": os.path.join(a.bin, "hlsplay"),
                                                             "hls-origin": os.path.join(a.bin, "hls-origin")}))
    for k in range(1, a.rounds + 1):
        for w in (WORKERS if k % 2 else tuple(reversed(WORKERS))):
            print(f"round {k}: {w} worker(s), {w * a.per_worker} sessions", file=sys.stderr, flush=True)
            fleet.main(["--total", str(w * a.per_worker), "--workers", str(w), "--media-seconds", str(a.media_seconds),
                        "--ramp", str(a.ramp), "--variant", str(a.variant), "--bin", a.bin,
                        "--out", run_dir(a.out, k, w)])
    manifest.update(endedAt=fleet.utc_now(), loadAverageAtEnd=list(os.getloadavg()))
    with open(os.path.join(a.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    print(report(a.out))


def load(root):
    with open(os.path.join(root, "manifest.json")) as f:
        manifest = json.load(f)
    fleets = {}
    for k in range(1, manifest["rounds"] + 1):
        for w in WORKERS:
            with open(os.path.join(run_dir(root, k, w), "fleet.json")) as f:
                fleets[(k, w)] = json.load(f)
    return manifest, fleets


def fmt(x, digits):
    return "—" if x is None else f"{x:.{digits}f}".replace("-", "−")


def report(root):
    """The docs block: every run, then the paired comparison of the cost per session."""
    manifest, fleets = load(root)
    prov = manifest["provenance"]
    loads = [f["loadAverageAtStart"][0] for f in fleets.values()]
    out = [f"{manifest['rounds']} rounds of one worker ({manifest['perWorker']} sessions) and two "
           f"({manifest['perWorker']} + {manifest['perWorker']}), demux-only, {manifest['mediaSeconds']:g} s of live "
           f"media a session, ramp {manifest['ramp']:g} s, rung {manifest['variant']}; commit "
           f"{(prov['commit'] or 'unknown')[:7]}{'' if prov['worktreeClean'] else ' (tracked files changed)'}, "
           f"hlsplay sha256 {(prov['binaries']['hlsplay']['sha256'] or 'unknown')[:12]}; "
           f"{manifest['startedAt']} to {manifest['endedAt']}; load average (1 min) at the runs' starts "
           f"{min(loads):.2f} … {max(loads):.2f}.", "",
           "| round | workers | sessions | stalls | client CPU per media s per session | client cores | "
           "RSS per session | load at start |",
           "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for (k, w), f in sorted(fleets.items()):
        t = f["total"]
        cost = t["cpuSecondsPerMediaSecondPerSession"]
        rss = t["rssPerSessionBytes"]
        out.append(f"| {k} | {w} | {t['sessions']} | {t['stalls']} | "
                   f"{'—' if cost is None else fmt(cost * 1000, 2) + ' ms'} | {fmt(t['clientCores'], 2)} | "
                   f"{'—' if rss is None else fmt(rss / (1 << 20), 1) + ' MB'} | {fmt(f['loadAverageAtStart'][0], 2)} |")
    rounds = sorted({k for k, _ in fleets})
    kept = [k for k in rounds if all(fleets[(k, w)]["total"]["cpuSecondsPerMediaSecondPerSession"] is not None
                                     for w in WORKERS)]
    ms = {w: [fleets[(k, w)]["total"]["cpuSecondsPerMediaSecondPerSession"] * 1000 for k in kept] for w in WORKERS}
    c = stats.paired_comparison(ms[2], ms[1], kept)
    ci = c["meanDifferenceCI"]
    out += ["", f"**Two workers against one**, paired by round ({len(kept)} rounds): client CPU per media second "
            f"per session {fmt(c['meanB'], 2)} ms with one worker, {fmt(c['meanA'], 2)} ms with two; mean "
            f"difference (two − one) {fmt(c['meanDifference'], 2)} ms, 95 % CI {fmt(ci['low'], 2)} … "
            f"{fmt(ci['high'], 2)} (BCa, {ci['resamples']} resamples, seed {ci['seed']}); two higher in "
            f"{c['pairsAAbove']} rounds, lower in {c['pairsABelow']}, equal in {c['pairsEqual']}; Wilcoxon "
            f"signed-rank p = {hlsplay_tools.p_text(c['wilcoxon']['pValue'])}, sign test p = {hlsplay_tools.p_text(c['signTest']['pValue'])} "
            f"(two-sided; Tools/train/stats.py)."]
    return "\n".join(out) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--rounds", type=int, default=6)
    r.add_argument("--per-worker", type=int, default=100, help="sessions each worker plays")
    r.add_argument("--media-seconds", type=float, default=30)
    r.add_argument("--ramp", type=float, default=10)
    r.add_argument("--variant", type=int, default=3)
    r.add_argument("--bin", default=os.path.join(hlsplay_tools.REPO, ".build", "release"))
    r.add_argument("--out", required=True)
    p = sub.add_parser("report")
    p.add_argument("dir")
    for name in ("docs", "check"):
        d = sub.add_parser(name)
        d.add_argument("dir")
        d.add_argument("doc")
    a = ap.parse_args(argv)
    if a.cmd == "run":
        run(a)
        return 0
    text = report(a.dir)
    if a.cmd == "report":
        print(text, end="")
        return 0
    return hlsplay_tools.write_or_check_block(a.doc, TOOL, BLOCK, text, a.cmd == "docs", a.dir,
                                              f"python3 {TOOL} docs {a.dir} {a.doc}")


if __name__ == "__main__":
    sys.exit(main())
