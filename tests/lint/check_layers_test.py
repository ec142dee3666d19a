#!/usr/bin/env python3
"""Checks scripts/check-layers.py on small trees made here: daemon/ and cli/
may include the op library's interface (OP_INTERFACE) but no concrete kernel
header, while what sits above them (bench/) and kernels/ itself may.

  tests/lint/check_layers_test.py SCRIPT
"""
import os
import subprocess
import sys
import tempfile


def run(script, files):
    """check-layers' exit status and output on a tree holding `files`."""
    with tempfile.TemporaryDirectory() as root:
        for path, text in files.items():
            os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(root, path), "w") as f:
                f.write(text)
        done = subprocess.run([sys.executable, script, root], capture_output=True, text=True,
                              timeout=60)
        return done.returncode, done.stdout


KERNELS = {
    "kernels/state/variable.h": '#include "kernels/framework/resource.h"\n',
    "kernels/framework/resource.h": '#include "common/status.h"\n',
    "kernels/register_all.h": "",
    "common/status.h": "",
}


def main(script):
    problems = []

    def expect(name, files, code, needle):
        rc, out = run(script, {**KERNELS, **files})
        if rc != code or needle not in out:
            problems.append(f"{name}: expected exit {code} with '{needle}', got {rc}:\n{out}")

    expect("daemon through the interface",
           {"daemon/checkpoint/m.cc": '#include "kernels/framework/resource.h"\n'
                                      '#include "kernels/register_all.h"\n'},
           0, "all point down the layers")
    expect("daemon down-casting to a variable",
           {"daemon/checkpoint/m.cc": '#include "kernels/state/variable.h"\n'},
           1, 'daemon/checkpoint/m.cc:1: includes "kernels/state/variable.h", a concrete kernel')
    expect("cli down-casting to a variable",
           {"cli/vars.cc": '\n#include "kernels/state/variable.h"\n'},
           1, 'cli/vars.cc:2: includes "kernels/state/variable.h"')
    expect("bench measuring a kernel",
           {"bench/b.cc": '#include "kernels/state/variable.h"\n'},
           0, "all point down the layers")
    for p in problems:
        print(p)
    print(f"check_layers_test: {4 - len(problems)} of 4 cases pass")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
