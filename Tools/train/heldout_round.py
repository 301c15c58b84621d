#!/usr/bin/env python3
"""A later held-out set as a declared experiment: the controller-on sessions of real on/off batches
(collect.py onoff), scored with train.evaluate's definitions (docs/stall-prediction.md, "A second,
later held-out set": the third round's 96 sessions, key heldOutThirdRound of results-v2.json).

    # run the spec's batches (collect.py onoff, one call per batch; real time, one origin per session)
    python3 Tools/train/heldout_round.py run SPEC --data DATA --bin DIR [--jobs N]

    # the figures from DATA/manifest.jsonl and the session logs alone; --results writes the spec's key
    python3 Tools/train/heldout_round.py report SPEC --data DATA [--results Tools/train/results-v2.json]

A spec (Tools/train/specs/held-out-third-round.json) names its collection spec (traces, offset batches,
media, ladder), the phase and arm whose sessions are scored, its batches (run tag, offset batch, low
rung or not), the offset batches of the earlier held-out sessions (so the report can say how many of
this set's sessions start where those did), the predictors with their thresholds, and the result key.
A threshold is a number, "preloadEnterRisk" (the controller's, read from PolicyController.swift by
operating_point.py) or "modelOperatingThreshold" (the model file's own).

The report refuses a data folder in which a batch lacks a session or has one the spec does not name
(matched by trace and start offset), so a figure is always over exactly the spec's sessions. It writes
DATA/heldout-round-NAME.json (every figure) and, with --results, the spec's key through
results_file.update (provenance naming this script, the spec and the data folder).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import collect  # noqa: E402
import reallogs  # noqa: E402
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


def report(spec_path: str, data: str) -> dict:
    """The spec's result (every figure from the manifest and the session logs), checked against the
    sessions the spec names; also written to DATA/heldout-round-NAME.json."""
    import train
    spec, coll = load_spec(spec_path)
    with open(os.path.join(REPO, spec["model"])) as fh:
        model = json.load(fh)
    expected = expected_sessions(spec, coll)
    rows = [r for r in reallogs.load_manifest(data, {spec["phase"]}) if r.get("controller") == spec["arm"]]
    chosen, problems, batches = [], [], []
    for b in spec["batches"]:
        mine = [r for r in rows if r["id"].endswith("-" + b["tag"])]
        got = {(r["trace"], r["offsetSeconds"]): r for r in mine}
        missing = sorted(set(expected[b["tag"]]) - set(got))
        extra = sorted(set(got) - set(expected[b["tag"]]))
        problems += [f"{b['tag']}: no session of {t} at {o} s" for t, o in missing]
        problems += [f"{b['tag']}: a session the spec does not name, {t} at {o} s" for t, o in extra]
        wrong_ladder = [r["id"] for r in mine if r.get("ladder") not in (None, "ladder-low" if b.get("lowRung") else "ladder")]
        problems += [f"{b['tag']}: {i} played another ladder" for i in wrong_ladder]
        chosen += [got[k] for k in sorted(got) if k in expected[b["tag"]]]
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
    results = []
    for p in spec["predictors"]:
        thr = threshold_of(p, model)
        results.append(train.evaluate(p["name"], predictor_fn(p, model), sessions, thr, train.HORIZON_SECONDS))
    value = dict(note=spec["note"], spec=spec["specFile"], sessions=len(sessions),
                 sessionsAtEarlierHeldOutOffsets=at_earlier, batches=batches, results=results)
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
    a = ap.parse_args(argv)
    if a.cmd == "run":
        run(a.spec, a.data, a.bin, a.jobs)
        return 0
    value = report(a.spec, a.data)
    if a.results:
        write_results(a.results, a.spec, a.data, value)
    for r in value["results"]:
        lead = r["medianLeadSeconds"]
        print(f"{r['predictor'][:50]:50} thr {r['threshold']:.2f} AUC {r['auc'] if r['auc'] is None else round(r['auc'], 3)} "
              f"stalls {r['stalls']} median lead {lead if lead is None else round(lead, 2)}")
    print(f"{value['sessions']} sessions, {value['sessionsAtEarlierHeldOutOffsets']} at the earlier held-out offsets")
    return 0


if __name__ == "__main__":
    sys.exit(main())
