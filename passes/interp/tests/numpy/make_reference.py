#!/usr/bin/env python3
"""Writes the independent reference values of the interpreter's numerical
tests: for each case a Relay program (`case.relay`), its inputs
(`in_<name>.npy`) and NumPy's result (`expected.npy`), computed here with
NumPy's own definitions (not TVM's, not ours); and `repr/*.npy` with
`repr/<name>.txt`, NumPy's `repr` of each array (as NumPy 1.25 prints it,
the NumPy of TVM v0.13), for the printing test.

Run it when a case is added (NumPy is needed only here, not by the tests):

    python3 -m venv /tmp/np && /tmp/np/bin/pip install numpy
    /tmp/np/bin/python passes/interp/tests/numpy/make_reference.py
"""
import os
import shutil

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "data")
rng = np.random.default_rng(20261127)


def f32(*shape, low=-2.0, high=2.0):
    return rng.uniform(low, high, size=shape).astype(np.float32)


def i32(*shape, low=-20, high=20):
    return rng.integers(low, high, size=shape).astype(np.int32)


def relay_type(a):
    dtype = "bool" if a.dtype == np.bool_ else str(a.dtype)
    if a.ndim == 0:
        return dtype
    return f"Tensor[({', '.join(str(d) for d in a.shape)}), {dtype}]"


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


CASES = []


def case(name, body, inputs, expected):
    CASES.append((name, body, inputs, expected))


x = f32(3, 4); y = f32(4)
case("add_broadcast", "add(%a, %b)", {"a": x, "b": y}, x + y)
x = f32(2, 3); y = f32(2, 3, low=0.5, high=2.0)
case("divide", "divide(%a, %b)", {"a": x, "b": y}, x / y)
x = f32(5, low=-5, high=5)
case("exp", "exp(%a)", {"a": x}, np.exp(x))
x = f32(6, low=0.01, high=10)
case("log", "log(%a)", {"a": x}, np.log(x))
case("sqrt", "sqrt(%a)", {"a": x}, np.sqrt(x))
x = f32(7, low=-4, high=4)
case("tanh", "tanh(%a)", {"a": x}, np.tanh(x))
case("sigmoid", "sigmoid(%a)", {"a": x}, (1 / (1 + np.exp(-x))).astype(np.float32))
x = f32(2, 5, low=-3, high=3)
case("softmax", "nn.softmax(%a, axis=-1)", {"a": x}, softmax(x).astype(np.float32))
case("log_softmax", "nn.log_softmax(%a, axis=1)", {"a": x}, np.log(softmax(x)).astype(np.float32))
x = f32(2, 3, 4)
case("mean_axis", "mean(%a, axis=[1])", {"a": x}, x.mean(axis=1))
case("sum_keepdims", "sum(%a, axis=[0, 2], keepdims=True)", {"a": x}, x.sum(axis=(0, 2), keepdims=True))
case("max_all", "max(%a)", {"a": x}, np.array(x.max()))
case("argmax", "argmax(%a, axis=[2])", {"a": x}, x.argmax(axis=2).astype(np.int32))
case("transpose", "transpose(%a, axes=[2, 0, 1])", {"a": x}, np.transpose(x, (2, 0, 1)))
a, b = f32(2, 3), f32(2, 2)
case("concatenate", "concatenate((%a, %b), axis=1)", {"a": a, "b": b}, np.concatenate([a, b], axis=1))
x = f32(4, 3); idx = np.array([3, 0, 2, 2], dtype=np.int32)
case("take", "take(%a, %i, axis=0)", {"a": x, "i": idx}, np.take(x, idx, axis=0))
c = rng.integers(0, 2, size=(3, 4)).astype(np.bool_); a, b = f32(3, 4), f32(4)
case("where", "where(%c, %a, %b)", {"c": c, "a": a, "b": b}, np.where(c, a, b))
x = f32(3, 4)
case("prod", "prod(%a, axis=[1])", {"a": x}, np.prod(x, axis=1))
x = f32(5, low=0.1, high=3); y = f32(5, low=-2, high=2)
case("power", "power(%a, %b)", {"a": x, "b": y}, np.power(x, y))
x = f32(8, low=-3, high=3)
case("clip", "clip(%a, a_min=-1f, a_max=0.5f)", {"a": x}, np.clip(x, -1, 0.5))
case("relu", "nn.relu(%a)", {"a": x}, np.maximum(x, 0))
case("leaky_relu", "nn.leaky_relu(%a, alpha=0.1f)", {"a": x}, np.where(x > 0, x, np.float32(0.1) * x))
x = f32(2, 3)
case("pad", "nn.pad(%a, 1.5f, pad_width=[[1, 0], [0, 2]])", {"a": x}, np.pad(x, ((1, 0), (0, 2)), constant_values=1.5))
x = f32(4, 6)
case("strided_slice", "strided_slice(%a, begin=[1, 0], end=[4, 6], strides=[2, 3], axes=None)", {"a": x}, x[1:4:2, 0:6:3])
case("reshape", "reshape(%a, newshape=[3, -1])", {"a": x}, x.reshape(3, -1))
case("tile", "tile(%a, reps=[1, 2])", {"a": x}, np.tile(x, (1, 2)))
case("repeat", "repeat(%a, repeats=2, axis=0)", {"a": x}, np.repeat(x, 2, axis=0))
a, b = i32(10), i32(10, low=1, high=7) * np.where(rng.integers(0, 2, 10) == 0, -1, 1).astype(np.int32)
case("floor_divide_int", "floor_divide(%a, %b)", {"a": a, "b": b}, np.floor_divide(a, b))
case("floor_mod_int", "floor_mod(%a, %b)", {"a": a, "b": b}, np.mod(a, b))
x = f32(6, low=-100, high=100)
case("cast_to_int", "cast(%a, dtype=\"int32\")", {"a": x}, x.astype(np.int32))
x = f32(3, 5)
case("sort", "sort(%a, axis=1)", {"a": x}, np.sort(x, axis=1))
case("broadcast_to", "broadcast_to(%a, shape=[2, 3, 5])", {"a": x[0]}, np.broadcast_to(x[0], (2, 3, 5)).copy())

