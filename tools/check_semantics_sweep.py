#!/usr/bin/env python3
"""Runs `relay opt --check-semantics` over modules: the standard pipeline
and every registered pass alone, and counts (module, pass) pairs checked,
agreeing, differing, unchanged and skipped (with the reason).

    python3 tools/check_semantics_sweep.py [--standard-only|--own-pass]
        [--timeout SECONDS] [--resume] [--rerun REGEX] [--passes A,B]
        [--no-cache] [--report] RELAY OUT.jsonl FILE_OR_DIR...

`--standard-only` runs only the standard pipeline; `--own-pass` runs the
standard pipeline and, for a file under `passes/<PassName>/` (the pass
test cases), that pass alone. Modules run smallest file first. Each pair
gets `--timeout` seconds of wall-clock time (default 300); `--resume`
keeps the records already in OUT.jsonl and runs only the missing pairs;
with `--rerun REGEX` it also runs again the pairs whose record matches
(searched in the status and the reason, e.g. `time limit|no kernel` for
skips a slower machine or an older binary gave), and the newest record of
a pair is the one counted. `--passes` limits the passes run alone to
those named (the standard pipeline is named `standard`). Every record
names the binary's version (`relay --version`).

The outputs of every module run are kept in `OUT.jsonl.semantics-cache/`
(`relay opt --semantics-cache`), so the original module, which every pass
alone starts from, runs once per module and binary rather than once per
pass; the reports are the same without it (`--no-cache`).

`--report` runs nothing: it prints the summary of the records already in
OUT.jsonl (the newest record of each pair) and which of the given
modules still have pairs without a record.

Every pair is one of:
- *agrees*: the pass changed the module and every compared pass inside
  agreed on the input (seed 0);
- *differs*: a pass changed the result (the reproducer is kept under
  OUT.jsonl's directory, `repro/MODULE.PASS`); when the computation left
  the range of its float type, the report says whether the difference
  stays on the input scaled down (a real one) or no scale was in range;
- *range*: the results agree only within range: on the random input the
  computation leaves its float type's range (float16, float32…) and they
  differ, on the same input scaled down they agree (`note` says what was
  seen and names the type). Records of older binaries say *float16 range*
  (and their summary "agree within float16 range"); both are read as this.
- *sensitive*: the results agree only within sensitivity: they differ
  beyond the tolerance, but the pass moved every float output by at most
  twice what one rounding unit of the float inputs moves the module's
  result (`note` gives both); a pair with passes of both kinds is *range*.
- *unchanged*: the pipeline left the module as it was (nothing to run);
- *skipped*: not checked, with the reason: the module cannot run (an
  operator without a kernel, a parameter without a random value…), no
  element of its result is finite on the random input (nothing to
  compare), the
  time limit, or the pass itself refused the module (its error).

e.g. `python3 tools/check_semantics_sweep.py target/release/relay
/tmp/sweep.jsonl ../shared/tvm/models examples`.
"""
import json
import os
import re
import subprocess
import sys
from collections import Counter

STANDARD = ("SimplifyInference, FoldConstant, FoldScaleAxis, CanonicalizeOps, "
            "EliminateCommonSubexpr, DeadCodeElimination, FuseOps(fuse_opt_level=2)")
# "agree within range" since the check handles every float type; older
# binaries said "agree within float16 range".
WITHIN = r"agree within (?:float16 )?range"
SENSITIVE = r"agree within sensitivity"
SUMMARY = re.compile(r"semantic check: (\d+) pass(?:es)? compared, (\d+) agree(?:, (\d+) " + WITHIN
                     + r")?(?:, (\d+) " + SENSITIVE
                     + r")?; (\d+) left the module unchanged; (\d+) not checked")
# The status of an older record with the same meaning as "range".
OLD_RANGE_STATUS = "float16 range"


def modules(paths):
    found = []
    for path in paths:
        if os.path.isdir(path):
            for root, _, files in sorted(os.walk(path)):
                found += [os.path.join(root, f) for f in sorted(files) if f.endswith(".relay")]
        else:
            found.append(path)
    return sorted(found, key=lambda f: (os.path.getsize(f), f))


def first_error(stderr):
    """The first `error…` line of a failed run, without its file position."""
    for line in stderr.splitlines():
        if line.startswith("error"):
            return re.sub(r"\s+", " ", line)[:160]
    return stderr.strip().splitlines()[-1][:160] if stderr.strip() else "no output"


