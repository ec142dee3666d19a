#!/usr/bin/env python3
"""torch.distributed gloo all_reduce among N processes on loopback: the peer
figure beside bench/allreduce_bench (same sizes, same figures).

  OMP_NUM_THREADS=1 python3 bench/torch_allreduce.py --workers 4 --sizes 1,4,16,64,256 --reps 5

Prints one JSON line per size, shaped like ../shared/peers/torch_peers_bench.py's
gloo_allreduce lines: the median time of one all_reduce over --reps (after two
warm-ups, each rep started together after a barrier), algorithm bandwidth
size/time and bus bandwidth 2(n-1)/n * size/time (NCCL-tests' convention).
"""
import argparse
import json
import socket
import statistics
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

MIB = 1 << 20


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(rank, world, port, sizes, reps, out):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world)
    for mib in sizes:
        t = torch.rand(mib * MIB // 4)
        for _ in range(2):
            dist.all_reduce(t)
        times = []
        for _ in range(reps):
            dist.barrier()
            start = time.perf_counter()
            dist.all_reduce(t)
            times.append(time.perf_counter() - start)
        # a rep lasts as long as its slowest member
        gathered = [torch.zeros(reps, dtype=torch.float64) for _ in range(world)]
        dist.all_gather(gathered, torch.tensor(times, dtype=torch.float64))
        if rank == 0:
            slowest = torch.stack(gathered).max(dim=0).values.tolist()
            median = statistics.median(slowest)
            alg = mib * MIB / median / 1e9
            out.put(dict(test="gloo_allreduce", peer="torch.distributed(gloo)", world=world,
                         size_mib=mib, reps=reps, ms_median=round(median * 1e3, 3),
                         ms_min=round(min(slowest) * 1e3, 3), ms_max=round(max(slowest) * 1e3, 3),
                         algbw_GBps=round(alg, 3),
                         busbw_GBps=round(alg * 2 * (world - 1) / world, 3)))
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--sizes", default="1,4,16,64,256", help="MiB, comma-separated")
    p.add_argument("--reps", type=int, default=5)
    a = p.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    if a.workers < 2 or a.reps < 1 or not sizes or min(sizes) < 1:
        p.error("--workers >= 2, --reps >= 1 and sizes >= 1 MiB")
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    mp.spawn(run, args=(a.workers, free_port(), sizes, a.reps, out), nprocs=a.workers, join=True)
    for _ in sizes:
        print(json.dumps(out.get(timeout=10)), flush=True)


if __name__ == "__main__":
    main()
