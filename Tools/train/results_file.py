"""A results file that several scripts share (Tools/train/results-v2.json).

Each writer replaces only the keys it computes and keeps every other key as it
was, so re-running one step never deletes another step's published figures.
Beside the figures, the file's "provenance" key records, per result key, the
script that wrote it (`writer`, a command line) or, for a key that no committed
script writes, `"writer": null` with `"handMerged": true` and a note saying where
its figures came from. A key without an entry there is an error (the tests check
the committed file).

    results_file.update(path, {"simVsReal": {...}}, "Tools/train/sim_compare.py")
"""

from __future__ import annotations

import json
import os
import tempfile

PROVENANCE_KEY = "provenance"


def load(path: str) -> dict:
    """The file's contents, or {} when it does not exist yet."""
    if not os.path.exists(path):
        return {}
    with open(path) as fh:
        return json.load(fh)


def update(path: str, values: dict, writer: str, note: str | None = None) -> dict:
    """Replaces the keys of `values` in the results file at `path`, records `writer` (and
    `note`, when given: which run the figures came from) as their provenance, keeps every
    other key, and writes the file atomically (a write that fails half-way leaves the old
    file). Returns the whole new contents."""
    if PROVENANCE_KEY in values:
        raise ValueError(f"'{PROVENANCE_KEY}' is the file's own key, not a result")
    res = load(path)
    provenance = res.setdefault(PROVENANCE_KEY, {})
    for key, value in values.items():
        res[key] = value
        provenance[key] = dict(writer=writer, handMerged=False, **({"note": note} if note else {}))
    # The provenance last, so the figures read first.
    res[PROVENANCE_KEY] = res.pop(PROVENANCE_KEY)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".results-", suffix=".json", dir=folder)
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(res, fh, indent=2)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return res


def keys_without_provenance(res: dict) -> list[str]:
    """Result keys that no provenance entry accounts for."""
    provenance = res.get(PROVENANCE_KEY, {})
    return sorted(k for k in res if k != PROVENANCE_KEY and k not in provenance)


def hand_merged(res: dict) -> list[str]:
    """Result keys that no committed script writes."""
    return sorted(k for k, p in res.get(PROVENANCE_KEY, {}).items() if p.get("handMerged"))