# Printing: arrays whose NumPy repr the printer must reproduce.
REPRS = {
    "float32_small": np.array([[1.0, 2.5], [-3.25, 0.0]], dtype=np.float32),
    "float32_random": f32(3, 4),
    "float32_exp": np.array([1e-5, 1.0, 123456.0], dtype=np.float32),
    "float32_large": np.array([1e9, -2.5e10, 3.0], dtype=np.float32),
    "float32_nan_inf": np.array([np.nan, np.inf, -np.inf, 1.5], dtype=np.float32),
    "float32_wrap": f32(20),
    "float32_summarised": np.arange(2000, dtype=np.float32).reshape(40, 50) / 7,
    "float32_3d": f32(2, 2, 3),
    "float32_scalar": np.array(0.1, dtype=np.float32),
    "float64": rng.uniform(-1, 1, size=(2, 3)),
    "float16": np.array([0.1, 1.5, -2.0, 65504.0], dtype=np.float16),
    "int32": i32(2, 5, low=-1000, high=1000),
    "int64": np.array([1, -20, 300], dtype=np.int64),
    "uint8": np.array([0, 7, 255], dtype=np.uint8),
    "bool": np.array([True, False, True]),
    "int8_long": rng.integers(-128, 127, size=40).astype(np.int8),
}


def main():
    # TVM v0.13 runs with NumPy 1.x: no `shape=` in summarised reprs (2.2+).
    np.set_printoptions(legacy="1.25")
    shutil.rmtree(OUT, ignore_errors=True)
    for name, body, inputs, expected in CASES:
        d = os.path.join(OUT, "cases", name)
        os.makedirs(d)
        params = ", ".join(f"%{n}: {relay_type(a)}" for n, a in inputs.items())
        with open(os.path.join(d, "case.relay"), "w") as f:
            f.write(f'#[version = "0.0.5"]\ndef @main({params}) {{\n  {body}\n}}\n')
        for n, a in inputs.items():
            np.save(os.path.join(d, f"in_{n}.npy"), a)
        np.save(os.path.join(d, "expected.npy"), np.asarray(expected))
    d = os.path.join(OUT, "repr")
    os.makedirs(d)
    for name, a in REPRS.items():
        np.save(os.path.join(d, f"{name}.npy"), a)
        with open(os.path.join(d, f"{name}.txt"), "w") as f:
            f.write(repr(a))
    print(f"{len(CASES)} cases, {len(REPRS)} reprs (NumPy {np.__version__})")


if __name__ == "__main__":
    main()
