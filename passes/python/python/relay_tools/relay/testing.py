"""``relay.testing`` helpers used by TVM's tests."""

from .. import IRModule
from . import transform


def run_infer_type(expr):
    """``expr`` with its types inferred (a function comes back as the
    module's ``main``)."""
    mod = IRModule.from_expr(expr)
    mod = transform.InferType()(mod)
    from .._core import Function

    return mod["main"] if isinstance(expr, Function) else mod["main"].body


def run_opt_pass(expr, opt_pass):
    """``expr`` after ``opt_pass`` (or a list of passes)."""
    from ..transform import Sequential

    if isinstance(opt_pass, (list, tuple)):
        opt_pass = Sequential(list(opt_pass))
    mod = IRModule.from_expr(expr)
    mod = transform.InferType()(mod)
    mod = opt_pass(mod)
    from .._core import Function

    return mod["main"] if isinstance(expr, Function) else mod["main"].body
