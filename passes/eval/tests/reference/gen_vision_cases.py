"""Reference values for relay-eval's vision, image, signal and sampling
kernels, computed with NumPy in float64 by direct formulas (NumPy's FFT for
`dft`, explicit window loops elsewhere), independent of the kernels' code.

Writes vision_cases.txt beside this script, in the format of
kernel_cases.txt (see gen_kernel_cases.py); `reference_cases.rs` reads both.
Float results carry a relative tolerance (the kernels compute in float32,
the references in float64); selections (NMS, ROI pooling maxima) are exact.

    /tmp/venv/bin/python passes/eval/tests/reference/gen_vision_cases.py
"""

import os

import numpy as np

rng = np.random.default_rng(20261128)
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
        if kind in ("ints", "floats"):
            text = " ".join(str(v) for v in value)
        elif kind == "bool":
            text = "1" if value else "0"
        else:
            text = str(value)
        lines.append(f"attr {key} {kind} {text}".rstrip())
    for dtype, a in args:
        lines.append(f"arg {dtype} {shape_text(np.shape(a))} {values_text(a)}".rstrip())
    for dtype, a in outs:
        lines.append(f"out {dtype} {shape_text(np.shape(a))} {values_text(a)}".rstrip())
    lines.append(f"tol {tol}")
    lines.append("end")
    cases.append("\n".join(lines))


def f32(a):
    return np.asarray(a, dtype=np.float32)


# ---- roi_align: bilinear samples averaged, from the definition ----
def bilinear_clamped(img, y, x):
    """The value at (y, x) of a 2-D map, reading the last row/column past it."""
    h, w = img.shape
    if y < -1 or y > h or x < -1 or x > w:
        return 0.0
    y, x = min(max(y, 0.0), h - 1), min(max(x, 0.0), w - 1)
    y0, x0 = int(np.floor(y)), int(np.floor(x))
    y1, x1 = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
    fy, fx = y - y0, x - x0
    top = img[y0, x0] * (1 - fx) + img[y0, x1] * fx
    bottom = img[y1, x0] * (1 - fx) + img[y1, x1] * fx
    return top * (1 - fy) + bottom * fy


def roi_align_ref(data, rois, pooled, scale, ratio, mode):
    n_roi = rois.shape[0]
    c = data.shape[1]
    out = np.zeros((n_roi, c, pooled, pooled))
    for r in range(n_roi):
        b = int(rois[r, 0])
        x1, y1, x2, y2 = (float(v) * scale for v in rois[r, 1:])
        rh, rw = max(y2 - y1, 1.0), max(x2 - x1, 1.0)
        bh, bw = rh / pooled, rw / pooled
        gh = ratio if ratio > 0 else int(np.ceil(bh))
        gw = ratio if ratio > 0 else int(np.ceil(bw))
        for ch in range(c):
            for py in range(pooled):
                for px in range(pooled):
                    samples = [
                        bilinear_clamped(data[b, ch], y1 + py * bh + (iy + 0.5) * bh / gh,
                                         x1 + px * bw + (ix + 0.5) * bw / gw)
                        for iy in range(gh) for ix in range(gw)
                    ]
                    out[r, ch, py, px] = max(samples) if mode == "max" else np.mean(samples)
    return out


data = f32(rng.standard_normal((2, 3, 6, 7)))
rois = f32([[0, 0.5, 1.0, 4.5, 5.0], [1, 2.0, 0.0, 6.0, 3.5], [1, -1.0, -1.0, 3.0, 8.0]])
for mode in ("avg", "max"):
    for ratio in (2, -1):
        ref = roi_align_ref(data.astype(np.float64), rois, 2, 1.0, ratio, mode)
        attrs = {"pooled_size": ("ints", [2, 2]), "spatial_scale": ("float", 1.0),
                 "sample_ratio": ("int", ratio), "mode": ("str", mode), "layout": ("str", "NCHW")}
        case(f"roi_align_nchw_{mode}_{ratio}", "vision.roi_align", attrs,
             [("float32", data), ("float32", rois)], [("float32", ref)], tol=1e-5)
        attrs["layout"] = ("str", "NHWC")
        case(f"roi_align_nhwc_{mode}_{ratio}", "vision.roi_align", attrs,
             [("float32", data.transpose(0, 2, 3, 1)), ("float32", rois)],
             [("float32", ref.transpose(0, 2, 3, 1))], tol=1e-5)


