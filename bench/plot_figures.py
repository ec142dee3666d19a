#!/usr/bin/python3
"""docs/performance.md's charts, from the figures the benchmarks write.

Every bench's --json FILE writes one schema (bench/figures_json.h,
"tfd-bench-figures/1"); bench/data/ holds the latest sitting's file per area.

  /usr/bin/python3 bench/plot_figures.py                  # every chart: bench/data/*.json -> bench/data/*.png
  /usr/bin/python3 bench/plot_figures.py --table FILE...  # check FILEs and print their figures as tables
  /usr/bin/python3 bench/plot_figures.py --peers PEERS.jsonl --into FILE
      # add ../shared/peers/run.sh's training figures (mlp, eigen, ps, ps_big) to a train_bench file

Debian's /usr/bin/python3 with python3-matplotlib (3.6) runs it; nothing else is needed.
Exit status: 0; 1 when a file is missing or does not follow the schema; 2 for bad usage.
"""
import argparse
import json
import os
import sys

SCHEMA = "tfd-bench-figures/1"
HERE = os.path.dirname(os.path.abspath(__file__))

# One chart per area of docs/performance.md: its panels, each a table of one
# data file drawn as grouped bars (a group per row, a bar per series). A
# figure's range is drawn as an error bar unless the panel says no_range (a
# range of latencies runs to the slowest sample); log draws the values'
# axis in log scale.
CHARTS = {
    "data_plane.png": [
        dict(file="transfers.json", table="transfer", title="Streams, the default (GB/s, higher is better)",
             series=["tfd (--data-plane-transports=stream)", "raw TCP", "torch rpc push", "gloo send"]),
        dict(file="transfers.json", table="transfer", title="One host: --data-plane-transports=shm (GB/s)",
             series=["tfd (--data-plane-transports=shm)", "memcpy warm", "torch rpc push"]),
    ],
    "step_path.png": [
        dict(file="empty_runs.json", table="empty run", title="Empty run, p50 (µs, lower is better)",
             series=["raw TCP", "tfd"]),
        dict(file="empty_runs_polling.json", table="empty run",
             title="Polling event loops, p50 (µs, lower is better)",
             series=["raw TCP", "tfd", "raw TCP, echo polling", "raw TCP, relay and echo polling",
                     "tfd, --spin-wait-us 150"]),
    ],
    "training.png": [
        dict(file="train_classic.json", table="classic", title="Classic model (steps/s, higher is better)",
             rows=["one process, CPU A", "1 ps + 1 worker", "1 ps + 2 workers, aggregate"],
             series=["tfd", "tfd, worker in the trainer", "tfd, workers in their trainers", "torch RPC ps",
                     "torch eager", "hand-written Eigen"]),
        dict(file="train_large.json", table="large", title="5.8 M-parameter model (steps/s)",
             rows=["one process, CPU A", "2 ps + 1 worker", "2 ps + 2 workers, aggregate"],
             series=["tfd", "tfd, unpinned", "torch RPC ps"]),
    ],
    "kernels.png": [
        dict(file="kernels.json", table="kernels", title="Classic step's kernels: pace against hand-written Eigen",
             series=["pace"], horizontal=True, lines=[0.8, 1.0]),
    ],
    "gpu.png": [
        dict(file="gpu.json", table="classic", title="Classic model, one process (steps/s)",
             series=["tfd CPU", "tfd GPU", "torch CPU", "torch GPU"]),
        dict(file="gpu.json", table="large", title="5.8 M-parameter model, one process (steps/s)",
             series=["tfd CPU", "tfd GPU", "torch CPU", "torch GPU"]),
    ],
    "load.png": [
        dict(file="load.json", table="step latency", title="64 clients at once: step latency (µs)",
             series=["64 clients"]),
        dict(file="load.json", table="RSS", title="Daemons' resident memory (MiB)", series=["ps:0", "worker:0"]),
    ],
    "scaling.png": [
        dict(file="scale/before.json", table="start", title="Before: from tfctl start (s), tasks one after another",
             series=["every task ready", "first fan-out step done"]),
        dict(file="scale/after.json", table="start", title="After: from tfctl start (s), tasks started at once",
             series=["every task ready", "first fan-out step done"]),
        dict(file="scale/after.json", table="fan-out step", title="Fan-out step: CPU per remote partition (µs)",
             series=["CPU per remote partition"]),
        dict(file="scale/after.json", table="idle task", title="Idle task's memory (MiB)",
             series=["RSS per task", "private memory per task"]),
    ],
    "scaling_training.png": [
        dict(file="scale/async.json", table="async steps", title="Async: ps CPU per worker-step (µs)",
             series=["ps CPU per worker-step"]),
        dict(file="scale/async.json", table="async steps", title="Async: steps/s, all workers",
             series=["steps/s"]),
        dict(file="scale/async.json", table="sync update",
             title="Sync replicas: a round's last gradient to the round advanced (ms, log)",
             series=["last gradient to round advanced", "last gradient to round advanced p99"],
             no_range=True, log=True),
    ],
}


