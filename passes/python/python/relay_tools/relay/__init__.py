"""``tvm.relay``: the IR (nodes, types, operators), ``relay.transform``,
``relay.analysis``, the expression functors and ``relay.create_executor``
(the reference interpreter)."""

from .. import _core
from .._core import (
    Expr,
    Var,
    GlobalVar,
    Constant,
    Tuple,
    TupleGetItem,
    Call,
    Let,
    If,
    Function,
    Match,
    Clause,
    RefCreate,
    RefRead,
    RefWrite,
    Constructor,
    Type,
    TensorType,
    TupleType,
    FuncType,
    TypeVar,
    GlobalTypeVar,
    TypeCall,
    RefType,
    IncompleteType,
    TypeData,
)
from .. import nd as _nd
from ..ir import IRModule
from ..parser import parse_expr, fromtext
from ..transform import PassContext
from . import op
from .op import *  # noqa: F401,F403  (the operators without a namespace)
from . import transform
from . import analysis
from . import testing
from .expr_functor import ExprFunctor, ExprVisitor, ExprMutator
from . import backend
from .backend import create_executor

# Operator namespaces as TVM spells them.
nn = op.nn
image = getattr(op, "image", None)
vision = getattr(op, "vision", None)
annotation = getattr(op, "annotation", None)
memory = getattr(op, "memory", None)
random = getattr(op, "random", None)
dyn = getattr(op, "dyn", None)


class _Qnn:
    """``relay.qnn.op.*``: the quantized operators."""

    op = getattr(op, "qnn", None)


qnn = _Qnn()
RelayExpr = Expr


def var(name_hint, type_annotation=None, shape=None, dtype="float32", span=None):
    """A variable; ``shape``/``dtype`` make its tensor type annotation, a
    string annotation is a dtype."""
    if type_annotation is not None and shape is not None:
        raise ValueError("Can only specify either type_annotation or shape.")
    if shape is not None:
        type_annotation = TensorType(list(shape), dtype)
    elif isinstance(type_annotation, str):
        type_annotation = TensorType((), type_annotation)
    return Var(name_hint, type_annotation)


def const(value, dtype=None, span=None):
    """A constant from a numpy array, an ``NDArray`` or a Python scalar
    (float → float32, int → int32, bool → bool unless ``dtype`` says)."""
    if isinstance(value, bool) and dtype is None:
        dtype = "bool"
    elif isinstance(value, int) and dtype is None:
        dtype = "int32"
    elif isinstance(value, float) and dtype is None:
        dtype = "float32"
    return Constant(_nd.array(value, dtype=dtype))


def _pattern_class(kind, make, doc):
    class _Meta(type):
        def __instancecheck__(cls, obj):
            return isinstance(obj, _core.Pattern) and obj.kind == kind

    def __new__(cls, *args):
        return make(*args)

    return _Meta(kind.capitalize(), (), {"__new__": __new__, "__doc__": doc})


PatternWildcard = _pattern_class("wildcard", _core.Pattern.wildcard, "`_`")
PatternVar = _pattern_class("var", _core.Pattern.of_var, "`%x`: binds a variable")
PatternConstructor = _pattern_class(
    "constructor", lambda c, ps=None: _core.Pattern.of_constructor(c, list(ps or [])), "`Ctor(p, …)`"
)
PatternTuple = _pattern_class("tuple", lambda ps=None: _core.Pattern.of_tuple(list(ps or [])), "`(p, …)`")
Pattern = _core.Pattern


def build_config(opt_level=2, required_pass=None, disabled_pass=None, trace=None, config=None):
    """TVM's old spelling of ``PassContext(…)``."""
    return PassContext(
        opt_level=opt_level,
        required_pass=required_pass,
        disabled_pass=disabled_pass,
        trace=trace,
        config=config,
    )
