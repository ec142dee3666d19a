#!/usr/bin/env python3
"""Runs clang's thread-safety analysis over the files that hold locked state.

GCC builds the tree and ignores the GUARDED_BY and REQUIRES annotations
(common/thread_annotations.h); clang's -Wthread-safety is what checks them.
Rather than a second build with clang, this takes each translation unit's
command from a build directory's compile_commands.json and runs
clang++ -fsyntax-only on it with only the thread-safety warnings on, as
errors. It checks the files that use the annotations or a lock (MutexLock),
and those that include, directly, a header with annotated members or
functions: a file that calls a REQUIRES function without the lock may
mention no lock at all. (A file that reaches such a header only through
another header is not checked here; the fuzz lane, scripts/fuzz-smoke.sh,
builds every file with clang and -Wthread-safety.)

It also fails on a comment that says a member is "guarded by" a mutex:
that is what GUARDED_BY says, checked.

  scripts/check-thread-safety.py BUILD_DIR [SOURCE_ROOT]

Exits 0 when every file passes; 1 naming the files that do not (clang's
messages above), or when there is no clang++ (scripts/install-deps.sh
installs it) or nothing to check. CLANGXX picks the compiler; JOBS (default
2) how many run at once.
"""
import functools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

ANNOTATION = re.compile(r"\b(GUARDED_BY|PT_GUARDED_BY|REQUIRES|EXCLUDES|ACQUIRE|RELEASE|"
                        r"RETURN_CAPABILITY|NO_THREAD_SAFETY_ANALYSIS|MutexLock)\b")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
SOURCE_SUFFIXES = (".cc", ".cpp", ".c++")
GUARDED_COMMENT = re.compile(r"//.*\bguarded by\b", re.I)
# Only the analysis, as errors; clang's other warnings are the fuzz lane's.
CHECK_FLAGS = ["-fsyntax-only", "-Wno-everything", "-Wthread-safety", "-Werror=thread-safety"]


def find_clang():
    for name in ([os.environ["CLANGXX"]] if os.environ.get("CLANGXX") else
                 ["clang++", "clang++-14", "clang++-15", "clang++-16"]):
        path = shutil.which(name)
        if path:
            return path
    return None


@functools.lru_cache(maxsize=None)
def annotated(path):
    """Whether the file at `path` uses the annotations (False when there is none)."""
    try:
        with open(path, errors="replace") as f:
            return bool(ANNOTATION.search(f.read()))
    except OSError:
        return False


def wanted(source, root):
    """Whether `source` uses the annotations or includes a header that does."""
    with open(source, errors="replace") as f:
        text = f.read()
    if ANNOTATION.search(text):
        return True
    return any(annotated(os.path.join(root, h)) for h in INCLUDE.findall(text))


def guarded_comments(root, build):
    """FILE:LINE of each comment in the tree that says "guarded by"."""
    found = []
    for top, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".")
                         and os.path.join(top, d) != build and not (top == root and d.startswith("build")))
        for name in sorted(files):
            if not name.endswith((".h", ".cc", ".cu", ".cuh")):
                continue
            path = os.path.join(top, name)
            with open(path, errors="replace") as f:
                for number, line in enumerate(f, 1):
                    if GUARDED_COMMENT.search(line):
                        found.append(f"{os.path.relpath(path, root)}:{number}")
    return found


def clang_command(entry, clang):
    """The entry's compile command for clang, checking only."""
    args = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
    # The compiler is the first word that is not a launcher (ccache).
    while args and os.path.basename(args[0]) in ("ccache", "sccache", "distcc"):
        args = args[1:]
    out, skip = [clang], False
    for a in args[1:]:
        if skip:
            skip = False
        elif a in ("-o", "-MF", "-MQ", "-MT"):
            skip = True
        elif a in ("-c", "-MD", "-MMD") or a.startswith("-W") or a.startswith("-fdiagnostics-color"):
            continue
        else:
            out.append(a)
    return out + CHECK_FLAGS


def check(entry, clang):
    result = subprocess.run(clang_command(entry, clang), cwd=entry["directory"],
                            capture_output=True, text=True)
    return result.returncode, result.stdout + result.stderr


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    build = os.path.abspath(sys.argv[1])
    root = os.path.abspath(sys.argv[2] if len(sys.argv) > 2
                           else os.path.join(os.path.dirname(__file__), ".."))
    comments = guarded_comments(root, build)
    for where in comments:
        print(f"{where}: a \"guarded by\" comment; say GUARDED_BY(mu) on the member instead")
    clang = find_clang()
    if clang is None:
        print("check-thread-safety: no clang++ found (CLANGXX, clang++, clang++-14..16); "
              "./scripts/install-deps.sh installs Debian's clang")
        return 1
    db = os.path.join(build, "compile_commands.json")
    try:
        with open(db) as f:
            entries = json.load(f)
    except (OSError, ValueError) as e:
        print(f"check-thread-safety: cannot read {db}: {e}")
        return 1
    todo, seen = [], set()
    for e in entries:
        source = os.path.normpath(os.path.join(e["directory"], e["file"]))
        if (not source.endswith(SOURCE_SUFFIXES) or not source.startswith(root + os.sep)
                or source.startswith(build + os.sep) or source in seen):
            continue
        seen.add(source)
        if wanted(source, root):
            todo.append((os.path.relpath(source, root), e))
    if not todo:
        print(f"check-thread-safety: no file in {db} uses the annotations; nothing checked")
        return 1
    jobs = max(1, int(os.environ.get("JOBS", "2")))
    with ThreadPoolExecutor(jobs) as pool:
        results = list(pool.map(lambda t: (t[0], *check(t[1], clang)), todo))
    failed = [name for name, rc, _ in results if rc != 0]
    for name, rc, output in results:
        if rc != 0:
            print(output.rstrip())
    if failed:
        print(f"check-thread-safety: {len(failed)} of {len(todo)} files fail "
              f"{os.path.basename(clang)} -Wthread-safety: {', '.join(failed)}")
        return 1
    if comments:
        print(f"check-thread-safety: {len(comments)} \"guarded by\" comments (above)")
        return 1
    print(f"check-thread-safety: {len(todo)} files pass {os.path.basename(clang)} -Wthread-safety")
    return 0


if __name__ == "__main__":
    sys.exit(main())
