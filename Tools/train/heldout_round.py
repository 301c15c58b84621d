#!/usr/bin/env python3
"""A later held-out set as a declared experiment: the controller-on sessions of real on/off batches
(collect.py onoff), scored with train.evaluate's definitions (docs/stall-prediction.md, "A second,
later held-out set": the third round's 96 sessions, key heldOutThirdRound of results-v2.json).

    # run the spec's batches (collect.py onoff, one call per batch; real time, one origin per session)
    python3 Tools/train/heldout_round.py run SPEC --data DATA --bin DIR [--jobs N]

    # the figures from DATA/manifest.jsonl and the session logs alone; --results writes the spec's key
    python3 Tools/train/heldout_round.py report SPEC --data DATA [--results Tools/train/results-v2.json]

    # the doc's generated block of the spec's key (docs: write it; check: compare, exit 1 if it differs)
    python3 Tools/train/heldout_round.py docs|check SPEC [--results FILE] DOC

A spec (Tools/train/specs/held-out-third-round.json) names its collection spec (traces, offset batches,
media, ladder), the phase and arm whose sessions are scored, its batches (run tag, offset batch, low
rung or not), the offset batches of the earlier held-out sessions (so the report can say how many of
this set's sessions start where those did), the predictors with their thresholds, and the result key.
An optional "comparisons" list names pairs [A, B] of its predictors, compared paired by session (the mean
lead before a session's healthy stalls, false alarms per hour). A threshold is a number, "preloadEnterRisk" (the controller's, read from PolicyController.swift by
operating_point.py) or "modelOperatingThreshold" (the model file's own).

The report refuses a data folder in which a batch lacks a session or has one the spec does not name
(matched by trace and start offset), so a figure is always over exactly the spec's sessions. Every figure
is given twice: over all the spec's sessions, and (withoutCrossingGroups) without the traces whose recording
group the collection's split also trains on (recording_groups.py: the Norway HSDPA recordings). It writes
DATA/heldout-round-NAME.json (every figure) and, with --results, the spec's key through
results_file.update (provenance naming this script, the spec and the data folder).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import collect  # noqa: E402
sys.path.insert(0, os.path.join(REPO, "Tools", "lib"))
import hlsplay_tools  # noqa: E402
import reallogs  # noqa: E402
import recording_groups  # noqa: E402
import results_file  # noqa: E402

SPEC_KEYS = ("name", "collection", "phase", "arm", "model", "batches", "earlierHeldOutOffsets", "predictors",
             "resultKey", "note")
PREDICTOR_KINDS = ("model", "heuristicRuntime", "bufferBelow2s")
WRITER = "Tools/train/heldout_round.py report"


def load_spec(path: str) -> tuple[dict, dict]:
    """(spec, its collection spec), checked."""
    with open(path) as fh:
        spec = json.load(fh)
    collect.evaluate.require_keys(path, spec, SPEC_KEYS)
    coll = collect.load_spec(os.path.join(REPO, spec["collection"]))
    if spec["phase"] not in coll["phases"]:
        raise SystemExit(f"{path}: the collection has no phase '{spec['phase']}'")
    tags = [b["tag"] for b in spec["batches"]]
    if len(set(tags)) != len(tags):
        raise SystemExit(f"{path}: batch tags repeat: {tags}")
    for b in spec["batches"] + [dict(tag="earlier", offsets=o) for o in spec["earlierHeldOutOffsets"]]:
        if b["offsets"] not in coll["offsetFractions"]:
            raise SystemExit(f"{path}: '{b['tag']}' names the offset batch '{b['offsets']}', not one of the "
                             f"collection's ({', '.join(coll['offsetFractions'])})")
    names = [p.get("name") for p in spec["predictors"]]
    for pair in spec.get("comparisons", []):
        if not (isinstance(pair, list) and len(pair) == 2 and all(n in names for n in pair) and pair[0] != pair[1]):
            raise SystemExit(f"{path}: a comparison is two different predictors of the spec by name, not {pair!r}")
    for p in spec["predictors"]:
        if p.get("kind") not in PREDICTOR_KINDS:
            raise SystemExit(f"{path}: the predictor '{p.get('name')}' needs a kind ({' | '.join(PREDICTOR_KINDS)})")
        t = p.get("threshold")
        if not (isinstance(t, (int, float)) or t in ("preloadEnterRisk", "modelOperatingThreshold")):
            raise SystemExit(f"{path}: the predictor '{p['name']}' needs a threshold: a number, preloadEnterRisk "
                             "or modelOperatingThreshold")
    spec["specFile"] = os.path.relpath(os.path.abspath(path), REPO)
    return spec, coll


def expected_sessions(spec: dict, coll: dict) -> dict:
    """tag -> {(trace, offset seconds as collect.plan rounds it): start fraction} of each batch."""
    traces = coll["traces"][coll["phases"][spec["phase"]]["traces"]]
    totals = {t: sum(d for d, _, _ in collect.load_steps(t)) for t in traces}
    return {b["tag"]: {(t, round(f * totals[t], 3)): f for t in traces for f in coll["offsetFractions"][b["offsets"]]}
            for b in spec["batches"]}


def run(spec_path: str, data: str, bin_dir: str, jobs: int | None = None):
    spec, coll = load_spec(spec_path)
    for b in spec["batches"]:
        argv = ["onoff", "--spec", os.path.join(REPO, spec["collection"]), "--data", data, "--bin", bin_dir,
                "--model", os.path.join(REPO, spec["model"]), "--offsets", b["offsets"], "--tag", b["tag"]]
        argv += (["--low-rung"] if b.get("lowRung") else []) + (["--jobs", str(jobs)] if jobs else [])
        print("collect.py", " ".join(argv), flush=True)
        collect.main(argv)


def predictor_fn(p: dict, model: dict):
    import train
    import train_real
    if p["kind"] == "model":
        return lambda f: train.model_probability(model, f)
    if p["kind"] == "heuristicRuntime":
        return train_real.heuristic_runtime
    return train.threshold_step


def threshold_of(p: dict, model: dict) -> float:
    if p["threshold"] == "preloadEnterRisk":
        import operating_point
        return operating_point.preload_enter_risk()
    if p["threshold"] == "modelOperatingThreshold":
        return model["operatingThreshold"]
    return float(p["threshold"])


def run_manifests(spec: dict, data: str) -> list:
    """What each batch's run manifest (DATA/runs/PHASE-TAG-UTC.json, collect.py) says of the run: the commit,
    whether the tree was clean, the hlsplay binary's sha256, times and load averages."""
    out = []
    folder = os.path.join(data, "runs")
    names = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
    for b in spec["batches"]:
        pattern = re.compile(rf"{re.escape(spec['phase'])}-{re.escape(b['tag'])}-\d{{8}}T\d{{6}}Z\.json")
        for name in (n for n in names if pattern.fullmatch(n)):
            with open(os.path.join(folder, name)) as fh:
                m = json.load(fh)
            out.append(dict(batch=b["tag"], manifest="runs/" + name, commit=m.get("commit"),
                            worktreeClean=m.get("worktreeClean"),
                            hlsplaySha256=sorted({v["hlsplay"]["sha256"] for v in m.get("binaries", {}).values()
                                                  if "hlsplay" in v}),
                            startedAt=m.get("startedAt"), endedAt=m.get("endedAt"),
                            loadAverageAtStart=m.get("loadAverageAtStart"), loadAverageAtEnd=m.get("loadAverageAtEnd")))
    return out


