#!/usr/bin/env python3
"""Realistic weights for a module run by `relay run`, and the comparison of
two results within float16's tolerance: the evidence for a pass that
changes a result only because random weights take the module out of a float
type's range or make it ill-conditioned (docs/semantic-check-sweep.md).

    python fan_in_weights.py make MODULE.relay OUTDIR [--seed N]
    python fan_in_weights.py compare BEFORE.npz AFTER.npz

`make` writes one `.npy` per parameter that is a weight of `nn.dense`
(its second argument; fan-in = the last dimension) or `nn.conv2d` (fan-in =
the product of every dimension but the first), uniform in
±sqrt(3 / fan_in) (variance 1 / fan_in, as a Xavier-style initialiser of
TVM's `relay.testing` keeps activations of order 1), and one per layer-norm
gain spelt out as `multiply(divide(x, %s), %gain)` with `%s` a computed
value (all ones), and prints the `--input NAME=FILE` flags to give
`relay run` together with `--random SEED` (which draws every other
parameter as the semantic check does: exponents of `power` 2, variances in
[0.5, 1.5], the rest in [-1, 1)).

`compare` reads two `relay run -o` results and prints, for each output,
the largest |difference|, the output's scale (largest |before|) and how
many elements differ by more than float16's tolerance
`1e-2 * (|before| + max|before|)`, the semantic check's tolerance for a
float16 computation. Needs numpy.
"""

import re
import sys
from pathlib import Path

import numpy as np

PARAM = re.compile(r"%(\w+): Tensor\[\(([0-9, ]*)\), (\w+)\]")
WEIGHT_USE = re.compile(r"nn\.(dense|conv2d)\(%\w+, %(\w+)[,)]")
BINDING = re.compile(r"^\s*%(\w+) = (\S+?)\((.*)\)")


def parameter_shapes(text):
    """The shape and dtype of every parameter of the first function."""
    header = text[text.index("def @main(") : text.index("{", text.index("def @main("))]
    shapes = {}
    for name, dims, dtype in PARAM.findall(header):
        shape = tuple(int(d) for d in dims.replace(" ", "").split(",") if d)
        shapes.setdefault(name, (shape, dtype))
    return shapes


def layer_norm_gains(text, shapes):
    """Parameters used as `multiply(divide(x, %s), %gain)`, `%s` computed
    (not a parameter, tensor or scalar)."""
    header = text[text.index("def @main(") : text.index("{", text.index("def @main("))]
    params = set(re.findall(r"%(\w+):", header))
    divides = set()
    gains = []
    for line in text.splitlines():
        m = BINDING.match(line)
        if not m:
            continue
        name, op, args = m.groups()
        operands = [a.strip().lstrip("%") for a in args.split(",")]
        if op == "divide" and len(operands) == 2 and operands[1] not in params:
            divides.add(name)
        if op == "multiply" and len(operands) == 2:
            if operands[0] in divides and operands[1] in shapes:
                gains.append(operands[1])
    return gains


def make(module, outdir, seed):
    text = Path(module).read_text()
    shapes = parameter_shapes(text)
    rng = np.random.default_rng(seed)
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    flags = []
    for op, name in WEIGHT_USE.findall(text):
        shape, dtype = shapes[name]
        fan_in = shape[-1] if op == "dense" else int(np.prod(shape[1:]))
        bound = np.sqrt(3.0 / fan_in)
        values = rng.uniform(-bound, bound, size=shape).astype(dtype)
        np.save(out / f"{name}.npy", values)
        flags.append(f"--input {name}={out / name}.npy")
    for name in layer_norm_gains(text, shapes):
        shape, dtype = shapes[name]
        np.save(out / f"{name}.npy", np.ones(shape, dtype=dtype))
        flags.append(f"--input {name}={out / name}.npy")
    print(" ".join(flags))


def compare(before, after):
    b, a = np.load(before), np.load(after)
    worst = 0
    for key in b.files:
        x = b[key].astype(np.float64)
        y = a[key].astype(np.float64)
        diff = np.abs(x - y)
        scale = np.abs(x).max() if x.size else 0.0
        beyond = int((diff > 1e-2 * (np.abs(x) + scale)).sum())
        finite = int(np.isfinite(x).sum()), int(np.isfinite(y).sum())
        worst = max(worst, beyond)
        print(
            f"{key}: max |diff| {diff.max():.4g} of scale {scale:.4g} "
            f"({diff.max() / scale if scale else 0:.3g}), {beyond} of {x.size} beyond "
            f"float16's tolerance, finite {finite[0]} / {finite[1]}"
        )
    return 1 if worst else 0


def main(argv):
    if len(argv) >= 3 and argv[0] == "make":
        seed = int(argv[argv.index("--seed") + 1]) if "--seed" in argv else 0
        make(argv[1], argv[2], seed)
        return 0
    if len(argv) == 3 and argv[0] == "compare":
        return compare(argv[1], argv[2])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
