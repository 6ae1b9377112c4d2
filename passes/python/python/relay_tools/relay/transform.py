"""``relay.transform``: ``function_pass``/``FunctionPass`` and a constructor
for every registered pass, made from the pass registry's declarations
(TVM's names and keyword parameters: ``FoldConstant(fold_qnn=False)``,
``FuseOps(fuse_opt_level=-1)``, ``ConvertLayout(desired_layouts)``).
Passes registered later (``relay.toml`` passes, embedders) are reachable
by name through ``getattr`` as well."""

import functools
import inspect
import sys
import types
import warnings

from .. import _core
from .._core import FunctionPass, PassInfo
from ..transform import PassContext, Sequential, module_pass, ModulePass, Pass  # noqa: F401


def _wrap_class_function_pass(pass_cls, pass_info):
    class PyFunctionPass(FunctionPass):
        """A function pass made from a class with ``transform_function``."""

        def __init__(self, *args, **kwargs):
            inst = pass_cls(*args, **kwargs)

            def _pass_func(func, mod, ctx):
                return inst.transform_function(func, mod, ctx)

            self._init_handle(
                _core.make_function_pass(_pass_func, pass_info.name, pass_info.opt_level, pass_info.required)
            )
            self._inst = inst

        def __getattr__(self, name):
            return self._inst.__getattribute__(name)

    functools.update_wrapper(PyFunctionPass.__init__, pass_cls.__init__)
    PyFunctionPass.__name__ = pass_cls.__name__
    PyFunctionPass.__doc__ = pass_cls.__doc__
    PyFunctionPass.__module__ = pass_cls.__module__
    return PyFunctionPass


def function_pass(pass_func=None, opt_level=None, name=None, required=None):
    """Makes a function pass from a function ``(func, mod, ctx) -> func`` or
    a class with ``transform_function(self, func, mod, ctx)``. It runs on
    every function that may be optimised; InferType runs afterwards."""
    if opt_level is None:
        raise ValueError("Please provide opt_level for the function pass.")
    required = list(required or [])
    if not isinstance(required, (list, tuple)):
        raise TypeError("Required is expected to be the type of list/tuple.")

    def create_function_pass(pass_arg):
        fname = name if name else pass_arg.__name__
        info = PassInfo(opt_level, fname, required)
        if inspect.isclass(pass_arg):
            return _wrap_class_function_pass(pass_arg, info)
        if not callable(pass_arg):
            raise TypeError("pass_func must be a callable for Function pass")
        return _core.make_function_pass(pass_arg, fname, opt_level, required)

    if pass_func:
        return create_function_pass(pass_func)
    return create_function_pass


_KIND_PARAM = {
    "an integer": inspect.Parameter.POSITIONAL_OR_KEYWORD,
}


def _make_constructor(name, params, description):
    signature = inspect.Signature(
        [inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=d) for p, _ty, d, _doc in params]
    )

    def constructor(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        return _core.create_pass(name, dict(bound.arguments))

    constructor.__name__ = name
    constructor.__qualname__ = name
    constructor.__signature__ = signature
    lines = [description or name]
    for p, ty, d, doc in params:
        lines.append(f"    {p} ({ty}, default {d!r}): {doc}")
    constructor.__doc__ = "\n".join(lines)
    return constructor


PASSES = {}
for _spec in _core.pass_specs():
    _name, _info_name, _kind, _opt, _required, _params, _doc = _spec
    PASSES[_name] = _make_constructor(_name, _params, _doc)
    globals()[_name] = PASSES[_name]
del _spec, _name, _info_name, _kind, _opt, _required, _params, _doc

_annotate_target = PASSES["AnnotateTarget"]


def AnnotateTarget(targets, include_non_call_ops=True):  # noqa: N802 (TVM's name)
    """AnnotateTarget; as in TVM, one target may be given as a string."""
    if isinstance(targets, str):
        targets = [targets]
    return _annotate_target(targets, include_non_call_ops)


PASSES["AnnotateTarget"] = AnnotateTarget


def Defunctionalization(func, mod):  # noqa: N802 (TVM's name)
    """Defunctionalization as TVM has it: a function, not a pass. Returns the
    first-order version of ``func`` (typed, with no type parameters) and adds
    the specialised globals, ``@apply`` functions and ``Defunc`` ADTs it uses
    to ``mod``. The registry's pass form is ``PASSES["Defunctionalization"]``
    (``Defunctionalization(entry="main")`` in a pipeline)."""
    return _core.defunctionalization(func, mod)


# TVM's functions of relay.transform whose name is also a pass of the
# registry here: the module attribute is TVM's function, the pass stays in
# PASSES.
FUNCTIONS = {"Defunctionalization": Defunctionalization}


def gradient(expr, mod=None, mode="higher_order"):
    """TVM's ``relay.transform.gradient``: the function ``expr`` (or the
    ``GlobalVar`` of ``mod`` naming one) transformed into a function that
    returns its result paired with the gradient of the result with respect
    to each parameter. ``mode="higher_order"`` (the default) handles any
    program, with references and closures, and adds ``@<name>_grad`` to
    ``mod`` for each global function called; ``"first_order"`` (deprecated
    in TVM) is ``FirstOrderGradient`` on the function alone and refuses a
    module. The input must be type-checked; the result is not."""
    if mode == "first_order":
        warnings.warn(
            "using transform.gradient for first-order AD is deprecated, please use the"
            "FirstOrderGradient module pass",
            DeprecationWarning,
        )
        if mod is not None:
            raise RuntimeError(
                "to run first-order AD on a module, please use the FirstOrderGradient module pass."
            )
        return _core.gradient(expr, None, "first_order")
    if mode == "higher_order":
        return _core.gradient(expr, mod, "higher_order")
    raise Exception("unknown mode")


def __getattr__(name):
    """Passes registered after import (``relay.toml`` passes)."""
    for spec in _core.pass_specs():
        if spec[0] == name:
            return _make_constructor(spec[0], spec[5], spec[6])
    raise AttributeError(f"module 'relay.transform' has no attribute '{name}'")


__all__ = ["function_pass", "FunctionPass", "PASSES", "FUNCTIONS", "gradient"] + sorted(PASSES)