def score(spec: dict, model: dict, sessions: list, keys: list) -> dict:
    """Every predictor of the spec scored over the sessions (train.evaluate), and the spec's comparisons:
    predictor A against B paired by session (key: batch, trace, offset), the mean lead before the
    session's healthy stalls and false alarms per hour of playback (train.compare_predictors)."""
    import train
    fns = {p["name"]: (predictor_fn(p, model), threshold_of(p, model)) for p in spec["predictors"]}
    if not sessions:
        return dict(results=[], comparisons=[])
    results = [train.evaluate(name, fn, sessions, thr, train.HORIZON_SECONDS) for name, (fn, thr) in fns.items()]
    comparisons = [dict(a=a, b=b, **train.compare_predictors(fns[a], fns[b], sessions, keys, train.HORIZON_SECONDS))
                   for a, b in spec.get("comparisons", [])]
    return dict(results=results, comparisons=comparisons)


def report(spec_path: str, data: str) -> dict:
    """The spec's result (every figure from the manifest and the session logs), checked against the
    sessions the spec names; also written to DATA/heldout-round-NAME.json."""
    spec, coll = load_spec(spec_path)
    with open(os.path.join(REPO, spec["model"])) as fh:
        model = json.load(fh)
    expected = expected_sessions(spec, coll)
    rows = [r for r in reallogs.load_manifest(data, {spec["phase"]}) if r.get("controller") == spec["arm"]]
    chosen, keys, problems, batches = [], [], [], []
    for b in spec["batches"]:
        mine = [r for r in rows if r["id"].endswith("-" + b["tag"])]
        got = {(r["trace"], r["offsetSeconds"]): r for r in mine}
        missing = sorted(set(expected[b["tag"]]) - set(got))
        extra = sorted(set(got) - set(expected[b["tag"]]))
        problems += [f"{b['tag']}: no session of {t} at {o} s" for t, o in missing]
        problems += [f"{b['tag']}: a session the spec does not name, {t} at {o} s" for t, o in extra]
        wrong_ladder = [r["id"] for r in mine if r.get("ladder") not in (None, "ladder-low" if b.get("lowRung") else "ladder")]
        problems += [f"{b['tag']}: {i} played another ladder" for i in wrong_ladder]
        mine_chosen = [got[k] for k in sorted(got) if k in expected[b["tag"]]]
        chosen += mine_chosen
        # a session's key for the paired comparisons: its batch, trace and offset
        keys += [(b["tag"], r["trace"], r["offsetSeconds"]) for r in mine_chosen]
        batches.append(dict(tag=b["tag"], offsets=b["offsets"], offsetFractions=coll["offsetFractions"][b["offsets"]],
                            lowRung=bool(b.get("lowRung")), sessions=len(mine)))
    if problems:
        raise SystemExit(f"{data}: the sessions are not the spec's:\n  " + "\n  ".join(problems))
    sessions = reallogs.load_sessions(data, chosen)
    if len(sessions) != len(chosen):
        raise SystemExit(f"{data}: {len(chosen) - len(sessions)} session log(s) named in manifest.jsonl are missing")
    earlier = {f for o in spec["earlierHeldOutOffsets"] for f in coll["offsetFractions"][o]}
    fraction = {(t, o): f for b in expected.values() for (t, o), f in b.items()}
    at_earlier = sum(1 for r in chosen if fraction[(r["trace"], r["offsetSeconds"])] in earlier)
    value = dict(note=spec["note"], spec=spec["specFile"], sessions=len(sessions),
                 sessionsAtEarlierHeldOutOffsets=at_earlier, batches=batches, runs=run_manifests(spec, data),
                 **score(spec, model, sessions, keys))
    # The same figures without the traces whose recording group the collection's split also trains on
    # (recording_groups.crossing_groups: the Norway HSDPA recordings of the published split), so a figure
    # that is held out in the sense of issue 17's "held out means held out" is there beside the pooled one.
    crossing = recording_groups.crossing_groups(coll["traces"]["train"], coll["traces"]["heldout"])
    keep = [i for i, r in enumerate(chosen) if recording_groups.group_of(r["trace"]) not in crossing]
    value["withoutCrossingGroups"] = dict(
        groups=sorted(crossing), traces=sorted({chosen[i]["trace"] for i in keep}), sessions=len(keep),
        **score(spec, model, [sessions[i] for i in keep], [keys[i] for i in keep]))
    with open(os.path.join(data, f"heldout-round-{spec['name']}.json"), "w") as fh:
        json.dump(value, fh, indent=1, sort_keys=True)
        fh.write("\n")
    return value


