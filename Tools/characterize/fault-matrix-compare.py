#!/usr/bin/env python3
"""Compares two fault-matrix tables (docs/fault-matrix.md's generated block) case by case.

  fault-matrix-compare.py BEFORE AFTER

BEFORE and AFTER are each a Markdown file holding the block (`Tools/characterize/fault-matrix.sh`'s
output, or docs/fault-matrix.md) or `REV:PATH`, the file at a commit (`git show`), e.g.
`78e6afe:docs/fault-matrix.md`. A case is (content, when, fault). For each case in both it compares the
outcome with its exit status and the log evidence's kinds of line (the evidence without its numbers:
timings move between runs, the kinds of event should not). Prints the counts and every difference;
exits 1 when a case's outcome differs or a case is in one table only, else 0.
"""
import argparse
import re
import subprocess
import sys

BEGIN, END = "<!-- fault-matrix:begin -->", "<!-- fault-matrix:end -->"


def read(source):
    if ":" in source and not source.startswith("/"):
        rev, path = source.split(":", 1)
        return subprocess.run(["git", "show", f"{rev}:{path}"], check=True, capture_output=True, text=True).stdout
    with open(source) as f:
        return f.read()


def cases(text):
    """{(content, when, fault): (outcome, evidence kinds)} from the generated block (or the whole text)."""
    if BEGIN in text:
        text = text.split(BEGIN, 1)[1].split(END, 1)[0]
    out, content = {}, None
    for line in text.splitlines():
        if line.startswith("### "):
            content = line[4:].strip()
            continue
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if content is None or len(cells) < 8 or cells[0] in ("when", "---") or set(cells[0]) <= set("-"):
            continue
        when, fault, outcome, evidence = cells[0], cells[1], cells[2], cells[6]
        kinds = tuple(sorted({re.sub(r"-?\d+(\.\d+)?", "N", e).strip() for e in evidence.split("<br>")}))
        out[(content, when, fault)] = (outcome, kinds)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    a = ap.parse_args()
    before, after = cases(read(a.before)), cases(read(a.after))
    both = sorted(set(before) & set(after))
    only = sorted(set(before) ^ set(after))
    outcome = [k for k in both if before[k][0] != after[k][0]]
    evidence = [k for k in both if before[k][0] == after[k][0] and before[k][1] != after[k][1]]
    print(f"{len(both)} cases in both tables ({len(before)} before, {len(after)} after): same outcome and exit "
          f"status in {len(both) - len(outcome)}, same kinds of log evidence in "
          f"{len(both) - len(outcome) - len(evidence)}.")
    for k in only:
        print(f"- only {'before' if k in before else 'after'}: {' | '.join(k)}")
    for k in outcome:
        print(f"- outcome: {' | '.join(k)}: {before[k][0]} → {after[k][0]}")
    for k in evidence:
        gone = sorted(set(before[k][1]) - set(after[k][1]))
        new = sorted(set(after[k][1]) - set(before[k][1]))
        print(f"- evidence: {' | '.join(k)}: no longer {gone or '—'}; now also {new or '—'}")
    return 1 if outcome or only else 0


if __name__ == "__main__":
    sys.exit(main())
