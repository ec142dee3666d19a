#!/usr/bin/env python3
"""torch's RPC parameter server on the large MNIST model of examples/mnist, to race tfd's
asynchronous ps training on the same CPUs (or GPU) per process.

The model is examples/mnist's "large": 784-2048-2048-10 with ReLU (--layers), weights drawn from
a normal truncated at two standard deviations of sqrt(2 / fan_in), biases zero, softmax
cross-entropy, plain SGD at 0.001 (--lr), batches of 100 uint8 images scaled to [0, 1] and
read from host memory each step, the loss fetched each step, as tfd's step does.

--model ps: --ps P processes hold the variables, split over them as examples/mnist's replica
device setter splits them (--split greedy: in creation order global_step, w1.., b1.., each on the
ps holding the fewest bytes so far; --split round-robin: the i-th on ps i mod P). --workers W
asynchronous workers each step pull every shard at once (one rpc_async per ps, then wait for
all), compute the forward and backward passes, and push each shard its gradients (one rpc_async
per ps, waiting for every ps's answer); a ps applies SGD under its lock, and the one holding
global_step counts the updates. --model local: one process, the same step with no ps (the
compute ceiling at --threads). --model ddp: --workers W processes training synchronously
without a ps, torch's DistributedDataParallel over gloo (its gradient buckets all-reduced while
backward runs), to race tfd's all-reduce training (bench/allreduce_train).

--device cuda: the workers compute on the GPU; the pulled parameters go host -> device through
pinned host buffers, the gradients device -> host before the push (compute_ms includes both).

--cpus-per-process N pins each process to its own N CPUs of the allowed set, in the order ps
0..P-1 then the workers (0: unpinned); --threads T sets torch.set_num_threads in every process
(0: N - 1 when pinned to N > 1 CPUs, else torch's default). Why not N: a worker's RPC agent
keeps a CPU busy, and OpenMP's pool, spinning at its barriers, then collapses. On an H100
host's 16 cores (torch 2.11, 2 ps + 2 workers, 4 CPUs each) a worker's forward and backward
took about 200 ms at 4 threads, 17 ms at 3 (14 ms in --model local at 4), and 24 ms at 4 with
OMP_WAIT_POLICY=passive; the CUDA workers' compute_ms (copies included) 35 ms at 4, 6 at 3.
One JSON line per run, also appended to --results.

    python3 bench/torch_ps_mlp.py --ps 2 --workers 2 --cpus-per-process 4 --steps 300
    python3 bench/torch_ps_mlp.py --model local --threads 4 --cpus-per-process 4
"""
import argparse
import json
import os
import socket
import sys
import threading
import time

os.environ.setdefault("TP_SOCKET_IFNAME", "lo")
os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")

import torch  # noqa: E402
import torch.distributed.rpc as rpc  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
import torch.nn.functional as F  # noqa: E402

BATCH = 100
EXAMPLES = 60000
RPC_TIMEOUT_S = 60  # every rpc, and the rendezvous, is bounded by this


# ---------------------------------------------------------------- the model and its variables
def variable_specs(layers):
    """(name, shape) of examples/mnist's variables in creation order: global_step, w1.., b1.."""
    specs = [("global_step", ())]
    specs += [(f"w{i + 1}", (layers[i], layers[i + 1])) for i in range(len(layers) - 1)]
    specs += [(f"b{i + 1}", (layers[i + 1],)) for i in range(len(layers) - 1)]
    return specs


def split_variables(specs, ps, strategy):
    """The ps index of each variable, as api/placement.cc's replica device setter chooses it."""
    loads, chosen = [0] * ps, {}
    for i, (name, shape) in enumerate(specs):
        if strategy == "round-robin":
            task = i % ps
        else:  # greedy by bytes; ties to the lowest task; global_step is 8 bytes (int64)
            task = loads.index(min(loads))
            n = 1
            for d in shape:
                n *= d
            loads[task] += n * (8 if name == "global_step" else 4)
        chosen[name] = task
    return chosen


