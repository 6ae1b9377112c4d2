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
    "structural_equal",
    "structural_hash",
    "assert_structural_equal",
    "transform",
    "instrument",
]
