"""Checks of the cluster recipes (docs/cluster.md) without a cluster: the Kubernetes Indexed Job
(Tools/cluster/grid-job.yaml), its merge step (grid-merge.yaml) and the image recipe (Containerfile).
The pods' shell commands are run here with bash, grid.py replaced by a printer, for every completion
index, and the arguments they would pass are parsed by grid.py's own parsers.

Run: python3 -B -m unittest discover -s Tools/tests -p test_cluster.py
"""
import importlib.util, os, re, subprocess, sys, unittest

import yaml

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
CLUSTER = os.path.join(REPO, "Tools", "cluster")
_spec = importlib.util.spec_from_file_location("grid", os.path.join(REPO, "Tools", "characterize", "grid.py"))
grid = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(grid)

GRID_PY = "python3 Tools/characterize/grid.py"


def load_docs(name):
    with open(os.path.join(CLUSTER, name)) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def of_kind(docs, kind):
    return [d for d in docs if d.get("kind") == kind]


def env_of(container):
    return {e["name"]: e.get("value") for e in container.get("env", [])}


def pod_argv(container, extra_env):
    """The argv grid.py would get from this container: its bash command, run with `python3
    Tools/characterize/grid.py` replaced by a printer of its arguments, one per line."""
    cmd, args = container["command"], container["args"]
    assert cmd[:2] == ["/bin/bash", "-c"] and len(args) == 1, (cmd, args)
    script = args[0]
    assert GRID_PY in script, script
    script = script.replace("exec " + GRID_PY, "printf '%s\\n'")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    env.update({k: v for k, v in env_of(container).items() if v is not None})
    env.update(extra_env)
    out = subprocess.run(["/bin/bash", "-c", script], env=env, capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


def containerfile():
    with open(os.path.join(CLUSTER, "Containerfile")) as f:
        return f.read()


def image_tag():
    """The tag the Containerfile's build command gives the image."""
    m = re.search(r"podman build -t (\S+) -f Tools/cluster/Containerfile \.", containerfile())
    assert m, "the Containerfile names no build command with -t"
    return m.group(1)


class IndexedJobTests(unittest.TestCase):
    def setUp(self):
        self.docs = load_docs("grid-job.yaml")
        (self.job,) = of_kind(self.docs, "Job")
        self.pod = self.job["spec"]["template"]["spec"]
        (self.container,) = self.pod["containers"]

    def shards(self):
        return int(env_of(self.container)["SHARDS"])

    def test_indexed_mode_one_completion_per_shard(self):
        spec = self.job["spec"]
        self.assertEqual(spec["completionMode"], "Indexed")
        self.assertEqual(spec["completions"], self.shards())
        # parallelism at most the completions (more would idle); here all shards at once
        self.assertEqual(spec["parallelism"], spec["completions"])
        self.assertEqual(self.pod["restartPolicy"], "Never")

    def test_every_index_runs_its_own_shard_and_all_shards_run(self):
        n = self.shards()
        seen = []
        for index in range(n):
            argv = pod_argv(self.container, {"JOB_COMPLETION_INDEX": str(index), "GRID_ARGS": "--reps 2 --only grid"})
            a = grid.parse_run_args(argv)
            i, count = grid.parse_shard(a.shard)
            self.assertEqual((i, count), (index + 1, n), "grid.py numbers shards from 1; the index from 0")
            self.assertEqual(a.out, f"/results/shard-{i}")
            self.assertEqual((a.reps, a.only), (2, ["grid"]), "GRID_ARGS reaches grid.py")
            seen.append(i)
        self.assertEqual(sorted(seen), list(range(1, n + 1)))

    def test_results_go_to_the_shared_volume(self):
        (pvc,) = of_kind(self.docs, "PersistentVolumeClaim")
        self.assertIn("ReadWriteMany", pvc["spec"]["accessModes"])
        (vol,) = self.pod["volumes"]
        self.assertEqual(vol["persistentVolumeClaim"]["claimName"], pvc["metadata"]["name"])
        (mount,) = self.container["volumeMounts"]
        self.assertEqual((mount["name"], mount["mountPath"]), (vol["name"], "/results"))

    def test_merge_step_takes_every_shard_of_the_job(self):
        (merge,) = of_kind(load_docs("grid-merge.yaml"), "Job")
        mpod = merge["spec"]["template"]["spec"]
        (mc,) = mpod["containers"]
        self.assertEqual(env_of(mc)["SHARDS"], env_of(self.container)["SHARDS"])
        argv = pod_argv(mc, {})
        n = self.shards()
        self.assertEqual(argv, ["merge"] + [f"/results/shard-{k}" for k in range(1, n + 1)] + ["--out", "/results/merged"])
        self.assertEqual(mpod["volumes"], self.pod["volumes"])
        self.assertEqual(mc["volumeMounts"], self.container["volumeMounts"])

    def test_images_are_the_recipes(self):
        (merge,) = of_kind(load_docs("grid-merge.yaml"), "Job")
        workdir = re.search(r"^WORKDIR (\S+)", containerfile(), re.M).group(1)
        for c in (self.container, merge["spec"]["template"]["spec"]["containers"][0]):
            self.assertEqual(c["image"], image_tag())
            self.assertEqual(c["workingDir"], workdir)


class ContainerfileTests(unittest.TestCase):
    def test_debian_12_base(self):
        self.assertRegex(containerfile(), r"(?m)^FROM (docker\.io/library/)?debian:12\s*$")

    def test_builds_with_the_projects_install_script(self):
        text = containerfile()
        self.assertRegex(text, r"(?m)^RUN Tools/install-deps\.sh")
        self.assertIn("swift build -c release --static-swift-stdlib --product hlsplay", text)
        self.assertIn("swift build -c release --static-swift-stdlib --product hls-origin", text)

    def test_files_it_names_exist(self):
        text = containerfile()
        for src in re.findall(r"(?m)^COPY (\S+) ", text):
            if src != ".":
                self.assertTrue(os.path.exists(os.path.join(REPO, src)), src)
        named = set(re.findall(r"\b((?:Tools|Samples)/[\w.\-/]*\w)", text))
        self.assertIn("Tools/install-deps.sh", named)
        for path in sorted(named):
            self.assertTrue(os.path.exists(os.path.join(REPO, path)), f"Containerfile names {path}, which is not in the tree")
        with open(os.path.join(REPO, "Makefile")) as f:
            self.assertRegex(f.read(), r"(?m)^install:", "the Containerfile runs make install")


if __name__ == "__main__":
    unittest.main()
