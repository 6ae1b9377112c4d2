"""Shared helpers of the relay_tools tests."""

import relay_tools as tvm
from relay_tools import relay


def get_test_model():
    """The small model TVM's instrument tests use."""
    x, y, z = [relay.var(c, shape=(3, 4), dtype="float32") for c in "xyz"]
    e1 = relay.op.add(x, y)
    e2 = relay.op.subtract(x, z)
    e3 = relay.op.multiply(e1, e1 / e2)
    return tvm.IRModule.from_expr(e3 + e2)
