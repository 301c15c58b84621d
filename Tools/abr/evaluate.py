"""The ABR evaluation as a declared experiment (issue: experiments anyone can re-derive): a committed
spec says what runs, the runner keeps every raw session log with a manifest, and the report derives
every figure from those logs alone.

    # run a spec: builds its ladder when missing (its committed recipe), plays every trace × algorithm × rep
    # in virtual time (`hlsplay simulate`) on a local process pool, or on a Dask distributed cluster with
    # --scheduler (Tools/lib/distribute.py; same logs, same manifest layout), then writes the report
    python3 Tools/abr/evaluate.py run Tools/abr/specs/abr-virtual.json --out /tmp/abr-virtual \
        [--jobs N | --scheduler tcp://HOST:8786] [--build release]

    # the report from the raw logs of a results folder (markdown on stdout, report.json beside the logs)
    python3 Tools/abr/evaluate.py report /tmp/abr-virtual

    # put the report's markdown into a doc between its markers / check that it is there unchanged
    python3 Tools/abr/evaluate.py docs /tmp/abr-virtual docs/abr.md
    python3 Tools/abr/evaluate.py check /tmp/abr-virtual docs/abr.md

A results folder holds `manifest.json` (commit, the hlsplay binary's sha256 and version, the machine,
load average and UTC times at start and end, the spec as run, the ladder's and each trace's sha256,
where the sessions ran (`backend`), every command with its exit status and the host that ran it) and
`logs/ALGORITHM/TRACE.repN.jsonl` (TRACE's path under the trace folder with `/` written `__`). The report reads the spec copy in the manifest (which traces and
algorithms, which comparisons) and the logs' summaries; nothing else. The figures of one session:
the summary's `averageBitrateBps` (Mbit/s), `stallSeconds`, `qoe.playedSwitches` (the rung changes
the viewer saw) and `qoe.linearQoE` (docs/session-log.md, "QoE"). Replicates of a trace are averaged
before pairing (stats.mean_by_key), so a trace counts once.

The report pairs the spec's `default` rule against each of its `comparisons` and counts the issue's
per-trace targets for it, naming the traces that miss each; a rule listed in `candidates` is judged the
same way from the same sessions (so a rule that may become the default is judged by the committed report,
not by editing a manifest). A spec's `previous` (optional) names the rule the default replaced: the report
pairs the default against it too, on every figure, outside the targets (which are against `comparisons`).

A spec with `arms` (`[{"name", "hlsplayArgs"}]`) and `pairedArms` ([A, B]) instead of `default` and
`comparisons` runs every algorithm once per arm (logs/ALGORITHM/ARM/TRACE.repN.jsonl) and reports arm A
against arm B per algorithm, paired by trace (e.g. the predictor on against `--predictor off`).

Nothing here chooses a threshold: it runs what the spec says and reports it.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "Tools", "lib"))
sys.path.insert(0, os.path.join(REPO, "Tools", "train"))
import hlsplay_tools as tools  # noqa: E402
sys.path.insert(0, HERE)
import session_unit  # noqa: E402

# The shared traces (as Tools/abr/split.py reads them); HLSPLAY_TRACES overrides.
TRACES_ROOT = os.environ.get("HLSPLAY_TRACES", os.path.join(REPO, "..", "shared", "data", "traces"))
# Where a spec's `ladder.cache` folder is built (outside the repository); HLSPLAY_LADDER_CACHE overrides.
LADDER_CACHE = os.environ.get("HLSPLAY_LADDER_CACHE",
                              os.path.join(os.path.expanduser("~"), ".cache", "hlsplay", "ladders"))
TOOL = "Tools/abr/evaluate.py"  # as its docs blocks' markers name it
MARK_BEGIN, MARK_END = tools.block_markers(TOOL, "{name}")  # str.format(name=…) gives a block's markers
METRICS = (  # key, heading, unit, digits
    ("bitrateMbps", "average played bitrate", "Mbit/s", 2),
    ("rebufferSeconds", "rebuffer time", "s", 1),
    ("switches", "played switches", "", 0),
    ("qoe", "linear QoE (Σ Mbit/s − μ·rebuffer s − Σ |change|)", "", 1),
)


# ---------------------------------------------------------------- spec

def load_spec(path):
    with open(path) as f:
        spec = json.load(f)
    check_trace_sides(path, spec.get("traces", {}))
    if "arms" in spec:
        return check_arms(path, spec)
    require_keys(path, spec, ("name", "ladder", "traces", "algorithms", "durationSeconds", "reps", "default",
                              "comparisons"))
    if spec["default"] not in spec["algorithms"]:
        raise SystemExit(f"{path}: the default '{spec['default']}' is not one of the algorithms")
    for c in spec["comparisons"] + spec.get("candidates", []) + ([spec["previous"]] if "previous" in spec else []):
        if c not in spec["algorithms"]:
            raise SystemExit(f"{path}: the comparison, candidate or previous default '{c}' is not one of the algorithms")
    if spec.get("previous") == spec["default"]:
        raise SystemExit(f"{path}: the previous default '{spec['previous']}' is the default")
    return spec


def check_trace_sides(path, traces):
    """A spec's `extra` list must be one of Tools/abr/extra_traces.py's lists and, with a `split` side, on
    that side: tuning and evaluation traces never meet in one spec by way of an extra list."""
    if "extra" not in traces:
        return
    import extra_traces
    side = extra_traces.side_of(traces["extra"])
    if side is None:
        raise SystemExit(f"{path}: the extra list '{traces['extra']}' is not one of Tools/abr/extra_traces.py's lists")
    if "side" in traces and traces["side"] != side:
        raise SystemExit(f"{path}: the extra list '{traces['extra']}' holds {side} traces, the spec's split side is "
                         f"'{traces['side']}'")


def check_arms(path, spec):
    """A spec with arms: every algorithm runs once per arm, the arms differing only in the hlsplay arguments
    each adds, and the report pairs arm A against arm B (`pairedArms`) per algorithm, by trace."""
    require_keys(path, spec, ("name", "ladder", "traces", "algorithms", "durationSeconds", "reps", "arms",
                              "pairedArms"))
    names = [a.get("name") for a in spec["arms"]]
    if len(names) < 2 or len(set(names)) != len(names) or not all(isinstance(n, str) and n for n in names):
        raise SystemExit(f"{path}: 'arms' needs at least two arms with distinct names (got {names})")
    for a in spec["arms"]:
        if not isinstance(a.get("hlsplayArgs"), list):
            raise SystemExit(f"{path}: the arm '{a['name']}' has no 'hlsplayArgs' list")
    paired = spec["pairedArms"]
    if len(paired) != 2 or paired[0] == paired[1] or any(p not in names for p in paired):
        raise SystemExit(f"{path}: 'pairedArms' must name two of the arms {names} (got {paired})")
    return spec


def spec_arms(spec):
    """[(arm name, its hlsplay arguments)]; [(None, [])] for a spec without arms."""
    if "arms" not in spec:
        return [(None, [])]
    return [(a["name"], list(a["hlsplayArgs"])) for a in spec["arms"]]


def spec_traces(spec):
    """The spec's traces in the spec's order: its `list`, or a `side` of the `split` file; then, with
    `select` ({"sortedEvery": K, "first": N}), that side in sorted order, every K-th from the first, the
    first N of those (none without `list` or `split`); then the traces of an `extra` list
    (Tools/abr/extra_traces.py), named `extra/…`. Names resolve with trace_path."""
    t = spec["traces"]
    if "list" in t:
        traces = list(t["list"])
    elif "split" not in t:
        traces = []
    else:
        with open(os.path.join(REPO, t["split"])) as f:
            traces = list(json.load(f)[t["side"]])
        if "select" in t:
            rule = t["select"]
            traces = sorted(traces)[::rule["sortedEvery"]][:rule["first"]]
    if "extra" in t:
        import extra_traces
        traces += extra_traces.names(t["extra"])
    return traces


def trace_path(trace):
    """Where a spec's trace is: under the shared trace folder (HLSPLAY_TRACES), or, for `extra/…`, under
    the extra root Tools/abr/extra_traces.py writes."""
    if trace.startswith("extra/"):
        import extra_traces
        return extra_traces.path_of(trace)
    return os.path.join(TRACES_ROOT, trace)


def check_traces_present(traces):
    missing = [t for t in traces if not os.path.isfile(trace_path(t))]
    if missing:
        extra = any(t.startswith("extra/") for t in missing)
        raise SystemExit(f"traces missing: {', '.join(trace_path(t) for t in missing[:5])} (HLSPLAY_TRACES names "
                         "another shared folder" + ("; the extra/ traces: python3 Tools/abr/extra_traces.py get "
                                                    "--source A_CLONE_OF_SABRE" if extra else "") + ")")


def require_keys(path, spec, keys):
    for key in keys:
        if key not in spec:
            raise SystemExit(f"{path}: the spec has no '{key}'")


def ladder_dir(spec):
    lad = spec["ladder"]
    if "path" in lad:
        return os.path.join(REPO, lad["path"])
    return os.path.join(LADDER_CACHE, lad["cache"])


def build_ladder(spec, nice=True):
    """Runs the spec's ladder recipe (skipped by the recipe itself when the ladder is up to date)."""
    lad = spec["ladder"]
    out = ladder_dir(spec)
    if "recipe" not in lad:
        if not os.path.isfile(os.path.join(out, "master.m3u8")):
            raise SystemExit(f"the spec's ladder {out} is missing (Samples/make-all.sh builds it)")
        return out
    os.makedirs(os.path.dirname(out), exist_ok=True)
    cmd = (["nice", "-n", "19"] if nice else []) + [os.path.join(REPO, lad["recipe"][0]), out] + lad["recipe"][1:]
    print("ladder:", " ".join(shlex.quote(c) for c in cmd), file=sys.stderr, flush=True)
    # The recipe's output goes to stderr: stdout is the report's.
    subprocess.run(cmd, check=True, stdout=sys.stderr)
    return out