def initial_value(name, shape, layers, seed):
    """examples/mnist's initializers: truncated normal He-scaled weights, zero biases."""
    if name == "global_step":
        return torch.zeros((), dtype=torch.int64)
    if name.startswith("b"):
        return torch.zeros(shape)
    index = int(name[1:]) - 1
    std = (2.0 / layers[index]) ** 0.5
    g = torch.Generator().manual_seed(seed + index)
    t = torch.empty(shape)
    # trunc_normal_ takes no generator: draw, then redraw what falls beyond 2 std.
    t.normal_(0.0, std, generator=g)
    while True:
        bad = t.abs() > 2 * std
        if not bool(bad.any()):
            return t
        t[bad] = torch.empty(int(bad.sum())).normal_(0.0, std, generator=g)


def forward_loss(params, layers, x, y):
    """Logits of the MLP with weights [in, out] as tfd holds them, and the mean cross-entropy."""
    n = len(layers) - 1
    for i in range(n):
        x = torch.addmm(params[f"b{i + 1}"], x, params[f"w{i + 1}"])
        if i + 1 < n:
            x = F.relu(x)
    return F.cross_entropy(x, y)


def make_data(seed, width):
    g = torch.Generator().manual_seed(seed)
    images = torch.randint(0, 256, (EXAMPLES, width), dtype=torch.uint8, generator=g)
    labels = torch.randint(0, 10, (EXAMPLES,), generator=g)
    return images, labels


def batch_at(data, i):
    start = (i * BATCH) % EXAMPLES
    return data[0][start:start + BATCH].float() / 255.0, data[1][start:start + BATCH]


# ---------------------------------------------------------------- the ps side (run by rpc)
class Shard:
    """One ps task's variables; pulls copy them and pushes update them under one lock."""

    def __init__(self, cfg, task):
        self.lock = threading.Lock()
        self.lr = cfg["lr"]
        self.vars = {}
        self.step = None  # global_step, when this task holds it
        self.arrived = 0  # workers past their warm-up (ps 0)
        for name, shape in variable_specs(cfg["layers"]):
            if cfg["split"][name] != task:
                continue
            value = initial_value(name, shape, cfg["layers"], cfg["seed"])
            if name == "global_step":
                self.step = value
            else:
                self.vars[name] = value


_SHARD = None


def ps_pull():
    with _SHARD.lock:
        return {name: t.clone() for name, t in _SHARD.vars.items()}


def ps_push(grads):
    """Plain SGD on this shard; the new global step when this task holds it, else None."""
    with _SHARD.lock:
        for name, g in grads.items():
            _SHARD.vars[name].add_(g, alpha=-_SHARD.lr)
        if _SHARD.step is None:
            return None
        _SHARD.step += 1
        return int(_SHARD.step)


def ps_arrive():
    with _SHARD.lock:
        _SHARD.arrived += 1


def ps_arrived():
    with _SHARD.lock:
        return _SHARD.arrived


# ---------------------------------------------------------------- the worker side
class Compute:
    """Forward and backward of one step from pulled host tensors; gradients come back on the
    host. On cuda, parameters go up through pinned host buffers and gradients come down into
    pinned ones, as bench/torch_gpu_mlp.py's model would be fed by a ps."""

    def __init__(self, cfg):
        self.layers = cfg["layers"]
        self.device = cfg["device"]
        if self.device == "cuda":
            shapes = dict(variable_specs(self.layers))
            del shapes["global_step"]
            self.up = {n: torch.empty(s, pin_memory=True) for n, s in shapes.items()}
            self.down = {n: torch.empty(s, pin_memory=True) for n, s in shapes.items()}
            self.dev = {n: torch.empty(s, device="cuda", requires_grad=True) for n, s in shapes.items()}

    def __call__(self, params, x, y):
        """(loss, {name: host gradient})."""
        names = sorted(params)
        if self.device == "cpu":
            for t in params.values():
                t.requires_grad_(True)
            loss = forward_loss(params, self.layers, x, y)
            grads = torch.autograd.grad(loss, [params[n] for n in names])
            return loss.item(), dict(zip(names, grads))
        with torch.no_grad():
            for n in names:
                self.up[n].copy_(params[n])
                self.dev[n].copy_(self.up[n], non_blocking=True)
        x, y = x.to("cuda", non_blocking=True), y.to("cuda", non_blocking=True)
        loss = forward_loss(self.dev, self.layers, x, y)
        grads = torch.autograd.grad(loss, [self.dev[n] for n in names])
        for n, g in zip(names, grads):
            self.down[n].copy_(g, non_blocking=True)
        torch.cuda.synchronize()
        return loss.item(), {n: self.down[n] for n in names}


