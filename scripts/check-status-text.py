#!/usr/bin/env python3
"""Checks that no code outside tests decides on a Status message's text.

An error's meaning travels in its code and its typed details
(common/status_details.h: the task, the node and op, a reason); its message
is for people, who may reword it at any time. So outside tests/ no code may
search or compare the text of `.message()` or `.ToString()`: not directly
(`s.message().find("...")`, `s.message() == ...`) and not through a name
bound to it (`const std::string& m = s.message(); m.find(...)`). Building a
new message from the old one (`WithContext`, concatenation) is fine.

daemon/rpc/kj_status.cc is exempt: it is the one place that reads a status
back out of a kj::Exception's description, where the text is the wire.

  scripts/check-status-text.py [ROOT]   # ROOT: the source tree, by default this script's ../

Prints each decision as FILE:LINE and exits 1 when there is one; exits 0 and
says how many files it checked otherwise.
"""
import os
import re
import sys

SOURCE_SUFFIXES = (".h", ".cc", ".cu", ".cuh", ".hpp", ".cpp")
SKIP_DIRS = {".git", "deploy", "docs", "scripts", "tests", "subprojects"}
EXEMPT = {"daemon/rpc/kj_status.cc"}

# The text of a status: `.message()` of anything, or `.status().ToString()`
# (a bare ToString() is as often a shape's or a name's, which is no error).
TEXT = r"(?:\.message\(\)|\.status\(\)\.ToString\(\))"
# What decides on text: a search, a comparison, a prefix or suffix test.
SEARCH = r"\.(?:find|rfind|find_first_of|find_last_of|compare|starts_with|ends_with|contains)\s*\("
COMPARE = r"\s*(?:==|!=)"
DIRECT = re.compile(TEXT + r"\s*(?:" + SEARCH + "|" + COMPARE + ")")
COMPARED_TO = re.compile(r"(?:==|!=)\s*[\w:.\->()\[\]]*" + TEXT)
# A name bound to the text: `const std::string& m = s.message();`,
# `std::string_view text(s.message());`, `auto m = ...ToString();`.
BOUND = re.compile(r"(?:[&>*]|\bauto|\bstring|\bstring_view)\s+(\w+)\s*(?:=\s*|\(|\{)\s*"
                   r"[\w:.\->()\[\]]*" + TEXT + r"\s*[;)}]")
STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def sources(root):
    for top, dirs, files in os.walk(root):
        rel_top = os.path.relpath(top, root)
        dirs[:] = sorted(d for d in dirs
                         if not (rel_top == "." and (d in SKIP_DIRS or d.startswith("build"))))
        for f in sorted(files):
            if f.endswith(SOURCE_SUFFIXES):
                yield os.path.normpath(os.path.join(rel_top, f))


def code_of(line):
    """The line without its string literals and its // comment."""
    line = STRING.sub('""', line)
    cut = line.find("//")
    return line if cut < 0 else line[:cut]


def decisions(text):
    """(line number, line) of each decision on a status's text in a file."""
    raw = text.splitlines()
    lines = [code_of(l) for l in raw]
    found = []
    bound = set()
    for n, line in enumerate(lines, 1):
        if line.startswith("}"):  # the end of a top-level function: its names go
            bound.clear()
        for m in BOUND.finditer(line):
            bound.add(m.group(1))
        if DIRECT.search(line) or COMPARED_TO.search(line):
            found.append((n, raw[n - 1].strip()))
            continue
        for name in bound:
            if re.search(r"\b" + name + r"\s*(?:" + SEARCH + "|" + COMPARE + ")", line):
                found.append((n, raw[n - 1].strip()))
                break
    return found


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    checked = 0
    bad = []
    for path in sources(root):
        if path in EXEMPT:
            continue
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            text = f.read()
        checked += 1
        bad += [(path, n, line) for n, line in decisions(text)]
    for path, n, line in bad:
        print(f"{path}:{n}: decides on a status's text: {line}")
    if bad:
        print(f"{len(bad)} decision(s) on message text: decide on the code or the details "
              "(common/status_details.h) instead")
        return 1
    print(f"checked {checked} files: no decision on a status's text")
    return 0


if __name__ == "__main__":
    sys.exit(main())