def log_name(algorithm, trace, rep, arm=None):
    """logs/ALGORITHM/TRACE.repN.jsonl, or logs/ALGORITHM/ARM/TRACE.repN.jsonl in a spec with arms."""
    return os.path.join("logs", algorithm, *([arm] if arm else []), f"{trace.replace('/', '__')}.rep{rep}.jsonl")


# ---------------------------------------------------------------- run

def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_text(path):
    """The stripped text of a small file, None when it is absent."""
    try:
        with open(path) as f:
            return f.read().strip()
    except FileNotFoundError:
        return None


def machine():
    model = None
    try:
        with open("/proc/cpuinfo") as f:
            model = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), None)
    except OSError:
        pass
    return dict(node=platform.node(), system=platform.platform(), cpus=os.cpu_count(), cpuModel=model,
                python=platform.python_version())


def utc_now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def run(spec_path, out, jobs=None, build="release", binary=None, nice=True, scheduler=None, stale=None):
    """Runs every session of the spec through distribute.run_units: a local pool of `jobs` processes by
    default, the Dask cluster behind `scheduler` (tcp://HOST:PORT) when given; the results folder (logs
    and manifest) has the same layout and the same logs either way. `stale` is tools.stale_binaries of
    the run's binaries as the caller found it (main's check), None to look here."""
    import distribute
    spec = load_spec(spec_path)
    binary = os.path.abspath(binary or tools.find_binary("hlsplay", build))
    traces = spec_traces(spec)
    check_traces_present(traces)
    ladder = os.path.abspath(build_ladder(spec, nice))
    os.makedirs(out, exist_ok=True)
    jobs = jobs or distribute.local_workers()
    units = []
    for trace in traces:
        for algorithm in spec["algorithms"]:
            for arm, arm_args in spec_arms(spec):
                for rep in range(1, spec["reps"] + 1):
                    name = log_name(algorithm, trace, rep, arm)
                    if os.path.exists(os.path.join(out, name)):
                        os.remove(os.path.join(out, name))
                    units.append(dict(binary=binary, ladder=ladder, trace=os.path.abspath(trace_path(trace)),
                                      algorithm=algorithm, durationSeconds=spec["durationSeconds"],
                                      extra=spec.get("hlsplayArgs", []) + arm_args, log=name, nice=nice))
    # The commit, whether the tracked files were clean and the binary's sha256, as every run records them.
    provenance = tools.run_provenance({"hlsplay": binary})
    manifest = dict(
        spec=spec, specFile=os.path.relpath(os.path.abspath(spec_path), REPO),
        commit=provenance["commit"], worktreeClean=provenance["worktreeClean"],
        binaryOlderThanSources=bool(tools.stale_binaries({"hlsplay": binary}) if stale is None else stale),
        hlsplay=dict(path=binary, sha256=provenance["binaries"]["hlsplay"]["sha256"],
                     version=tools.hlsplay_version(binary)),
        ladder=dict(path=ladder, masterSha256=sha256(os.path.join(ladder, "master.m3u8")),
                    stamp=read_text(os.path.join(ladder, ".stamp"))),
        traceList=traces, traceSha256={t: sha256(trace_path(t)) for t in traces},
        machine=machine(), jobs=None if scheduler else jobs,
        backend=dict(kind="dask", scheduler=scheduler) if scheduler else dict(kind="local", workers=jobs),
        startedAt=utc_now(), loadAverageAtStart=list(os.getloadavg()),
    )
    where = f"the Dask cluster at {scheduler}" if scheduler else f"{jobs} local workers"
    print(f"{len(units)} sessions on {where} -> {out}", file=sys.stderr, flush=True)
    # Dask workers get distribute.py (its worker side) and session_unit.py (the unit) by upload.
    upload = [os.path.abspath(distribute.__file__), os.path.abspath(session_unit.__file__)]
    units_dir = os.path.join(out, "units")  # one fresh folder per session while it runs; emptied below
    finished = [0]

    def done(k, unit, host):
        finished[0] += 1
        if finished[0] % 20 == 0 or finished[0] == len(units):
            print(f"  {finished[0]}/{len(units)}", file=sys.stderr, flush=True)

    try:
        results = distribute.run_units(units, session_unit.simulate_unit, lambda k, u: os.path.join(units_dir, f"{k + 1:05d}"),
                                       scheduler=scheduler, workers=jobs, upload=upload, progress=done)
    except distribute.DistributeError as e:
        raise SystemExit(f"the run failed: {e}")
    sessions = []
    for r in results:
        produced = os.path.join(r.dir, session_unit.UNIT_LOG)
        if os.path.exists(produced):
            os.makedirs(os.path.dirname(os.path.join(out, r.unit["log"])), exist_ok=True)
            os.replace(produced, os.path.join(out, r.unit["log"]))
        sessions.append(dict(log=r.unit["log"], host=r.host, **r.record))
        if sessions[-1]["exitStatus"] != 0:
            print(f"  {r.unit['log']}: exit {sessions[-1]['exitStatus']} {sessions[-1]['stderr']}", file=sys.stderr)
    shutil.rmtree(units_dir, ignore_errors=True)
    manifest.update(endedAt=utc_now(), loadAverageAtEnd=list(os.getloadavg()), sessions=sessions)
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    return manifest


