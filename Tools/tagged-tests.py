#!/usr/bin/env python3
"""tagged-tests.py TAG [TEST_BINARY] -- prints, one a line, `--skip` and an
anchored regular expression for every suite or test that declares the Swift
Testing tag `.TAG`, for `swift test`:

    Tools/test.sh --fast  =  swift test ... $(Tools/tagged-tests.py realTime)

The split between the fast loop and the real-time tests is declared in the
tests (`@Suite(.tags(.realTime))`), not listed here. Swift 6.3's `swift test
--filter/--skip` match test IDs only (`tag:` prefixes arrive with ST-0025, a
later toolchain), so this reads the tags from the built test binary's own
listing (`--list-tests` as an ABI v0 event stream, whose test records carry
`_tags`) and names the tagged IDs. Skipping a suite skips everything in it.

TEST_BINARY defaults to `hlsplayPackageTests.xctest` in `swift build
--show-bin-path`. Exits 1 when no test declares the tag: either the tags were
removed or the toolchain's listing stopped reporting them, and a fast run that
silently played everything in real time would hide that.
"""
import json
import os
import subprocess
import sys
import tempfile

# Characters with a meaning in a Swift regular expression; a test ID is matched
# literally, so each is escaped.
REGEX_METACHARACTERS = set("\\^$.|?*+()[]{}")


def literal_regex(text):
    return "".join("\\" + c if c in REGEX_METACHARACTERS else c for c in text)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: tagged-tests.py TAG [TEST_BINARY]")
    tag = "." + sys.argv[1]
    if len(sys.argv) == 3:
        binary = sys.argv[2]
    else:
        bin_path = subprocess.run(["swift", "build", "--show-bin-path"], check=True,
                                  capture_output=True, text=True).stdout.strip()
        binary = os.path.join(bin_path, "hlsplayPackageTests.xctest")
    with tempfile.TemporaryDirectory() as tmp:
        stream = os.path.join(tmp, "tests.jsonl")
        subprocess.run([binary, "--testing-library", "swift-testing", "--list-tests",
                        "--event-stream-version", "0", "--event-stream-output-path", stream],
                       check=True, stdout=subprocess.DEVNULL)
        with open(stream, encoding="utf-8") as f:
            records = [json.loads(line) for line in f if line.strip()]
    ids = sorted(r["payload"]["id"] for r in records
                 if r.get("kind") == "test" and tag in r["payload"].get("_tags", []))
    if not ids:
        sys.exit(f"tagged-tests.py: no test in {binary} declares the tag {tag} "
                 "(removed, or this toolchain's test listing no longer reports tags)")
    for test_id in ids:
        print("--skip")
        print("^" + literal_regex(test_id) + "$")


if __name__ == "__main__":
    main()
