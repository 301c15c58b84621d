#!/usr/bin/env python3
"""tagged-tests.py TAG [TAG ...] [--binary TEST_BINARY] -- prints, one a line,
`--skip` and an anchored regular expression for every suite or test that
declares any of the Swift Testing tags `.TAG`, for `swift test`:

    Tools/test.sh --fast  =  swift test ... $(Tools/tagged-tests.py realTime long)

The split between the fast loop and the real-time tests is declared in the
tests (`@Suite(.tags(.realTime))`), not listed here. Swift 6.3's `swift test
--filter/--skip` match test IDs only (`tag:` prefixes arrive with ST-0025, a
later toolchain), so this reads the tags from the built test binary's own
listing (`--list-tests` as an ABI v0 event stream, whose test records carry
`_tags`) and names the tagged IDs. The binary is listed once, whatever the
number of tags; the IDs come tag by tag in the order given (each tag's sorted),
and a test carrying several of the tags is named once. Skipping a suite skips
everything in it.

TEST_BINARY defaults to `hlsplayPackageTests.xctest` in `swift build
--show-bin-path`. The earlier form `tagged-tests.py TAG TEST_BINARY` still
works: a tag is a Swift identifier, so a last argument that is not one (a path,
`hlsplayPackageTests.xctest`) is read as TEST_BINARY. Exits 1, naming them,
when a tag is declared by no test: either the tag was removed or the
toolchain's listing stopped reporting tags, and a fast run that silently
played those tests in real time would hide that.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

# Characters with a meaning in a Swift regular expression; a test ID is matched
# literally, so each is escaped.
REGEX_METACHARACTERS = set("\\^$.|?*+()[]{}")
# What a tag's name is (a Swift identifier, as the tags in each test target's
# Tags.swift are); an argument that is not one is the old positional TEST_BINARY.
TAG_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# The test binary's name in `swift build --show-bin-path`.
DEFAULT_BINARY_NAME = "hlsplayPackageTests.xctest"


def literal_regex(text):
    return "".join("\\" + c if c in REGEX_METACHARACTERS else c for c in text)


def parse_args(argv):
    """(tags, binary or None) from the command line; exits 2 with the usage on a wrong one."""
    ap = argparse.ArgumentParser(prog="tagged-tests.py", usage="%(prog)s TAG [TAG ...] [--binary TEST_BINARY]",
                                 description="`--skip` lines for every test declaring any of the tags.")
    ap.add_argument("tags", nargs="+", metavar="TAG", help="a Swift Testing tag, without its dot (realTime)")
    ap.add_argument("--binary", metavar="TEST_BINARY",
                    help=f"the test binary (default: {DEFAULT_BINARY_NAME} in `swift build --show-bin-path`)")
    a = ap.parse_args(argv)
    tags, binary = list(a.tags), a.binary
    if len(tags) > 1 and not TAG_NAME.fullmatch(tags[-1]):  # the old form: TAG TEST_BINARY
        if binary is not None:
            ap.error(f"two test binaries: {tags[-1]} and --binary {binary}")
        binary = tags.pop()
    bad = [t for t in tags if not TAG_NAME.fullmatch(t)]
    if bad:
        ap.error(f"not a tag name: {', '.join(bad)}")
    return tags, binary


def listed_tests(binary):
    """The test records of the binary's `--list-tests` event stream."""
    with tempfile.TemporaryDirectory() as tmp:
        stream = os.path.join(tmp, "tests.jsonl")
        subprocess.run([binary, "--testing-library", "swift-testing", "--list-tests",
                        "--event-stream-version", "0", "--event-stream-output-path", stream],
                       check=True, stdout=subprocess.DEVNULL)
        with open(stream, encoding="utf-8") as f:
            records = [json.loads(line) for line in f if line.strip()]
    return [r["payload"] for r in records if r.get("kind") == "test"]


def main(argv=None):
    tags, binary = parse_args(sys.argv[1:] if argv is None else argv)
    if binary is None:
        bin_path = subprocess.run(["swift", "build", "--show-bin-path"], check=True,
                                  capture_output=True, text=True).stdout.strip()
        binary = os.path.join(bin_path, DEFAULT_BINARY_NAME)
    if not os.path.exists(binary):
        sys.exit(f"tagged-tests.py: no test binary at {binary} (run `swift build --build-tests`)")
    tests = listed_tests(binary)
    ids, undeclared = [], []  # tag by tag in the order given, each tag's IDs sorted, each ID once
    for tag in tags:
        tagged = sorted({t["id"] for t in tests if "." + tag in t.get("_tags", [])})
        if not tagged:
            undeclared.append("." + tag)
        ids += [i for i in tagged if i not in ids]
    if undeclared:
        sys.exit(f"tagged-tests.py: no test in {binary} declares the tag{'s' if len(undeclared) > 1 else ''} "
                 f"{', '.join(undeclared)} (removed, or this toolchain's test listing no longer reports tags)")
    for test_id in ids:
        print("--skip")
        print("^" + literal_regex(test_id) + "$")


if __name__ == "__main__":
    main()