# ---- roi_pool: maxima of the integer bins ----
def roi_pool_ref(data, rois, pooled, scale):
    n_roi, c, h, w = rois.shape[0], data.shape[1], data.shape[2], data.shape[3]
    out = np.zeros((n_roi, c, pooled, pooled), dtype=np.float32)
    for r in range(n_roi):
        b = int(rois[r, 0])
        # np.round rounds half to even; TVM rounds half away from zero.
        x1, y1, x2, y2 = (int(np.sign(v) * np.floor(abs(v) * scale + 0.5)) for v in rois[r, 1:])
        rh, rw = max(y2 - y1 + 1, 1), max(x2 - x1 + 1, 1)
        for py in range(pooled):
            for px in range(pooled):
                hs = min(max(int(np.floor(py * rh / pooled)) + y1, 0), h)
                he = min(max(int(np.ceil((py + 1) * rh / pooled)) + y1, 0), h)
                ws = min(max(int(np.floor(px * rw / pooled)) + x1, 0), w)
                we = min(max(int(np.ceil((px + 1) * rw / pooled)) + x1, 0), w)
                window = data[b, :, hs:he, ws:we]
                out[r, :, py, px] = window.max(axis=(1, 2)) if window.size else 0.0
    return out


rois_p = f32([[0, 0, 0, 5, 4], [1, 2, 1, 6, 5], [0, 3, 3, 3, 3]])
case("roi_pool_nchw", "vision.roi_pool",
     {"pooled_size": ("ints", [2, 2]), "spatial_scale": ("float", 1.0), "layout": ("str", "NCHW")},
     [("float32", data), ("float32", rois_p)], [("float32", roi_pool_ref(data, rois_p, 2, 1.0))])


# ---- non_max_suppression: greedy selection by descending score ----
def iou(a, b):
    ax0, ay0, ax1, ay1 = min(a[0], a[2]), min(a[1], a[3]), max(a[0], a[2]), max(a[1], a[3])
    bx0, by0, bx1, by1 = min(b[0], b[2]), min(b[1], b[3]), max(b[0], b[2]), max(b[1], b[3])
    w = max(0.0, min(ax1, bx1) - max(ax0, bx0))
    h = max(0.0, min(ay1, by1) - max(ay0, by0))
    inter = w * h
    union = (ax1 - ax0) * (ay1 - ay0) + (bx1 - bx0) * (by1 - by0) - inter
    return 0.0 if union <= 0 else inter / union


num = 12
boxes = np.zeros((1, num, 6), dtype=np.float32)
boxes[0, :, 0] = rng.integers(0, 2, num)
boxes[0, :, 1] = rng.permutation(num) / num + 0.05
corner = rng.uniform(0, 6, (num, 2))
size = rng.uniform(1, 4, (num, 2))
boxes[0, :, 2:4] = corner
boxes[0, :, 4:6] = corner + size
order = np.argsort(-boxes[0, :, 1], kind="stable")
kept = []
for j in order:
    if all(boxes[0, k, 0] != boxes[0, j, 0] or iou(boxes[0, j, 2:], boxes[0, k, 2:]) < 0.3 for k in kept):
        kept.append(j)
indices = np.full((1, num), -1, dtype=np.int64)
indices[0, :len(kept)] = kept
case("nms_random_boxes_indices", "vision.non_max_suppression", {"return_indices": ("bool", True)},
     [("float32", boxes), ("int32", np.array([num])), ("int32", np.arange(num)[None, :]),
      ("int32", np.array(-1)), ("float32", np.array(0.3))],
     [("int32", indices), ("int32", np.array([[len(kept)]]))])


