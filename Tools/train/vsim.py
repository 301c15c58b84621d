#!/usr/bin/env python3
"""The player's own decision code in virtual time (`hlsplay simulate`), at scale.

    python3 Tools/train/vsim.py compare [--data /tmp/hlsplay-train] [--bin .build/release] [--phases heldout,onoff]
    python3 Tools/train/vsim.py onoff   [--data ...] [--ladder DIR] [--offsets 16] [--policy FILE] [--tag NAME]
    python3 Tools/train/vsim.py run SPEC --out DIR [--work DIR] [--bin DIR] [--jobs N] [--results FILE]
    python3 Tools/train/vsim.py report DIR [--results FILE]

compare  For every real session in the manifest (collect.py) that ended with a
         summary (played to its end, or stopped by a network error), one simulated
         session on the very trace file hls-origin replayed, with the same
         predictor, model, policy constants and media duration. Prints, per
         arm and overall, stalls, time stalled, bitrate and time to first frame,
         real against simulated, the sessions with the same stall count and the
         same ending, and writes them to results-v2.json ("virtualSimVsReal").
onoff    The controller on (--predictor model) and off on the held-out traces
         (--traces train: the training traces, to tune on) at many start
         offsets: breadth the real runs cannot afford. Prints
         the totals (the same figures as onoff_report.py) and their paired
         statistics (onoff_report.compare_pairs: Wilcoxon, sign test,
         bootstrap CI, pairs keyed by trace and offset) and writes
         DATA/vsim-onoff-TAG.json (with the per-pair figures).

run      The declared form of `onoff` (Tools/train/specs/vsim-onoff-start-gate.json: the third
         round's tuning and held-out runs): every run of a virtual on/off spec into a results
         folder: raw logs (DIR/vsim-logs/onoff-TAG/ID.jsonl), the policy files, and
         DIR/manifest.json (the spec as run, commit, tree clean, the binary's sha256 and
         version, the ladders' and traces' sha256, machine, load average and UTC time at start
         and end, per session its command and exit status); then `report`.
report   Every figure from a results folder's manifest and raw logs alone (each log's summary
         line and playback start): DIR/vsim-onoff-TAG.json per run, DIR/report.json with the
         spec's result keys (virtualOnOffTuning rows, virtualOnOffHeldOut per ladder, each with
         its paired statistics); with --results, those keys into the results file
         (results_file.update, provenance naming this script, the spec and the run's commit).
         The same logs give the same bytes (Tools/tests/test_train_vsim_sample.py checks it on
         the committed sample Tools/train/sample-vsim-onoff/).

The simulated sessions' logs go to DATA/vsim-logs/ and are ordinary session
logs (reallogs.py reads them; `hlsplay report` draws them).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import collect  # noqa: E402
import recording_groups  # noqa: E402
import onoff_report  # noqa: E402
import reallogs  # noqa: E402
import results_file  # noqa: E402
sys.path.insert(0, os.path.join(REPO, "Tools", "lib"))
import hlsplay_tools  # noqa: E402
evaluate = collect.evaluate  # the declared-experiment helpers of Tools/abr/evaluate.py

DEFAULT_MODEL = os.path.join(REPO, "models", "stall-logistic-v2.json")


def simulate_command(bin_dir: str, ladder: str, trace_file: str, log: str, duration: float, predictor: str,
                     model: str | None = None, policy: str | None = None, cap_release: str | None = None) -> list:
    """cap_release: `--cap-release-buffer`'s value (seconds or "off"); None: the binary's default."""
    cmd = [os.path.join(bin_dir, "hlsplay"), "simulate", ladder, "--trace", trace_file, "--trace-format", "sabre",
           "--duration", str(duration), "--predictor", predictor, "--log", log, "--json"]
    if model and predictor == "model":
        cmd += ["--model", model]
    if policy and predictor != "off":
        cmd += ["--policy", policy]
    if cap_release is not None:
        cmd += ["--cap-release-buffer", cap_release]
    return cmd


def cap_release_of(header: dict) -> str:
    """The startup cap's release buffer a session ran with, as `--cap-release-buffer` takes it: its header's
    `configuration.startupCap.rampReleaseBufferSeconds`, or "off" when the header has none (release off, or a
    build from before the release existed)."""
    seconds = header["configuration"]["startupCap"].get("rampReleaseBufferSeconds")
    return "off" if seconds is None else repr(float(seconds))


def simulate(bin_dir: str, ladder: str, trace_file: str, log: str, duration: float, predictor: str,
             model: str | None = None, policy: str | None = None, cap_release: str | None = None) -> dict:
    """One `hlsplay simulate` run; returns its summary."""
    cmd = simulate_command(bin_dir, ladder, trace_file, log, duration, predictor, model, policy, cap_release)
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode not in (0, 69):
        raise RuntimeError(f"{' '.join(cmd)}: exit {out.returncode}: {out.stderr.strip()}")
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    summary["playbackStartSeconds"] = reallogs.playback_start(log)
    return summary


def figures(summaries: list) -> dict:
    n = len(summaries)
    bitrates = [s["averageBitrateBps"] for s in summaries if s.get("averageBitrateBps")]
    ttff = [s["timeToFirstFrameSeconds"] for s in summaries if s.get("timeToFirstFrameSeconds") is not None]
    starts = [s["playbackStartSeconds"] for s in summaries if s.get("playbackStartSeconds") is not None]
    return dict(sessions=n, stalls=sum(s["stallCount"] for s in summaries),
                sessionsWithStalls=sum(1 for s in summaries if s["stallCount"] > 0),
                stallSeconds=round(sum(s["stallSeconds"] for s in summaries), 2),
                averageBitrateBps=round(sum(bitrates) / len(bitrates)) if bitrates else None,
                meanTimeToFirstFrameSeconds=round(sum(ttff) / len(ttff), 3) if ttff else None,
                meanPlaybackStartSeconds=round(sum(starts) / len(starts), 3) if starts else None)


def _ladder_of(row: dict) -> str:
    return "ladder-low" if row["id"].endswith("-low") else "ladder"


# Exit statuses of a session that ended with a summary line: 0 (played to its end) and 69 (a network error).
ENDED_EXIT_STATUSES = (0, 69)


def ending(summary: dict) -> str:
    """How a session ended, as the comparison reads it: "error" (a fatal error, e.g. the trickle rule gave up)
    or "played" (completed, --duration reached)."""
    return "error" if summary.get("exitReason") == "error" else "played"


def compare_table(pairs: list) -> dict:
    """Per controller arm and over all: real against simulated figures of [(real manifest row, simulated
    summary)], the sessions with the same stall count and the same ending (both played to their end, or both
    stopped by an error), the mean absolute difference in seconds stalled, and the real runs' mean load."""
    by_arm = {}
    for r, s in pairs:
        by_arm.setdefault(r["controller"], []).append((r, s))
    table = {}
    for arm in sorted(by_arm) + ["all"]:
        ps = [p for a in sorted(by_arm) for p in by_arm[a]] if arm == "all" else by_arm[arm]
        table[arm] = dict(
            real=figures([r for r, _ in ps]), simulated=figures([s for _, s in ps]),
            sameStallCount=sum(1 for r, s in ps if r["stallCount"] == s["stallCount"]),
            sameEnding=sum(1 for r, s in ps if ending(r) == ending(s)),
            endedInError=dict(real=sum(1 for r, _ in ps if ending(r) == "error"), simulated=sum(1 for _, s in ps if ending(s) == "error")),
            meanAbsStallSecondsDifference=round(sum(abs(r["stallSeconds"] - s["stallSeconds"]) for r, s in ps) / len(ps), 2),
            meanRealLoadAverage1m=round(sum(r.get("loadAverage1mStart", 0) for r, _ in ps) / len(ps), 2))
    return table


