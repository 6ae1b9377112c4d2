"""``relay.transform.Defunctionalization(func, mod)`` with TVM's signature, as
tests/python/relay/test_pass_defunctionalization.py calls it: a function (not
a pass) that returns the first-order ``func`` and adds what it needs to
``mod``; both modules compute the same result."""

import numpy as np
import pytest

import relay_tools as tvm
from relay_tools import relay
from relay_tools.relay import transform

SIMPLE = """
#[version = "0.0.5"]
def @simple[A, B](%f: fn(A) -> B, %xs: A) -> B {
  %f(%xs)
}
def @main(%l: Tensor[(5, 5), float32]) -> Tensor[(5, 5), float32] {
  %0 = fn[A](%x: A) -> A {
    %x
  };
  @simple(%0, %l)
}
"""


def defunctionalized(mod):
    # TVM's helper: InferType, replace main, InferType.
    mod = transform.InferType()(mod)
    mod["main"] = transform.Defunctionalization(mod["main"], mod)
    return transform.InferType()(mod)


def test_simple():
    # TVM's test_simple.
    mod = tvm.parser.fromtext(SIMPLE)
    defunc_mod = defunctionalized(mod)
    text = defunc_mod.astext()
    # The literal is the constructor `1` of the ADT of its type, and
    # @simple has a specialised copy that calls @apply.
    assert 'type DefuncI.FuncType([], [I.TensorType([5, 5], "float32")], I.TensorType([5, 5], "float32"))' in text
    assert '@applyI.FuncType([], [I.TensorType([5, 5], "float32")]' in text
    assert "@simpleI.FuncType(" in text
    data = np.random.rand(5, 5).astype("float32")
    out = relay.create_executor("debug", mod=mod).evaluate()(data)
    defunc_out = relay.create_executor("debug", mod=defunc_mod).evaluate()(data)
    np.testing.assert_equal(out.numpy(), defunc_out.numpy())


def test_the_module_is_extended_in_place():
    mod = transform.InferType()(tvm.parser.fromtext(SIMPLE))
    before = len(mod)
    main = transform.Defunctionalization(mod["main"], mod)
    # The specialised @simple and @apply are added to the module given.
    assert len(mod) == before + 2
    names = sorted(gv.name_hint for gv in mod.get_global_vars())
    assert sum(n.startswith("simpleI.FuncType(") for n in names) == 1
    assert any(n.startswith("applyI.FuncType(") for n in names)
    assert "@simpleI.FuncType(" in tvm.IRModule({"main": main}).astext()


def test_refusals_are_tvm_errors():
    mod = transform.InferType()(
        tvm.parser.fromtext(
            """
#[version = "0.0.5"]
def @main[A](%x: A) -> A {
  %x
}
"""
        )
    )
    with pytest.raises(tvm.error.TVMError, match="no polymorphism supported for defunctionalization"):
        transform.Defunctionalization(mod["main"], mod)


def test_the_pass_form_stays_in_the_registry():
    mod = tvm.parser.fromtext(SIMPLE)
    seq = tvm.transform.Sequential(
        [transform.InferType(), transform.PASSES["Defunctionalization"](entry="main"), transform.InferType()]
    )
    assert "@simpleI.FuncType(" in seq(mod).astext()