# ---- grid_sample: bilinear with zero padding, and border clamping ----
def grid_sample_ref(data, grid, align, padding):
    n, c, h, w = data.shape
    oh, ow = grid.shape[2:]
    out = np.zeros((n, c, oh, ow))
    for b in range(n):
        for i in range(oh):
            for j in range(ow):
                gx, gy = float(grid[b, 0, i, j]), float(grid[b, 1, i, j])
                if align:
                    x, y = (gx + 1) * (w - 1) / 2, (gy + 1) * (h - 1) / 2
                else:
                    x, y = ((gx + 1) * w - 1) / 2, ((gy + 1) * h - 1) / 2
                if padding == "border":
                    x, y = min(max(x, 0), w - 1), min(max(y, 0), h - 1)
                x0, y0 = int(np.floor(x)), int(np.floor(y))
                for yy, wy in ((y0, 1 - (y - y0)), (y0 + 1, y - y0)):
                    for xx, wx in ((x0, 1 - (x - x0)), (x0 + 1, x - x0)):
                        if 0 <= yy < h and 0 <= xx < w:
                            out[b, :, i, j] += data[b, :, yy, xx] * wy * wx
    return out


gdata = f32(rng.standard_normal((1, 2, 4, 5)))
grid = f32(rng.uniform(-1.3, 1.3, (1, 2, 3, 3)))
for align in (True, False):
    for padding in ("zeros", "border"):
        case(f"grid_sample_bilinear_{padding}_{int(align)}", "image.grid_sample",
             {"method": ("str", "bilinear"), "layout": ("str", "NCHW"),
              "padding_mode": ("str", padding), "align_corners": ("bool", align)},
             [("float32", gdata), ("float32", grid)],
             [("float32", grid_sample_ref(gdata.astype(np.float64), grid, align, padding))], tol=1e-5)


# ---- dft against NumPy's FFT ----
re = f32(rng.standard_normal((2, 8)))
im = f32(rng.standard_normal((2, 8)))
spectrum = np.fft.fft(re.astype(np.float64) + 1j * im.astype(np.float64), axis=-1)
case("dft_forward", "dft", {"inverse": ("bool", False)}, [("float32", re), ("float32", im)],
     [("float32", spectrum.real), ("float32", spectrum.imag)], tol=1e-5)
inverse = np.fft.ifft(re.astype(np.float64) + 1j * im.astype(np.float64), axis=-1)
case("dft_inverse", "dft", {"inverse": ("bool", True)}, [("float32", re), ("float32", im)],
     [("float32", inverse.real), ("float32", inverse.imag)], tol=1e-5)


