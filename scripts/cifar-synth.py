#!/usr/bin/env python3
"""Writes synthetic CIFAR-10 binary files, standard library only.

  scripts/cifar-synth.py --out data/cifar --train-per-file 1000 --test 1000

Writes data_batch_1.bin .. data_batch_5.bin and test_batch.bin in CIFAR-10's
binary format (per record: one label byte, then 32x32 red, green and blue planes).
Class k is a shape (square, disk, horizontal bar, vertical bar or cross) in one of
two colours, placed with a random offset on a random dark background, with
uniform noise on every pixel: a network has to find shape and colour, and a
small ResNet separates the classes in a few hundred steps. The real files are at
https://www.cs.toronto.edu/~kriz/cifar.html (the "binary version").
"""
import argparse
import os
import random

SIDE = 32
COLOURS = [(230, 40, 40), (40, 200, 60)]  # class k: colour k // 5, shape k % 5


def inside(shape, y, x, cy, cx):
    dy, dx = y - cy, x - cx
    if shape == 0:
        return abs(dy) <= 7 and abs(dx) <= 7
    if shape == 1:
        return dy * dy + dx * dx <= 64
    if shape == 2:
        return abs(dy) <= 3 and abs(dx) <= 11
    if shape == 3:
        return abs(dx) <= 3 and abs(dy) <= 11
    return (abs(dy) <= 2 and abs(dx) <= 10) or (abs(dx) <= 2 and abs(dy) <= 10)


def record(label, rng, noise):
    shape, colour = label % 5, COLOURS[label // 5]
    cy, cx = 16 + rng.randint(-5, 5), 16 + rng.randint(-5, 5)
    background = [rng.randint(0, 90) for _ in range(3)]
    mask = [inside(shape, y, x, cy, cx) for y in range(SIDE) for x in range(SIDE)]
    out = bytearray([label])
    for ch in range(3):
        fg, bg = colour[ch], background[ch]
        out += bytes(min(255, max(0, (fg if m else bg) + rng.randint(-noise, noise)))
                     for m in mask)
    return out


def write(path, n, rng, noise):
    with open(path + ".tmp", "wb") as f:
        for i in range(n):
            f.write(record(i % 10 if n >= 10 else rng.randrange(10), rng, noise))
    os.replace(path + ".tmp", path)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, help="directory to write the six files into")
    p.add_argument("--train-per-file", type=int, default=1000, help="records per data_batch file")
    p.add_argument("--test", type=int, default=1000, help="records in test_batch.bin")
    p.add_argument("--noise", type=int, default=40, help="uniform noise added to each byte: +-N")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    rng = random.Random(a.seed)
    for k in range(1, 6):
        write(os.path.join(a.out, "data_batch_%d.bin" % k), a.train_per_file, rng, a.noise)
    write(os.path.join(a.out, "test_batch.bin"), a.test, random.Random(a.seed + 1000), a.noise)


if __name__ == "__main__":
    main()
