"""``tvm.nd``: tensors for constants. ``NDArray`` keeps a dtype, a shape
and the C-order bytes; with numpy installed it converts to and from numpy
arrays (``tvm.nd.array(np_array)``, ``.numpy()``). Without numpy, Python
scalars and nested lists of numbers are accepted."""

import struct

try:  # numpy is optional
    import numpy as _np
except ImportError:  # pragma: no cover - exercised only without numpy
    _np = None

# struct codes for the dtypes packable without numpy.
_STRUCT = {
    "bool": "?",
    "int8": "b",
    "uint8": "B",
    "int16": "h",
    "uint16": "H",
    "int32": "i",
    "uint32": "I",
    "int64": "q",
    "uint64": "Q",
    "float16": "e",
    "float32": "f",
    "float64": "d",
}


class NDArray:
    """A dense tensor on the CPU."""

    __slots__ = ("dtype", "shape", "_bytes")

    def __init__(self, dtype, shape, data):
        self.dtype = str(dtype)
        self.shape = tuple(int(d) for d in shape)
        self._bytes = bytes(data)

    @classmethod
    def _from_bytes(cls, dtype, shape, data):
        return cls(dtype, shape, data)

    def tobytes(self):
        return self._bytes

    @property
    def ndim(self):
        return len(self.shape)

    def numpy(self):
        """The tensor as a numpy array (needs numpy)."""
        if _np is None:
            raise ImportError("NDArray.numpy() needs numpy: pip install numpy")
        return _np.frombuffer(self._bytes, dtype=self.dtype).reshape(self.shape).copy()

    asnumpy = numpy

    def __array__(self, dtype=None, copy=None):
        """numpy's array protocol: ``np.asarray(nd)``, and numpy functions
        (``np.testing.assert_allclose``) take an ``NDArray`` directly."""
        del copy  # a new array is made either way
        array = self.numpy()
        return array if dtype is None else array.astype(dtype)

    def tolist(self):
        """The elements as (nested) Python lists, without numpy."""
        code = _STRUCT.get(self.dtype)
        if code is None:
            return self.numpy().tolist()
        count = 1
        for d in self.shape:
            count *= d
        flat = list(struct.unpack("<" + code * count, self._bytes))

        def nest(values, shape):
            if not shape:
                return values[0]
            if len(shape) == 1:
                return values
            step = len(values) // shape[0]
            return [nest(values[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]

        return nest(flat, self.shape)

    def __repr__(self):
        return f"<NDArray {self.dtype}{list(self.shape)}>"


def _infer_dtype(values):
    if all(isinstance(v, bool) for v in values):
        return "bool"
    if all(isinstance(v, int) for v in values):
        return "int32"
    return "float32"


def _pack(value, dtype):
    shape = []
    probe = value
    while isinstance(probe, (list, tuple)):
        shape.append(len(probe))
        probe = probe[0] if probe else 0
    flat = []

    def walk(v, depth):
        if depth == len(shape):
            flat.append(v)
            return
        if not isinstance(v, (list, tuple)) or len(v) != shape[depth]:
            raise ValueError("a tensor must be a rectangular nest of lists")
        for item in v:
            walk(item, depth + 1)

    walk(value, 0)
    dtype = dtype or _infer_dtype(flat)
    code = _STRUCT.get(dtype)
    if code is None:
        raise ValueError(f"dtype {dtype} needs numpy")
    return NDArray(dtype, shape, struct.pack("<" + code * len(flat), *flat))


def array(arr, device=None, dtype=None):
    """A tensor from a numpy array, an ``NDArray``, a Python scalar or a
    nested list (``device`` is accepted for TVM compatibility: CPU only)."""
    del device
    if isinstance(arr, NDArray):
        return arr if dtype is None or dtype == arr.dtype else array(arr.numpy(), dtype=dtype)
    if _np is not None:
        np_arr = _np.asarray(arr) if dtype is None else _np.asarray(arr).astype(dtype)
        if not np_arr.flags.c_contiguous:  # (ascontiguousarray would make a 0-d array 1-d)
            np_arr = np_arr.copy(order="C")
        if np_arr.dtype == _np.float64 and not isinstance(arr, (_np.ndarray, _np.generic)) and dtype is None:
            np_arr = np_arr.astype("float32")
        if np_arr.dtype == _np.int64 and not isinstance(arr, (_np.ndarray, _np.generic)) and dtype is None:
            np_arr = np_arr.astype("int32")
        return NDArray(str(np_arr.dtype), np_arr.shape, np_arr.tobytes())
    return _pack(arr, dtype)


def cpu(dev_id=0):
    """The CPU device (the only one)."""
    return ("cpu", dev_id)


__all__ = ["NDArray", "array", "cpu"]