# ---- stft: windowed frames against NumPy's FFT of each frame ----
signal = f32(rng.standard_normal((2, 16)))
window = f32(np.hanning(6))
n_fft, hop = 6, 3
frames = (16 - n_fft) // hop + 1
ref = np.zeros((2, n_fft // 2 + 1, frames, 2))
for b in range(2):
    for t in range(frames):
        seg = signal[b, t * hop: t * hop + n_fft].astype(np.float64) * window
        spec = np.fft.rfft(seg)
        ref[b, :, t, 0], ref[b, :, t, 1] = spec.real, spec.imag
for normalized in (False, True):
    case(f"stft_{int(normalized)}", "stft",
         {"n_fft": ("int", n_fft), "hop_length": ("int", hop), "win_length": ("int", n_fft),
          "normalized": ("bool", normalized), "onesided": ("bool", True)},
         [("float32", signal), ("float32", window)],
         [("float32", ref / np.sqrt(n_fft) if normalized else ref)], tol=1e-5)


# ---- correlation: explicit displaced windows ----
def correlation_ref(a, b, k, d, s1, s2, pad, multiply):
    n, c, h, w = a.shape
    ap = np.pad(a, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    bp = np.pad(b, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    r, kr = d // s2, (k - 1) // 2
    border = d + kr
    oh = -(-(h + 2 * pad - 2 * border) // s1)
    ow = -(-(w + 2 * pad - 2 * border) // s1)
    out = np.zeros((n, (2 * r + 1) ** 2, oh, ow))
    for q in range((2 * r + 1) ** 2):
        dy, dx = (q // (2 * r + 1) - r) * s2, (q % (2 * r + 1) - r) * s2
        for i in range(oh):
            for j in range(ow):
                y, x = i * s1 + d, j * s1 + d
                pa = ap[:, :, y:y + k, x:x + k]
                pb = bp[:, :, y + dy:y + dy + k, x + dx:x + dx + k]
                term = pa * pb if multiply else np.abs(pa - pb)
                out[:, q, i, j] = term.sum(axis=(1, 2, 3)) / (k * k * c)
    return out


ca = f32(rng.standard_normal((1, 3, 6, 6)))
cb = f32(rng.standard_normal((1, 3, 6, 6)))
for multiply in (True, False):
    case(f"correlation_{int(multiply)}", "nn.correlation",
         {"kernel_size": ("int", 3), "max_displacement": ("int", 2), "stride1": ("int", 1),
          "stride2": ("int", 2), "padding": ("ints", [2, 2]), "is_multiply": ("bool", multiply),
          "layout": ("str", "NCHW")},
         [("float32", ca), ("float32", cb)],
         [("float32", correlation_ref(ca.astype(np.float64), cb.astype(np.float64), 3, 2, 1, 2, 2, multiply))],
         tol=1e-5)


# ---- deformable_conv2d: bilinear samples at offset taps ----
def deformable_ref(x, offset, weight, pad):
    n, c, h, w = x.shape
    oc, _, kh, kw = weight.shape
    _, _, oh, ow = offset.shape
    out = np.zeros((n, oc, oh, ow))
    for b in range(n):
        for i in range(oh):
            for j in range(ow):
                cols = np.zeros((c, kh, kw))
                for ry in range(kh):
                    for rx in range(kw):
                        t = (ry * kw + rx) * 2
                        y = i - pad + ry + offset[b, t, i, j]
                        xx = j - pad + rx + offset[b, t + 1, i, j]
                        if y < 0 or xx < 0 or y >= h or xx >= w:
                            continue
                        y0, x0 = int(np.floor(y)), int(np.floor(xx))
                        for yy, wy in ((y0, 1 - (y - y0)), (y0 + 1, y - y0)):
                            for xv, wx in ((x0, 1 - (xx - x0)), (x0 + 1, xx - x0)):
                                if yy < h and xv < w:
                                    cols[:, ry, rx] += x[b, :, yy, xv] * wy * wx
                out[b, :, i, j] = np.tensordot(weight, cols, axes=3)
    return out


dx = f32(rng.standard_normal((1, 2, 5, 5)))
doff = f32(rng.uniform(-1.5, 1.5, (1, 18, 5, 5)))
dw = f32(rng.standard_normal((3, 2, 3, 3)))
case("deformable_conv2d_nchw", "nn.deformable_conv2d",
     {"padding": ("ints", [1, 1]), "strides": ("ints", [1, 1]), "dilation": ("ints", [1, 1]),
      "deformable_groups": ("int", 1), "groups": ("int", 1), "data_layout": ("str", "NCHW")},
     [("float32", dx), ("float32", doff), ("float32", dw)],
     [("float32", deformable_ref(dx.astype(np.float64), doff.astype(np.float64), dw.astype(np.float64), 1))],
     tol=1e-5)

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vision_cases.txt")
with open(path, "w") as f:
    f.write("# Generated by gen_vision_cases.py (NumPy reference values); do not edit.\n")
    f.write("\n".join(cases) + "\n")
print(f"{len(cases)} cases -> {path}")