# ---------------------------------------------------------------- report

def session_figures(path):
    """(figures, problem) of one raw log: the four metrics from its summary."""
    events, problem = tools.validate_log(path)
    if problem:
        return None, problem
    s = events[-1]
    q = s.get("qoe") or {}
    if "linearQoE" not in q:
        return None, "the summary has no linearQoE (nothing played)"
    return dict(bitrateMbps=s.get("averageBitrateBps", 0) / 1e6, rebufferSeconds=float(s.get("stallSeconds", 0)),
                switches=float(q.get("playedSwitches", 0)), qoe=float(q["linearQoE"]),
                stalls=float(s.get("stallCount", 0)), startSeconds=s.get("timeToPlaybackStartSeconds"),
                exitReason=s.get("exitReason"), playedSeconds=s.get("playedSeconds"),
                # what the session says about its predictor and controller (a spec with arms reports them)
                configuredPredictor=(events[0].get("configuration") or {}).get("predictor"),
                summaryPredictor=s.get("predictor"), policyChanges=int(s.get("policyChanges", 0)),
                riskSamples=sum(1 for e in events if e.get("type") == "risk.sample")), None


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return None if n == 0 else (xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2)


def report_data(folder):
    """Every figure of the report, from the manifest's spec copy and the raw logs."""
    import stats  # numpy/SciPy: only the report needs them
    with open(os.path.join(folder, "manifest.json")) as f:
        manifest = json.load(f)
    spec = manifest["spec"]
    if "arms" in spec:
        return arms_report_data(folder, manifest)
    traces = manifest["traceList"]  # the traces as run (a later split file does not change a past run)
    algorithms = spec["algorithms"]
    per = {}  # (algorithm, trace) -> averaged figures
    problems = []
    for a in algorithms:
        for t in traces:
            reps = []
            for r in range(1, spec["reps"] + 1):
                fig, problem = session_figures(os.path.join(folder, log_name(a, t, r)))
                if problem:
                    problems.append(f"{log_name(a, t, r)}: {problem}")
                else:
                    reps.append(fig)
            if reps:
                per[(a, t)] = {k: sum(x[k] for x in reps) / len(reps) for k, *_ in METRICS}
    complete = [t for t in traces if all((a, t) in per for a in algorithms)]
    medians = {a: {k: median([per[(a, t)][k] for t in complete]) for k, *_ in METRICS} for a in algorithms}
    d = spec["default"]
    rules = [d] + [c for c in spec.get("candidates", []) if c != d]
    judged = {r: dict(comparisons=rule_comparisons(per, complete, r, spec["comparisons"], stats),
                      targets=rule_targets(per, complete, r, spec["comparisons"]) if "bola-e" in algorithms
                      else None) for r in rules}
    data = dict(name=spec["name"], traces=traces, complete=complete, algorithms=algorithms, default=d,
                perTrace={f"{a}|{t}": v for (a, t), v in per.items()}, medians=medians,
                bestOfComparisonsMedianQoE=max(medians[o]["qoe"] for o in spec["comparisons"]) if complete else None,
                comparisons=judged[d]["comparisons"], targets=judged[d]["targets"],
                candidates={r: judged[r] for r in rules[1:]}, problems=problems,
                durationSeconds=spec["durationSeconds"], reps=spec["reps"])
    if "previous" in spec:
        # The rule the default replaced: paired on every figure, no targets (a spec without it reports as before).
        data["previous"] = {"rule": spec["previous"],
                            "comparisons": rule_comparisons(per, complete, d, [spec["previous"]], stats)}
    return data


