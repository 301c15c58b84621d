"""Traces from outside shared/data/traces: more recordings of the collections the shared folder holds a
subset of, taken from their public repository at a pinned commit by a rule written before any run
(docs/abr.md, "Extra evaluation traces" and "Extra tuning traces"). Two lists: evaluation traces
(`extra-traces.json`) and tuning traces (`extra-tuning-traces.json`).

    python3 Tools/abr/extra_traces.py derive --source GIT     # applies both rules; checks both list files
    python3 Tools/abr/extra_traces.py derive --source GIT --write
    python3 Tools/abr/extra_traces.py get --source GIT        # writes both lists' files under the extra root

GIT is a clone of https://github.com/UMass-LIDS/sabre (any clone holding commit COMMIT; a bare
one will do). The extra root is ~/.cache/hlsplay/traces-extra, or HLSPLAY_EXTRA_TRACES. The files
are never copied into this repository: `extra-traces.json` names each one (its path in the source
repository and its sha256), `get` writes them byte for byte from `git show COMMIT:PATH` and refuses a
file whose sha256 differs. A spec takes them with `"traces": {..., "extra": "Tools/abr/extra-traces.json"}`;
their names start with `extra/`.

The rule (RULE below): the shared folder holds 11 of the Sabre collection's 40 4G/LTE Belgium logs
and 3 + 3 of its 1,000 + 1,000 FCC step-up files. Every Sabre file of those folders that is not in the
shared folder is a recording no rule here was tuned on (each is its own recording group:
Tools/train/recording_groups.py). Taken: the unshared 4G logs in sorted order, every 5th from the
first; the first 3 unshared FCC step-up SD files and the first 3 unshared HD files, in sorted order.
None of the HSDPA 3G logs: they are one recording group with the tuning side's Norway traces.

The tuning rule (TUNING_RULE): the shared folder holds 6 of the collection's 86 HSDPA 3G logs
(example/mmsys18/3Glogs), all on the tuning side of the split, as is every file of their recording group
(norway-hsdpa-3g: the stall model was fitted on it). The 80 unshared logs are that group too, so they may
only tune: all of them, in sorted order. Added (2026-12-07) because the release's one evaluation loss has
no instance among the 29 tuning traces; the list was committed before any session ran on them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
LIST_FILE = os.path.join(HERE, "extra-traces.json")
TUNING_LIST_FILE = os.path.join(HERE, "extra-tuning-traces.json")
SHARED = os.environ.get("HLSPLAY_TRACES", os.path.join(REPO, "..", "shared", "data", "traces"))
EXTRA_ROOT = os.environ.get("HLSPLAY_EXTRA_TRACES",
                            os.path.join(os.path.expanduser("~"), ".cache", "hlsplay", "traces-extra"))
PREFIX = "extra/"
REPOSITORY = "https://github.com/UMass-LIDS/sabre"
COMMIT = "09b03bb0f4f90660a2504a6b2fb48d2f06333706"  # the commit the shared folder's Sabre files come from
# (source folder in the repository, the shared folder holding its subset, take(unshared sorted names))
RULE = (
    ("example/mmsys18/4Glogs", "sabre/4G_lte_belgium", lambda names: names[::5]),
    ("example/mmsys18/sd_fs", "sabre/fcc_stepup_sd", lambda names: names[:3]),
    ("example/mmsys18/hd_fs", "sabre/fcc_stepup_hd", lambda names: names[:3]),
)
RULE_TEXT = ("Sabre @09b03bb, files not in shared/data/traces: the 4G/LTE Belgium logs (example/mmsys18/4Glogs) in "
             "sorted order, every 5th from the first; the first 3 FCC step-up SD (sd_fs) and the first 3 HD (hd_fs) "
             "files in sorted order")
TUNING_RULE = (
    ("example/mmsys18/3Glogs", "sabre/3G_hsdpa_norway", lambda names: names),
)
TUNING_RULE_TEXT = ("Sabre @09b03bb, files not in shared/data/traces: every HSDPA 3G log (example/mmsys18/3Glogs), in "
                    "sorted order; one recording group (norway-hsdpa-3g) with the split's tuning-side Norway traces, "
                    "so tuning only")


def lists():
    """(side, list file, rule, rule text) of each list, read when called (tests replace them)."""
    return (("evaluation", LIST_FILE, RULE, RULE_TEXT), ("tuning", TUNING_LIST_FILE, TUNING_RULE, TUNING_RULE_TEXT))


def git(source, *args):
    return subprocess.run(["git", "-C", source] + list(args), check=True, stdout=subprocess.PIPE).stdout


def derive(source, rule=None, rule_text=None):
    """A list file's content: a rule (default RULE, the evaluation list's) applied to the source repository
    at COMMIT."""
    rule, rule_text = (RULE, RULE_TEXT) if rule is None else (rule, rule_text)
    traces = []
    for folder, shared, take in rule:
        names = sorted(os.path.basename(p) for p in
                       git(source, "ls-tree", "--name-only", f"{COMMIT}:{folder}").decode().split())
        have = set(os.listdir(os.path.join(SHARED, shared)))
        for name in take([n for n in names if n not in have]):
            data = git(source, "show", f"{COMMIT}:{folder}/{name}")
            traces.append(dict(name=f"{PREFIX}{shared}/{name}", path=f"{folder}/{name}",
                               sha256=hashlib.sha256(data).hexdigest(), bytes=len(data)))
    return dict(repository=REPOSITORY, commit=COMMIT, rule=rule_text, root="HLSPLAY_EXTRA_TRACES, default "
                "~/.cache/hlsplay/traces-extra", traces=traces)


def side_of(list_file):
    """The split side ("evaluation" or "tuning") of a list file named as a spec names it (relative to the
    repository, or absolute); None for a file that is neither list."""
    path = os.path.realpath(list_file if os.path.isabs(list_file) else os.path.join(REPO, list_file))
    return next((side for side, f, _, _ in lists() if os.path.realpath(f) == path), None)


def load(list_file=None):
    with open(list_file or LIST_FILE) as f:
        return json.load(f)


def names(list_file=LIST_FILE):
    with open(list_file if os.path.isabs(list_file) else os.path.join(REPO, list_file)) as f:
        return [t["name"] for t in json.load(f)["traces"]]


def path_of(name):
    """Where an `extra/…` trace is on this machine."""
    return os.path.join(EXTRA_ROOT, name[len(PREFIX):])


def get(source, list_file=None):
    """Writes every file of a list (default the evaluation list) under EXTRA_ROOT from the source at COMMIT,
    checking its sha256."""
    listed = load(list_file)
    for t in listed["traces"]:
        data = git(source, "show", f"{listed['commit']}:{t['path']}")
        if hashlib.sha256(data).hexdigest() != t["sha256"]:
            raise SystemExit(f"{t['path']} at {listed['commit']}: sha256 differs from extra-traces.json")
        dest = path_of(t["name"])
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "wb") as f:
            f.write(data)
    print(f"{len(listed['traces'])} traces under {EXTRA_ROOT}", file=sys.stderr)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cmd", choices=("derive", "get"))
    ap.add_argument("--source", required=True, help=f"a clone of {REPOSITORY} holding {COMMIT[:7]}")
    ap.add_argument("--write", action="store_true", help="derive: (re)write extra-traces.json")
    a = ap.parse_args(argv)
    if a.cmd == "get":
        for _, list_file, _, _ in lists():
            get(a.source, list_file)
        return 0
    differs = 0
    for side, list_file, rule, rule_text in lists():
        listed = derive(a.source, rule, rule_text)
        text = json.dumps(listed, indent=1) + "\n"
        if a.write:
            with open(list_file, "w") as f:
                f.write(text)
            print(f"wrote {list_file} ({side}): {len(listed['traces'])} traces", file=sys.stderr)
            continue
        same = False
        if os.path.isfile(list_file):
            with open(list_file) as f:
                same = f.read() == text
        differs += not same
        print(f"{list_file} ({side}): {'matches the rule' if same else 'DIFFERS from the rule (--write)'}",
              file=sys.stderr)
    return 1 if differs else 0


if __name__ == "__main__":
    sys.exit(main())
