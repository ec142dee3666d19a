"""examples/python/walkthroughs/*.py, each as its shell twin in
examples/walkthroughs runs: it starts its own local cluster ($TFD), checks
what it printed, and exits 0 only when every check held."""
import os
import pathlib
import subprocess
import sys

import pytest

WALKTHROUGHS = sorted(
    (pathlib.Path(__file__).resolve().parents[2] / "examples" / "python" / "walkthroughs")
    .glob("[0-9][0-9]_*.py"))


def test_each_python_walkthrough_has_its_shell_twin():
    shell = pathlib.Path(__file__).resolve().parents[2] / "examples" / "walkthroughs"
    assert len(WALKTHROUGHS) == 9  # all nine
    for script in WALKTHROUGHS:
        assert (shell / (script.stem + ".sh")).exists(), script.name


@pytest.mark.parametrize("script", WALKTHROUGHS, ids=[w.stem for w in WALKTHROUGHS])
def test_walkthrough(script):
    done = subprocess.run([sys.executable, str(script)], capture_output=True, timeout=120,
                          env=dict(os.environ), cwd=script.parent)
    assert done.returncode == 0, (done.stdout + done.stderr).decode()