def rule_comparisons(per, complete, rule, others, stats):
    """`rule` (A) against each of `others` (B), paired by trace, for every figure."""
    return {o: {k: stats.paired_comparison([per[(rule, t)][k] for t in complete],
                                           [per[(o, t)][k] for t in complete], complete)
                for k, *_ in METRICS} for o in others}


def rule_targets(per, complete, rule, others):
    """The issue's per-trace targets for `rule`, counted, with the traces that miss each (none of them is a
    threshold chosen here): QoE within 10 % of the best of `others`, bitrate ≥ 0.95× BOLA-E's, rebuffer
    time ≤ BOLA-E's."""
    best = {t: max(per[(o, t)]["qoe"] for o in others) for t in complete}
    qoe_miss = [t for t in complete if per[(rule, t)]["qoe"] < best[t] - 0.1 * abs(best[t])]
    bitrate_miss = [t for t in complete
                    if per[(rule, t)]["bitrateMbps"] < 0.95 * per[("bola-e", t)]["bitrateMbps"]]
    rebuffer_miss = [t for t in complete
                     if per[(rule, t)]["rebufferSeconds"] > per[("bola-e", t)]["rebufferSeconds"]]
    return dict(
        tracesQoEWithin10PercentOfBest=len(complete) - len(qoe_miss),
        tracesBitrateAtLeast095BolaE=len(complete) - len(bitrate_miss),
        tracesRebufferAtMostBolaE=len(complete) - len(rebuffer_miss),
        bitrateRatioToBolaEMedian=median([per[(rule, t)]["bitrateMbps"] / per[("bola-e", t)]["bitrateMbps"]
                                          for t in complete if per[("bola-e", t)]["bitrateMbps"] > 0]),
        qoeMissed=qoe_miss, bitrateMissed=bitrate_miss, rebufferMissed=rebuffer_miss,
    )


