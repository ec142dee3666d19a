#!/usr/bin/env python3
"""Checks that no function outside tests is longer than 120 lines.

A function is where the next change lands; past a screen or two a reader
can no longer hold it at once (docs/architecture.md's habits: split it into
steps with names). The count runs from a function body's opening brace to
its closing one, lambdas inside included. Tests are exempt: a test case
reads top to bottom as a story.

The scan is lexical, not a compiler's: comments, strings, character
literals and preprocessor lines are blanked, then a `{` whose header (the
text since the last `;`, `{` or `}`) holds a `(` and does not start with
class/struct/union/enum/namespace/extern or end in `=` opens a function
body, unless one is open already.

  scripts/check-function-length.py [ROOT] [--limit N] [--list N]

Prints each function over the limit as FILE:LINE LINES NAME and exits 1
when there is one; --list N prints the N longest instead, exit 0.
"""
import os
import re
import sys

SOURCE_SUFFIXES = (".h", ".cc", ".cu", ".cuh", ".hpp", ".cpp")
SKIP_DIRS = {".git", "deploy", "docs", "scripts", "tests", "subprojects", "build"}
NOT_A_FUNCTION = re.compile(r"(template\s*<.*>\s*)?(class|struct|union|enum|namespace|extern)\b", re.S)


def blank(src):
    """src with comments, strings, char literals and directives blanked, lines kept."""
    out, i, n = [], 0, len(src)
    while i < n:
        if src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
            continue
        if src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n - 2 if j < 0 else j
            out.append("\n" * src.count("\n", i, j + 2))
            i = j + 2
            continue
        raw = re.match(r'R"([^(\s]*)\(', src[i:i + 20])
        if raw:
            end = ")" + raw.group(1) + '"'
            j = src.find(end, i)
            j = n - len(end) if j < 0 else j
            out.append('""' + "\n" * src.count("\n", i, j))
            i = j + len(end)
            continue
        c = src[i]
        if c == '"' or (c == "'" and not (i > 0 and src[i - 1].isalnum())):
            j = i + 1
            while j < n and src[j] != c and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            out.append('""')
            i = j + 1
            continue
        if c == "#" and (i == 0 or src[i - 1] == "\n"):
            j = i
            while True:
                k = src.find("\n", j)
                if k < 0:
                    k = n
                    break
                if src[k - 1] == "\\":
                    j = k + 1
                    continue
                break
            out.append("\n" * src.count("\n", i, k))
            i = k
            continue
        out.append(c)
        i += 1
    return "".join(out)


def functions(path):
    """(lines, first line, name) of each function body in path."""
    s = blank(open(path, encoding="utf-8", errors="replace").read())
    depth, header_start, open_at, found = 0, 0, None, []
    for i, c in enumerate(s):
        if c == "{":
            header = s[header_start:i].strip()
            if (open_at is None and "(" in header and not NOT_A_FUNCTION.match(header)
                    and not header.endswith("=")):
                open_at = (depth, i, re.sub(r"\s+", " ", header)[-80:])
            depth += 1
            header_start = i + 1
        elif c == "}":
            depth -= 1
            header_start = i + 1
            if open_at is not None and depth == open_at[0]:
                start = open_at[1]
                found.append((s.count("\n", start, i) + 1, s.count("\n", 0, start) + 1, open_at[2]))
                open_at = None
        elif c == ";":
            header_start = i + 1
    return found


def main(argv):
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    limit, listing = 120, 0
    args = list(argv[1:])
    while args:
        a = args.pop(0)
        if a == "--limit":
            limit = int(args.pop(0))
        elif a == "--list":
            listing = int(args.pop(0))
        else:
            root = a
    rows, files = [], 0
    for d, dirs, names in os.walk(root):
        rel = os.path.relpath(d, root)
        dirs[:] = sorted(x for x in dirs if not (rel == "." and x in SKIP_DIRS)
                         and not x.startswith("build"))
        for name in sorted(names):
            if not name.endswith(SOURCE_SUFFIXES):
                continue
            path = os.path.join(d, name)
            files += 1
            for lines, line, fn in functions(path):
                rows.append((lines, os.path.relpath(path, root), line, fn))
    rows.sort(reverse=True)
    if listing:
        for lines, path, line, fn in rows[:listing]:
            print(f"{path}:{line} {lines} {fn}")
        return 0
    over = [r for r in rows if r[0] > limit]
    for lines, path, line, fn in over:
        print(f"{path}:{line} {lines} lines (at most {limit}): {fn}")
    if over:
        print(f"{len(over)} functions over {limit} lines; split each into named steps")
        return 1
    print(f"no function over {limit} lines in {files} files")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
