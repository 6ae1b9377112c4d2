"""``relay.create_executor``: runs Relay programs with the reference
interpreter of relay-tools (the Rust ``relay-interp`` crate, the code behind
``relay run``), with TVM's executor interface::

    ex = relay.create_executor("debug", mod=mod)
    out = ex.evaluate()(x_data, y_data)      # mod["main"] on two arrays
    out.numpy()                              # (or np.asarray(out))
    relay.create_executor().evaluate(relay.const(1.0) + relay.const(2.0))

TVM's ``"debug"`` executor is its reference interpreter; ``"graph"``,
``"vm"`` and ``"aot"`` compile for a target instead. relay-tools compiles
nothing, so those kinds are accepted as aliases of the interpreter: a test
that loops over executor kinds runs each on it (the numbers are the
interpreter's, computed with relay-eval's kernels). ``device`` and
``target`` are accepted and ignored (CPU only).

Results: a tensor is a ``relay_tools.nd.NDArray`` (``.numpy()``, and
usable wherever numpy takes an array), a tuple a Python tuple, a closure,
ADT value or reference a ``RuntimeValue`` (``.constructor``, ``.tag``,
``.fields``, ``.value``) that can be passed back as an argument.
Arguments: numpy arrays, ``NDArray``s, Python numbers and nested lists
(converted as ``tvm.nd.array`` converts them), tuples for tuple
parameters.
"""

from .. import _core
from .. import nd as _nd
from ..ir import IRModule

#: The executor kinds accepted, all run by the reference interpreter.
EXECUTOR_KINDS = ("debug", "graph", "vm", "aot")


def _param_names(func):
    return [p.name_hint for p in func.params]


class Executor:
    """What ``create_executor`` returns (TVM's ``Interpreter``)."""

    def __init__(self, kind, mod, device, target, params):
        self.kind = kind
        self.mod = mod if mod is not None else IRModule()
        self.device = device
        self.target = target
        self.params = dict(params or {})

    def _function_of(self, expr):
        """The function ``expr`` stands for (for keyword arguments and
        bound params), or None."""
        if expr is None:
            return self.mod["main"] if "main" in self.mod else None
        if isinstance(expr, _core.GlobalVar):
            return self.mod[expr]
        if isinstance(expr, _core.Function):
            return expr
        return None

    def _make_executor(self, expr):
        func = self._function_of(expr)
        if expr is None and func is None:
            raise ValueError("the module has no main function to evaluate")
        names = _param_names(func) if func is not None else []
        # create_executor(params=...) binds main's parameters by name: the
        # caller passes the others, in order.
        bound = {n: v for n, v in self.params.items() if n in names} if expr is None else {}
        free = [n for n in names if n not in bound]

        def run(*args, **kwargs):
            if len(args) > len(free):
                raise TypeError(f"{len(free)} argument(s) expected, {len(args)} given")
            values = dict(bound)
            values.update(zip(free, args))
            for key, value in kwargs.items():
                if key not in names:
                    raise TypeError(f"no parameter named {key!r}; the parameters are {names}")
                if key in values:
                    raise TypeError(f"parameter {key!r} given twice")
                values[key] = value
            missing = [n for n in names if n not in values]
            if missing:
                raise TypeError(f"no value for the parameter(s) {missing}")
            ordered = [values[n] for n in names]
            return _core.interpret(self.mod, expr, ordered)

        return run

    def evaluate(self, expr=None, binds=None):
        """A function running ``expr`` (default: the module's ``main``; a
        ``GlobalVar`` or a function), or — for any other expression — its
        value. ``binds`` maps variables of ``expr`` to values first."""
        if binds:
            expr = _bind(expr, binds)
        if expr is None or isinstance(expr, (_core.GlobalVar, _core.Function)):
            return self._make_executor(expr)
        return _core.interpret(self.mod, expr, [])


def _bind(expr, binds):
    """``expr`` with each variable of ``binds`` replaced by its value as a
    constant (TVM's ``relay.bind``)."""
    from . import const
    from .expr_functor import ExprMutator

    table = {var: value if isinstance(value, _core.Expr) else const(_nd.array(value).numpy())
             for var, value in binds.items()}

    class _Binder(ExprMutator):
        def visit_var(self, var):
            for key, value in table.items():
                if key.same_as(var):
                    return value
            return var

    return _Binder().visit(expr)


def create_executor(kind="debug", mod=None, device=None, target="llvm", params=None):
    """An executor of ``mod`` (TVM's ``relay.create_executor``); every kind
    runs on the reference interpreter (see the module's documentation)."""
    if kind not in EXECUTOR_KINDS:
        raise RuntimeError(f"unknown executor kind {kind!r}: one of {', '.join(EXECUTOR_KINDS)}")
    if mod is not None and not isinstance(mod, IRModule):
        raise TypeError(f"mod must be an IRModule, not {type(mod).__name__}")
    return Executor(kind, mod, device, target, params)


__all__ = ["create_executor", "Executor", "EXECUTOR_KINDS"]
