"""What the Tools tests share, as Tests/HLSPlayerTests/Support.swift does for the Swift tests: the Tools
folders on the import path (so a test imports Tools/abr's and Tools/train's scripts by name), the
committed samples, results file and commits the tests read, and small helpers. A test module puts this
folder on the path first (discover does it already; `-m unittest Tools.tests.test_x` does not):

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import support  # noqa: E402
"""
import collections, importlib.util, json, os, shutil, subprocess, sys, tempfile, unittest

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.dirname(HERE)
REPO = os.path.dirname(TOOLS)
ABR = os.path.join(TOOLS, "abr")
TRAIN = os.path.join(TOOLS, "train")
for folder in (TRAIN, ABR):
    if folder not in sys.path:
        sys.path.insert(0, folder)

# The binaries the tests run: HLSPLAY_TOOLS_TEST_BUILD=release|debug|DIR (hlsplay_tools.build_dir).
BUILD = os.environ.get("HLSPLAY_TOOLS_TEST_BUILD", "debug")
# The doc whose generated blocks the ABR samples must re-derive byte for byte.
ABR_DOC = os.path.join(REPO, "docs", "abr.md")
# The training results file the published keys live in.
RESULTS_V2 = os.path.join(TRAIN, "results-v2.json")
# The last commit before the training specs: collect.py still held the collection as constants
# (TRAIN_TRACES, OFFSET_FRACTIONS, …) and onoff-start-gate.sh ran its loops itself. The tests of the
# published specs read both from git here and check that the specs declare what they ran.
PRE_SPEC_COMMIT = "b1eeea02dc207798f859ad39f4d43b5973fc79d3"
# The trainer's report steps need numpy, SciPy and scikit-learn (Tools/install-deps.sh).
HAS_TRAINER_DEPS = all(importlib.util.find_spec(m) is not None for m in ("numpy", "scipy", "sklearn"))



def at_pre_spec_commit(path):
    """The text of PATH (from the repository's root) at PRE_SPEC_COMMIT; unittest.SkipTest, saying why,
    when git cannot show it (no git, a shallow clone)."""
    try:
        return subprocess.run(["git", "-C", REPO, "show", f"{PRE_SPEC_COMMIT}:{path}"],
                              capture_output=True, text=True, check=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError) as e:
        raise unittest.SkipTest(f"git cannot show {os.path.basename(path)} at {PRE_SPEC_COMMIT[:10]}: {e}")


Sample = collections.namedtuple("Sample", "folder spec raw results")


def sample(tool, name, raw="run"):
    """The committed sample Tools/TOOL/NAME: its folder, its spec.json, the folder of its raw files
    (RAW: the run or the collector's data) and its results.json (the training samples have one)."""
    folder = os.path.join(TOOLS, tool, name)
    return Sample(folder, os.path.join(folder, "spec.json"), os.path.join(folder, raw),
                  os.path.join(folder, "results.json"))


def read(path):
    """A file's bytes (the samples are compared byte for byte)."""
    with open(path, "rb") as f:
        return f.read()


def temp_dir(test, prefix="tools-test-"):
    """A new temporary folder, removed with all it holds when `test` ends."""
    d = tempfile.mkdtemp(prefix=prefix)
    test.addCleanup(shutil.rmtree, d, True)
    return d


def write_spec(test, spec, folder=None, name="spec.json"):
    """`spec` written as JSON to NAME in FOLDER (default: a temporary folder removed when `test` ends);
    its path, for a spec loader or a runner to read."""
    path = os.path.join(folder or temp_dir(test), name)
    with open(path, "w") as f:
        json.dump(spec, f)
    return path
