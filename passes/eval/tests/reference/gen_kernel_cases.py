"""Reference values for relay-eval's kernels, computed with NumPy by
straightforward (and deliberately different) algorithms: convolutions by
explicit window sums, transposed convolutions by scattering each input
element, pooling window by window, norms with NumPy's mean/var.

Writes kernel_cases.txt beside this script; the Rust test
`reference_cases` (passes/eval/src/reference_cases.rs) reads that file, so
NumPy is needed only to regenerate it:

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install numpy
    /tmp/venv/bin/python passes/eval/tests/reference/gen_kernel_cases.py

Format, one case per block: `case NAME`, `op OP`, `attr NAME KIND VALUES…`
(KIND: int, ints, pairs, float, str, bool, dtype), `arg DTYPE SHAPE VALUES…`,
`tuple N` and N `field DTYPE SHAPE VALUES…` for a
tuple argument, `out DTYPE SHAPE VALUES…` (one per tuple field), `tol RELATIVE` (0: bit
exact), `end`. SHAPE is comma-separated (`-` for a scalar).
"""

import math
import os

import numpy as np

rng = np.random.default_rng(20261127)
cases = []


def shape_text(shape):
    return ",".join(str(d) for d in shape) if len(shape) else "-"


def values_text(a):
    a = np.asarray(a)
    if a.dtype.kind == "f":
        return " ".join(repr(float(x)) for x in a.reshape(-1))
    return " ".join(str(int(x)) for x in a.reshape(-1))


def case(name, op, attrs, args, outs, tol=0.0):
    lines = [f"case {name}", f"op {op}"]
    for key, (kind, value) in attrs.items():
        if kind == "ints":
            text = " ".join(str(v) for v in value)
        elif kind == "pairs":
            text = " ".join(f"{a} {b}" for a, b in value)
        elif kind == "bool":
            text = "1" if value else "0"
        else:
            text = str(value)
        lines.append(f"attr {key} {kind} {text}".rstrip())
    for dtype, a in args:
        if dtype == "tuple":
            lines.append(f"tuple {len(a)}")
            for fdtype, fa in a:
                lines.append(f"field {fdtype} {shape_text(np.shape(fa))} {values_text(fa)}".rstrip())
            continue
        lines.append(f"arg {dtype} {shape_text(np.shape(a))} {values_text(a)}".rstrip())
    for dtype, a in outs:
        lines.append(f"out {dtype} {shape_text(np.shape(a))} {values_text(a)}".rstrip())
    lines.append(f"tol {tol}")
    lines.append("end")
    cases.append("\n".join(lines))


def small_ints(shape, lo=-4, hi=5):
    return rng.integers(lo, hi, size=shape)


def floats(shape):
    return rng.standard_normal(shape).astype(np.float32)


# ---- matrix products ----
a, w = small_ints((3, 5)), small_ints((4, 5))
case("dense_int", "nn.dense", {"units": ("int", 4)}, [("int32", a), ("int32", w)],
     [("int32", a @ w.T)])
a8, w8 = small_ints((2, 6), -128, 128), small_ints((3, 6), -128, 128)
case("dense_int8_to_int32", "nn.dense", {"units": ("int", 3), "out_dtype": ("dtype", "int32")},
     [("int8", a8), ("int8", w8)], [("int32", a8.astype(np.int64) @ w8.T.astype(np.int64))])
af, wf = floats((2, 7)), floats((3, 7))
case("dense_float", "nn.dense", {"units": ("int", 3)}, [("float32", af), ("float32", wf)],
     [("float32", af.astype(np.float64) @ wf.T.astype(np.float64))], tol=1e-5)
x, y = small_ints((3, 4)), small_ints((3, 2))
case("matmul_transpose_a", "nn.matmul", {"transpose_a": ("bool", True), "transpose_b": ("bool", False)},
     [("int32", x), ("int32", y)], [("int32", x.T @ y)])
x, y = small_ints((2, 3, 4)), small_ints((1, 5, 4))
case("batch_matmul_broadcast", "nn.batch_matmul", {"transpose_a": ("bool", False), "transpose_b": ("bool", True)},
     [("int32", x), ("int32", y)], [("int32", np.matmul(x, np.transpose(y, (0, 2, 1))))])
x, y = small_ints((2, 4, 3)), small_ints((2, 4, 5))
case("batch_matmul_transpose_a", "nn.batch_matmul", {"transpose_a": ("bool", True), "transpose_b": ("bool", False)},
     [("int32", x), ("int32", y)], [("int32", np.matmul(np.transpose(x, (0, 2, 1)), y))])


