"""A unit for test_distribute.py's run_units tests, in a module of its own with no imports from the
repository: run_units pickles it by reference, and Dask workers get this file by upload."""
import os


def square_unit(unit, out_dir):
    """Writes unit² to value.txt and this process's id to sub/pid; returns both."""
    if unit == "boom":
        raise ValueError("this unit fails on purpose")
    with open(os.path.join(out_dir, "value.txt"), "w") as f:
        f.write(str(unit * unit))
    os.makedirs(os.path.join(out_dir, "sub"))
    with open(os.path.join(out_dir, "sub", "pid"), "w") as f:
        f.write(str(os.getpid()))
    return {"square": unit * unit, "pid": os.getpid()}