# The figures of a spec with arms, in the order of its tables: QoE first, the issue's question.
ARM_METRICS = (  # key, heading, unit, digits
    ("qoe", "linear QoE (Σ Mbit/s − μ·rebuffer s − Σ |change|)", "", 1),
    ("stalls", "stall count", "", 0),
    ("rebufferSeconds", "rebuffer time", "s", 1),
    ("bitrateMbps", "average played bitrate", "Mbit/s", 2),
    ("switches", "played switches", "", 0),
    # not in the linear QoE (its rebuffer term counts stalls after the start only), and what the controller
    # spends when it judges the start risky and waits for more buffer (docs/stall-prediction.md)
    ("startSeconds", "time to playback start", "s", 2),
)
# The significance level the report states a verdict at: issue 16's "a QoE gain with a paired Wilcoxon
# test at p < 0.05" (not chosen here; the p-values themselves are in the table).
ISSUE_WILCOXON_ALPHA = 0.05


def arms_report_data(folder, manifest):
    """The report of a spec with arms: per algorithm, arm A against arm B (`pairedArms`), paired by trace
    (Tools/train/stats.py), from the raw logs; and what each arm's logs say about the predictor."""
    import stats
    spec = manifest["spec"]
    traces = manifest["traceList"]
    algorithms = spec["algorithms"]
    arms = [name for name, _ in spec_arms(spec)]
    arm_a, arm_b = spec["pairedArms"]
    per = {}  # (algorithm, arm, trace) -> figures averaged over the reps
    problems = []
    evidence = {arm: dict(sessions=0, configuredPredictor={}, summaryPredictor={}, sessionsWithRiskSamples=0,
                          sessionsWithPolicyChanges=0) for arm in arms}
    for a in algorithms:
        for arm in arms:
            for t in traces:
                reps = []
                for r in range(1, spec["reps"] + 1):
                    fig, problem = session_figures(os.path.join(folder, log_name(a, t, r, arm)))
                    if not problem and fig["startSeconds"] is None:
                        problem = "the summary has no timeToPlaybackStartSeconds"
                    if problem:
                        problems.append(f"{log_name(a, t, r, arm)}: {problem}")
                        continue
                    reps.append(fig)
                    ev = evidence[arm]
                    ev["sessions"] += 1
                    for key in ("configuredPredictor", "summaryPredictor"):
                        value = str(fig[key]) if fig[key] is not None else "absent"
                        ev[key][value] = ev[key].get(value, 0) + 1
                    ev["sessionsWithRiskSamples"] += fig["riskSamples"] > 0
                    ev["sessionsWithPolicyChanges"] += fig["policyChanges"] > 0
                if reps:
                    per[(a, arm, t)] = {k: sum(x[k] for x in reps) / len(reps) for k, *_ in ARM_METRICS}
    complete = {a: [t for t in traces if all((a, arm, t) in per for arm in arms)] for a in algorithms}
    medians = {f"{a}|{arm}": {k: median([per[(a, arm, t)][k] for t in complete[a]]) for k, *_ in ARM_METRICS}
               for a in algorithms for arm in arms}
    comparisons = {a: {k: stats.paired_comparison([per[(a, arm_a, t)][k] for t in complete[a]],
                                                  [per[(a, arm_b, t)][k] for t in complete[a]], complete[a])
                       for k, *_ in ARM_METRICS}
                   for a in algorithms}
    return dict(name=spec["name"], traces=traces, complete=complete, algorithms=algorithms,
                arms=[dict(name=n, hlsplayArgs=args) for n, args in spec_arms(spec)], pairedArms=[arm_a, arm_b],
                perTrace={f"{a}|{arm}|{t}": v for (a, arm, t), v in per.items()}, medians=medians,
                comparisons=comparisons, armEvidence=evidence, problems=problems,
                durationSeconds=spec["durationSeconds"], reps=spec["reps"], alpha=ISSUE_WILCOXON_ALPHA)