def check(relay, version, module, label, pipeline, repro_root, timeout, cache):
    repro = os.path.join(repro_root, os.path.basename(module) + "." + label)
    cmd = [relay, "opt", module, "-p", pipeline, "--opt-level", "3", "--no-external",
           "--check-semantics=1", "--reproducer", repro, "-o", os.devnull]
    if cache is not None:
        cmd += ["--semantics-cache", cache]
    record = {"module": module, "pass": label, "relay": version}
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        record.update(status="skipped", why=f"time limit ({timeout} s)")
        return record
    stderr = r.stderr
    record["exit"] = r.returncode
    m = SUMMARY.search(stderr)
    if "changed the result" in stderr:
        record["status"] = "differs"
        record["report"] = next(l for l in stderr.splitlines() if "changed the result" in l)
        record["repro"] = repro
    elif m is None or r.returncode != 0:
        # The pass refused the module (or its options): nothing to compare.
        record.update(status="skipped", why="the pass failed: " + first_error(stderr))
    else:
        compared, agree, within, sensitive, unchanged, not_checked = (
            int(g or 0) for g in m.groups())
        if compared and agree == compared and not not_checked:
            record["status"] = "agrees"
        elif (within or sensitive) and agree + within + sensitive == compared and not not_checked:
            record["status"], pattern = ("range", WITHIN) if within else ("sensitive", SENSITIVE)
            record["note"] = next(l.strip() for l in stderr.splitlines()
                                  if re.match(pattern, l.strip()))
        elif not_checked:
            reason = re.search(r"not checked \((.*?)\): (.*)", stderr)
            why = reason.group(2) if reason else "?"
            why = re.sub(r" \(in @.*", "", why)
            why = re.sub(r"\(`relay ops [^`]*`\)", "", why).strip()
            record.update(status="skipped", why=why)
        else:
            record["status"] = "unchanged"
    return record


def main():
    args = sys.argv[1:]
    report_only = False
    mode, timeout, resume, rerun, only, use_cache = "--all", 300, False, None, None, True
    while args and args[0].startswith("--"):
        flag = args.pop(0)
        if flag == "--timeout":
            timeout = int(args.pop(0))
        elif flag == "--resume":
            resume = True
        elif flag == "--rerun":
            rerun = re.compile(args.pop(0))
        elif flag == "--passes":
            only = set(args.pop(0).split(","))
        elif flag == "--report":
            report_only = True
        elif flag == "--no-cache":
            use_cache = False
        else:
            mode = flag
    relay, out_path, *paths = args
    passes = json.loads(subprocess.run([relay, "passes", "--json"], capture_output=True, text=True).stdout)
    names = {p["name"] for p in passes}
    version = subprocess.run([relay, "--version"], capture_output=True, text=True).stdout.strip()

    def pipelines_of(module):
        if mode == "--standard-only":
            return [("standard", STANDARD)]
        if mode == "--own-pass":
            folder = os.path.basename(os.path.dirname(module))
            return [("standard", STANDARD)] + ([(folder, folder)] if folder in names else [])
        every = [("standard", STANDARD)] + [(p["name"], p["name"]) for p in passes]
        return [(label, pipeline) for label, pipeline in every if only is None or label in only]

    repro_root = os.path.join(os.path.dirname(os.path.abspath(out_path)), "repro")
    cache = os.path.abspath(out_path) + ".semantics-cache" if use_cache else None
    records = []
    if (resume or report_only) and os.path.exists(out_path):
        with open(out_path) as f:
            records = [json.loads(line) for line in f if line.strip()]
        for record in records:
            if record["status"] == OLD_RANGE_STATUS:
                record["status"] = "range"
    def stale(record):
        text = record["status"] + " " + record.get("why", "") + " " + record.get("report", "")
        return rerun is not None and rerun.search(text) is not None

    done = {(r["module"], r["pass"]) for r in records if not stale(r)}
    if report_only:
        missing = Counter(module for module in modules(paths)
                          for label, _ in pipelines_of(module) if (module, label) not in done)
        print(f"modules: {len(modules(paths))}, complete {len(modules(paths)) - len(missing)}; "
              f"pairs without a record: {sum(missing.values())}")
        for module, n in missing.items():
            print(f"  missing ×{n}: {module}")
    with (open(os.devnull, "w") if report_only else
          open(out_path, "a" if resume else "w")) as out:
        for module in modules(paths):
            for label, pipeline in pipelines_of(module):
                if report_only or (module, label) in done:
                    continue
                record = check(relay, version, module, label, pipeline, repro_root, timeout,
                               cache)
                records.append(record)
                out.write(json.dumps(record) + "\n")
                out.flush()
    # The newest record of each pair counts (a re-run replaces a stale one).
    records = list({(r["module"], r["pass"]): r for r in records}.values())
    counts = Counter(r["status"] for r in records)
    reasons = Counter(r["why"] for r in records if r["status"] == "skipped")
    checked = counts["agrees"] + counts["differs"] + counts["range"] + counts["sensitive"]
    print(f"pairs: {len(records)}; checked {checked}: agree {counts['agrees']}, "
          f"agree within range {counts['range']}, "
          f"agree within sensitivity {counts['sensitive']}, "
          f"differ {counts['differs']}; unchanged {counts['unchanged']}; "
          f"skipped {counts['skipped']}")
    for why, n in reasons.most_common(25):
        print(f"  skipped ×{n}: {why}")
    for r in records:
        if r["status"] == "range":
            print(f"  within range: {os.path.basename(r['module'])} {r['pass']}: {r['note']}")
    for r in records:
        if r["status"] == "sensitive":
            print(f"  within sensitivity: {os.path.basename(r['module'])} {r['pass']}: "
                  f"{r['note']}")
    for r in records:
        if r["status"] == "differs":
            print(f"  differs: {os.path.basename(r['module'])} {r['pass']}: {r['report']}")


if __name__ == "__main__":
    main()