def pull(ps):
    futures = [rpc.rpc_async(f"ps{k}", ps_pull, timeout=RPC_TIMEOUT_S) for k in range(ps)]
    params = {}
    for f in futures:
        params.update(f.wait())
    return params


def push(grads, cfg):
    """Each ps its own gradients at once; the global step that came back."""
    futures = []
    for k in range(cfg["ps"]):
        mine = {n: g for n, g in grads.items() if cfg["split"][n] == k}
        futures.append(rpc.rpc_async(f"ps{k}", ps_push, args=(mine,), timeout=RPC_TIMEOUT_S))
    steps = [f.wait() for f in futures]
    return next((s for s in steps if s is not None), None)


def wait_for_workers(cfg):
    """All workers past their warm-up, so the measured steps run side by side."""
    rpc.rpc_sync("ps0", ps_arrive, timeout=RPC_TIMEOUT_S)
    deadline = time.monotonic() + RPC_TIMEOUT_S
    while rpc.rpc_sync("ps0", ps_arrived, timeout=RPC_TIMEOUT_S) < cfg["workers"]:
        if time.monotonic() > deadline:
            raise TimeoutError(f"not every worker finished its warm-up within {RPC_TIMEOUT_S} s")
        time.sleep(0.001)


def train_worker(cfg, index):
    """Warm-up, then the measured steps; the worker's figures."""
    data = make_data(cfg["seed"] + 1 + index, cfg["layers"][0])
    compute = Compute(cfg)
    times = {"pull": 0.0, "compute": 0.0, "push": 0.0}
    first = last = step = None
    for i in range(cfg["warmup"] + cfg["steps"]):
        if i == cfg["warmup"]:
            wait_for_workers(cfg)
            times = {k: 0.0 for k in times}
            start = time.perf_counter()
        a = time.perf_counter()
        params = pull(cfg["ps"])
        b = time.perf_counter()
        last, grads = compute(params, *batch_at(data, i))
        c = time.perf_counter()
        step = push(grads, cfg)
        d = time.perf_counter()
        first = last if first is None else first
        times["pull"] += b - a
        times["compute"] += c - b
        times["push"] += d - c
    return phase_record(cfg, time.perf_counter() - start, times, first, last, global_step=step)


def train_local(cfg):
    """The same step in one process, the parameters its own (on the device it computes on):
    the compute ceiling."""
    device = cfg["device"]
    data = make_data(cfg["seed"] + 1, cfg["layers"][0])
    specs = [(n, s) for n, s in variable_specs(cfg["layers"]) if n != "global_step"]
    params = {n: initial_value(n, s, cfg["layers"], cfg["seed"]).to(device).requires_grad_(True)
              for n, s in specs}
    names = sorted(params)
    times = {"pull": 0.0, "compute": 0.0, "push": 0.0}
    first = last = None
    for i in range(cfg["warmup"] + cfg["steps"]):
        if i == cfg["warmup"]:
            start = time.perf_counter()
        x, y = batch_at(data, i)
        loss = forward_loss(params, cfg["layers"], x.to(device), y.to(device))
        grads = torch.autograd.grad(loss, [params[n] for n in names])
        with torch.no_grad():
            for n, g in zip(names, grads):
                params[n].add_(g, alpha=-cfg["lr"])
        last = loss.item()
        first = last if first is None else first
    seconds = time.perf_counter() - start
    times["compute"] = seconds
    return phase_record(cfg, seconds, times, first, last)