def fmt(x, digits):
    if x is None:
        return "—"
    s = f"{x:,.{digits}f}"
    return "0" if s in ("-0", "-0.0", "-0.00") and digits == 0 else s.replace("-", "−") if s.startswith("-") else s


def paired_cells(c, digits):
    """The cells every paired-comparison row ends with (A against B, from stats.paired_comparison): mean A,
    mean B, mean A − B, its 95 % CI, pairs with A above/below/equal, Wilcoxon and sign test p."""
    ci = c["meanDifferenceCI"]
    return (f"{fmt(c['meanA'], digits)} | {fmt(c['meanB'], digits)} | {fmt(c['meanDifference'], digits)} | "
            f"{fmt(ci['low'], digits)} … {fmt(ci['high'], digits)} | "
            f"{c['pairsAAbove']}/{c['pairsABelow']}/{c['pairsEqual']} | {tools.p_text(c['wilcoxon']['pValue'])} | "
            f"{tools.p_text(c['signTest']['pValue'])} |")


def short_trace(t):
    return t.replace("pensieve/", "").replace("sabre/", "").replace("http---www.", "")


def counts(d):
    return ", ".join(f"{k} ({v})" for k, v in sorted(d.items()))


def render_arms(data):
    """The markdown block of a spec with arms (deterministic: same logs, same bytes)."""
    algs, per, (arm_a, arm_b) = data["algorithms"], data["perTrace"], data["pairedArms"]
    arm_names = [arm["name"] for arm in data["arms"]]
    n_traces = len(data["traces"])
    out = [f"Spec `{data['name']}`: {n_traces} traces × {len(algs)} algorithms × {len(arm_names)} arms × "
           f"{data['reps']} rep(s), {data['durationSeconds']} s sessions in virtual time, paired by trace "
           "(each trace from its start). Arms: " +
           "; ".join(f"`{arm['name']}` " + (f"(`{' '.join(arm['hlsplayArgs'])}`)" if arm["hlsplayArgs"]
                                             else "(hlsplay's defaults)") for arm in data["arms"]) + "."]
    out += ["", "What each arm's logs say (sessions counted): "
            + "; ".join(f"`{arm}`: header `configuration.predictor` {counts(ev['configuredPredictor'])}, "
                        f"summary `predictor` {counts(ev['summaryPredictor'])}, `risk.sample` events in "
                        f"{ev['sessionsWithRiskSamples']} of {ev['sessions']} sessions, a `policy.change` in "
                        f"{ev['sessionsWithPolicyChanges']} of {ev['sessions']}"
                        for arm, ev in data["armEvidence"].items()) + "."]
    if data["problems"]:
        out.append("")
        out.append(f"**{len(data['problems'])} session(s) without figures** (left out of medians and tests):")
        out += [f"- `{p}`" for p in data["problems"]]
    columns = [(a, arm) for a in algs for arm in arm_names]
    for key, heading, unit, digits in ARM_METRICS:
        out += ["", f"**{heading}**" + (f" ({unit})" if unit else "") + ", per trace:", ""]
        out.append("| trace | " + " | ".join(f"{a} {arm}" for a, arm in columns) + " |")
        out.append("| --- |" + " ---: |" * len(columns))
        for t in data["traces"]:
            cells = [fmt(per[f"{a}|{arm}|{t}"][key], digits) if f"{a}|{arm}|{t}" in per else "—" for a, arm in columns]
            out.append(f"| {short_trace(t)} | " + " | ".join(cells) + " |")
        out.append("| **median** | " + " | ".join(
            f"**{fmt(data['medians'][f'{a}|{arm}'][key], max(digits, 1) if key in ('switches', 'stalls') else digits)}**"
            for a, arm in columns) + " |")
    out += ["", f"**`{arm_a}` (A) against `{arm_b}` (B)**, per algorithm, paired by trace: mean A − B, its 95 % "
            "bootstrap CI (BCa, 9 999 resamples, seed 17), traces with A above / below / equal, Wilcoxon "
            "signed-rank and sign test p (two-sided; Tools/train/stats.py).", "",
            f"| algorithm | figure | traces | mean {arm_a} | mean {arm_b} | mean {arm_a} − {arm_b} | 95 % CI | "
            f"{arm_a} above/below/equal | Wilcoxon p | sign p |",
            "| --- | --- | ---: | ---: | ---: | ---: | --- | --- | ---: | ---: |"]
    for a in algs:
        for key, heading, unit, digits in ARM_METRICS:
            c = data["comparisons"][a][key]
            out.append(f"| {a} | {heading.split(' (')[0]} | {c['pairs']} | {paired_cells(c, max(digits, 1))}")
    out += ["", f"**QoE, `{arm_a}` against `{arm_b}`** (issue 16 asks for a gain with a paired Wilcoxon test at "
            f"p < {data['alpha']:g}):", ""]
    for a in algs:
        c = data["comparisons"][a]["qoe"]
        p = c["wilcoxon"]["pValue"]
        if p is not None and p < data["alpha"] and c["meanDifference"] > 0:
            verdict = f"a gain at p < {data['alpha']:g}"
        elif p is not None and p < data["alpha"] and c["meanDifference"] < 0:
            verdict = f"a loss at p < {data['alpha']:g}"
        else:
            verdict = f"no difference at p < {data['alpha']:g}"
        ci = c["meanDifferenceCI"]
        out.append(f"- `{a}`: mean {fmt(c['meanA'], 1)} against {fmt(c['meanB'], 1)}, difference "
                   f"{fmt(c['meanDifference'], 1)} (95 % CI {fmt(ci['low'], 1)} … {fmt(ci['high'], 1)}), "
                   f"{arm_a} above/below/equal on {c['pairsAAbove']}/{c['pairsABelow']}/{c['pairsEqual']} of "
                   f"{c['pairs']} traces, Wilcoxon p = {tools.p_text(p)}, sign test p = {tools.p_text(c['signTest']['pValue'])}: "
                   f"{verdict}.")
    return "\n".join(out) + "\n"