class SchemaError(Exception):
    pass


def load(path):
    """The document at `path`, checked against the schema."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise SchemaError(f"{path}: {e}")
    if doc.get("schema") != SCHEMA:
        raise SchemaError(f"{path}: schema is {doc.get('schema')!r}, expected {SCHEMA!r}")
    for key in ("bench", "date", "command", "host", "figures"):
        if key not in doc:
            raise SchemaError(f"{path}: no {key!r}")
    for i, f in enumerate(doc["figures"]):
        for key in ("table", "row", "series", "unit", "value"):
            if key not in f:
                raise SchemaError(f"{path}: figure {i} has no {key!r}")
        if f["value"] is None and ("low" not in f or "high" not in f):
            raise SchemaError(f"{path}: figure {i} has neither a value nor a range")
    return doc


def ordered(values, wanted):
    seen = []
    for v in values:
        if v not in seen:
            seen.append(v)
    return [w for w in wanted if w in seen] if wanted else seen


def draw_panel(ax, doc, spec):
    figs = [f for f in doc["figures"] if f["table"] == spec["table"]]
    rows = ordered([f["row"] for f in figs], spec.get("rows"))
    series = ordered([f["series"] for f in figs], spec.get("series"))
    by = {(f["row"], f["series"]): f for f in figs}
    width = 0.8 / max(1, len(series))
    bar = ax.barh if spec.get("horizontal") else ax.bar
    labelled = set()
    for j, s in enumerate(series):
        for i, r in enumerate(rows):
            f = by.get((r, s))
            if f is None:
                continue
            x = i + (j - (len(series) - 1) / 2) * width
            kw = dict(color=f"C{j}", label=None if s in labelled else s)
            labelled.add(s)
            if f["value"] is None:  # only a range is known: solid to its low end, hatched to its high
                bar(x, f["low"], width, **kw)
                bar(x, f["high"] - f["low"], width, f["low"], color=f"C{j}", hatch="////", alpha=0.5)
                continue
            err = None
            if "low" in f and not spec.get("no_range"):
                err = [[f["value"] - f["low"]], [f["high"] - f["value"]]]
            if spec.get("horizontal"):
                ax.barh(x, f["value"], width, xerr=err, capsize=2, **kw)
            else:
                ax.bar(x, f["value"], width, yerr=err, capsize=2, **kw)
    ticks = range(len(rows))
    # The unit of the series drawn: a table may mix units (ms and µs).
    unit = next((f["unit"] for f in figs if f["series"] in series), "")
    if spec.get("horizontal"):
        ax.set_yticks(ticks, rows, fontsize=7)
        ax.invert_yaxis()
        for v in spec.get("lines", []):
            ax.axvline(v, color="grey", linestyle="--", linewidth=0.8)
        ax.set_xlabel(unit)
    else:
        ax.set_xticks(ticks, rows, fontsize=8, rotation=15 if len(rows) > 3 else 0)
        ax.set_ylabel(unit)
        if spec.get("log"):
            ax.set_yscale("log")
    host = doc["host"].get("description") or doc["host"].get("cpu", "")
    ax.set_title(f"{spec['title']}\n{doc['bench']}, {doc['date'][:10]}, {host}", fontsize=8)
    ax.legend(fontsize=7)


def plot_all(data, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    for name, panels in CHARTS.items():
        horizontal = any(p.get("horizontal") for p in panels)
        size = (9, 7) if horizontal else (6 * len(panels), 4)
        fig, axes = plt.subplots(1, len(panels), figsize=size, squeeze=False)
        for ax, spec in zip(axes[0], panels):
            draw_panel(ax, load(os.path.join(data, spec["file"])), spec)
        fig.tight_layout()
        fig.savefig(os.path.join(out, name), dpi=80)
        plt.close(fig)
        print(f"wrote {os.path.join(out, name)}")


def number(v):
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.1f}" if abs(v) >= 10 else f"{v:.2f}"


def print_tables(paths):
    for path in paths:
        doc = load(path)
        print(f"{path}: {doc['bench']}, {doc['date']}, {doc['host'].get('cpu', '?')}\n  {doc['command']}")
        tables = ordered([f["table"] for f in doc["figures"]], None)
        for t in tables:
            figs = [f for f in doc["figures"] if f["table"] == t]
            series = ordered([f["series"] for f in figs], None)
            print(f"\n{t} ({figs[0]['unit']})\n\n| | " + " | ".join(series) + " |")
            print("|---" * (len(series) + 1) + "|")
            for r in ordered([f["row"] for f in figs], None):
                cells = []
                for s in series:
                    f = next((f for f in figs if f["row"] == r and f["series"] == s), None)
                    if f is None:
                        cells.append("")
                    elif f["value"] is None:
                        cells.append(f"{number(f['low'])}–{number(f['high'])}")
                    else:
                        cells.append(number(f["value"]))
                unit = next(f["unit"] for f in figs if f["row"] == r)
                label = r if unit == figs[0]["unit"] else f"{r} ({unit})"
                print(f"| {label} | " + " | ".join(cells) + " |")
        print()


def add_peers(peers_path, into):
    """Adds run.sh's training figures (the last of each kind) to a train_bench file."""
    doc = load(into)
    last = {}
    with open(peers_path) as f:
        for line in f:
            try:
                p = json.loads(line)
            except ValueError:
                continue
            test = p.get("test")
            large = "2048" in str(p.get("layers", ""))
            if test == "mlp_sgd_b100_local":
                last[("classic", "one process, CPU A", "torch eager", 0)] = p["steps_per_s"]
            elif test == "mlp_784_100_10_sgd_b100_local":
                last[("classic", "one process, CPU A", "hand-written Eigen", 0)] = p["steps_per_s"]
            elif test == "ps_mlp_async_rpc_worker":
                ps = "2 ps" if large else "1 ps"  # tfd's row: the large model's parameters on 2 ps tasks
                row = f"{ps} + 1 worker" if p["workers"] == 1 else f"{ps} + 2 workers, aggregate"
                last[("large" if large else "classic", row, "torch RPC ps", p["rank"])] = p["steps_per_s"]
    tables = {f["table"] for f in doc["figures"]}  # classic or large: the file's model only
    # train_bench's own hand-written step (pinned on CPU A) wins over run.sh's.
    have = {(f["table"], f["row"], f["series"]) for f in doc["figures"]}
    sums = {}
    for (table, row, series, _), v in last.items():
        if table in tables and (table, row, series) not in have:
            sums[(table, row, series)] = sums.get((table, row, series), 0) + v
    for (table, row, series), v in sums.items():
        doc["figures"].append(dict(table=table, row=row, series=series, unit="steps/s", value=v,
                                   peer=f"{os.path.basename(peers_path)}, run.sh"))
    doc["peers"] = os.path.abspath(peers_path)
    with open(into, "w") as f:
        f.write(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    print(f"added {len(sums)} peer figures to {into}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=os.path.join(HERE, "data"), help="the JSON files (default bench/data)")
    ap.add_argument("--out", default=None, help="where the PNGs go (default: --data)")
    ap.add_argument("--table", nargs="+", metavar="FILE", help="check FILEs and print their figures")
    ap.add_argument("--peers", metavar="JSONL", help="run.sh's results to add to --into")
    ap.add_argument("--into", metavar="FILE", help="the train_bench file --peers adds to")
    a = ap.parse_args()
    try:
        if a.table:
            print_tables(a.table)
        elif a.peers or a.into:
            if not (a.peers and a.into):
                ap.error("--peers and --into go together")
            add_peers(a.peers, a.into)
        else:
            plot_all(a.data, a.out or a.data)
    except SchemaError as e:
        print(f"plot_figures: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
