#!/usr/bin/env python3
"""Which test functions of TVM v0.13's test files this repository ports.

    python3 tools/tvm_test_audit.py TVM_CHECKOUT [--ref REF] [--markdown] [FILE...]

TVM_CHECKOUT is a git repository of apache/tvm (a clone or a bare mirror);
the test files are read at REF (default `refs/tags/v0.13.0`) with
`git show`, so no work tree is needed. FILE names test files under
`tests/python/` (default: the files of the passes of issue 22).

A test function counts as *ported* when its name (`test_…`) appears in one
of the repository's test inputs or test sources: our data-driven cases name
the TVM test they come from in a comment (`// from test_pass_partial_eval.py
test_map`, …), and Rust/Python tests name it in their doc or their own name.
A comment that lists several tests of one family may shorten them after the
first (`From TVM's test_fake_quantize_global_avg_pool, _mean, _topk`): a
`_<rest>` counts in a file that names the family prefix (the longest
`test_…_` prefix at least three of the file's tests share).
The report lists, per file, the number of test functions, how many are
ported and the names of those that are not, so the reasons for leaving each
out can be written beside them (see `docs/tvm-test-audit.md`).
"""
import argparse
import os
import re
import subprocess
import sys

DEFAULT_FILES = [
    "relay/test_dataflow_pattern.py",
    "relay/test_pass_merge_composite.py",
    "relay/test_pass_annotate_target.py",
    "relay/test_pass_merge_compiler_regions.py",
    "relay/test_pass_partition_graph.py",
    "relay/transform/test_compiler_function_utils.py",
    "relay/test_to_mixed_precision.py",
    "relay/test_pass_fake_quantization_to_integer.py",
    "relay/test_pass_partial_eval.py",
    "relay/test_pass_lambda_lift.py",
    "relay/test_pass_to_cps.py",
    "relay/test_pass_defunctionalization.py",
    "relay/test_pass_gradient.py",
    "relay/test_pass_lazy_gradient_init.py",
    "unittest/test_div_to_mul.py",
    "relay/test_simplify_fc_transpose.py",
    "relay/test_sparse_dense_convert.py",
    "relay/test_sparse_conv2d_convert.py",
    "relay/backend/test_pass_remove_standalone_reshapes.py",
    "relay/transform/test_capture_postdfsindex_in_spans.py",
    "relay/test_pass_manifest_lifetimes.py",
    "relay/test_pass_plan_devices.py",
]

# Where the repository's tests live, relative to its root.
TEST_ROOTS = [
    "passes/test_data",
    "passes/patterns/test_data",
    "passes/patterns/tests",
    "passes/tests",
    "passes/transforms/src",
    "passes/transforms/tests",
    "passes/infer/src",
    "passes/python/tests",
    "server/tests",
    "server/test_data",
]
TEXT_SUFFIXES = (".relay", ".pat", ".rs", ".py", ".toml", ".txt", ".md")


def test_functions(checkout, ref, path):
    """The `def test_…` names of one TVM test file, in order."""
    text = subprocess.run(
        ["git", "-C", checkout, "show", f"{ref}:tests/python/{path}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return re.findall(r"^def (test_\w+)\s*\(", text, flags=re.M)


def family_prefix(name, names):
    """The longest prefix of `name` ending in `_`, longer than `test_`, that
    at least three of `names` share; None when there is none."""
    best = None
    for end in range(len("test_") + 1, len(name)):
        if name[end - 1] != "_":
            continue
        prefix = name[:end]
        if sum(n.startswith(prefix) for n in names) >= 3:
            best = prefix
    return best


def mentioned(name, names, texts):
    """Whether a test input or source of the repository names `name`."""
    word = re.compile(rf"\b{re.escape(name)}\b")
    if any(word.search(t) for t in texts.values()):
        return True
    prefix = family_prefix(name, names)
    if prefix is None:
        return False
    # `_rest` as a word of its own (after a space, a comma or a slash).
    short = re.compile(rf"(?<![\w]){re.escape(name[len(prefix) - 1:])}\b")
    return any(prefix in t and short.search(t) for t in texts.values())


def repository_text(root):
    """Every test input and test source of the repository, concatenated
    per file name so a hit can say where it is."""
    texts = {}
    for base in TEST_ROOTS:
        for directory, _, files in os.walk(os.path.join(root, base)):
            for name in files:
                if name.endswith(TEXT_SUFFIXES):
                    full = os.path.join(directory, name)
                    with open(full, encoding="utf-8", errors="replace") as f:
                        texts[os.path.relpath(full, root)] = f.read()
    return texts


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("checkout")
    parser.add_argument("files", nargs="*", default=DEFAULT_FILES)
    parser.add_argument("--ref", default="refs/tags/v0.13.0")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    texts = repository_text(root)
    total_functions = total_ported = 0
    if args.markdown:
        print("| TVM test file | functions | ported | not ported |")
        print("|---|---:|---:|---|")
    for path in args.files:
        try:
            names = test_functions(args.checkout, args.ref, path)
        except subprocess.CalledProcessError:
            print(f"{path}: not in {args.ref}", file=sys.stderr)
            continue
        missing = [name for name in names if not mentioned(name, names, texts)]
        ported = len(names) - len(missing)
        total_functions += len(names)
        total_ported += ported
        if args.markdown:
            rest = ", ".join(f"`{m}`" for m in missing)
            print(f"| `{path}` | {len(names)} | {ported} | {rest} |")
        else:
            print(f"{path}: {ported}/{len(names)} ported")
            for name in missing:
                print(f"    not ported: {name}")
    summary = f"total: {total_ported}/{total_functions} test functions ported"
    print(("\n" + summary) if args.markdown else summary)


if __name__ == "__main__":
    main()
