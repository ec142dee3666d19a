"""What the deploy/k8s tests share: TAP results, and the manifests.

   from k8s_testlib import check, finish, load_manifests
   docs = load_manifests(os.environ["K8S_DIR"])   # [(file name, object)]
   check(len(docs) > 0, "deploy/k8s holds manifests")
   finish()                                        # prints TAP and exits

Without python3-yaml (scripts/install-deps.sh installs it with
python3-kubernetes) load_manifests reports the whole test as skipped.
"""
import glob
import os
import sys

_results = []


def check(ok, what, detail=""):
    """Records one result; `detail` (its last 40 lines) is shown on failure."""
    _results.append((bool(ok), what, detail))
    return ok


def skip(what, reason):
    """Records a check that could not run here, with the reason meson shows."""
    _results.append((True, "%s # SKIP %s" % (what, reason), ""))


def finish():
    """Prints the results as TAP, for meson, and exits: 1 if any failed."""
    failed = 0
    for i, (ok, what, detail) in enumerate(_results, 1):
        print(("ok" if ok else "not ok") + " %d - %s" % (i, what))
        if not ok:
            failed += 1
            for line in str(detail).splitlines()[-40:]:
                print("# " + line)
    print("1..%d" % len(_results))
    sys.exit(1 if failed else 0)


def load_manifests(k8s_dir):
    """Every object of k8s_dir/*.yaml, as (file name, object), files sorted."""
    try:
        import yaml
    except ImportError:
        print("1..0 # SKIP python3-yaml is not installed (scripts/install-deps.sh installs it)")
        sys.exit(0)
    docs = []
    for path in sorted(glob.glob(os.path.join(k8s_dir, "*.yaml"))):
        with open(path) as f:
            docs += [(os.path.basename(path), o) for o in yaml.safe_load_all(f) if o is not None]
    return docs