class Mlp(torch.nn.Module):
    """The model's variables as parameters, for DistributedDataParallel."""

    def __init__(self, cfg):
        super().__init__()
        self.layers = cfg["layers"]
        for n, s in variable_specs(self.layers):
            if n != "global_step":
                value = initial_value(n, s, self.layers, cfg["seed"])
                self.register_parameter(n, torch.nn.Parameter(value))

    def forward(self, x, y):
        return forward_loss(dict(self.named_parameters()), self.layers, x, y)


def train_ddp(cfg, index):
    """A replica of synchronous data-parallel training: DDP over gloo, SGD on the mean gradient."""
    import datetime
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{cfg['port']}", rank=index,
                            world_size=cfg["workers"],
                            timeout=datetime.timedelta(seconds=RPC_TIMEOUT_S))
    try:
        model = DistributedDataParallel(Mlp(cfg))
        data = make_data(cfg["seed"] + 1 + index, cfg["layers"][0])
        times = {"pull": 0.0, "compute": 0.0, "push": 0.0}
        first = last = None
        for i in range(cfg["warmup"] + cfg["steps"]):
            if i == cfg["warmup"]:
                dist.barrier()
                start = time.perf_counter()
            loss = model(*batch_at(data, i))
            loss.backward()  # the buckets' all-reduces run during it
            with torch.no_grad():
                for p in model.parameters():
                    p.add_(p.grad, alpha=-cfg["lr"])
                    p.grad = None
            last = loss.item()
            first = last if first is None else first
        seconds = time.perf_counter() - start
        times["compute"] = seconds
        return phase_record(cfg, seconds, times, first, last)
    finally:
        dist.destroy_process_group()


def phase_record(cfg, seconds, times, first, last, global_step=None):
    n = cfg["steps"]
    out = {"steps_per_second": n / seconds, "seconds": seconds,
           "pull_ms": times["pull"] / n * 1e3, "compute_ms": times["compute"] / n * 1e3,
           "push_ms": times["push"] / n * 1e3, "first_loss": first, "last_loss": last,
           "threads": torch.get_num_threads(), "cpus": cpu_list(sorted(os.sched_getaffinity(0)))}
    if global_step is not None:
        out["global_step"] = global_step
    return out


# ---------------------------------------------------------------- processes and placement
def cpu_list(cpus):
    """"0-3,6" as /proc/PID/status writes a CPU list."""
    parts, i = [], 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        parts.append(str(cpus[i]) if i == j else f"{cpus[i]}-{cpus[j]}")
        i = j + 1
    return ",".join(parts)


def die_with_parent():
    """SIGTERM when the parent ends, so a killed run leaves no process behind (Linux)."""
    try:
        import ctypes
        import signal
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def process_main(rank, cfg, results):
    die_with_parent()
    if cfg["cpus"]:
        os.sched_setaffinity(0, cfg["cpus"][rank])
    if cfg["threads"]:
        torch.set_num_threads(cfg["threads"])
    if cfg["model"] == "local":
        results.put((rank, train_local(cfg)))
        return
    if cfg["model"] == "ddp":
        results.put((rank, train_ddp(cfg, rank)))
        return
    ps = cfg["ps"]
    name = f"ps{rank}" if rank < ps else f"worker{rank - ps}"
    global _SHARD
    if rank < ps:
        _SHARD = Shard(cfg, rank)
    options = rpc.TensorPipeRpcBackendOptions(init_method=f"tcp://127.0.0.1:{cfg['port']}",
                                              rpc_timeout=RPC_TIMEOUT_S, num_worker_threads=8)
    if cfg["tp"] == "uv":  # TCP through libuv and the basic channel: no shared memory, no CMA
        options._transports = ["uv"]
        options._channels = ["basic"]
    rpc.init_rpc(name, rank=rank, world_size=ps + cfg["workers"], rpc_backend_options=options)
    try:
        if rank >= ps:
            results.put((rank, train_worker(cfg, rank - ps)))
    finally:
        rpc.shutdown()  # waits for every process: the ps serve until the workers are done


