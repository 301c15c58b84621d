"""Runs independent units of work on this machine or on a Dask distributed cluster (docs/cluster.md).

    import distribute
    results = distribute.run_units(units, run_one, dest=lambda k, u: f"{out}/shards/{k + 1:03d}",
                                   scheduler=None)          # or "tcp://HOST:8786"

`units` is a list of JSON-able values (a grid shard, an ABR trace x rule, ...). `run_one(unit, out_dir)`
runs one of them, writes everything it produces under `out_dir` (a fresh, empty directory) and returns a
small JSON-able record. `run_units` returns one `Result(unit, record, dir, host)` per unit, in the order of
`units` whatever the order they finished in; `dir` is `dest(index, unit)` on *this* machine and holds what
`run_one` wrote there. The caller then merges the directories (grid.py merge_shards, for the grid).

Where the units run:
  - no scheduler: a local process pool of `workers` processes (default: one per CPU), each unit in its own
    process writing straight into `dest(...)`;
  - `scheduler="tcp://HOST:PORT"`: one Dask task per unit on the cluster behind that scheduler. A worker
    runs the unit into a temporary directory of its own and sends the directory back as a gzip'd tar, which
    is unpacked into `dest(...)` here, so the workers need no file system shared with the client. The
    modules named in `upload` (paths of .py files) are sent to every worker first, so the workers run the
    client's code. What `run_one` runs (binaries, sample media) must exist on the workers at the paths the
    unit names: the container image (Tools/cluster/Containerfile) puts everything at the same paths.

`run_one` must be a module-level function (it is pickled by reference), and the units independent: no unit
reads another's output. A unit that raises fails the whole run with its error, after the others finished
(nothing is merged from a partial run).
"""
import concurrent.futures
import io
import multiprocessing
import os
import shutil
import socket
import tarfile
import tempfile
import uuid
from collections import namedtuple

Result = namedtuple("Result", "unit record dir host")


class DistributeError(RuntimeError):
    """A unit failed, or the cluster could not be used; the message says which and why."""


def local_workers():
    """The default pool size: the CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def _fresh_dir(path):
    if os.path.exists(path):
        shutil.rmtree(path)
    os.makedirs(path)


def _run_local(run_one, unit, out_dir):
    _fresh_dir(out_dir)
    return run_one(unit, out_dir), socket.gethostname()


def _run_remote(run_one, unit):
    """On a worker: the unit into a temporary directory, returned as (record, host, tar.gz bytes)."""
    with tempfile.TemporaryDirectory(prefix="hlsplay-unit-") as tmp:
        out_dir = os.path.join(tmp, "out")
        os.makedirs(out_dir)
        record = run_one(unit, out_dir)
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tar:
            tar.add(out_dir, arcname=".")
        return record, socket.gethostname(), buf.getvalue()


def _unpack(data, out_dir):
    _fresh_dir(out_dir)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        members = tar.getmembers()
        for m in members:
            # Only files and directories inside out_dir (Debian 12's Python 3.11.2 predates tarfile's filters).
            parts = m.name.split("/")
            if m.name.startswith("/") or ".." in parts or not (m.isfile() or m.isdir()):
                raise DistributeError(f"a worker sent back {m.name!r}: not a plain file or directory inside its output")
        tar.extractall(out_dir, members=members)


def run_units(units, run_one, dest, *, scheduler=None, workers=None, upload=(), progress=None):
    """Run every unit once (see the module doc); returns [Result] in unit order.
    `progress(index, unit, host)`: called here as each unit finishes."""
    units = list(units)
    dirs = [os.path.abspath(dest(k, u)) for k, u in enumerate(units)]
    if len(set(dirs)) != len(dirs):
        raise DistributeError("two units would write to the same directory: dest() must differ per unit")
    if scheduler:
        return _run_cluster(units, run_one, dirs, scheduler, upload, progress)
    n = workers or local_workers()
    results = [None] * len(units)
    errors = []
    # fork: the children inherit the caller's sys.path and imported modules (run_one's module among them).
    ctx = multiprocessing.get_context("fork")
    with concurrent.futures.ProcessPoolExecutor(max_workers=min(n, max(1, len(units))), mp_context=ctx) as pool:
        futs = {pool.submit(_run_local, run_one, u, d): k for k, (u, d) in enumerate(zip(units, dirs))}
        for f in concurrent.futures.as_completed(futs):
            k = futs[f]
            try:
                record, host = f.result()
            except Exception as e:  # noqa: BLE001 — reported with its unit, after the rest finished
                errors.append((k, e))
                continue
            results[k] = Result(units[k], record, dirs[k], host)
            if progress:
                progress(k, units[k], host)
    _raise_first(errors, units)
    return results


def _raise_first(errors, units):
    if errors:
        k, e = min(errors, key=lambda x: x[0])
        more = f" ({len(errors) - 1} more unit(s) failed too)" if len(errors) > 1 else ""
        raise DistributeError(f"unit {k + 1} of {len(units)} ({units[k]!r}) failed: {type(e).__name__}: {e}{more}")


def _run_cluster(units, run_one, dirs, scheduler, upload, progress):
    try:
        from dask.distributed import Client, as_completed
    except ImportError as e:
        raise DistributeError(f"--scheduler needs Dask distributed ({e}); Tools/install-deps.sh installs it "
                              f"into /opt/hlsplay/python: run with /opt/hlsplay/python/bin/python3")
    try:
        client = Client(scheduler, timeout=30)
    except OSError as e:
        raise DistributeError(f"cannot reach the Dask scheduler at {scheduler}: {e}")
    results = [None] * len(units)
    errors = []
    try:
        for path in upload:
            client.upload_file(path)
        # pure=False: a unit is an experiment run for its outputs, never a cached value.
        # Keys unique to this run: a scheduler shared with earlier runs never hands back their results.
        run_id = uuid.uuid4().hex[:12]
        futs = [client.submit(_run_remote, run_one, u, pure=False, key=f"unit-{run_id}-{k + 1}-of-{len(units)}")
                for k, u in enumerate(units)]
        index = {f.key: k for k, f in enumerate(futs)}
        for f in as_completed(futs):
            k = index[f.key]
            try:
                record, host, data = f.result()
            except Exception as e:  # noqa: BLE001
                errors.append((k, e))
                continue
            _unpack(data, dirs[k])
            results[k] = Result(units[k], record, dirs[k], host)
            if progress:
                progress(k, units[k], host)
    finally:
        client.close()
    _raise_first(errors, units)
    return results