def compare(args):
    spec = collect.load_spec(args.spec)
    # Sessions that ended with a summary: played to their end (exit 0) or stopped by a network error (exit 69, e.g.
    # the trickle rule's failure). Both are outcomes the simulator must reproduce, so both are compared.
    rows = [r for r in reallogs.load_manifest(args.data, set(args.phases.split(","))) if r.get("exitStatus") in ENDED_EXIT_STATUSES]
    logs = os.path.join(args.data, "vsim-logs")
    os.makedirs(logs, exist_ok=True)

    def one(r):
        # The real session's own binary decides its policy constants and its startup cap's release: ask it (its
        # header) for them, so the twin plays with the configuration the real session had.
        with open(os.path.join(args.data, r["log"])) as fh:
            header = json.loads(fh.readline())
        policy = None
        if r["predictor"] != "off":
            policy = os.path.join(logs, r["id"] + ".policy.json")
            with open(policy, "w") as fh:
                json.dump(header["configuration"]["policy"], fh)
        # The ladder the real session played (manifests before the low-rung ladder do not name it).
        ladder = os.path.join(args.data, r.get("ladder") or _ladder_of(r))
        return r, simulate(args.bin, ladder, r["traceFile"], os.path.join(logs, r["id"] + ".jsonl"),
                           spec["sessionMediaSeconds"], r["predictor"], r.get("model"), policy, cap_release_of(header))

    with cf.ThreadPoolExecutor(args.jobs) as pool:
        pairs = list(pool.map(one, rows))
    table = compare_table(pairs)
    print(f"{'arm':10} {'n':>3} {'stalls r/s':>11} {'stall s r/s':>15} {'Mbit/s r/s':>11} {'TTFF r/s':>11} "
          f"{'same stall count':>17} {'same ending':>12}")
    for arm, row in table.items():
        real, simd, n = row["real"], row["simulated"], row["real"]["sessions"]
        print(f"{arm:10} {n:3} {real['stalls']:5}/{simd['stalls']:<5} {real['stallSeconds']:7.1f}/{simd['stallSeconds']:<7.1f} "
              f"{(real['averageBitrateBps'] or 0) / 1e6:5.2f}/{(simd['averageBitrateBps'] or 0) / 1e6:<5.2f} "
              f"{real['meanTimeToFirstFrameSeconds'] or 0:5.2f}/{simd['meanTimeToFirstFrameSeconds'] or 0:<5.2f} "
              f"{row['sameStallCount']:>10}/{n} {row['sameEnding']:>8}/{n}")
    sessions = [dict(id=r["id"], trace=r["trace"], offsetSeconds=r["offsetSeconds"], controller=r["controller"],
                     real=dict(stalls=r["stallCount"], stallSeconds=round(r["stallSeconds"], 2),
                               averageBitrateBps=round(r["averageBitrateBps"] or 0),
                               timeToFirstFrameSeconds=r.get("timeToFirstFrameSeconds"), ending=ending(r)),
                     simulated=dict(stalls=s["stallCount"], stallSeconds=round(s["stallSeconds"], 2),
                                    averageBitrateBps=round(s.get("averageBitrateBps") or 0),
                                    timeToFirstFrameSeconds=s.get("timeToFirstFrameSeconds"), ending=ending(s)))
                for r, s in pairs]
    if args.results:
        results_file.update(args.results, {args.results_key: dict(
            dataDirectory=args.data, phases=args.phases, byArm=table, sessions=sessions,
            note="hlsplay simulate (the player's decision code, virtual time) on each real "
                 "session's trace file, predictor, model and policy constants")},
            f"Tools/train/vsim.py compare --phases {args.phases} --results-key {args.results_key}")


