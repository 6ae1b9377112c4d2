#!/usr/bin/env python3
"""Times the reference interpreter: `relay run` on a model with random
inputs, and the semantic check of the standard pipeline on it
(`--check-semantics=end:1`: the model run before and after the whole
pipeline; `--check-semantics=1`: before and after every pass that changes
the module). Prints the median wall-clock time of RUNS runs of each, in
seconds (process start to exit: parsing, type checking and writing the
result included, a few milliseconds of it).

    python3 tools/interp_bench.py RELAY [--runs N] [--check-runs N] [--no-check] MODEL.relay...

(`--check-runs`: runs of each semantic check, default `--runs`.)

e.g. `python3 tools/interp_bench.py target/release/relay --runs 5
../shared/tvm/models/{resnet18,resnet50,mobilenet}.relay`.
"""
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

STANDARD = ("SimplifyInference, FoldConstant, FoldScaleAxis, CanonicalizeOps, "
            "EliminateCommonSubexpr, DeadCodeElimination, FuseOps(fuse_opt_level=2)")


def cpu_of_children():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(cmd):
    cpu, start = cpu_of_children(), time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    elapsed, cpu = time.perf_counter() - start, cpu_of_children() - cpu
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{r.stderr[-2000:]}")
    return cpu, elapsed, r.stderr


def median_of(runs, cmd):
    results = [timed(cmd) for _ in range(runs)]
    cpu = statistics.median(r[0] for r in results)
    wall = statistics.median(r[1] for r in results)
    return f"cpu {cpu:.2f} wall {wall:.2f}", results[-1][2]


def main():
    args = sys.argv[1:]
    relay = args.pop(0)
    runs, check_runs, check = 3, None, True
    models = []
    while args:
        a = args.pop(0)
        if a == "--runs":
            runs = int(args.pop(0))
        elif a == "--check-runs":
            check_runs = int(args.pop(0))
        elif a == "--no-check":
            check = False
        else:
            models.append(a)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.npz")
        repro = os.path.join(tmp, "repro")
        print(f"median of {runs} runs ({check_runs or runs} of each check), seconds")
        for model in models:
            name = os.path.basename(model)
            run = [relay, "run", model, "--random", "0", "-o", out]
            times, _ = median_of(runs, run)
            print(f"{name}: relay run: {times}", flush=True)
            if not check:
                continue
            for label, mode in (("end", "--check-semantics=end:1"), ("per pass", "--check-semantics=1")):
                cmd = [relay, "opt", model, "-p", STANDARD, "--opt-level", "3", "--no-external",
                       mode, "--reproducer", repro, "-o", os.devnull]
                times, stderr = median_of(check_runs or runs, cmd)
                summary = [l for l in stderr.splitlines() if l.startswith("semantic check:")]
                print(f"{name}: check standard pipeline ({label}): {times}"
                      + (f"  [{summary[0]}]" if summary else ""), flush=True)


if __name__ == "__main__":
    main()