def usage_error(message):
    print(f"error: INVALID_ARGUMENT: {message}", file=sys.stderr)
    sys.exit(2)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def place(a, processes):
    """Each process's CPUs (ps first, then workers), or [] unpinned; exits 2 when too few."""
    if a.cpus_per_process <= 0:
        return []
    allowed = sorted(os.sched_getaffinity(0))
    need = a.cpus_per_process * processes
    if need > len(allowed):
        usage_error(f"--cpus-per-process {a.cpus_per_process} needs {need} CPUs for {processes} "
                    f"processes, but only {len(allowed)} are allowed ({cpu_list(allowed)})")
    n = a.cpus_per_process
    return [allowed[r * n:(r + 1) * n] for r in range(processes)]


def run(cfg, processes, timeout_s):
    """Starts the processes and collects their figures; every process is ended by timeout_s."""
    ctx = mp.get_context("spawn")
    results = ctx.SimpleQueue()
    procs = mp.start_processes(process_main, args=(cfg, results), nprocs=processes, join=False,
                               start_method="spawn")
    deadline = time.monotonic() + timeout_s
    try:
        while not procs.join(timeout=1):
            if time.monotonic() > deadline:
                raise TimeoutError(f"the run took longer than --timeout {timeout_s} s")
    finally:
        for p in procs.processes:
            if p.is_alive():
                p.kill()
            p.join(5)
    figures = {}
    while not results.empty():
        rank, record = results.get()
        figures[rank] = record
    return figures


# ---------------------------------------------------------------- the command line
def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="ps", choices=["ps", "local", "ddp"])
    p.add_argument("--ps", type=int, default=2)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--tp", default="default", choices=["default", "uv"],
                   help="TensorPipe's transports: its default (shared memory, whose reactor thread "
                        "polls a CPU), or uv (TCP, sleeping between messages)")
    p.add_argument("--split", default="greedy", choices=["greedy", "round-robin"],
                   help="how the variables go to the ps tasks (examples/mnist: greedy)")
    p.add_argument("--threads", type=int, default=0,
                   help="torch threads per process (0: --cpus-per-process - 1 when pinned to more "
                        "than one, else torch's default)")
    p.add_argument("--cpus-per-process", type=int, default=0, help="CPUs of its own per process (0: unpinned)")
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"], help="where the workers compute")
    p.add_argument("--steps", type=int, default=300, help="measured steps per worker")
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--layers", default="784,2048,2048,10")
    p.add_argument("--lr", type=float, default=0.001)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--port", type=int, default=0, help="the rendezvous port on 127.0.0.1 (0: a free one)")
    p.add_argument("--timeout", type=float, default=600, help="seconds before every process is killed")
    p.add_argument("--results", default="", help="also append the JSON line to this file")
    a = p.parse_args()
    if a.steps < 1 or a.warmup < 1:
        usage_error("--steps and --warmup must be at least 1")
    if a.model == "ps" and (a.ps < 1 or a.workers < 1):
        usage_error("--model ps needs --ps and --workers of at least 1")
    if a.model == "ddp" and (a.workers < 2 or a.device != "cpu"):
        usage_error("--model ddp needs --workers of at least 2 and --device cpu")
    if a.device == "cuda" and not torch.cuda.is_available():
        usage_error("--device cuda, but torch sees no CUDA device")
    try:
        a.layer_widths = [int(w) for w in a.layers.split(",")]
    except ValueError:
        usage_error(f"--layers must be widths separated by commas, not '{a.layers}'")
    if len(a.layer_widths) < 2 or min(a.layer_widths) < 1:
        usage_error(f"--layers needs at least two positive widths, not '{a.layers}'")
    return a