def onoff_outcome(done: list) -> dict:
    """The on/off figures of [(job {trace, offset, arm}, summary)]: each arm's totals (figures), the
    verdict on the issue's target, the per-pair figures and their paired statistics
    (onoff_report.compare_pairs: pairs keyed by trace and offset)."""
    on = [s for j, s in done if j["arm"] == "on"]
    off = [s for j, s in done if j["arm"] == "off"]
    f_on, f_off = figures(on), figures(off)
    ratio = (f_on["averageBitrateBps"] / f_off["averageBitrateBps"]) if f_off["averageBitrateBps"] else None
    verdict = dict(fewerStalls=f_on["stalls"] < f_off["stalls"], lessTimeStalled=f_on["stallSeconds"] < f_off["stallSeconds"],
                   bitrateRatioOnOverOff=round(ratio, 4) if ratio else None,
                   bitrateWithinTolerance=ratio is not None and ratio >= 0.9)
    verdict["targetMet"] = verdict["fewerStalls"] and verdict["lessTimeStalled"] and verdict["bitrateWithinTolerance"]
    arms = {}
    for j, s in done:
        arms.setdefault((j["trace"], j["offset"]), {})[j["arm"]] = s
    fields = ("stallCount", "stallSeconds", "averageBitrateBps")
    pairs = [dict(trace=t, offsetSeconds=o, on={k: a["on"].get(k) for k in fields},
                  off={k: a["off"].get(k) for k in fields}) for (t, o), a in arms.items()]
    return dict(on=f_on, off=f_off, verdict=verdict, comparison=onoff_report.compare_pairs(pairs), pairs=pairs)