# ---- convolution: explicit window sums on NCHW / OIHW, layouts by transposes ----
def conv_ref(x, w, stride, pad_before, pad_after, dilation, groups):
    s = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + list(zip(pad_before, pad_after)))
    n, c = x.shape[:2]
    o = w.shape[0]
    k = w.shape[2:]
    out_sp = [(xp.shape[2 + a] - (k[a] - 1) * dilation[a] - 1) // stride[a] + 1 for a in range(s)]
    out = np.zeros([n, o] + out_sp, dtype=np.float64)
    ig, og = c // groups, o // groups
    for idx in np.ndindex(*([n, o] + out_sp)):
        b, oc = idx[:2]
        g = oc // og
        total = 0.0
        for kidx in np.ndindex(*k):
            pos = tuple(idx[2 + a] * stride[a] + kidx[a] * dilation[a] for a in range(s))
            window = xp[(b, slice(g * ig, (g + 1) * ig)) + pos]
            total += float(np.dot(window.astype(np.float64), w[(oc, slice(None)) + kidx].astype(np.float64)))
        out[idx] = total
    return out


x = small_ints((1, 4, 5, 6))
w = small_ints((4, 2, 3, 2))
ref = conv_ref(x, w, [2, 1], [1, 0], [1, 1], [1, 2], 2)
case("conv2d_groups_stride_dilation_asymmetric_padding", "nn.conv2d",
     {"strides": ("ints", [2, 1]), "padding": ("ints", [1, 0, 1, 1]), "dilation": ("ints", [1, 2]),
      "groups": ("int", 2), "channels": ("int", 4), "kernel_size": ("ints", [3, 2])},
     [("int32", x), ("int32", w)], [("int32", ref.astype(np.int64))])
xn = np.transpose(x, (0, 2, 3, 1))
wh = np.transpose(w, (2, 3, 1, 0))
case("conv2d_nhwc_hwio", "nn.conv2d",
     {"strides": ("ints", [2, 1]), "padding": ("ints", [1, 0, 1, 1]), "dilation": ("ints", [1, 2]),
      "groups": ("int", 2), "data_layout": ("str", "NHWC"), "kernel_layout": ("str", "HWIO")},
     [("int32", xn), ("int32", wh)], [("int32", np.transpose(ref, (0, 2, 3, 1)).astype(np.int64))])
xd = small_ints((1, 3, 4, 4))
wd = small_ints((3, 1, 3, 3))
refd = conv_ref(xd, wd, [1, 1], [1, 1], [1, 1], [1, 1], 3)
case("conv2d_depthwise_nhwc_hwoi", "nn.conv2d",
     {"padding": ("ints", [1, 1]), "groups": ("int", 3), "data_layout": ("str", "NHWC"),
      "kernel_layout": ("str", "HWOI")},
     [("int32", np.transpose(xd, (0, 2, 3, 1))), ("int32", np.transpose(wd, (2, 3, 0, 1)))],
     [("int32", np.transpose(refd, (0, 2, 3, 1)).astype(np.int64))])
x1, w1 = floats((2, 3, 9)), floats((4, 3, 3))
case("conv1d_float", "nn.conv1d", {"strides": ("ints", [2]), "padding": ("ints", [1, 2])},
     [("float32", x1), ("float32", w1)], [("float32", conv_ref(x1, w1, [2], [1], [2], [1], 1))], tol=1e-5)
x3, w3 = small_ints((1, 2, 3, 4, 4)), small_ints((2, 2, 2, 2, 3))
case("conv3d_int", "nn.conv3d", {"padding": ("ints", [0, 1, 1])},
     [("int32", x3), ("int32", w3)], [("int32", conv_ref(x3, w3, [1, 1, 1], [0, 1, 1], [0, 1, 1], [1, 1, 1], 1).astype(np.int64))])
x8, w8 = small_ints((1, 2, 4, 4), -128, 128), small_ints((3, 2, 3, 3), -128, 128)
case("conv2d_int8_out_int32", "nn.conv2d", {"padding": ("ints", [1]), "out_dtype": ("dtype", "int32")},
     [("int8", x8), ("int8", w8)], [("int32", conv_ref(x8, w8, [1, 1], [1, 1], [1, 1], [1, 1], 1).astype(np.int64))])


# ---- transposed convolution: scatter each input element ----
def conv_transpose_ref(x, w, stride, pad_before, pad_after, dilation, out_pad, groups):
    s = x.ndim - 2
    n, c = x.shape[:2]
    og = w.shape[1]
    k = w.shape[2:]
    full = [(x.shape[2 + a] - 1) * stride[a] + (k[a] - 1) * dilation[a] + 1 + out_pad[a] for a in range(s)]
    out = np.zeros([n, og * groups] + full, dtype=np.float64)
    ig = c // groups
    for idx in np.ndindex(*x.shape):
        b, ch = idx[:2]
        g = ch // ig
        for kidx in np.ndindex(*k):
            pos = tuple(idx[2 + a] * stride[a] + kidx[a] * dilation[a] for a in range(s))
            for oo in range(og):
                out[(b, g * og + oo) + pos] += float(x[idx]) * float(w[(ch, oo) + kidx])
    sl = tuple(slice(pad_before[a], full[a] - pad_after[a]) for a in range(s))
    return out[(slice(None), slice(None)) + sl]


xt, wt = small_ints((1, 4, 3, 3)), small_ints((4, 1, 3, 2))
case("conv2d_transpose_groups_stride_output_padding", "nn.conv2d_transpose",
     {"strides": ("ints", [2, 2]), "padding": ("ints", [1, 0, 0, 1]), "output_padding": ("ints", [1, 0]),
      "groups": ("int", 2), "dilation": ("ints", [1, 1])},
     [("int32", xt), ("int32", wt)],
     [("int32", conv_transpose_ref(xt, wt, [2, 2], [1, 0], [0, 1], [1, 1], [1, 0], 2).astype(np.int64))])
xt1, wt1 = floats((1, 2, 4)), floats((2, 3, 3))
case("conv1d_transpose_dilation", "nn.conv1d_transpose",
     {"strides": ("ints", [3]), "padding": ("ints", [1, 1]), "dilation": ("ints", [2]), "output_padding": ("ints", [0])},
     [("float32", xt1), ("float32", wt1)],
     [("float32", conv_transpose_ref(xt1, wt1, [3], [1], [1], [2], [0], 1))], tol=1e-5)


# ---- pooling: window by window ----
def pool_ref(x, kind, k, stride, dilation, pb, pa, ceil_mode, include_pad):
    s = len(k)
    sp = x.shape[2:]
    out_sp = []
    for a in range(s):
        span = (k[a] - 1) * dilation[a] + 1
        num = sp[a] + pb[a] + pa[a] - span
        o = (-(-num // stride[a]) if ceil_mode else num // stride[a]) + 1
        # TOPI: a window starting in the trailing padding added by ceil mode still counts
        out_sp.append(o)
    out = np.zeros(x.shape[:2] + tuple(out_sp), dtype=np.float64)
    for idx in np.ndindex(*out.shape):
        taps, inside = [], 0
        total_taps = 1
        for kidx in np.ndindex(*k):
            pos = [idx[2 + a] * stride[a] - pb[a] + kidx[a] * dilation[a] for a in range(s)]
            if all(0 <= pos[a] < sp[a] for a in range(s)):
                taps.append(float(x[idx[:2] + tuple(pos)]))
                inside += 1
            elif all(-pb[a] <= pos[a] < sp[a] + pa[a] for a in range(s)):
                taps.append(None)
        if kind == "max":
            real = [t for t in taps if t is not None]
            # A window wholly in the padding reads only the lowest float32.
            out[idx] = max(real) if real else float(np.finfo(np.float32).min)
        else:
            total = sum(t for t in taps if t is not None)
            if include_pad:
                count = 1
                for a in range(s):
                    start = idx[2 + a] * stride[a] - pb[a]
                    end = min(start + (k[a] - 1) * dilation[a], sp[a] + pa[a] - 1)
                    count *= (end - start) // dilation[a] + 1
            else:
                count = max(inside, 1)
            out[idx] = total / count
    return out


xp = floats((1, 2, 5, 6))
case("max_pool2d_padding_ceil", "nn.max_pool2d",
     {"pool_size": ("ints", [3, 2]), "strides": ("ints", [2, 2]), "padding": ("ints", [1, 0, 0, 1]),
      "ceil_mode": ("bool", True)},
     [("float32", xp)], [("float32", pool_ref(xp, "max", [3, 2], [2, 2], [1, 1], [1, 0], [0, 1], True, False))])
case("avg_pool2d_exclude_pad", "nn.avg_pool2d",
     {"pool_size": ("ints", [3, 3]), "strides": ("ints", [2, 2]), "padding": ("ints", [1, 1]),
      "count_include_pad": ("bool", False)},
     [("float32", xp)], [("float32", pool_ref(xp, "avg", [3, 3], [2, 2], [1, 1], [1, 1], [1, 1], False, False))], tol=1e-6)
case("avg_pool2d_include_pad", "nn.avg_pool2d",
     {"pool_size": ("ints", [3, 3]), "strides": ("ints", [2, 2]), "padding": ("ints", [1, 1]),
      "count_include_pad": ("bool", True)},
     [("float32", xp)], [("float32", pool_ref(xp, "avg", [3, 3], [2, 2], [1, 1], [1, 1], [1, 1], False, True))], tol=1e-6)
xi = small_ints((1, 1, 7), -50, 50)
case("avg_pool1d_int_truncates", "nn.avg_pool1d",
     {"pool_size": ("ints", [3]), "strides": ("ints", [2]), "padding": ("ints", [1, 1])},
     [("int32", xi)], [("int32", np.trunc(pool_ref(xi, "avg", [3], [2], [1], [1], [1], False, False)).astype(np.int64))])
x3p = small_ints((1, 2, 3, 4, 4), -9, 10)
case("max_pool3d_dilation", "nn.max_pool3d",
     {"pool_size": ("ints", [2, 2, 2]), "strides": ("ints", [1, 1, 1]), "dilation": ("ints", [1, 2, 2])},
     [("int32", x3p)], [("int32", pool_ref(x3p, "max", [2, 2, 2], [1, 1, 1], [1, 2, 2], [0, 0, 0], [0, 0, 0], False, False).astype(np.int64))])
xg = floats((2, 3, 4, 5))
case("global_avg_pool2d", "nn.global_avg_pool2d", {}, [("float32", xg)],
     [("float32", xg.astype(np.float64).mean(axis=(2, 3), keepdims=True))], tol=1e-6)
case("global_max_pool2d_nhwc", "nn.global_max_pool2d", {"layout": ("str", "NHWC")},
     [("float32", xg)], [("float32", xg.max(axis=(1, 2), keepdims=True))])


def adaptive_ref(x, out_size, kind):
    s = len(out_size)
    sp = x.shape[2:]
    out = np.zeros(x.shape[:2] + tuple(out_size), dtype=np.float64)
    for idx in np.ndindex(*out.shape):
        sl = []
        for a in range(s):
            i = idx[2 + a]
            start = (i * sp[a]) // out_size[a]
            end = -(-((i + 1) * sp[a]) // out_size[a])
            sl.append(slice(start, end))
        window = x[idx[:2] + tuple(sl)].astype(np.float64)
        out[idx] = window.max() if kind == "max" else window.mean()
    return out


xa = floats((1, 2, 5, 7))
case("adaptive_avg_pool2d", "nn.adaptive_avg_pool2d", {"output_size": ("ints", [3, 4])},
     [("float32", xa)], [("float32", adaptive_ref(xa, [3, 4], "avg"))], tol=1e-6)
xa1 = small_ints((1, 2, 10), -20, 20)
case("adaptive_max_pool1d", "nn.adaptive_max_pool1d", {"output_size": ("ints", [4])},
     [("int32", xa1)], [("int32", adaptive_ref(xa1, [4], "max").astype(np.int64))])

# ---- normalisations ----
xn = floats((2, 3, 4))
gamma, beta = floats((4,)), floats((4,))
m = xn.astype(np.float64).mean(axis=-1, keepdims=True)
v = xn.astype(np.float64).var(axis=-1, keepdims=True)
case("layer_norm_last_axis", "nn.layer_norm", {"axis": ("int", -1), "epsilon": ("float", 1e-5)},
     [("float32", xn), ("float32", gamma), ("float32", beta)],
     [("float32", (xn - m) / np.sqrt(v + 1e-5) * gamma + beta)], tol=1e-5)
xb = floats((2, 3, 2, 2))
g3, b3, m3 = floats((3,)), floats((3,)), floats((3,))
v3 = np.abs(floats((3,))) + 0.5
shaped = lambda t: t.reshape(1, 3, 1, 1).astype(np.float64)
case("batch_norm_inference", "nn.batch_norm", {"axis": ("int", 1), "epsilon": ("float", 1e-3)},
     [("float32", xb), ("float32", g3), ("float32", b3), ("float32", m3), ("float32", v3)],
     [("float32", (xb - shaped(m3)) / np.sqrt(shaped(v3) + 1e-3) * shaped(g3) + shaped(b3)),
      ("float32", m3), ("float32", v3)], tol=1e-5)
xg4 = floats((1, 4, 3))
grouped = xg4.reshape(1, 2, 2, 3).astype(np.float64)
gm = grouped.mean(axis=(2, 3), keepdims=True)
gv = grouped.var(axis=(2, 3), keepdims=True)
gn = ((grouped - gm) / np.sqrt(gv + 1e-5)).reshape(1, 4, 3)
g4, b4 = floats((4,)), floats((4,))
case("group_norm_two_groups", "nn.group_norm",
     {"num_groups": ("int", 2), "axis": ("int", 1), "epsilon": ("float", 1e-5)},
     [("float32", xg4), ("float32", g4), ("float32", b4)],
     [("float32", gn * g4.reshape(1, 4, 1) + b4.reshape(1, 4, 1))], tol=1e-5)
xin = floats((2, 3, 5))
im = xin.astype(np.float64).mean(axis=2, keepdims=True)
iv = xin.astype(np.float64).var(axis=2, keepdims=True)
case("instance_norm_no_scale", "nn.instance_norm",
     {"axis": ("int", 1), "epsilon": ("float", 1e-5), "scale": ("bool", False), "center": ("bool", False)},
     [("float32", xin), ("float32", floats((3,))), ("float32", floats((3,)))],
     [("float32", (xin - im) / np.sqrt(iv + 1e-5))], tol=1e-5)
xl = floats((2, 5))
case("l2_normalize", "nn.l2_normalize", {"eps": ("float", 1e-10), "axis": ("ints", [1])},
     [("float32", xl)], [("float32", xl / np.sqrt(np.maximum((xl.astype(np.float64) ** 2).sum(axis=1, keepdims=True), 1e-10)))], tol=1e-6)
xv = floats((3, 4))
mv = xv.astype(np.float64).mean(axis=0, keepdims=True).astype(np.float32)
case("variance_unbiased", "variance", {"axis": ("ints", [0]), "keepdims": ("bool", False), "unbiased": ("bool", True)},
     [("float32", xv), ("float32", mv)],
     [("float32", ((xv.astype(np.float64) - mv) ** 2).sum(axis=0) / 2)], tol=1e-6)
xr = floats((1, 5, 2, 2))
sq = np.pad(xr.astype(np.float64) ** 2, [(0, 0), (1, 1), (0, 0), (0, 0)])
window = sum(sq[:, i:i + 5] for i in range(3))
case("lrn_axis1", "nn.lrn", {"size": ("int", 3), "axis": ("int", 1), "alpha": ("float", 1e-4),
                             "beta": ("float", 0.75), "bias": ("float", 2.0)},
     [("float32", xr)], [("float32", xr / np.power(2.0 + 1e-4 * window / 3, 0.75))], tol=1e-6)

# ---- sorting ----
xs = np.array([[3, 1, 3, 2, 1], [0, -1, 5, 5, 2]], dtype=np.int64)
case("argsort_descending_stable", "argsort", {"axis": ("int", 1), "is_ascend": ("bool", False), "dtype": ("dtype", "int32")},
     [("int32", xs)], [("int32", np.argsort(-xs, axis=1, kind="stable"))])
order = np.argsort(xs, axis=1, kind="stable")[:, :3]
case("topk_both_ascending", "topk", {"k": ("int", 3), "axis": ("int", -1), "ret_type": ("str", "both"),
                                     "is_ascend": ("bool", True), "dtype": ("dtype", "int64")},
     [("int32", xs)], [("int32", np.take_along_axis(xs, order, axis=1)), ("int64", order)])

# ---- quantized products: the direct sum of (x - zx)(w - zw) ----
qx = rng.integers(0, 256, size=(2, 5))
qw = rng.integers(-128, 128, size=(3, 5))
case("qnn_dense_zero_points", "qnn.dense", {"units": ("int", 3), "out_dtype": ("dtype", "int32")},
     [("uint8", qx), ("int8", qw), ("int32", np.array(128)), ("int32", np.array(-3)),
      ("float32", np.array(0.5)), ("float32", np.array(0.25))],
     [("int32", (qx - 128) @ (qw + 3).T)])
qxc = rng.integers(0, 256, size=(1, 2, 3, 3))
qwc = rng.integers(-128, 128, size=(2, 2, 2, 2))
zpw = np.array([1, -2])
shifted_w = qwc - zpw.reshape(2, 1, 1, 1)
case("qnn_conv2d_per_channel_zero_point_padding", "qnn.conv2d",
     {"padding": ("ints", [1, 1]), "out_dtype": ("dtype", "int32"), "channels": ("int", 2),
      "kernel_size": ("ints", [2, 2])},
     [("uint8", qxc), ("int8", qwc), ("int32", np.array(100)), ("int32", zpw),
      ("float32", np.array(0.5)), ("float32", np.array([0.25, 0.5]))],
     [("int32", conv_ref(qxc - 100, shifted_w, [1, 1], [1, 1], [1, 1], [1, 1], 1).astype(np.int64))])

# ---- one_hot and dynamic operators ----
oh = np.array([[0, 2], [-1, 3]])
case("one_hot_axis0", "one_hot", {"depth": ("int", 3), "axis": ("int", 0), "dtype": ("dtype", "float32")},
     [("int32", oh), ("float32", np.array(5.0)), ("float32", np.array(-1.0))],
     [("float32", np.where(np.arange(3).reshape(3, 1, 1) == oh[None], 5.0, -1.0))])
xr = np.arange(6)
case("dyn_reshape", "dyn.reshape", {}, [("int32", xr), ("int64", np.array([3, -1]))],
     [("int32", xr.reshape(3, 2))])
case("dyn_topk_values", "dyn.topk", {"axis": ("int", -1), "ret_type": ("str", "values"), "is_ascend": ("bool", False),
                                     "dtype": ("dtype", "int32")},
     [("int32", np.array([4, 9, 1, 7])), ("int32", np.array(2))], [("int32", np.array([9, 7]))])


# ---- resizing, coordinate by coordinate in float64 ----
def resize_ref(x, size, method, mode, rounding="", alpha=-0.5):
    """NCHW, float64 arithmetic; indices clamped to the image."""
    n, c, h, w = x.shape
    oh, ow = size

    def coord(o, image, target):
        scale = image / target
        if mode == "half_pixel":
            return (o + 0.5) * scale - 0.5
        if mode == "align_corners":
            return (image - 1) / (target - 1) * o
        return scale * o

    def pixel(b, ch, yy, xx):
        return x[b, ch, min(max(yy, 0), h - 1), min(max(xx, 0), w - 1)]

    out = np.zeros((n, c, oh, ow))
    for b, ch, i, j in np.ndindex(n, c, oh, ow):
        yy, xx = coord(i, h, oh), coord(j, w, ow)
        if method == "nearest_neighbor":
            rnd = rounding or ("round" if mode == "align_corners" else "floor")
            f = {"round": np.round, "floor": lambda v: math.floor(v + 1e-5)}[rnd]
            out[b, ch, i, j] = pixel(b, ch, int(f(yy)), int(f(xx)))
        elif method == "linear":
            y0, x0 = math.floor(yy), math.floor(xx)
            ty, tx = yy - y0, xx - x0
            top = pixel(b, ch, y0, x0) * (1 - tx) + pixel(b, ch, y0, x0 + 1) * tx
            bottom = pixel(b, ch, y0 + 1, x0) * (1 - tx) + pixel(b, ch, y0 + 1, x0 + 1) * tx
            out[b, ch, i, j] = top * (1 - ty) + bottom * ty
        else:
            def weights(t):
                a = alpha
                return [a * (t**3 - 2 * t**2 + t), (a + 2) * t**3 - (3 + a) * t**2 + 1,
                        -(a + 2) * t**3 + (3 + 2 * a) * t**2 - a * t, -a * t**3 + a * t**2]
            y0, x0 = math.floor(yy), math.floor(xx)
            wy, wx = weights(yy - y0), weights(xx - x0)
            out[b, ch, i, j] = sum(wy[p] * sum(wx[q] * pixel(b, ch, y0 - 1 + p, x0 - 1 + q) for q in range(4))
                                   for p in range(4))
    return out


img = floats((1, 2, 3, 4))
case("resize2d_linear_half_pixel", "image.resize2d",
     {"size": ("ints", [5, 3]), "method": ("str", "linear"), "coordinate_transformation_mode": ("str", "half_pixel"),
      "rounding_method": ("str", ""), "layout": ("str", "NCHW")},
     [("float32", img)], [("float32", resize_ref(img, (5, 3), "linear", "half_pixel"))], tol=1e-5)
case("resize2d_cubic_align_corners", "image.resize2d",
     {"size": ("ints", [4, 6]), "method": ("str", "cubic"), "coordinate_transformation_mode": ("str", "align_corners"),
      "rounding_method": ("str", ""), "cubic_alpha": ("float", -0.75)},
     [("float32", img)], [("float32", resize_ref(img, (4, 6), "cubic", "align_corners", alpha=-0.75))], tol=1e-5)
iu = small_ints((1, 1, 2, 3), 0, 9)
case("upsampling_nearest_asymmetric", "nn.upsampling",
     {"scale_h": ("float", 2.0), "scale_w": ("float", 2.0), "method": ("str", "nearest_neighbor")},
     [("int32", iu)], [("int32", np.repeat(np.repeat(iu, 2, axis=2), 2, axis=3))])
case("upsampling_bilinear_align_corners", "nn.upsampling",
     {"scale_h": ("float", 2.0), "scale_w": ("float", 1.5), "method": ("str", "bilinear"), "align_corners": ("bool", True)},
     [("float32", img)], [("float32", resize_ref(img, (6, 6), "linear", "align_corners"))], tol=1e-5)

# ---- small tensor operators ----
cs = small_ints((2, 3, 4))
case("collapse_sum_like", "collapse_sum_like", {}, [("int32", cs), ("int32", np.zeros((3, 1), dtype=np.int64))],
     [("int32", cs.sum(axis=(0, 2)).reshape(3, 1))])
case("collapse_sum_to", "collapse_sum_to", {}, [("int32", cs), ("int64", np.array([4]))],
     [("int32", cs.sum(axis=(0, 1)))])
perm = np.array([2, 0, 3, 1])
case("invert_permutation", "invert_permutation", {}, [("int32", perm)], [("int32", np.argsort(perm))])
buf, new_rows = small_ints((4, 2)), small_ints((1, 2))
case("fifo_buffer", "nn.fifo_buffer", {"axis": ("int", 0)}, [("int32", new_rows), ("int32", buf)],
     [("int32", np.concatenate([buf, new_rows])[1:])])

# ---- einsum and the C library's functions ----
ea, eb = small_ints((2, 3)), small_ints((3, 4))
case("einsum_matmul", "einsum", {"equation": ("str", "ij,jk->ik")}, [("tuple", [("int32", ea), ("int32", eb)])],
     [("int32", np.einsum("ij,jk->ik", ea, eb))])
ec = small_ints((3, 3))
case("einsum_trace_implicit", "einsum", {"equation": ("str", "ii")}, [("tuple", [("int32", ec)])],
     [("int32", np.einsum("ii", ec))])
ed = floats((2, 3))
case("einsum_batch_outer_float", "einsum", {"equation": ("str", "bi,bj->bij")},
     [("tuple", [("float32", ed), ("float32", ed)])], [("float32", np.einsum("bi,bj->bij", ed.astype(np.float64), ed))], tol=1e-6)
ev = np.array([-2.0, -0.5, 0.0, 0.3, 1.7], dtype=np.float32)
case("erf_float32", "erf", {}, [("float32", ev)], [("float32", np.array([math.erf(float(v)) for v in ev]))], tol=1e-6)
case("asinh_float64", "asinh", {}, [("float64", ev.astype(np.float64))], [("float64", np.arcsinh(ev.astype(np.float64)))], tol=1e-15)

# ---- space/batch and dilation: NumPy pads, reshapes and transposes ----
sb = small_ints((2, 3, 4, 1), -9, 10)
padded = np.pad(sb, [(0, 0), (1, 0), (0, 2), (0, 0)], constant_values=7)
blocks = padded.reshape(2, 2, 2, 3, 2, 1).transpose(2, 4, 0, 1, 3, 5).reshape(8, 2, 3, 1)
case("space_to_batch_nd", "nn.space_to_batch_nd",
     {"block_shape": ("ints", [2, 2]), "paddings": ("pairs", [[1, 0], [0, 2]]), "pad_value": ("float", 7.0)},
     [("int32", sb)], [("int32", blocks)])
bs = small_ints((8, 2, 3, 1), -9, 10)
merged = bs.reshape(2, 2, 2, 2, 3, 1).transpose(2, 3, 0, 4, 1, 5).reshape(2, 4, 6, 1)
case("batch_to_space_nd", "nn.batch_to_space_nd",
     {"block_shape": ("ints", [2, 2]), "crops": ("pairs", [[1, 0], [0, 2]])},
     [("int32", bs)], [("int32", merged[:, 1:, :4])])
dl = small_ints((2, 3))
dilated = np.full((3, 7), -1)
dilated[::2, ::3] = dl
case("dilate", "nn.dilate", {"strides": ("ints", [2, 3]), "dilation_value": ("float", -1.0)},
     [("int32", dl)], [("int32", dilated)])

# ---- windows, losses, fast softmax ----
sw = np.arange(2 * 7).reshape(2, 7)
windows = np.stack([sw[:, i:i + 3] for i in range(0, 5, 2)], axis=1)
case("sliding_window", "sliding_window", {"axis": ("int", 1), "window_shape": ("ints", [3]), "strides": ("ints", [2])},
     [("int32", sw)], [("int32", windows)])
pr = np.abs(floats((3, 4))) + 0.1
tg = np.abs(floats((3, 4)))
case("cross_entropy", "nn.cross_entropy", {}, [("float32", pr), ("float32", tg)],
     [("float32", np.array(-(np.log(pr.astype(np.float64)) * tg).sum() / 3))], tol=1e-6)
case("cross_entropy_with_logits", "nn.cross_entropy_with_logits", {}, [("float32", pr), ("float32", tg)],
     [("float32", np.array(-(pr.astype(np.float64) * tg).sum() / 3))], tol=1e-6)
sm = floats((2, 5))
ex = np.exp(sm.astype(np.float64) - sm.max(axis=1, keepdims=True))
case("fast_softmax", "nn.fast_softmax", {"axis": ("int", 1)}, [("float32", sm)],
     [("float32", ex / ex.sum(axis=1, keepdims=True))], tol=2e-6)
# Q31 multiplier 2^30 (one half) shifted left by 2: times two, rounded.
case("fixed_point_multiply", "fixed_point_multiply", {"multiplier": ("int", 1 << 30), "shift": ("int", 2)},
     [("int32", np.array([-3, 0, 5, 1000]))], [("int32", np.array([-6, 0, 10, 2000]))])

nl_p = floats((3, 4, 2))
nl_t = np.array([[0, 3], [-100, 1], [2, 2]])
nl_w = np.abs(floats((4,))) + 0.5
used = nl_t != -100
picked = np.array([[-nl_p[b, nl_t[b, j], j] * nl_w[nl_t[b, j]] if used[b, j] else 0.0 for j in range(2)] for b in range(3)])
weights_used = np.array([[nl_w[nl_t[b, j]] if used[b, j] else 0.0 for j in range(2)] for b in range(3)])
case("nll_loss_mean_ignored_target", "nn.nll_loss", {"reduction": ("str", "mean"), "ignore_index": ("int", -100)},
     [("float32", nl_p), ("int32", nl_t), ("float32", nl_w)], [("float32", np.array(picked.sum() / weights_used.sum()))], tol=1e-6)

# ---- quantized elementwise operators with exact multipliers ----
qa, qb = rng.integers(0, 40, size=(2, 3)), rng.integers(0, 40, size=(2, 3))
# (a - 20)(b - 10) · (0.5 · 0.5 / 0.125 = 2) + 3, clipped to uint8.
case("qnn_mul_exact_multiplier", "qnn.mul", {"lhs_axis": ("int", -1), "rhs_axis": ("int", -1)},
     [("uint8", qa), ("uint8", qb), ("float32", np.array(0.5)), ("int32", np.array(20)),
      ("float32", np.array(0.5)), ("int32", np.array(10)), ("float32", np.array(0.125)), ("int32", np.array(3))],
     [("uint8", np.clip((qa - 20) * (qb - 10) * 2 + 3, 0, 255))])
qc1, qc2 = rng.integers(0, 60, size=(1, 2)), rng.integers(0, 60, size=(1, 3))
case("qnn_concatenate_requantizes_one_input", "qnn.concatenate", {"axis": ("int", 1)},
     [("tuple", [("uint8", qc1), ("uint8", qc2)]),
      ("tuple", [("float32", np.array(0.25)), ("float32", np.array(0.5))]),
      ("tuple", [("int32", np.array(5)), ("int32", np.array(10))]),
      ("float32", np.array(0.25)), ("int32", np.array(5))],
     [("uint8", np.concatenate([qc1, np.clip((qc2 - 10) * 2 + 5, 0, 255)], axis=1))])
qabs = np.array([[100, 128, 150, 255]])
case("qnn_abs", "qnn.abs", {},
     [("uint8", qabs), ("float32", np.array(0.5)), ("int32", np.array(128)),
      ("float32", np.array(0.5)), ("int32", np.array(0))],
     [("uint8", np.abs(qabs - 128))])

# ---- advanced indexing and sparse to dense ----
ad = small_ints((3, 4, 2))
i0, i1 = np.array([[0], [2]]), np.array([1, 3, 0])
case("adv_index_broadcast", "adv_index", {}, [("tuple", [("int32", ad), ("int64", i0), ("int32", i1)])],
     [("int32", ad[i0, i1])])
sp_idx = np.array([[0, 1], [2, 0], [0, 1]])
sp_val = np.array([5, 6, 7])
dense = np.full((3, 2), -1)
for (r, c), v in zip(sp_idx, sp_val):
    dense[r, c] = v
case("sparse_to_dense_later_wins", "sparse_to_dense", {"output_shape": ("ints", [3, 2])},
     [("int32", sp_idx), ("int32", sp_val), ("int32", np.array(-1))], [("int32", dense)])

# ---- crop and resize: bilinear samples of each box, 0 outside the image ----
cr_img = floats((2, 3, 4, 1))
cr_boxes = np.array([[0.0, 0.0, 1.0, 1.0], [0.25, 0.5, 1.5, 0.75]], dtype=np.float32)
cr_idx = np.array([1, 0])


def crop_ref(img, boxes, idx, size, extrapolation):
    th, tw = size
    n, h, w, c = img.shape
    out = np.zeros((len(idx), th, tw, c))
    for k, (y1, x1, y2, x2) in enumerate(boxes.astype(np.float64)):
        for i in range(th):
            yy = y1 * (h - 1) + (h - 1) * (y2 - y1) / (th - 1) * i
            for j in range(tw):
                xx = x1 * (w - 1) + (w - 1) * (x2 - x1) / (tw - 1) * j
                if yy < 0 or yy > h - 1 or xx < 0 or xx > w - 1:
                    out[k, i, j] = extrapolation
                    continue
                y0, x0 = math.floor(yy), math.floor(xx)
                ty, tx = yy - y0, xx - x0
                p = lambda a, b: img[idx[k], min(max(a, 0), h - 1), min(max(b, 0), w - 1)]
                top = p(y0, x0) * (1 - tx) + p(y0, x0 + 1) * tx
                bottom = p(y0 + 1, x0) * (1 - tx) + p(y0 + 1, x0 + 1) * tx
                out[k, i, j] = top * (1 - ty) + bottom * ty
    return out


case("crop_and_resize_nhwc_bilinear_extrapolation", "image.crop_and_resize",
     {"crop_size": ("ints", [3, 2]), "layout": ("str", "NHWC"), "method": ("str", "bilinear"),
      "extrapolation_value": ("float", -2.0)},
     [("float32", cr_img), ("float32", cr_boxes), ("int32", cr_idx)],
     [("float32", crop_ref(cr_img, cr_boxes, cr_idx, (3, 2), -2.0))], tol=1e-5)


# ---- random: TOPI's Threefry variant, word by word with Python integers ----
MASK64 = (1 << 64) - 1
ROT = [[14, 16], [52, 57], [23, 40], [5, 37], [25, 33], [46, 12], [58, 22], [32, 32]]


def threefry_block(key, counter):
    ks = list(key) + [0x1BD11BDAA9FC1A22 ^ key[0] ^ key[1] ^ key[2] ^ key[3]]
    x = list(counter)
    for g in range(5):
        x = [(x[j] + ks[(g + j) % 5] + (g if j == 3 else 0)) & MASK64 for j in range(4)]
        for r in range(4):
            rot = ROT[(4 * g + r) % 8]
            for p_ in range(2):
                a, b = x[2 * p_], x[2 * p_ + 1]
                total = (a + b) & MASK64
                rolled = ((b << rot[p_]) | (b >> (64 - rot[p_]))) & MASK64
                x[2 * p_], x[2 * p_ + 1] = total, total ^ rolled
            x = [x[0], x[3], x[2], x[1]]
    return x


def threefry_bits(gen, n):
    """TOPI's threefry_generate with room left in the counter."""
    assert gen[7] < MASK64 - n
    words = []
    blocks = n // 4
    for i in range(blocks):
        words += threefry_block(gen[:4], [(c + i) & MASK64 for c in gen[4:8]])
    if n % 4:
        counter = list(gen[4:8])
        counter[3] = (counter[3] + blocks * 4) & MASK64
        words += threefry_block(gen[:4], counter)[: n % 4]
        new_counter = counter[3] + 4
    else:
        new_counter = gen[7] + n
    new_gen = list(gen[:6]) + [0, new_counter & MASK64] + list(gen[8:])
    return new_gen, words


key0 = [0, 0, 0, 0, 0, 0, 0, 0, 1 << 63, 0]  # threefry_key(0)
new_key, bits = threefry_bits(key0, 6)
case("threefry_generate_partial_block", "random.threefry_generate", {"out_shape": ("ints", [2, 3])},
     [("uint64", np.array(key0, dtype=np.uint64))],
     [("uint64", np.array(new_key, dtype=np.uint64)), ("uint64", np.array(bits, dtype=np.uint64).reshape(2, 3))])
# threefry_split with room in the path: the left key keeps the path, the right one adds a 1.
split_left = key0[:8] + [1 << 62, 0]
split_right = key0[:4] + [1 << 63] + key0[5:8] + [1 << 62, 0]
case("threefry_split_path", "random.threefry_split", {}, [("uint64", np.array(key0, dtype=np.uint64))],
     [("uint64", np.array(split_left, dtype=np.uint64)), ("uint64", np.array(split_right, dtype=np.uint64))])
key5 = [5, 7, 11, 13, 1 << 63, 0, 0, 40, 1 << 62, 0]
new_key5, bits5 = threefry_bits(key5, 4)
standard = (np.array(bits5, dtype=np.uint64).astype(np.uint32) >> np.uint32(9)) | np.uint32(127 << 23)
uniform01 = standard.view(np.float32) - np.float32(1)
low, high = np.float32(-2.0), np.float32(3.0)
case("uniform_float32", "random.uniform", {"out_shape": ("ints", [4]), "out_dtype": ("dtype", "float32")},
     [("uint64", np.array(key5, dtype=np.uint64)), ("float32", low), ("float32", high)],
     [("uint64", np.array(new_key5, dtype=np.uint64)), ("float32", uniform01 * (high - low) + low)])

# ---- writing into tensors: NumPy's slicing and index arithmetic ----
ms = small_ints((2, 3, 4))
md = small_ints((2, 3, 3))  # diagonals 1, 0, -1 (rows k2 - k), length 3
ms_out = ms.copy()
for b in range(2):
    for r, k in enumerate([1, 0, -1]):
        length = min(4 - k, 3) if k >= 0 else min(4, 3 + k)
        offset = 3 - length if k >= 0 else 0  # super-diagonals right-aligned, sub left
        for t in range(length):
            i, j = (t, t + k) if k >= 0 else (t - k, t)
            ms_out[b, i, j] = md[b, r, t + offset]
case("matrix_set_diag_band_right_left", "matrix_set_diag", {"k1": ("int", -1), "k2": ("int", 1)},
     [("int32", ms), ("int32", md)], [("int32", ms_out)])
sa = small_ints((4, 5))
sv = small_ints((2, 2))
sa_out = sa.copy()
sa_out[3:0:-2, 1:5:3] = sv
case("strided_set_negative_stride", "strided_set", {},
     [("int32", sa), ("int32", sv), ("int32", np.array([3, 1])), ("int32", np.array([0, 5])),
      ("int32", np.array([-2, 3]))], [("int32", sa_out)])
ud = np.array([7, -3, 12, 0, 5], dtype=np.int64)
uvals, uidx, uinv, ucnt = np.unique(ud, return_index=True, return_inverse=True, return_counts=True)
case("unique_sorted_counts", "unique", {"sorted": ("bool", True), "return_counts": ("bool", True)},
     [("int32", ud)], [("int32", uvals), ("int32", uidx), ("int32", uinv), ("int32", np.array([len(uvals)])),
                       ("int32", ucnt)])

# ---- simulated quantisation in float32 ----
sq = (rng.standard_normal((2, 3)) * 40).astype(np.float32)
sq_scale = np.array([0.5, 0.25, 2.0], dtype=np.float32)
sq_zp = np.array([3, -2, 0], dtype=np.int32)
sq_ref = np.clip(np.round(sq / sq_scale) + sq_zp.astype(np.float32), -128, 127).astype(np.float32)
case("qnn_simulated_quantize_per_channel_int8", "qnn.simulated_quantize", {"axis": ("int", -1)},
     [("float32", sq), ("int32", np.int32(1)), ("float32", sq_scale), ("int32", sq_zp)], [("float32", sq_ref)])
case("qnn_simulated_dequantize_per_channel", "qnn.simulated_dequantize", {"axis": ("int", 1)},
     [("float32", sq_ref), ("int32", np.int32(2)), ("float32", sq_scale), ("int32", sq_zp)],
     [("float32", (sq_ref - sq_zp.astype(np.float32)) * sq_scale)])
an_scale, an_lo, an_hi = np.float32(0.25), np.float32(-20.0), np.float32(30.0)
case("annotation_simulated_quantize", "relay.op.annotation.simulated_quantize",
     {"kind": ("int", 2), "sign": ("bool", True), "rounding": ("str", "round")},
     [("float32", sq), ("float32", an_scale), ("float32", an_lo), ("float32", an_hi)],
     [("float32", np.round(np.clip(sq / an_scale, an_lo, an_hi)) * an_scale)])

# ---- qnn.avg_pool2d with equal input and output parameters: an int32 average ----
qp = small_ints((1, 1, 4, 4), -128, 128)
qp_out = np.zeros((1, 1, 2, 2), dtype=np.int64)
for i in range(2):
    for j in range(2):
        window = qp[0, 0, 2 * i:2 * i + 2, 2 * j:2 * j + 2].astype(np.int64)
        total = int(window.sum())
        qp_out[0, 0, i, j] = int(total / 4)  # C division truncates
case("qnn_avg_pool2d_same_params", "qnn.avg_pool2d",
     {"pool_size": ("ints", [2, 2]), "strides": ("ints", [2, 2])},
     [("int8", qp), ("float32", np.float32(0.5)), ("int32", np.int32(0)), ("float32", np.float32(0.5)),
      ("int32", np.int32(0))], [("int8", qp_out)])

# ---- sparse products: the sparse operand made dense, then a NumPy matmul ----
def csr_of(dense):
    rows, cols = np.nonzero(dense)
    ptr = np.searchsorted(rows, np.arange(dense.shape[0] + 1))
    return dense[rows, cols], cols, ptr


sp_w = small_ints((4, 5)) * (rng.random((4, 5)) < 0.5)
sp_x = small_ints((3, 5))
w_data, w_idx, w_ptr = csr_of(sp_w)
case("sparse_dense_csr_rhs", "nn.sparse_dense", {"sparse_lhs": ("bool", False)},
     [("int32", sp_x), ("int32", w_data), ("int32", w_idx), ("int32", w_ptr)], [("int32", sp_x @ sp_w.T)])
# BSR with 2x2 blocks on the left: block rows 0 and 1 of a 4x6 matrix.
bsr_blocks = small_ints((3, 2, 2))
bsr_idx = np.array([0, 2, 1])
bsr_ptr = np.array([0, 2, 3])
bsr_dense = np.zeros((4, 6), dtype=np.int64)
for block_row in range(2):
    for e in range(bsr_ptr[block_row], bsr_ptr[block_row + 1]):
        c = bsr_idx[e]
        bsr_dense[2 * block_row:2 * block_row + 2, 2 * c:2 * c + 2] = bsr_blocks[e]
sp_y = small_ints((3, 6))
case("sparse_dense_bsr_lhs", "nn.sparse_dense", {"sparse_lhs": ("bool", True)},
     [("int32", sp_y), ("int32", bsr_blocks), ("int32", bsr_idx), ("int32", bsr_ptr)],
     [("int32", bsr_dense @ sp_y.T)])
sq_m = (small_ints((4, 4)) * (rng.random((4, 4)) < 0.5)).astype(np.float32)
t_data, t_idx, t_ptr = csr_of(sq_m)
tt_data, tt_idx, tt_ptr = csr_of(sq_m.T)
case("sparse_transpose_csr", "nn.sparse_transpose", {},
     [("float32", t_data), ("int32", t_idx), ("int32", t_ptr)],
     [("float32", tt_data), ("int32", tt_idx), ("int32", tt_ptr)])

# ---- packed dense: the weight packed with NumPy's reshape/transpose ----
dp_x, dp_w = small_ints((2, 5)), small_ints((6, 5))
dp_packed = dp_w.reshape(3, 2, 5).transpose(0, 2, 1)  # [N/2, K, 2]
case("contrib_dense_pack_nc2n", "nn.contrib_dense_pack", {"units": ("int", 6), "weight_layout": ("str", "NC2n")},
     [("int32", dp_x), ("int32", np.ascontiguousarray(dp_packed))], [("int32", dp_x @ dp_w.T)])

# ---- blocked convolutions: NumPy packs the plain window sums ----
def pack_nchwc(x, c):
    n, ch, h, w = x.shape
    return np.ascontiguousarray(x.reshape(n, ch // c, c, h, w).transpose(0, 1, 3, 4, 2))


def pack_oihwio(w, i, o):
    oc, ic, kh, kw = w.shape
    return np.ascontiguousarray(w.reshape(oc // o, o, ic // i, i, kh, kw).transpose(0, 2, 4, 5, 3, 1))


xc, wc = small_ints((1, 4, 4, 5)), small_ints((4, 4, 3, 3))
refc = conv_ref(xc, wc, [1, 2], [1, 1], [1, 1], [1, 1], 1)
case("contrib_conv2d_nchw2c", "nn.contrib_conv2d_NCHWc",
     {"strides": ("ints", [1, 2]), "padding": ("ints", [1, 1]), "channels": ("int", 4), "kernel_size": ("ints", [3, 3]),
      "data_layout": ("str", "NCHW2c"), "kernel_layout": ("str", "OIHW2i2o"), "out_layout": ("str", "NCHW2c")},
     [("int32", pack_nchwc(xc, 2)), ("int32", pack_oihwio(wc, 2, 2))],
     [("int32", pack_nchwc(refc.astype(np.int64), 2))])
wdw = small_ints((4, 1, 3, 3))
refdw = conv_ref(xc, wdw, [1, 1], [1, 1], [1, 1], [1, 1], 4)
case("contrib_depthwise_conv2d_nchw2c", "nn.contrib_depthwise_conv2d_NCHWc",
     {"padding": ("ints", [1, 1]), "groups": ("int", 4), "channels": ("int", 4), "kernel_size": ("ints", [3, 3]),
      "data_layout": ("str", "NCHW2c"), "kernel_layout": ("str", "OIHW1i2o"), "out_layout": ("str", "NCHW2c")},
     [("int32", pack_nchwc(xc, 2)), ("int32", pack_oihwio(wdw, 1, 2))],
     [("int32", pack_nchwc(refdw.astype(np.int64), 2))])

# ---- re-layouts for tuned kernels ----
# ConvGemm weight tiling: flatten HWIO to (K, N), zero-pad, cut into tiles.
wg = small_ints((3, 3, 8, 6))
flat = wg.reshape(72, 6)
tile_n, tile_k = 4, 2  # K = 72 is already a multiple of 4 * 2
flat = np.pad(flat, ((0, 0), (0, 2)))  # N = 6 padded to 8
tiles = flat.reshape(72 // tile_k, tile_k, 8 // tile_n, tile_n).transpose(2, 0, 3, 1)
case("gemm_weight_transform_pads_n", "nn.contrib_conv2d_gemm_weight_transform",
     {"tile_rows": ("int", tile_n), "tile_cols": ("int", tile_k)},
     [("int8", wg)], [("int8", tiles)])
# The auto-scheduler's rewrite: axis b split in two, moved before a.
xa = small_ints((4, 6))
case("auto_scheduler_layout_transform_split", "auto_scheduler_layout_transform",
     {"src_layout": ("str", "4a6b"), "dst_layout": ("str", "3b2b4a")},
     [("int32", xa)], [("int32", xa.T.reshape(3, 2, 4))])


# ---- pooling gradients, by scattering each output gradient over its window ----
def pool2d_grad_ref(grad, x, k, s, pad, is_max, include_pad=True):
    n, c, h, w = x.shape
    out = np.zeros(x.shape, dtype=np.int64 if x.dtype.kind == "i" else np.float64)
    for b in range(n):
        for ch in range(c):
            for oh in range(grad.shape[2]):
                for ow in range(grad.shape[3]):
                    h0, w0 = oh * s[0] - pad[0], ow * s[1] - pad[1]
                    cells = [(i, j) for i in range(h0, h0 + k[0]) for j in range(w0, w0 + k[1])]
                    inside = [(i, j) for i, j in cells if 0 <= i < h and 0 <= j < w]
                    g = grad[b, ch, oh, ow]
                    if is_max:
                        i, j = max(inside, key=lambda ij: (x[b, ch, ij[0], ij[1]], -ij[0], -ij[1]))
                        out[b, ch, i, j] += g
                    else:
                        count = k[0] * k[1] if include_pad else max(len(inside), 1)
                        share = int(g / count) if x.dtype.kind == "i" else g / count
                        for i, j in inside:
                            out[b, ch, i, j] += share
    return out


xp = rng.permutation(2 * 2 * 5 * 5).reshape(2, 2, 5, 5).astype(np.float32)  # distinct: one maximum
gp = floats((2, 2, 3, 3))
case("max_pool2d_grad_padded", "nn.max_pool2d_grad",
     {"pool_size": ("ints", [3, 3]), "strides": ("ints", [2, 2]), "padding": ("ints", [1, 1])},
     [("float32", gp), ("float32", xp)],
     [("float32", pool2d_grad_ref(gp, xp, [3, 3], [2, 2], [1, 1], True))], tol=1e-6)
xi = small_ints((1, 2, 5, 4))
gi = small_ints((1, 2, 4, 2), -50, 50)
case("avg_pool2d_grad_int_exclude_pad", "nn.avg_pool2d_grad",
     {"pool_size": ("ints", [2, 3]), "strides": ("ints", [1, 2]), "padding": ("ints", [0, 1]),
      "count_include_pad": ("bool", False)},
     [("int32", gi), ("int32", xi)],
     [("int32", pool2d_grad_ref(gi, xi, [2, 3], [1, 2], [0, 1], False, include_pad=False))])
case("avg_pool2d_grad_int_include_pad", "nn.avg_pool2d_grad",
     {"pool_size": ("ints", [2, 3]), "strides": ("ints", [1, 2]), "padding": ("ints", [0, 1]),
      "count_include_pad": ("bool", True)},
     [("int32", gi), ("int32", xi)],
     [("int32", pool2d_grad_ref(gi, xi, [2, 3], [1, 2], [0, 1], False, include_pad=True))])

# ---- sparse coordinate lists ----
sp_idx = np.array([[0, 0, 0], [0, 0, 1], [0, 1, 0], [1, 0, 0], [1, 2, 3]])
prev, new = np.array([2, 3, 6]), np.array([9, -1])
new_full = np.array([9, 2 * 3 * 6 // 9])
flat_idx = np.ravel_multi_index(sp_idx.T, prev)
case("sparse_reshape_infers_minus_one", "sparse_reshape", {},
     [("int64", sp_idx), ("int64", prev), ("int64", new)],
     [("int64", np.stack(np.unravel_index(flat_idx, new_full), axis=1)), ("int64", new_full)])
case("sparse_reshape_same_shape_copies", "sparse_reshape", {},
     [("int32", sp_idx), ("int32", prev), ("int32", prev)],
     [("int32", sp_idx), ("int32", prev)])


def fill_empty_rows_ref(idx, vals, rows, default):
    out_i, out_v, empty = [], [], []
    for r in range(rows):
        mine = [k for k in range(len(idx)) if idx[k][0] == r]
        if mine:
            out_i += [list(idx[k]) for k in mine]
            out_v += [int(vals[k]) for k in mine]
        else:
            out_i.append([r] + [0] * (idx.shape[1] - 1))
            out_v.append(default)
        empty.append(0 if mine else 1)
    return np.array(out_i), np.array(out_v), np.array(empty)


fe_idx = np.array([[0, 1], [0, 3], [2, 0], [3, 1]])
fe_vals = np.array([7, -2, 5, 9])
fe = fill_empty_rows_ref(fe_idx, fe_vals, 5, -1)
case("sparse_fill_empty_rows_gap_and_tail", "sparse_fill_empty_rows", {},
     [("int64", fe_idx), ("int32", fe_vals), ("int64", np.array([5, 6])), ("int32", np.array([-1]))],
     [("int64", fe[0]), ("int64", fe[1]), ("int64", fe[2])])


# Winograd weight transforms: G built as TOPI's winograd_util.py does (Cook-Toom with the
# interpolation points, NumPy's inverse of the diagonal f), the transform as one einsum in
# float64 (TVM sums in float32 term by term: a tolerance).
def winograd_g(m, r):
    pts = {3: [0, -1, 1], 5: [0, -1, 1, 1 / 2, -2]}[m + r - 2]
    a = np.array(pts, dtype=np.float64)
    alpha = m + r - 1
    f = np.zeros((alpha, alpha))
    for i in range(alpha - 1):
        prod = 1
        for k in range(alpha - 1):
            if k != i:
                prod *= a[i] - a[k]
        f[i, i] = prod
    f[alpha - 1, alpha - 1] = 1
    if f[0, 0] < 0:
        f[0, :] *= -1
    am = np.zeros((alpha, r))
    for i in range(alpha - 1):
        for j in range(r):
            am[i, j] = a[i] ** j
    am[alpha - 1, r - 1] = 1
    return (am.T.dot(np.linalg.inv(f))).T.astype(np.float32).astype(np.float64)


wk = floats((3, 2, 3, 3))
for m in (2, 4):
    g = winograd_g(m, 3)
    case(f"conv2d_winograd_weight_transform_tile{m}", "nn.contrib_conv2d_winograd_weight_transform",
         {"tile_size": ("int", m)}, [("float32", wk)],
         [("float32", np.einsum("ah,bw,oihw->aboi", g, g, wk.astype(np.float64)))], tol=1e-5)
wk3 = floats((2, 2, 3, 3, 3))
g = winograd_g(2, 3)
case("conv3d_winograd_weight_transform_depth", "nn.contrib_conv3d_winograd_weight_transform",
     {"tile_size": ("int", 2)}, [("float32", wk3)],
     [("float32", np.einsum("ad,bh,cw,oidhw->abcoi", g, g, g, wk3.astype(np.float64)))], tol=1e-5)
wk3d = floats((2, 1, 2, 3, 3))
case("conv3d_winograd_weight_transform_depth_kept", "nn.contrib_conv3d_winograd_weight_transform",
     {"tile_size": ("int", 2)}, [("float32", wk3d)],
     [("float32", np.einsum("ah,bw,oidhw->abdoi", g, g, wk3d.astype(np.float64)))], tol=1e-5)

# sparse_add: the CSR matrix densified with NumPy and added.
sa_dense = floats((3, 4))
sa_data = floats((4,))
sa_idx = np.array([1, 3, 0, 3])
sa_ptr = np.array([0, 2, 2, 4])
sa_out = sa_dense.astype(np.float32).copy()
for row in range(3):
    for e in range(sa_ptr[row], sa_ptr[row + 1]):
        sa_out[row, sa_idx[e]] = np.float32(sa_out[row, sa_idx[e]] + np.float32(sa_data[e]))
case("sparse_add_csr", "nn.sparse_add", {},
     [("float32", sa_dense), ("float32", sa_data), ("int32", sa_idx), ("int32", sa_ptr)],
     [("float32", sa_out)])

# sparse_conv2d (1x1, NHWC): the BSR weight densified and applied with einsum.
sc_x = floats((1, 2, 3, 4))
sc_w = floats((3, 2, 2))
sc_idx = np.array([0, 1, 1])
sc_ptr = np.array([0, 2, 3])
dense_w = np.zeros((4, 4))
for br in range(2):
    for e in range(sc_ptr[br], sc_ptr[br + 1]):
        dense_w[br * 2:br * 2 + 2, sc_idx[e] * 2:sc_idx[e] * 2 + 2] += sc_w[e]
case("sparse_conv2d_1x1_nhwc", "nn.sparse_conv2d", {"layout": ("str", "NHWC"), "kernel_size": ("ints", [1, 1])},
     [("float32", sc_x), ("float32", sc_w), ("int32", sc_idx), ("int32", sc_ptr)],
     [("float32", np.einsum("nhwc,oc->nhwo", sc_x.astype(np.float64), dense_w))], tol=1e-5)

# bitpack: NumPy's packbits (the first element in the most significant bit), one plane per bit.
bp = rng.integers(0, 4, size=(2, 16))
planes = np.stack([np.packbits((bp >> b) & 1, axis=1) for b in range(2)], axis=2)
case("bitpack_two_planes", "nn.bitpack",
     {"bits": ("int", 2), "pack_axis": ("int", 1), "bit_axis": ("int", 2), "pack_type": ("dtype", "uint8")},
     [("int32", bp)], [("uint8", planes)])

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernel_cases.txt")
with open(path, "w") as f:
    f.write("# Generated by gen_kernel_cases.py (NumPy reference values); do not edit.\n")
    f.write("\n".join(cases) + "\n")
print(f"{len(cases)} cases -> {path}")