def config(a, processes):
    cpus = place(a, processes)
    specs = variable_specs(a.layer_widths)
    return {"model": a.model, "ps": a.ps, "workers": a.workers, "layers": a.layer_widths,
            "split": split_variables(specs, max(a.ps, 1), a.split), "lr": a.lr, "seed": a.seed,
            "device": a.device, "tp": a.tp, "steps": a.steps, "warmup": a.warmup, "cpus": cpus,
            "threads": a.threads or default_threads(a), "port": a.port or free_port()}


def default_threads(a):
    """One CPU left to the RPC agent's (or gloo's) threads in a pinned ps or worker (see the module
    comment); all of them in --model local, which has none; 0 (torch's own) unpinned."""
    n = a.cpus_per_process
    if n <= 0:
        return 0
    return n if a.model == "local" or n == 1 else n - 1


def summary(a, cfg, figures):
    params = sum(w * v for w, v in zip(cfg["layers"], cfg["layers"][1:])) + sum(cfg["layers"][1:])
    record = {"test": f"torch_{a.model}_mlp", "system": "torch " + torch.__version__,
              "layers": cfg["layers"], "parameters": params, "batch": BATCH, "lr": a.lr,
              "device": a.device, "tp": a.tp, "steps": a.steps, "warmup": a.warmup,
              "cpus_per_process": a.cpus_per_process, "threads": cfg["threads"] or "default"}
    if a.device == "cuda":
        record["gpu"] = torch.cuda.get_device_name(0)
    if a.model == "local":
        record.update(figures[0])
        return record
    workers = [figures[r] for r in sorted(figures)]
    if a.model == "ddp":
        record.update({"workers": a.workers, "per_worker": workers, "backend": "gloo",
                       "steps_per_second": min(w["steps_per_second"] for w in workers),
                       "aggregate_steps_per_second":
                           a.workers * a.steps / max(w["seconds"] for w in workers)})
        return record
    record.update({"ps": a.ps, "workers": a.workers, "split": a.split, "tp": a.tp,
                   "bytes_pulled_per_step": params * 4, "bytes_pushed_per_step": params * 4,
                   "per_worker": workers,
                   # every worker starts its measured steps together (after all warm up)
                   "aggregate_steps_per_second": a.workers * a.steps / max(w["seconds"] for w in workers)})
    for phase in ("pull_ms", "compute_ms", "push_ms"):
        record[phase] = sum(w[phase] for w in workers) / len(workers)
    record["placement"] = {f"ps{k}": {"cpus": cpu_list(cfg["cpus"][k]) if cfg["cpus"] else "all",
                                      "variables": [n for n, t in cfg["split"].items() if t == k]}
                           for k in range(a.ps)}
    return record


def main():
    a = parse_args()
    processes = {"local": 1, "ddp": a.workers}.get(a.model, a.ps + a.workers)
    cfg = config(a, processes)
    try:
        figures = run(cfg, processes, a.timeout)
    except TimeoutError as e:
        print(f"error: DEADLINE_EXCEEDED: {e}; every process was killed", file=sys.stderr)
        sys.exit(1)
    except (mp.ProcessRaisedException, mp.ProcessExitedException) as e:
        print(f"error: INTERNAL: a process failed, and the others were stopped: {e}", file=sys.stderr)
        sys.exit(1)
    expected = 1 if a.model == "local" else a.workers
    if len(figures) != expected:
        print(f"error: INTERNAL: {expected} processes should have reported, {len(figures)} did",
              file=sys.stderr)
        sys.exit(1)
    record = summary(a, cfg, figures)
    record["ts"] = time.strftime("%Y-%m-%dT%H:%M:%S")
    line = json.dumps(record)
    print(line, flush=True)
    if a.results:
        with open(a.results, "a") as f:
            f.write(line + "\n")


if __name__ == "__main__":
    main()