def onoff(args):
    ladder = args.ladder or os.path.join(args.data, "ladder")
    logs = os.path.join(args.data, "vsim-logs", "onoff-" + args.tag)
    traces = os.path.join(args.data, "vsim-traces")
    os.makedirs(logs, exist_ok=True)
    os.makedirs(traces, exist_ok=True)
    jobs = []
    spec = collect.load_spec(args.spec)
    for ti, rel in enumerate(spec["traces"][args.traces]):
        for k in range(args.offsets):
            fraction = k / args.offsets
            path, offset, scale = collect.derive_trace(rel, fraction, traces, spec["scaling"])
            for arm in ("on", "off"):
                jobs.append(dict(trace=rel, offset=offset, file=path, arm=arm, id=f"{ti:02d}-{k:02d}-{arm}"))

    def one(j):
        s = simulate(args.bin, ladder, j["file"], os.path.join(logs, j["id"] + ".jsonl"), spec["sessionMediaSeconds"],
                     "model" if j["arm"] == "on" else "off", args.model, args.policy)
        return j, s

    with cf.ThreadPoolExecutor(args.jobs) as pool:
        done = list(pool.map(one, jobs))
    outcome = onoff_outcome(done)
    onoff_report.print_comparison("paired", outcome["comparison"])
    f_on, f_off, verdict = outcome["on"], outcome["off"], outcome["verdict"]
    comparison, pairs = outcome["comparison"], outcome["pairs"]
    out = dict(tag=args.tag, ladder=ladder, policy=args.policy, model=args.model, traces=args.traces, offsetsPerTrace=args.offsets,
               on=f_on, off=f_off, verdict=verdict, comparison=comparison, pairs=pairs)
    with open(os.path.join(args.data, f"vsim-onoff-{args.tag}.json"), "w") as fh:
        json.dump(out, fh, indent=2)
    print(json.dumps(dict(on=f_on, off=f_off, verdict=verdict), indent=1))

# ---------------------------------------------------------------- the declared on/off runs (a spec)

ONOFF_SPEC_KEYS = ("name", "collection", "model", "offsetsPerTrace", "ladders", "policies", "runs", "results")
RESULT_KINDS = ("tuningRows", "byLadder")


def load_onoff_spec(path: str) -> tuple[dict, dict]:
    """(spec, its collection spec) of a virtual on/off spec (Tools/train/specs/vsim-onoff-*.json), checked.
    The collection spec (collect.load_spec) gives the traces, their scaling, the media seconds and the
    ladder recipe; the on/off spec may name its own `traces` and `sessionMediaSeconds` (a small sample),
    and its split is then checked like a collection's."""
    with open(path) as fh:
        spec = json.load(fh)
    collect.evaluate.require_keys(path, spec, ONOFF_SPEC_KEYS)
    coll = collect.load_spec(os.path.join(REPO, spec["collection"]))
    if "traces" in spec:
        crossing = recording_groups.crossing_groups(spec["traces"].get("train", []), spec["traces"].get("heldout", []))
        if crossing - set(coll.get("allowedCrossingGroups", [])):
            raise SystemExit(f"{path}: the split puts recording groups {sorted(crossing)} on both sides")
    for name, lad in spec["ladders"].items():
        if name != ("ladder-low" if lad.get("lowRung") else "ladder"):
            raise SystemExit(f"{path}: the ladder '{name}' must be named ladder (lowRung false) or ladder-low (true)")
    tags = [r["tag"] for r in spec["runs"]]
    if len(set(tags)) != len(tags):
        raise SystemExit(f"{path}: run tags repeat: {tags}")
    for r in spec["runs"]:
        if r.get("traces") not in ("train", "heldout") or r.get("ladder") not in spec["ladders"] \
                or (r.get("policy") is not None and r["policy"] not in spec["policies"]):
            raise SystemExit(f"{path}: the run {r['tag']} needs traces train | heldout, a ladder of 'ladders' "
                             "and no policy or one of 'policies'")
    for key, res in spec["results"].items():
        if res.get("kind") not in RESULT_KINDS or res.get("traces") not in ("train", "heldout"):
            raise SystemExit(f"{path}: the result '{key}' needs a kind ({' | '.join(RESULT_KINDS)}) and traces")
    spec["specFile"] = os.path.relpath(os.path.abspath(path), REPO)
    return spec, coll


def onoff_traces(spec: dict, coll: dict, side: str) -> list:
    return list((spec.get("traces") or coll["traces"])[side])


