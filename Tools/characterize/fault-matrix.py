#!/usr/bin/env python3
"""Renders the fault matrix rows (FaultMatrixTests' $FAULT_MATRIX_REPORT, JSON Lines) as Markdown.

  fault-matrix.py ROWS.jsonl [--test-output TEST.txt] [--elapsed SECONDS] [--update-docs]

--test-output marks the rows whose test case recorded an issue (from `swift test` output);
--update-docs replaces the text between the matrix markers in docs/fault-matrix.md.
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from hlsplay_tools import read_jsonl  # noqa: E402

BEGIN, END = "<!-- fault-matrix:begin -->", "<!-- fault-matrix:end -->"
WHEN_ORDER = ["startup: from 0 s", "startup: multivariant playlist", "startup: first media playlist",
              "startup: first segment", "mid-play: first segment after 3 s",
              "live reload: first media playlist reload after 3 s"]


def fmt(x):
    return "–" if x is None else f"{x:.1f} s"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rows")
    ap.add_argument("--test-output")
    ap.add_argument("--elapsed", type=float)
    ap.add_argument("--update-docs", action="store_true")
    args = ap.parse_args()
    rows = read_jsonl(args.rows, strict=True)
    failing = set()
    if args.test_output:
        for line in open(args.test_output, errors="replace"):
            m = re.search(r"recorded an issue with 1 argument c → (.+?) at ", line)
            if m:
                failing.add(m.group(1).strip())
    faults = []
    for r in rows:
        if r["fault"] not in faults:
            faults.append(r["fault"])
    out = []
    for content in ["VOD", "live"]:
        sel = [r for r in rows if r["content"] == content]
        sel.sort(key=lambda r: (WHEN_ORDER.index(r["when"]) if r["when"] in WHEN_ORDER else 99, r["fault"]))
        out.append(f"### {content}\n")
        out.append("| when | fault | outcome (exit) | fault at | time to recovery / error | wall | log evidence | test |")
        out.append("|---|---|---|---|---|---|---|---|")
        for r in sel:
            ident = f"{r['content']} | {r['when']} | {r['fault']}"
            passed = "✗ FAILED" if ident in failing else "✓"
            t = (f"recovered after {fmt(r.get('recoverySeconds'))}" if r.get("recoverySeconds") is not None
                 else f"error after {fmt(r.get('errorAfterSeconds'))}" if r.get("errorAfterSeconds") is not None else "–")
            evidence = "<br>".join(e.replace("|", "\\|") for e in r["evidence"])
            out.append(f"| {r['when']} | {r['fault']} | {r['outcome']} ({r['exitStatus']}) | {fmt(r.get('faultAtSeconds'))} | {t} "
                       f"| {r['wallSeconds']:.1f} s | {evidence} | {passed} expects {r['expected']} |")
        out.append("")
    n = len(rows)
    recovered = sum(1 for r in rows if r["outcome"].startswith("recovered"))
    longest = max(rows, key=lambda r: r["wallSeconds"]) if rows else None
    summary = f"{n} cases: {recovered} recovered, {n - recovered} ended in a clear fatal error; {len(failing)} failed their test."
    if longest:
        summary += f" Longest case {longest['wallSeconds']:.1f} s ({longest['content']} | {longest['when']} | {longest['fault']})."
    if args.elapsed:
        summary += f" Whole matrix: {args.elapsed:.0f} s wall."
    text = summary + "\n\n" + "\n".join(out)
    print(text)
    if args.update_docs:
        path = "docs/fault-matrix.md"
        doc = open(path).read()
        a, b = doc.index(BEGIN) + len(BEGIN), doc.index(END)
        open(path, "w").write(doc[:a] + "\n" + text + "\n" + doc[b:])
        print(f"updated {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
