"""The Swift sources are formatted as .swift-format says (swift-format, part of the
toolchain): `swift format lint --strict` over Sources, Tests and Package.swift finds
nothing. To format: swift format --configuration .swift-format --in-place --parallel -r Sources Tests Package.swift

Run: python3 -B -m unittest discover -s Tools/tests -p test_format.py
"""
import os, subprocess, tempfile, unittest

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def lint(*paths):
    return subprocess.run(["swift", "format", "lint", "--strict", "--configuration", os.path.join(REPO, ".swift-format"),
                           "--parallel", "-r", *paths], cwd=REPO, capture_output=True, text=True, timeout=600)


class FormatTests(unittest.TestCase):
    def test_sources_and_tests_are_formatted(self):
        result = lint("Sources", "Tests", "Package.swift")
        self.assertEqual(result.returncode, 0, "swift format lint found:\n" + (result.stderr + result.stdout)[-4000:])

    def test_a_line_over_the_limit_is_found(self):
        # The check can fail: a 200-character line is reported.
        with tempfile.TemporaryDirectory(dir=REPO) as d:
            path = os.path.join(d, "Long.swift")
            with open(path, "w") as f:
                f.write("let x = [" + ", ".join(["1"] * 80) + "]\n")
            result = lint(os.path.relpath(path, REPO))
            self.assertNotEqual(result.returncode, 0)
            self.assertIn("Long.swift", result.stderr + result.stdout)


if __name__ == "__main__":
    unittest.main()