def run_spec(spec_path: str, out: str, bin_dir: str, jobs: int, work: str | None = None) -> dict:
    """Every run of the spec into the results folder `out`: the policies as files, one log per session
    (vsim-logs/onoff-TAG/ID.jsonl) and manifest.json (evaluate.py's fields: the spec as run, commit,
    binary sha256, machine, load and UTC times, per session its command and exit status). The ladders
    (the collection spec's recipe) and the derived traces go to `work` (default: `out`; they are
    hundreds of MB and re-made from the spec). report_spec then derives the figures from the logs."""
    work = work or out
    spec, coll = load_onoff_spec(spec_path)
    media = spec.get("sessionMediaSeconds", coll["sessionMediaSeconds"])
    model = os.path.join(REPO, spec["model"])
    binary = os.path.join(bin_dir, "hlsplay")
    os.makedirs(os.path.join(out, "policies"), exist_ok=True)
    os.makedirs(work, exist_ok=True)
    ladders = {name: collect.make_ladder(work, coll, bool(lad.get("lowRung"))) for name, lad in spec["ladders"].items()}
    policies = {}
    for name, constants in spec["policies"].items():
        policies[name] = os.path.join(out, "policies", name + ".json")
        with open(policies[name], "w") as fh:
            json.dump(constants, fh)
    tdir = os.path.join(work, "vsim-traces")
    os.makedirs(tdir, exist_ok=True)
    sessions = []
    for r in spec["runs"]:
        os.makedirs(os.path.join(out, "vsim-logs", "onoff-" + r["tag"]), exist_ok=True)
        for ti, rel in enumerate(onoff_traces(spec, coll, r["traces"])):
            for k in range(spec["offsetsPerTrace"]):
                fraction = k / spec["offsetsPerTrace"]
                path, offset, scale = collect.derive_trace(rel, fraction, tdir, coll["scaling"])
                for arm in ("on", "off"):
                    sid = f"{ti:02d}-{k:02d}-{arm}"
                    log = os.path.join("vsim-logs", "onoff-" + r["tag"], sid + ".jsonl")
                    cmd = simulate_command(bin_dir, ladders[r["ladder"]], path, os.path.join(out, log), media,
                                           "model" if arm == "on" else "off", model,
                                           policies[r["policy"]] if r.get("policy") else None)
                    sessions.append(dict(run=r["tag"], id=sid, trace=rel, fraction=fraction, offsetSeconds=offset,
                                         scale=round(scale, 4), arm=arm, log=log, command=cmd))
    traces = sorted({s["trace"] for s in sessions})
    manifest = dict(
        spec=spec, specFile=spec["specFile"], collection=coll, sessionMediaSeconds=media,
        **hlsplay_tools.repo_state(),
        hlsplay=dict(path=os.path.abspath(binary), sha256=evaluate.sha256(binary),
                     version=evaluate.tools.hlsplay_version(binary)),
        ladders={n: dict(path=os.path.abspath(p), masterSha256=evaluate.sha256(os.path.join(p, "master.m3u8")))
                 for n, p in ladders.items()},
        traceSha256={t: evaluate.sha256(os.path.join(collect.TRACES_ROOT, t)) for t in traces},
        machine=evaluate.machine(), jobs=jobs, startedAt=evaluate.utc_now(), loadAverageAtStart=list(os.getloadavg()))
    print(f"{len(sessions)} sessions of {media} s in virtual time, {jobs} at once -> {out}", file=sys.stderr, flush=True)

    def one(sess):
        p = subprocess.run(sess["command"], capture_output=True, text=True)
        return dict(sess, exitStatus=p.returncode, stderr=p.stderr.strip()[-400:])

    with cf.ThreadPoolExecutor(jobs) as pool:
        sessions = list(pool.map(one, sessions))
    bad = [s for s in sessions if s["exitStatus"] not in (0, 69)]
    manifest.update(endedAt=evaluate.utc_now(), loadAverageAtEnd=list(os.getloadavg()), sessions=sessions)
    with open(os.path.join(out, "manifest.json"), "w") as fh:
        json.dump(manifest, fh, indent=1, sort_keys=True)
        fh.write("\n")
    if bad:
        raise SystemExit(f"{len(bad)} session(s) failed, e.g. {bad[0]['log']}: exit {bad[0]['exitStatus']} {bad[0]['stderr']}")
    return manifest


