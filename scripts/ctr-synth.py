#!/usr/bin/env python3
"""Writes synthetic click data as Criteo display-advertising TSV, standard library only.

  scripts/ctr-synth.py --n 100000 --seed 1 --vocab 65536 --out ctr-train.tsv

Each line: label, I1..I13 (counts, some empty), C1..C26 (8 hex digits, some empty).
Labels come from a hidden logistic model over the rows tfd's reader hashes the
categories to (fmix32 salted per field, mod --vocab) and log(1 + I_j), so a wide &
deep model can represent it exactly; the oracle AUC (the hidden logit's) is printed.
The hidden model depends on --vocab and --world-seed only, so train and eval files
written with different --seed values share it. It has the shape of
../shared/peers/torch_peers_bench.py's CtrSynth, not its exact stream (that one
needs torch): use the peer's `ctr_data` where both must see the same examples.
"""
import argparse
import math
import random
import sys

M32 = 0xFFFFFFFF
DENSE_MISSING = [0.45, 0.0, 0.21, 0.22, 0.03, 0.22, 0.04, 0.0, 0.04, 0.45, 0.04, 0.77, 0.22]
CAT_MISSING = [0, 0, .03, .03, 0, .12, 0, 0, 0, 0, 0, .03, 0, 0, 0, .03, 0, 0, .44, .44, .03, .76, 0, .03,
               .44, .44]


def fmix32(h):
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & M32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & M32
    return h ^ (h >> 16)


def row(value, field, vocab):
    return fmix32(value ^ ((0x85EBCA77 * (field + 1)) & M32)) % vocab


class Hidden:
    """Row and dense weights, drawn lazily from a seeded hash so memory stays small."""

    def __init__(self, vocab, world_seed):
        self.vocab, self.seed = vocab, world_seed
        g = random.Random(world_seed)
        self.scale = [0.5 + 2.5 * g.random() for _ in DENSE_MISSING]
        self.w_dense = [g.gauss(0, 0.3) / s for s in self.scale]
        self.bias = -1.6  # about a 25 % click rate

    def w_row(self, r):
        return random.Random(self.seed * 1000003 + r).gauss(0, 0.3)


def auc(scores, labels):
    order = sorted(range(len(scores)), key=scores.__getitem__)
    rank_sum, i, npos = 0.0, 0, sum(labels)
    while i < len(order):
        j = i
        while j < len(order) and scores[order[j]] == scores[order[i]]:
            j += 1
        rank_sum += (i + 1 + j) / 2 * sum(labels[order[k]] for k in range(i, j))
        i = j
    nneg = len(labels) - npos
    return (rank_sum - npos * (npos + 1) / 2) / (npos * nneg) if npos and nneg else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--world-seed", type=int, default=0)
    ap.add_argument("--vocab", type=int, default=1 << 20)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    hidden, g = Hidden(a.vocab, a.world_seed), random.Random(a.seed)
    log_vocab = math.log(a.vocab)
    logits, labels = [], []
    with open(a.out, "w") as f:
        for _ in range(a.n):
            z, fields = hidden.bias, []
            for j, miss in enumerate(DENSE_MISSING):
                if g.random() < miss:
                    fields.append("")
                    continue
                count = math.floor(math.expm1(abs(g.gauss(0, 1)) * hidden.scale[j]))
                fields.append(str(count))
                z += hidden.w_dense[j] * math.log1p(count)
            for k, miss in enumerate(CAT_MISSING):
                if g.random() < miss:
                    fields.append("")
                    continue
                rank = int(math.exp(g.random() * log_vocab)) - 1  # heavy-tailed, about Zipf(1)
                value = fmix32((rank * 0x9E3779B9 + k + 1) & M32)
                fields.append("%08x" % value)
                z += hidden.w_row(row(value, k, a.vocab))
            label = 1 if g.random() < 1 / (1 + math.exp(-z)) else 0
            f.write("\t".join([str(label)] + fields) + "\n")
            logits.append(z)
            labels.append(label)
    print("wrote %d examples to %s: click rate %.3f, oracle AUC %.4f"
          % (a.n, a.out, sum(labels) / max(a.n, 1), auc(logits, labels)), file=sys.stderr)


if __name__ == "__main__":
    main()