def render(data):
    """The markdown block (deterministic: same logs, same bytes)."""
    if "arms" in data:
        return render_arms(data)
    algs, per, d = data["algorithms"], data["perTrace"], data["default"]
    out = [f"Spec `{data['name']}`: {len(data['complete'])} traces × {len(algs)} algorithms × "
           f"{data['reps']} rep(s), {data['durationSeconds']} s sessions in virtual time."]
    if data["problems"]:
        out.append("")
        out.append(f"**{len(data['problems'])} session(s) without figures** (left out of medians and tests):")
        out += [f"- `{p}`" for p in data["problems"]]
    for key, heading, unit, digits in METRICS:
        out += ["", f"**{heading}**" + (f" ({unit})" if unit else "") + ", per trace:", ""]
        out.append("| trace | " + " | ".join(algs) + " |")
        out.append("| --- |" + " ---: |" * len(algs))
        for t in data["traces"]:
            cells = [fmt(per[f"{a}|{t}"][key], digits) if f"{a}|{t}" in per else "—" for a in algs]
            out.append(f"| {short_trace(t)} | " + " | ".join(cells) + " |")
        out.append("| **median** | " + " | ".join(f"**{fmt(data['medians'][a][key], max(digits, 1) if key == 'switches' else digits)}**"
                                                 for a in algs) + " |")
    out += render_judged(data, d, data["comparisons"], data["targets"])
    if "previous" in data:
        out += ["", f"**The default `{d}` against the rule it replaced, `{data['previous']['rule']}`** (same sessions; "
                "not a target):"]
        out += render_judged(data, d, data["previous"]["comparisons"], None)
    for rule, judged in data.get("candidates", {}).items():
        out += ["", f"**The candidate `{rule}`**, judged as the default is (same sessions):"]
        out += render_judged(data, rule, judged["comparisons"], judged["targets"])
    return "\n".join(out) + "\n"


def render_judged(data, rule, comparisons, tg):
    """A rule's paired comparisons against the spec's reference rules and its count against the targets."""
    out = ["", f"**Paired comparisons**, `{rule}` (A) against each (B), paired by trace: mean A − B, its 95 % "
           "bootstrap CI (BCa, 9 999 resamples, seed 17), traces with A above / below / equal, Wilcoxon "
           "signed-rank and sign test p (two-sided; Tools/train/stats.py).", "",
           "| B | figure | mean A | mean B | mean A − B | 95 % CI | A above/below/equal | Wilcoxon p | sign p |",
           "| --- | --- | ---: | ---: | ---: | --- | --- | ---: | ---: |"]
    for other, byk in comparisons.items():
        for key, heading, unit, digits in METRICS:
            out.append(f"| {other} | {heading.split(' (')[0]} | {paired_cells(byk[key], max(digits, 1))}")
    if tg is not None:
        n = len(data["complete"])

        def missed(key):
            return f" (not on {', '.join(f'`{short_trace(t)}`' for t in tg[key])})" if tg.get(key) else ""
        out += ["", f"**Against the issue's virtual-time targets** (`{rule}`): median QoE "
                f"{fmt(data['medians'][rule]['qoe'], 1)} against the best median of "
                f"{', '.join(comparisons)} {fmt(data['bestOfComparisonsMedianQoE'], 1)}; "
                f"QoE within 10 % of the best of them on {tg['tracesQoEWithin10PercentOfBest']} of {n} traces"
                f"{missed('qoeMissed')}; average bitrate ≥ 0.95× BOLA-E's on {tg['tracesBitrateAtLeast095BolaE']} "
                f"of {n}{missed('bitrateMissed')} (median ratio {fmt(tg['bitrateRatioToBolaEMedian'], 2)}); rebuffer "
                f"time ≤ BOLA-E's on {tg['tracesRebufferAtMostBolaE']} of {n}{missed('rebufferMissed')}."]
    return out