def log_summary(path: str) -> dict:
    """A simulated session's figures from its raw log alone: the summary (its last line; the same
    object `hlsplay simulate --json` prints) and the playback start (reallogs.playback_start)."""
    with open(path) as fh:
        lines = fh.read().splitlines()
    summary = json.loads(lines[-1]) if lines else {}
    if summary.get("type") != "summary":
        raise SystemExit(f"{path}: the log does not end in a summary")
    summary["playbackStartSeconds"] = reallogs.playback_start(path)
    return summary


def report_spec(out: str) -> dict:
    """Every figure of a results folder of run_spec, from its manifest (the spec as run) and raw logs:
    per run DATA/vsim-onoff-TAG.json (the `onoff` command's file) and the spec's result keys, written
    to report.json (sorted keys, so the same logs give the same bytes). Returns the result keys."""
    with open(os.path.join(out, "manifest.json")) as fh:
        manifest = json.load(fh)
    spec = manifest["spec"]
    run = dict(commit=manifest["commit"], worktreeClean=manifest["worktreeClean"],
               hlsplaySha256=manifest["hlsplay"]["sha256"], startedAt=manifest["startedAt"],
               endedAt=manifest["endedAt"], sessions=len(manifest["sessions"]))
    coll = manifest["collection"]
    crossing = recording_groups.crossing_groups(coll["traces"]["train"], coll["traces"]["heldout"])
    outcomes, without = {}, {}
    for r in spec["runs"]:
        done = [(dict(trace=s["trace"], offset=s["offsetSeconds"], arm=s["arm"]), log_summary(os.path.join(out, s["log"])))
                for s in manifest["sessions"] if s["run"] == r["tag"]]
        o = onoff_outcome(done)
        outcomes[r["tag"]] = o
        # The same without the traces whose recording group the split also trains on (the Norway recordings).
        kept = [(j, x) for j, x in done if recording_groups.group_of(j["trace"]) not in crossing]
        w = onoff_outcome(kept) if kept else None
        without[r["tag"]] = dict(groups=sorted(crossing), traces=sorted({j["trace"] for j, _ in kept}),
                                 on=w["on"], off=w["off"], comparison=w["comparison"]) if w else None
        with open(os.path.join(out, f"vsim-onoff-{r['tag']}.json"), "w") as fh:
            json.dump(dict(tag=r["tag"], ladder=r["ladder"], policy=spec["policies"].get(r.get("policy")), model=spec["model"],
                           traces=r["traces"], offsetsPerTrace=spec["offsetsPerTrace"], **o), fh, indent=2)
            fh.write("\n")
    values = {}
    for key, res in spec["results"].items():
        runs = [r for r in spec["runs"] if r["traces"] == res["traces"]]
        if res["kind"] == "tuningRows":
            rows = []
            for r in (r for r in runs if r.get("policy")):
                o, pol = outcomes[r["tag"]], spec["policies"][r["policy"]]
                rows.append(dict(preloadEnterRisk=pol["preloadEnterRisk"], preloadExitRisk=pol["preloadExitRisk"],
                                 ladder=r["ladder"], traces=r["traces"], pairs=len(o["pairs"]), on=o["on"], off=o["off"],
                                 bitrateRatioOnOverOff=o["verdict"]["bitrateRatioOnOverOff"], comparison=o["comparison"]))
            values[key] = dict(note=res["note"], rows=rows, run=run)
        else:
            values[key] = {r["ladder"]: dict(on=outcomes[r["tag"]]["on"], off=outcomes[r["tag"]]["off"],
                                              verdict=outcomes[r["tag"]]["verdict"], offsetsPerTrace=spec["offsetsPerTrace"],
                                              traces=r["traces"], comparison=outcomes[r["tag"]]["comparison"],
                                              run=dict(run, tag=r["tag"]), withoutCrossingGroups=without[r["tag"]])
                           for r in runs if not r.get("policy")}
    with open(os.path.join(out, "report.json"), "w") as fh:
        json.dump(values, fh, indent=1, sort_keys=True)
        fh.write("\n")
    return values


REPORT_WRITER = "Tools/train/vsim.py report"


