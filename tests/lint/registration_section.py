#!/usr/bin/env python3
"""Checks that the tfd binary holds its op registration in one place.

daemon/registration.ld gathers the functions every task runs at start-up to
register the ops (the Register*Ops function of each kernel file) in the
section .text.tfd_registration, so that an idle task maps a few hundred KiB
of them rather than the 64 KiB around each one spread among the kernels
(issue 39). Nothing fails when that stops working -- a renamed type the
script's patterns miss, kernels/ compiled without -ffunction-sections, the
script no longer given to the link -- except the task's RSS; this check
makes it fail here instead.

  tests/lint/registration_section.py TFD GROUPED

TFD is the binary; GROUPED is 'true' when meson gave the link the script
(it does not with a linker without INSERT, such as gold): the check is
then skipped (exit 77), and says so. Exit 1, naming what is wrong, when the
section is missing or a registration function lies outside it.
"""
import re
import subprocess
import sys

SECTION = ".text.tfd_registration"
# Demangled: tfd::kernels::RegisterTrigOps(tfd::OpRegistry&), and the like.
REGISTRATION = re.compile(r"^tfd::(\w+::)*Register\w*\(tfd::OpRegistry&\)$")
# Fewer than this many means the binary is not what this check expects:
# kernels/register_all.cc calls a dozen families, each several files.
MIN_FUNCTIONS = 20


def tool(*args):
    return subprocess.run(args, capture_output=True, text=True, check=True, timeout=60).stdout


def section_range(binary):
    """(start, end) of SECTION's addresses in `binary`, or None."""
    for line in tool("readelf", "-SW", binary).splitlines():
        m = re.search(r"\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", line)
        if m and m.group(1) == SECTION:
            start = int(m.group(2), 16)
            return start, start + int(m.group(3), 16)
    return None


def registration_functions(binary):
    """{demangled name: address} of the registration functions defined in `binary`."""
    found = {}
    for line in tool("nm", "-C", "--defined-only", binary).splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[1] in "tT" and REGISTRATION.match(parts[2]):
            found[parts[2]] = int(parts[0], 16)
    return found


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: registration_section.py TFD GROUPED")
    binary, grouped = sys.argv[1], sys.argv[2]
    if grouped != "true":
        print(f"skipped: the linker does not take daemon/registration.ld (meson.build), "
              f"so {binary} is linked without it")
        return 77
    where = section_range(binary)
    if where is None:
        print(f"{binary}: no section {SECTION}: was daemon/registration.ld given to the link?")
        return 1
    functions = registration_functions(binary)
    if len(functions) < MIN_FUNCTIONS:
        print(f"{binary}: expected at least {MIN_FUNCTIONS} functions like "
              f"tfd::kernels::RegisterTrigOps(tfd::OpRegistry&), found {len(functions)}")
        return 1
    outside = sorted(name for name, addr in functions.items() if not where[0] <= addr < where[1])
    for name in outside:
        print(f"{binary}: {name} is outside {SECTION} [{where[0]:#x}, {where[1]:#x})")
    if outside:
        print(f"{len(outside)} of {len(functions)} registration functions outside {SECTION}: "
              "is kernels/ compiled with -ffunction-sections, and do "
              "daemon/registration.ld's patterns still match their names?")
        return 1
    print(f"{len(functions)} registration functions in {SECTION} "
          f"({(where[1] - where[0]) // 1024} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