def is_real(path):
    """Whether a spec file, or a results folder's manifest, is of the real mode (Tools/abr/real.py)."""
    if os.path.isdir(path):
        path = os.path.join(path, "manifest.json")
        with open(path) as f:
            return json.load(f)["spec"].get("mode") == "real"
    with open(path) as f:
        return json.load(f).get("mode") == "real"


def derive(folder):
    """(data, markdown) of a results folder, virtual or real, from its raw files; nothing is written."""
    if is_real(folder):
        import real
        data = real.report_data(folder)
        return data, real.render(data)
    data = report_data(folder)
    return data, render(data)


def block_mismatch(folder, doc_path):
    """None when doc_path's generated block for the folder's spec is what the report derives from the
    folder; else what differs and the command that re-derives it."""
    data, text = derive(folder)
    with open(doc_path) as f:
        block = generated_block(f.read(), data["name"])
    if block is None:
        return f"{doc_path} has no block '{data['name']}'"
    if block != text:
        return (f"{doc_path}: the block '{data['name']}' differs from what the report derives from {folder}; "
                f"re-derive: python3 Tools/abr/evaluate.py docs {folder} {doc_path}")
    return None


def report(folder):
    data, text = derive(folder)
    with open(os.path.join(folder, "report.json"), "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")
    with open(os.path.join(folder, "report.md"), "w") as f:
        f.write(text)
    return data, text


# ---------------------------------------------------------------- docs

def splice(doc_text, name, block):
    """doc_text with the block between the markers of `name` replaced by `block`."""
    return tools.splice_block(doc_text, TOOL, name, block)


def generated_block(doc_text, name):
    return tools.generated_block(doc_text, TOOL, name)


def binaries_of_run(a):
    """name -> path of each binary a `run` will use (hls-origin only in real mode, which starts it)."""
    out = {"hlsplay": os.path.abspath(a.binary) if a.binary else tools.find_binary("hlsplay", a.build)}
    if is_real(a.spec):
        out["hls-origin"] = tools.find_binary("hls-origin", a.build)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run a spec into a results folder, then report")
    r.add_argument("spec")
    r.add_argument("--out", required=True)
    r.add_argument("--jobs", type=int, help="parallel sessions (default: the machine's cores)")
    r.add_argument("--build", default="release", help="release | debug | a folder with hlsplay")
    r.add_argument("--binary", help="an hlsplay binary (instead of --build)")
    r.add_argument("--scheduler", help="run the sessions on the Dask distributed cluster behind this scheduler, "
                   "e.g. tcp://HOST:8786 (docs/cluster.md); the binary, ladder and traces must be at the same "
                   "paths on its workers")
    for name in ("report", "docs", "check"):
        p = sub.add_parser(name)
        p.add_argument("folder")
        if name != "report":
            p.add_argument("doc")
    r.add_argument("--allow-stale-binary", action="store_true",
                   help="run even when a source file is newer than the binary (the manifest says so)")
    a = ap.parse_args(argv)
    if a.cmd == "run":
        with tools.refusing_tool_errors("evaluate.py"):
            binaries = binaries_of_run(a)
        stale = tools.stale_binaries(binaries)  # the manifest records it too: one walk of Sources/
        if stale and not a.allow_stale_binary:
            name, files = next(iter(stale.items()))
            how = "swift build -c release" if a.build == "release" else "swift build"
            raise SystemExit(f"{name} is older than {len(files)} source file(s) (newest: {files[0]}): it would "
                             f"measure code that is no longer the tree's; run `{how} --product {name}`, or pass "
                             "--allow-stale-binary")
        if is_real(a.spec):  # one session at a time in real time: --jobs, --scheduler and --binary do not apply
            import real
            real.run(a.spec, a.out, a.build, stale)
        else:
            run(a.spec, a.out, a.jobs, a.build, a.binary, scheduler=a.scheduler, stale=stale)
        _, text = report(a.out)
        sys.stdout.write(text)
        return 0
    data, text = report(a.folder)
    if a.cmd == "report":
        sys.stdout.write(text)
        return 0
    with open(a.doc) as f:
        doc = f.read()
    if a.cmd == "docs":
        new = splice(doc, data["name"], text)
        if new != doc:
            with open(a.doc, "w") as f:
                f.write(new)
        print(f"{a.doc}: {'updated' if new != doc else 'unchanged'} ({data['name']})", file=sys.stderr)
        return 0
    mismatch = block_mismatch(a.folder, a.doc)
    if mismatch:
        print(mismatch, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