def write_results(results: str, out: str, values: dict) -> dict:
    """The spec's result keys into the shared results file (results_file.update: its other keys stay),
    with provenance naming this script, the spec and the run's commit."""
    with open(os.path.join(out, "manifest.json")) as fh:
        manifest = json.load(fh)
    note = (f"written by {REPORT_WRITER} from the raw logs of a run of the spec {manifest['specFile']} "
            f"(commit {manifest['commit']}, {manifest['startedAt']} to {manifest['endedAt']})")
    return results_file.update(results, values, f"{REPORT_WRITER} DIR --results FILE (spec {manifest['specFile']})",
                               note=note)



DOCS_TOOL = "Tools/train/vsim.py"
DOCS_BLOCK = "vsim-onoff-start-gate"
LADDER_NAMES = {"ladder": "4 rungs", "ladder-low": "with a 0.25 Mbit/s rung"}


def _paired(c: dict, digits: int) -> str:
    """A paired comparison's cells: mean on − off per pair (95 % CI), fewer · more, Wilcoxon and sign test p."""
    ci = c["meanDifferenceCI"]

    def f(x):
        return "—" if x is None else f"{x:+.{digits}f}".replace("-", "\u2212")
    return (f"{f(c['meanDifference'])} ({f(ci['low'])} … {f(ci['high'])}) | {c['pairsABelow']} · {c['pairsAAbove']} | "
            f"{hlsplay_tools.p_text(c['wilcoxon']['pValue'])} | {hlsplay_tools.p_text(c['signTest']['pValue'])}")


