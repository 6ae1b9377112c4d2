"""relay_tools: TVM Relay's Python pass API on the relay-tools Rust core.

Port TVM pass code by changing the imports::

    import relay_tools as tvm
    from relay_tools import relay

``tvm.IRModule``, ``tvm.parser``, ``tvm.transform``, ``tvm.instrument``,
``tvm.ir``, ``tvm.nd``, ``tvm.target`` and ``relay`` (IR nodes, operators,
``relay.transform``, ``relay.analysis``, expression functors) follow TVM
v0.13's shapes. Passes written in Python run inside the Rust pass manager.
"""

from . import _core
from . import error
from .ir import IRModule
from . import ir
from . import nd
from . import target
from . import parser
from . import transform
from . import instrument
from . import relay

__all__ = [
    "IRModule",
    "error",
    "ir",
    "nd",
    "target",
    "parser",
    "transform",
    "instrument",
    "relay",
]
