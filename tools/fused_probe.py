#!/usr/bin/env python3
"""Probes for a fused print (`Primitive` functions bound in `@main`, as
TVM's pipeline prints them): the evidence of the ToMixedPrecision entry on
collage_gpt2.pipeline in docs/semantic-check-sweep.md.

    python fused_probe.py expose MODULE.relay REGEX OUT.relay
    python fused_probe.py variance-in-float32 AFTER.relay OUT.relay
    python fused_probe.py maxima BEFORE.npz AFTER.npz FIRST

`expose` writes MODULE with `@main` returning, after its own outputs, the
result of every call of a fused function whose body matches REGEX (its
return annotation dropped; `relay run -o x.npz` then writes them as
`output_N`, N counting on from the module's own outputs). The parameters
are unchanged, so `relay run --random SEED` draws them as for MODULE.

`variance-in-float32` rewrites a ToMixedPrecision result: in every fused
layer-norm tail whose body starts by casting its variance and epsilon
parameters to float16 for `add` and `sqrt`, the `add` and `sqrt` compute in
float32 and only the standard deviation is cast to float16. Not a pass: a
counterfactual, to measure what casting the variance costs.

`maxima` prints, for every output from FIRST on of two `relay run -o`
results, the largest value and how many elements exceed float16's largest
finite value (65,504) before and after. Needs numpy (only `maxima`).

The text is read line by line as `relay opt` prints it: a fused function
is `%N = fn (…` up to `} /* ty=fn …`, its call `%M = %N(…)`.
"""

import re
import sys
from pathlib import Path

FLOAT16_MAX = 65504.0
FUNCTION = re.compile(r"  (%\d+) = fn \(")
CALL = re.compile(r"  (%\d+) = (%\d+)\(")


def fused_bodies(lines):
    """The body text of every function literal bound in `@main`."""
    bodies, current, body = {}, None, []
    for line in lines:
        start = FUNCTION.match(line)
        if start:
            current, body = start.group(1), []
        elif current is not None:
            if line.startswith("  } /* ty=fn"):
                bodies[current] = "\n".join(body)
                current = None
            else:
                body.append(line)
    return bodies


def expose(module, pattern, out):
    lines = Path(module).read_text().split("\n")
    wanted = {f for f, body in fused_bodies(lines).items() if re.search(pattern, body)}
    calls = [m.group(1) for m in map(CALL.match, lines) if m and m.group(2) in wanted]
    if not calls:
        sys.exit(f"no call of a fused function whose body matches {pattern!r}")
    header = next(i for i, line in enumerate(lines) if line.startswith("def @main("))
    arrow = lines[header].rfind(") -> ")
    if arrow >= 0:
        lines[header] = lines[header][: arrow + 1] + " {"
    result = max(i for i, line in enumerate(lines) if line.startswith("  (%"))
    close = lines[result].index(")")
    lines[result] = lines[result][:close] + ", " + ", ".join(calls) + ")"
    Path(out).write_text("\n".join(lines))
    print(f"{len(calls)} calls exposed: {' '.join(calls)}", file=sys.stderr)


CAST_PARAM = r"    (%\d+) = cast\((%p\d+), dtype=\"float16\"\)"


def variance_in_float32(after, out):
    lines = Path(after).read_text().split("\n")
    fresh = 1 + max(int(n) for n in re.findall(r"%(\d+) =", "\n".join(lines)))
    result, i, count = [], 0, 0
    while i < len(lines):
        window = lines[i : i + 5]
        variance = re.match(CAST_PARAM + r" /\* ty=Tensor", window[0])
        epsilon = variance and re.match(CAST_PARAM + r" /\* ty=float16 \*/", window[1])
        add = epsilon and re.match(r"    (%\d+) = add\((%\d+), (%\d+)\)", window[2])
        sqrt = add and len(window) == 5 and re.match(r"    (%\d+) = sqrt\((%\d+)\)", window[4])
        if (
            sqrt
            and add.group(2) == variance.group(1)
            and add.group(3) == epsilon.group(1)
            and sqrt.group(2) == add.group(1)
        ):
            std32 = f"%{fresh}"
            fresh += 1
            result.append(f"    {add.group(1)} = add({variance.group(2)}, {epsilon.group(2)});")
            result.append(window[3])
            result.append(f"    {std32} = sqrt({add.group(1)});")
            result.append(f'    {sqrt.group(1)} = cast({std32}, dtype="float16");')
            i += 5
            count += 1
            continue
        result.append(lines[i])
        i += 1
    if not count:
        sys.exit("no fused layer-norm tail casting its variance to float16")
    Path(out).write_text("\n".join(result))
    print(f"{count} layer-norm tails keep their variance in float32", file=sys.stderr)


def maxima(before, after, first):
    import numpy as np

    b, a = np.load(before), np.load(after)
    keys = sorted(b.files, key=lambda k: int(k.rsplit("_", 1)[1]))
    for key in keys[first:]:
        x, y = b[key].astype(np.float64), a[key].astype(np.float64)
        print(
            f"{key}: largest {np.nanmax(x):.4g} → {np.nanmax(y):.4g}, beyond float16's "
            f"range {(np.abs(x) > FLOAT16_MAX).sum()} → {(np.abs(y) > FLOAT16_MAX).sum()} "
            f"of {x.size}"
        )


def main(argv):
    if len(argv) == 4 and argv[0] == "expose":
        expose(*argv[1:])
        return 0
    if len(argv) == 3 and argv[0] == "variance-in-float32":
        variance_in_float32(*argv[1:])
        return 0
    if len(argv) == 4 and argv[0] == "maxima":
        maxima(argv[1], argv[2], int(argv[3]))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