def write_results(results: str, spec_path: str, data: str, value: dict) -> dict:
    spec, _ = load_spec(spec_path)
    note = (f"written by {WRITER} from the session logs of a run of the spec {spec['specFile']} "
            f"(DATA/manifest.jsonl and DATA/runs/ name the runs)")
    return results_file.update(results, {spec["resultKey"]: value},
                               f"{WRITER} SPEC --data DATA --results FILE (spec {spec['specFile']})", note=note)


TOOL = "Tools/train/heldout_round.py"


def block_name(spec: dict) -> str:
    return f"heldout-round-{spec['name']}"


def _f(x, digits=2, unit=""):
    """x with `digits` decimals and a real minus sign, as the docs print numbers; "—" for none."""
    return "—" if x is None else f"{x:.{digits}f}".replace("-", "\u2212") + unit


def _figures_tables(value: dict) -> list[str]:
    out = ["| predictor | threshold | AUC | Brier | precision | recall | stalls warned | median lead | "
           "from a healthy buffer: warned | its median lead | lead ≥ 3 s | false alarms / h |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in value["results"]:
        out.append(f"| {r['predictor']} | {r['threshold']:.2f} | {_f(r['auc'], 3)} | {_f(r['brier'], 3)} | "
                   f"{_f(r['precision'], 3)} | {_f(r['recall'], 3)} | {r['warnedStalls']}/{r['stalls']} | "
                   f"{_f(r['medianLeadSeconds'], 2, ' s')} | {r['healthyWarned']}/{r['healthyStalls']} | "
                   f"{_f(r['healthyMedianLeadSeconds'], 2, ' s')} | {_f(r['healthyLeadAtLeast3s'], 2)} | "
                   f"{_f(r['falseAlarmsPerHour'], 1)} |")
    if value["comparisons"]:
        out += ["", "| A against B, paired by session | figure | mean A | mean B | A − B | 95 % CI | pairs | "
                "A above/below/equal | Wilcoxon p | sign test p |", "|---|---|---|---|---|---|---|---|---|---|"]
        for c in value["comparisons"]:
            for key, label, digits in (("meanHealthyLeadSeconds", "lead before healthy stalls, s", 2),
                                       ("falseAlarmsPerHour", "false alarms / h", 1)):
                x = c[key]
                ci = x["meanDifferenceCI"]
                out.append(f"| {c['a']} against {c['b']} | {label} | {_f(x['meanA'], digits)} | "
                           f"{_f(x['meanB'], digits)} | {_f(x['meanDifference'], digits)} | "
                           f"{_f(ci['low'], digits)} … {_f(ci['high'], digits)} | {x['pairs']} | "
                           f"{x['pairsAAbove']}/{x['pairsABelow']}/{x['pairsEqual']} | "
                           f"{hlsplay_tools.p_text(x['wilcoxon']['pValue'])} | "
                           f"{hlsplay_tools.p_text(x['signTest']['pValue'])} |")
    return out


def render(value: dict) -> str:
    """The docs block of a result key (deterministic: the same key gives the same bytes)."""
    runs = value.get("runs", [])
    commits = sorted({r["commit"][:7] for r in runs if r.get("commit")})
    loads = [x for r in runs for k in ("loadAverageAtStart", "loadAverageAtEnd") for x in (r.get(k) or [])[:1]]
    out = [f"{value['sessions']} sessions ({value['sessionsAtEarlierHeldOutOffsets']} at the earlier held-out "
           f"offsets) of {len(value['batches'])} batches: "
           + ", ".join(f"{b['tag']} ({b['sessions']}, offsets {b['offsets']}{', low rung' if b['lowRung'] else ''})"
                       for b in value["batches"]) + "."]
    if runs:
        out.append(f"Run at {', '.join(commits) or 'an unrecorded commit'}, "
                   f"{min(r['startedAt'] for r in runs)} … {max(r['endedAt'] for r in runs)}"
                   + (f", 1-minute load average {min(loads):.2f}–{max(loads):.2f}" if loads else "")
                   + f" (the runs' manifests: {', '.join(r['manifest'] for r in runs)}).")
    out += ["", "All sessions:", ""] + _figures_tables(value)
    without = value.get("withoutCrossingGroups")
    if without is not None:
        out += ["", f"Without the recording groups the split also trains on ({', '.join(without['groups']) or 'none'}): "
                    f"{without['sessions']} sessions on {len(without['traces'])} traces"
                    + (f" ({', '.join(without['traces'])})" if without["traces"] else "") + ":", ""]
        out += _figures_tables(without) if without["sessions"] else ["(no session)"]
    return "\n".join(out) + "\n"


def docs(spec_path: str, results: str, doc: str, write: bool) -> int:
    """Writes (or checks) the doc's block of the spec's result key, as stored in the results file."""
    spec, _ = load_spec(spec_path)
    with open(results) as fh:
        value = json.load(fh)[spec["resultKey"]]
    return hlsplay_tools.write_or_check_block(
        doc, TOOL, block_name(spec), render(value), write, f"{results} ({spec['resultKey']})",
        f"python3 {TOOL} docs {spec['specFile']} --results {results} {doc}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run the spec's batches (collect.py onoff)")
    r.add_argument("spec")
    r.add_argument("--data", required=True)
    r.add_argument("--bin", default=os.path.join(REPO, ".build", "release"))
    r.add_argument("--jobs", type=int, help="sessions at once (default: the collection phase's)")
    p = sub.add_parser("report", help="the figures from the data folder's manifest and session logs")
    p.add_argument("spec")
    p.add_argument("--data", required=True)
    p.add_argument("--results", help="write the spec's result key into this results file")
    for name in ("docs", "check"):
        d = sub.add_parser(name, help=("write" if name == "docs" else "check") + " the doc's block of the spec's key")
        d.add_argument("spec")
        d.add_argument("--results", default=os.path.join(HERE, "results-v2.json"))
        d.add_argument("doc")
    a = ap.parse_args(argv)
    if a.cmd in ("docs", "check"):
        return docs(a.spec, a.results, a.doc, a.cmd == "docs")
    if a.cmd == "run":
        run(a.spec, a.data, a.bin, a.jobs)
        return 0
    value = report(a.spec, a.data)
    if a.results:
        write_results(a.results, a.spec, a.data, value)
    print_figures(value)
    without = value["withoutCrossingGroups"]
    print(f"\nwithout the recording groups the split also trains on ({', '.join(without['groups']) or 'none'}): "
          f"{without['sessions']} sessions on {len(without['traces'])} traces")
    print_figures(without)
    print(f"{value['sessions']} sessions, {value['sessionsAtEarlierHeldOutOffsets']} at the earlier held-out offsets")
    return 0


def print_figures(value: dict) -> None:
    import stats

    def f(x, digits=2):
        return "—" if x is None else f"{x:.{digits}f}"
    for r in value["results"]:
        print(f"{r['predictor'][:50]:50} thr {r['threshold']:.2f} AUC {f(r['auc'], 3)} stalls {r['stalls']} "
              f"median lead {f(r['medianLeadSeconds'])} s; healthy stalls {r['healthyStalls']}, "
              f"lead {f(r['healthyMedianLeadSeconds'])} s, >= 3 s {f(r['healthyLeadAtLeast3s'])}; "
              f"false alarms {f(r['falseAlarmsPerHour'], 1)} /h")
    for c in value["comparisons"]:
        print(f"{c['a']} against {c['b']}:")
        print(f"  healthy lead: {stats.describe(c['meanHealthyLeadSeconds'], ' s')}")
        print(f"  false alarms: {stats.describe(c['falseAlarmsPerHour'], ' /h', 1)}")


if __name__ == "__main__":
    sys.exit(main())