def render_docs(results: dict) -> str:
    """docs/stall-prediction.md's block of the virtual on/off keys (the same keys give the same bytes)."""
    tuning, held = results["virtualOnOffTuning"], results["virtualOnOffHeldOut"]
    run = tuning.get("run")
    out = []
    if run:
        out += [f"Run at `{run['commit'][:7]}` ({'clean tree' if run['worktreeClean'] else 'uncommitted changes'}, "
                f"hlsplay sha256 {run['hlsplaySha256'][:12]}…), {run['startedAt']} … {run['endedAt']}, "
                f"{run['sessions']} simulated sessions; `results-v2.json`, keys `virtualOnOffTuning` and "
                f"`virtualOnOffHeldOut`.", ""]
    out += ["Tuning sweep, training traces (totals, and stalls paired by trace and offset: on − off per pair; "
            "\"on below · above off\" counts the pairs where the controller's figure was lower or higher):", "",
            "| preload enter / exit | ladder | pairs | stalls on · off | seconds stalled on · off | start delay | "
            "bitrate on ÷ off | stalls on − off per pair (95 % CI) | on below · above off | Wilcoxon p | sign test p |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in tuning["rows"]:
        on, off = r["on"], r["off"]
        delay = f"{on['meanPlaybackStartSeconds'] - off['meanPlaybackStartSeconds']:+.2f}".replace("-", "\u2212")
        out.append(f"| {r['preloadEnterRisk']:.2f} / {r['preloadExitRisk']:.2f} | {LADDER_NAMES.get(r['ladder'], r['ladder'])} | "
                   f"{r['pairs']} | {on['stalls']} · {off['stalls']} | {on['stallSeconds']:.1f} · {off['stallSeconds']:.1f} | "
                   f"{delay} s | "
                   f"{r['bitrateRatioOnOverOff']:.3f} | {_paired(r['comparison']['stalls'], 3)} |")
    out += ["", "Held-out traces, the build's defaults (paired by trace and offset, on − off per pair):", "",
            "| ladder | pairs | stalls on · off | sessions with a stall | seconds stalled on · off | bitrate on ÷ off | "
            "playback start on · off | figure | on − off per pair (95 % CI) | on below · above off | Wilcoxon p | sign test p |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for ladder, v in held.items():
        on, off = v["on"], v["off"]
        head = (f"| {LADDER_NAMES.get(ladder, ladder)} | {on['sessions']} | {on['stalls']} · {off['stalls']} | "
                f"{on['sessionsWithStalls']} · {off['sessionsWithStalls']} | {on['stallSeconds']:.1f} · "
                f"{off['stallSeconds']:.1f} | {v['verdict']['bitrateRatioOnOverOff']:.3f} | "
                f"{on['meanPlaybackStartSeconds']:.2f} · {off['meanPlaybackStartSeconds']:.2f} s")
        rows = [(head, v["comparison"])]
        w = v.get("withoutCrossingGroups")
        if w:
            won, woff = w["on"], w["off"]
            rows.append((f"| {LADDER_NAMES.get(ladder, ladder)}, without {', '.join(w['groups'])} "
                         f"({len(w['traces'])} traces) | {won['sessions']} | {won['stalls']} · {woff['stalls']} | "
                         f"{won['sessionsWithStalls']} · {woff['sessionsWithStalls']} | {won['stallSeconds']:.1f} · "
                         f"{woff['stallSeconds']:.1f} | "
                         f"{won['averageBitrateBps'] / woff['averageBitrateBps'] if woff['averageBitrateBps'] else 0:.3f} | "
                         f"{won['meanPlaybackStartSeconds']:.2f} · {woff['meanPlaybackStartSeconds']:.2f} s", w["comparison"]))
        for head_cells, comparison in rows:
            for i, (figure, label, digits) in enumerate((("stalls", "stalls", 3), ("stallSeconds", "seconds stalled", 2),
                                                         ("averageBitrateBps", "bitrate, bit/s", 0))):
                lead = head_cells if i == 0 else "| | | | | | |"
                out.append(f"{lead} | {label} | {_paired(comparison[figure], digits)} |")
    return "\n".join(out) + "\n"


def docs(results_path: str, doc: str, write: bool) -> int:
    with open(results_path) as fh:
        text = render_docs(json.load(fh))
    return hlsplay_tools.write_or_check_block(doc, DOCS_TOOL, DOCS_BLOCK, text, write, results_path,
                                              f"python3 {DOCS_TOOL} docs --results {results_path} {doc}")


def main(argv=None):
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run a virtual on/off spec into a results folder, then report")
    r.add_argument("spec")
    r.add_argument("--out", required=True)
    r.add_argument("--bin", default=os.path.join(REPO, ".build", "release"))
    r.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    r.add_argument("--results", help="also write the spec's result keys into this results file")
    r.add_argument("--work", help="folder for the ladders and derived traces (default: --out)")
    p = sub.add_parser("report", help="derive a results folder's figures from its raw logs")
    p.add_argument("folder")
    p.add_argument("--results", help="write the spec's result keys into this results file (results-v2.json)")
    for name in ("compare", "onoff"):
        p = sub.add_parser(name)
        p.add_argument("--data", default="/tmp/hlsplay-train")
        p.add_argument("--bin", default=os.path.join(REPO, ".build", "release"))
        p.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
        p.add_argument("--model", default=DEFAULT_MODEL)
        p.add_argument("--spec", default=collect.DEFAULT_SPEC,
                       help="the collection spec (traces, scaling, media seconds; default specs/stall-v2.json)")
    sub.choices["compare"].add_argument("--phases", default="heldout,onoff")
    sub.choices["compare"].add_argument("--results", default=os.path.join(HERE, "results-v2.json"))
    sub.choices["compare"].add_argument("--results-key", default="virtualSimVsReal")
    sub.choices["onoff"].add_argument("--ladder")
    sub.choices["onoff"].add_argument("--offsets", type=int, default=16)
    sub.choices["onoff"].add_argument("--policy")
    sub.choices["onoff"].add_argument("--tag", default="default")
    sub.choices["onoff"].add_argument("--traces", choices=["train", "heldout"], default="heldout",
                                      help="which side of the split: tune on train, judge on heldout")
    for name in ("docs", "check"):
        d = sub.add_parser(name, help=("write" if name == "docs" else "check") + " the doc's block of the virtual on/off keys")
        d.add_argument("--results", default=os.path.join(HERE, "results-v2.json"))
        d.add_argument("doc")
    args = ap.parse_args(argv)
    if args.cmd in ("docs", "check"):
        return docs(args.results, args.doc, args.cmd == "docs")
    if args.cmd in ("run", "report"):
        folder = args.out if args.cmd == "run" else args.folder
        if args.cmd == "run":
            run_spec(args.spec, args.out, args.bin, args.jobs, args.work)
        values = report_spec(folder)
        if args.results:
            write_results(args.results, folder, values)
        for key, v in values.items():  # the stall totals, on against off (report.json has every figure)
            for r in v["rows"] if "rows" in v else [dict(x, ladder=ladder) for ladder, x in v.items()]:
                extra = f" preload {r['preloadEnterRisk']}/{r['preloadExitRisk']}" if "preloadEnterRisk" in r else ""
                print(f"{key:22} {r['ladder']:10}{extra:16} stalls on {r['on']['stalls']:4} off {r['off']['stalls']:4}")
        return 0
    {"compare": compare, "onoff": onoff}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
