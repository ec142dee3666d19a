#!/usr/bin/python3
"""Checks a /metrics page as Prometheus would read it, and stricter.

Usage: check_metrics.py PAGE_FILE

Parses the page with python3-prometheus-client's parser (the text format,
version 0.0.4), then checks what that parser lets pass: every family has
HELP and TYPE, counters end in _total, no sample is given twice, and each
histogram's buckets are cumulative and end at +Inf with its _count.
Prints one line per problem and exits 1 if there is any.
"""
import math
import sys

from prometheus_client.parser import text_string_to_metric_families


def main(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    problems = []
    helped, typed = set(), set()
    for line in text.splitlines():
        parts = line.split(" ", 3)
        if line.startswith("# HELP ") and len(parts) == 4 and parts[3].strip():
            helped.add(parts[2])
        elif line.startswith("# TYPE ") and len(parts) == 4:
            typed.add(parts[2])
    families = list(text_string_to_metric_families(text))
    seen = set()
    samples = 0
    for family in families:
        raw = family.name + "_total" if family.type == "counter" else family.name
        if raw not in helped:
            problems.append(f"{raw}: no HELP line")
        if raw not in typed:
            problems.append(f"{raw}: no TYPE line")
        buckets = {}
        for s in family.samples:
            samples += 1
            key = (s.name, tuple(sorted(s.labels.items())))
            if key in seen:
                problems.append(f"{s.name} {s.labels}: given twice")
            seen.add(key)
            if family.type == "counter" and not s.name.endswith("_total"):
                problems.append(f"{s.name}: a counter whose name does not end in _total")
            if math.isnan(s.value):
                problems.append(f"{s.name} {s.labels}: NaN")
            if s.name.endswith("_bucket"):
                buckets[float(s.labels["le"])] = s.value
            if s.name == family.name + "_count":
                count = s.value
        if family.type == "histogram":
            bounds = sorted(buckets)
            values = [buckets[b] for b in bounds]
            if not bounds or bounds[-1] != math.inf:
                problems.append(f"{family.name}: no +Inf bucket")
            elif values != sorted(values):
                problems.append(f"{family.name}: buckets not cumulative: {values}")
            elif values[-1] != count:
                problems.append(f"{family.name}: +Inf bucket {values[-1]} != _count {count}")
    for p in problems:
        print(p)
    if not families:
        print("no metric families")
        return 1
    if not problems:
        print(f"ok: {len(families)} families, {samples} samples")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
