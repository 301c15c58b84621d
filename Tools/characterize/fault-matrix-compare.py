#!/usr/bin/env python3
"""Compares two fault-matrix tables (docs/fault-matrix.md's generated block) case by case.

  fault-matrix-compare.py BEFORE AFTER

BEFORE and AFTER are each a Markdown file holding the block (`Tools/characterize/fault-matrix.sh`'s
output, or docs/fault-matrix.md) or `REV:PATH`, the file at a commit (`git show`), e.g.
`78e6afe:docs/fault-matrix.md`. A case is (content, when, fault). For each case in both it compares the
outcome with its exit status and the log evidence's kinds of line (the evidence without its numbers:
timings move between runs, the kinds of event should not). Prints the counts and every difference;
exits 1 when a case's outcome differs or a case is in one table only, else 0.

The tables are read by their header row: each cell is taken from the column whose heading names it
(COLUMNS), wherever that column stands, so a table whose columns were reordered or added to compares
as before. The published results are these Markdown tables (the JSON Lines rows fault-matrix.py renders
live in a temporary folder of fault-matrix.sh and are not kept), which is why they are what is read.
A table lacking one of those columns, or a row whose cells do not match its header, is an error
(exit 2, naming it) rather than a comparison of the wrong cells.
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


# The columns the comparison reads, by their heading in fault-matrix.py's table.
COLUMNS = {"when": "when", "fault": "fault", "outcome": "outcome (exit)", "evidence": "log evidence"}
# A cell boundary: a pipe not escaped (fault-matrix.py writes a pipe inside a cell as \|).
CELL_SEPARATOR = re.compile(r"(?<!\\)\|")


class TableError(Exception):
    """A table the comparison cannot read by its headings."""


def cells_of(line):
    """The cells of a Markdown table row, stripped (the outer pipes dropped)."""
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return [c.strip() for c in CELL_SEPARATOR.split(inner)]


def is_separator(cells):
    return all(c and set(c) <= set("-:") for c in cells)


def cases(text, source="table"):
    """{(content, when, fault): (outcome, evidence kinds)} from the generated block (or the whole text):
    under each `### CONTENT` heading, the table's rows read by its header row's column names."""
    first_line = 1
    if BEGIN in text:
        first_line += text.split(BEGIN, 1)[0].count("\n")
        text = text.split(BEGIN, 1)[1].split(END, 1)[0]
    out, content, header = {}, None, None
    for number, line in enumerate(text.splitlines(), first_line):
        if line.startswith("### "):
            content, header = line[4:].strip(), None
            continue
        if not line.strip().startswith("|"):
            header = None  # a table ends at its first line that is not a row
            continue
        if content is None:
            continue
        cells = cells_of(line)
        if header is None:
            missing = [name for name in COLUMNS.values() if name not in cells]
            if missing:
                raise TableError(f"{source}: the table under '### {content}' (line {number}) has no column "
                                 f"{', '.join(repr(m) for m in missing)}: {line.strip()}")
            header = {name: cells.index(name) for name in COLUMNS.values()}
            width = len(cells)
            continue
        if is_separator(cells):
            continue
        if len(cells) != width:
            raise TableError(f"{source}: line {number} has {len(cells)} cells, its table's header {width}: "
                             f"{line.strip()[:200]}")
        cell = {key: cells[header[name]] for key, name in COLUMNS.items()}
        kinds = tuple(sorted({re.sub(r"-?\d+(\.\d+)?", "N", e).strip() for e in cell["evidence"].split("<br>")}))
        out[(content, cell["when"], cell["fault"])] = (cell["outcome"], kinds)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    a = ap.parse_args()
    try:
        before, after = cases(read(a.before), a.before), cases(read(a.after), a.after)
    except TableError as e:
        print(f"fault-matrix-compare.py: {e}", file=sys.stderr)
        return 2
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
