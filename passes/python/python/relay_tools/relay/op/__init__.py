"""``relay.op``: every operator of the table as a Python function, made
from the operator table (not written one by one): inputs first, then the
attribute fields with their declared defaults, in declaration order
(``relay.nn.conv2d(data, weight, strides=(1, 1), padding=(0, 0), …)``).
Dotted names become namespaces: ``nn.conv2d`` is ``relay.op.nn.conv2d``
(also ``relay.nn.conv2d``), ``qnn.conv2d`` is ``relay.qnn.op.conv2d``.
"""

import difflib
import inspect
import keyword
import re
import sys
import types

from ... import _core
from ..._core import Op

_REQUIRED = inspect.Parameter.empty


def get(op_name):
    """The operator called ``op_name``."""
    return _core.op_get(op_name)


def _normalise(name, kwargs):
    """TVM's Python-side argument conversions: an int where a pair is
    expected, and 2-way padding widened to 4-way, for 2-D operators."""
    if name.endswith("2d") or name.endswith("2d_transpose"):
        for key in ("strides", "dilation", "kernel_size", "pool_size", "output_padding"):
            value = kwargs.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                kwargs[key] = (value, value)
        padding = kwargs.get("padding")
        if isinstance(padding, int) and not isinstance(padding, bool):
            padding = (padding, padding)
        if isinstance(padding, (list, tuple)) and len(padding) == 2:
            padding = (padding[0], padding[1], padding[0], padding[1])
        if padding is not None:
            kwargs["padding"] = padding
    return kwargs


def _identifier(text, taken):
    """``text`` as a parameter name not in ``taken``."""
    name = re.sub(r"\W", "_", text) or "arg"
    if name[0].isdigit() or keyword.iskeyword(name):
        name = "arg_" + name
    while name in taken:
        name += "_"
    taken.add(name)
    return name


def _make_function(name, raw_inputs, fields, description):
    taken = set()
    inputs = [_identifier(i, taken) for i in raw_inputs]
    params = [inspect.Parameter(i, inspect.Parameter.POSITIONAL_OR_KEYWORD) for i in inputs]
    # An attribute named like an input (arange's start/stop/step) is set
    # through the input, as in TVM's Python API.
    fields = [f for f in fields if f[0] not in taken]
    seen_default = False
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    for field, _ty, default, required in fields:
        # From a required field after a defaulted one on, parameters are
        # keyword-only (Python forbids the other order); the order is TVM's.
        if required and seen_default:
            kind = inspect.Parameter.KEYWORD_ONLY
        seen_default = seen_default or not required
        params.append(inspect.Parameter(field, kind, default=_REQUIRED if required else default))
    signature = inspect.Signature(params)
    field_names = [f[0] for f in fields]

    def call(*args, **kwargs):
        for key in kwargs:
            if key not in signature.parameters:
                close = difflib.get_close_matches(key, list(signature.parameters), n=1)
                hint = f"; did you mean `{close[0]}`?" if close else ""
                raise TypeError(f"{name}() got an unexpected keyword argument `{key}`{hint}")
        bound = signature.bind(*args, **kwargs)
        values = dict(bound.arguments)
        exprs = [values.pop(i) for i in inputs]
        attrs = {k: values[k] for k in field_names if k in values}
        return _core.make_call(name, tuple(exprs), _normalise(name, attrs))

    call.__name__ = name.rsplit(".", 1)[-1]
    call.__qualname__ = call.__name__
    call.__signature__ = signature
    call.__doc__ = f"{name}: {description}" if description else name
    return call


def _namespace(path):
    """The module object for namespace ``path`` (``("nn",)``)."""
    here = sys.modules[__name__]
    for depth in range(len(path)):
        full = __name__ + "." + ".".join(path[: depth + 1])
        module = sys.modules.get(full)
        if module is None:
            module = types.ModuleType(full, f"Operators {'.'.join(path[: depth + 1])}.*")
            sys.modules[full] = module
            setattr(here, path[depth], module)
        here = module
    return here


OPERATORS = {}

for _name, _inputs, _fields, _description, _attrs_type in _core.op_table():
    _parts = _name.split(".")
    _fn = _make_function(_name, _inputs, _fields, _description)
    OPERATORS[_name] = _fn
    _target = _namespace(tuple(_parts[:-1])) if len(_parts) > 1 else sys.modules[__name__]
    if _parts[-1].isidentifier():
        setattr(_target, _parts[-1], _fn)

del _name, _inputs, _fields, _description, _attrs_type, _parts, _fn, _target

__all__ = [n for n in OPERATORS if "." not in n and n.isidentifier()]
