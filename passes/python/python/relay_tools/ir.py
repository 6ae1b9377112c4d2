"""``tvm.ir``: modules, types, operators and structural comparison."""

from ._core import (
    IRModule,
    Op,
    Type,
    TensorType,
    TupleType,
    FuncType,
    TypeVar,
    GlobalTypeVar,
    TypeCall,
    RefType,
    IncompleteType,
    GlobalVar,
    Attrs,
    DictAttrs,
    TypeData,
    structural_equal,
    structural_hash,
    assert_structural_equal,
)
from . import transform
from . import instrument

from ._core import Expr as RelayExpr
from . import _core


def register_op_attr(op_name, attr_key, value=None, level=10):
    """Register an operator attribute, as ``tvm.ir.register_op_attr``.

    The attribute read here is ``target.<compiler>``, the BYOC predicate
    ``AnnotateTarget`` consults: ``value`` is a function of the (typed) call
    that says whether ``<compiler>`` supports it, or a constant. Used as a
    decorator when ``value`` is not given. As in TVM, registering the same
    attribute of an operator again needs a higher ``level``.
    """
    if not attr_key.startswith("target.") or attr_key == "target.":
        raise ValueError(
            f"register_op_attr: only `target.<compiler>` attributes can be registered, not "
            f"`{attr_key}`"
        )

    def _register(v):
        _core.register_op_target(op_name, attr_key[len("target.") :], v, level)
        return v

    return _register(value) if value is not None else _register

__all__ = [
    "IRModule",
    "Op",
    "Type",
    "TensorType",
    "TupleType",
    "FuncType",
    "TypeVar",
    "GlobalTypeVar",
    "TypeCall",
    "RefType",
    "IncompleteType",
    "GlobalVar",
    "Attrs",
    "DictAttrs",
    "TypeData",
    "RelayExpr",
    "register_op_attr",
    "structural_equal",
    "structural_hash",
    "assert_structural_equal",
    "transform",
    "instrument",
]
