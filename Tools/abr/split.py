"""The ABR evaluation's trace split: which traces may tune an adaptation rule and
which only evaluate it, fixed before any tuning (issue: reference ABR algorithms).

    python3 Tools/abr/split.py           # prints the split and checks trace-split.json matches it
    python3 Tools/abr/split.py --write   # (re)writes Tools/abr/trace-split.json

The rule, so the split is derived, not chosen trace by trace:
- A split is by recording group (Tools/train/recording_groups.py): files that may
  hold one recording are on one side, never two offsets of one trace apart.
- The stall-risk model hlsplay ships was fitted on the training traces of
  Tools/train/specs/stall-v2.json (collect.py's collection spec). A
  rule that uses the model's risk has, through the model, already seen those
  traces and every trace of their groups: they tune. That puts all 19 Norway
  HSDPA recordings (one group across the Pensieve and Sabre collections) on the
  tuning side.
- Sabre's `example/network.json` is synthetic: tuning only (never a result).
- Every other real trace evaluates. The model's own held-out traces outside the
  Norway group evaluate here too: the model was never fitted on them.
Evaluation traces are for reporting; no threshold, weight or constant may be
chosen by looking at results on them.
"""

from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "Tools", "train"))
import recording_groups  # noqa: E402

TRACES = os.environ.get("HLSPLAY_TRACES", os.path.join(REPO, "..", "shared", "data", "traces"))
SPLIT_FILE = os.path.join(HERE, "trace-split.json")
SYNTHETIC = {"sabre/example/network.json"}
# Files in the trace folders that are not throughput traces (Sabre's video descriptions).
NOT_TRACES = {"sabre/example/bbb.json", "sabre/example/bbb4k.json"}


# The collection spec whose training traces the shipped model was fitted on.
MODEL_COLLECTION_SPEC = os.path.join(REPO, "Tools", "train", "specs", "stall-v2.json")


def model_training_traces() -> list[str]:
    """The training traces of the shipped model's collection spec (traces.train)."""
    with open(MODEL_COLLECTION_SPEC) as f:
        return list(json.load(f)["traces"]["train"])


def all_traces(root: str = TRACES) -> list[str]:
    out = []
    for dirpath, _, files in os.walk(root):
        for f in files:
            rel = os.path.relpath(os.path.join(dirpath, f), root).replace(os.sep, "/")
            if rel.endswith(".md") or rel in NOT_TRACES:
                continue
            out.append(rel)
    return sorted(out)


def derive(root: str = TRACES) -> dict:
    traces = all_traces(root)
    tuning_groups = {recording_groups.group_of(t) for t in model_training_traces()}
    tuning = [t for t in traces if recording_groups.group_of(t) in tuning_groups or t in SYNTHETIC]
    evaluation = [t for t in traces if t not in tuning]
    return {
        "rule": "Tools/abr/split.py: the model's training groups and synthetic traces tune; every other real trace evaluates",
        "tuningGroups": sorted(tuning_groups),
        "tuning": tuning,
        "evaluation": evaluation,
    }


def main():
    split = derive()
    crossing = recording_groups.crossing_groups(split["tuning"], split["evaluation"])
    if crossing:
        sys.exit(f"split.py: groups on both sides: {sorted(crossing)}")
    if "--write" in sys.argv:
        with open(SPLIT_FILE, "w") as f:
            json.dump(split, f, indent=2)
            f.write("\n")
    for side in ("tuning", "evaluation"):
        print(f"{side}: {len(split[side])} traces")
        for t in split[side]:
            print(f"  {recording_groups.group_of(t):40} {t}")
    committed = json.load(open(SPLIT_FILE)) if os.path.exists(SPLIT_FILE) else None
    if committed != split:
        sys.exit("split.py: Tools/abr/trace-split.json differs from the rule's split (run with --write, and say why)")


if __name__ == "__main__":
    main()
