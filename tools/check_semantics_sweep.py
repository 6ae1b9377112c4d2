#!/usr/bin/env python3
"""Runs `relay opt --check-semantics` over modules: the standard pipeline
and every registered pass alone, and counts (module, pass) pairs checked,
agreeing, unchanged, not checked (with the reason) and differing.

    python3 tools/check_semantics_sweep.py [--standard-only|--own-pass] RELAY OUT.jsonl FILE_OR_DIR...

`--standard-only` runs only the standard pipeline; `--own-pass` runs the
standard pipeline and, for a file under `passes/<PassName>/` (the pass
test cases), that pass alone.

A pair is *checked* when the pass changed the module and the module ran
before it; it *agrees* when every compared pass inside agreed on every
input. Differences keep their reproducer under OUT.jsonl's directory.
"""
import json
import os
import re
import subprocess
import sys
from collections import Counter

STANDARD = ("SimplifyInference, FoldConstant, FoldScaleAxis, CanonicalizeOps, "
            "EliminateCommonSubexpr, DeadCodeElimination, FuseOps(fuse_opt_level=2)")
SUMMARY = re.compile(r"semantic check: (\d+) pass(?:es)? compared, (\d+) agree; (\d+) left the module unchanged; (\d+) not checked")


def modules(paths):
    for path in paths:
        if os.path.isdir(path):
            for root, _, files in sorted(os.walk(path)):
                for f in sorted(files):
                    if f.endswith(".relay"):
                        yield os.path.join(root, f)
        else:
            yield path


def main():
    args = sys.argv[1:]
    mode = args.pop(0) if args[0].startswith("--") else "--all"
    relay, out_path, *paths = args
    passes = json.loads(subprocess.run([relay, "passes", "--json"], capture_output=True, text=True).stdout)
    names = {p["name"] for p in passes}

    def pipelines_of(module):
        if mode == "--standard-only":
            return [("standard", STANDARD)]
        if mode == "--own-pass":
            folder = os.path.basename(os.path.dirname(module))
            return [("standard", STANDARD)] + ([(folder, folder)] if folder in names else [])
        return [("standard", STANDARD)] + [(p["name"], p["name"]) for p in passes]
    repro_root = os.path.join(os.path.dirname(os.path.abspath(out_path)), "repro")
    counts = Counter()
    reasons = Counter()
    with open(out_path, "w") as out:
        for module in modules(paths):
            for label, pipeline in pipelines_of(module):
                repro = os.path.join(repro_root, os.path.basename(module) + "." + label)
                cmd = [relay, "opt", module, "-p", pipeline, "--opt-level", "3", "--no-external",
                       "--check-semantics=1", "--reproducer", repro, "-o", os.devnull]
                try:
                    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
                    stderr, code = r.stderr, r.returncode
                except subprocess.TimeoutExpired:
                    stderr, code = "timeout", -1
                m = SUMMARY.search(stderr)
                record = {"module": module, "pass": label, "exit": code}
                if "changed the result" in stderr:
                    status = "differs"
                    record["report"] = next(l for l in stderr.splitlines() if "changed the result" in l)
                elif m is None:
                    status = "pass_failed"
                    record["stderr"] = stderr[-400:]
                else:
                    compared, agree, unchanged, not_checked = map(int, m.groups())
                    if compared and agree == compared:
                        status = "agrees"
                    elif not_checked:
                        status = "not_checked"
                        reason = re.search(r"not checked \((.*?)\): (.*)", stderr)
                        why = reason.group(2) if reason else "?"
                        why = re.sub(r" \(in @.*", "", why)
                        why = re.sub(r"\(`relay ops [^`]*`\)", "", why).strip()
                        record["why"] = why
                        reasons[why] += 1
                    else:
                        status = "unchanged"
                counts[status] += 1
                record["status"] = status
                out.write(json.dumps(record) + "\n")
                out.flush()
    checked = counts["agrees"] + counts["differs"]
    print(f"pairs: {sum(counts.values())}; checked {checked}, agree {counts['agrees']}, "
          f"differ {counts['differs']}; unchanged {counts['unchanged']}; "
          f"not checked {counts['not_checked']}; pass failed {counts['pass_failed']}")
    for why, n in reasons.most_common(15):
        print(f"  not checked ×{n}: {why}")


if __name__ == "__main__":
    main()
