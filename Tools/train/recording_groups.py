"""Recording-source groups of the traces under shared/data/traces: files that may hold
the same recording belong to one group, and a train/held-out split must put a whole
group on one side (`crossing_groups` names the groups a split cuts).

    python3 Tools/train/recording_groups.py [SPEC]   # the groups of a collection spec's split (default
                                                     # specs/stall-v2.json), and what it crosses

The Norway HSDPA 3G dataset (Riiser et al., MMSys 2013; 2010-11 logs from
Oslo-area commutes) is in two collections: Pensieve's filtered, resampled
`pensieve/hsdpa_norway/norway_<mode>_<n>` cuts and Sabre's unfiltered 1 s
`sabre/3G_hsdpa_norway/report.<date>.json` logs (shared/data/traces/README.md).
Pensieve's names carry no date and its values are filtered and resampled, so no
file of one collection can be mapped to a file of the other: both collections
are one group. Mahimahi files are grouped by carrier and technology (train.family:
TMobile-LTE-short and TMobile-LTE-driving may be cuts of one drive). Every other
file is its own group: nothing links it to another file.
"""

from __future__ import annotations

import os
import sys

# group -> the path prefixes (relative to shared/data/traces) of its files
PREFIX_GROUPS = {
    "norway-hsdpa-3g": ("pensieve/hsdpa_norway/", "sabre/3G_hsdpa_norway/"),
}

# Groups the published v2 split (Tools/train/specs/stall-v2.json traces.train /
# traces.heldout, and v1's before it) already crosses: it was fixed before this
# grouping existed, and its figures were measured on it (docs/stall-prediction.md,
# "Split"). A new split must cross none; collect.load_spec refuses a spec whose lists
# cross any group but those it names in allowedCrossingGroups, and those must be here.
PUBLISHED_SPLIT_CROSSINGS = frozenset({"norway-hsdpa-3g"})


def group_of(trace: str) -> str:
    """The recording-source group of a trace path relative to shared/data/traces (or an `extra/` name)."""
    trace = trace.replace(os.sep, "/").lstrip("./")
    # an `extra/…` trace (Tools/abr/extra_traces.py) is named by its place in the shared layout
    trace = trace[len("extra/"):] if trace.startswith("extra/") else trace
    for group, prefixes in PREFIX_GROUPS.items():
        if any(trace.startswith(p) for p in prefixes):
            return group
    if trace.startswith("mahimahi/"):
        return "mahimahi/" + "-".join(os.path.basename(trace).split("-")[:2])
    return trace


def crossing_groups(train: list[str], held_out: list[str]) -> set[str]:
    """The groups with files on both sides of a split."""
    return {group_of(t) for t in train} & {group_of(t) for t in held_out}


def main():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import collect
    spec = collect.load_spec(sys.argv[1] if len(sys.argv) > 1 else collect.DEFAULT_SPEC)
    train, held = spec["traces"]["train"], spec["traces"]["heldout"]
    for side, traces in (("train", train), ("held out", held)):
        for t in traces:
            print(f"{side:9} {group_of(t):40} {t}")
    print("groups on both sides:", sorted(crossing_groups(train, held)) or "none")


if __name__ == "__main__":
    main()
