"""``tvm.ir.register_op_attr(op, "target.<compiler>")`` and AnnotateTarget, as TVM's
tests/python/relay/test_pass_annotate_target.py uses them (``import relay_tools as tvm``):
Python predicates called back with the typed call, constants, TVM's level rule, and a
predicate that raises failing the pass."""

import pytest

import relay_tools as tvm
from relay_tools import relay
from relay_tools.relay import transform


def test_multiple_ends():
    # TVM's test_multiple_ends, with the expected module written as text.
    @tvm.ir.register_op_attr("nn.relu", "target.py_multiple_ends")
    def relu(expr):  # pylint: disable=unused-variable
        return True

    x = relay.var("x", shape=(10, 10))
    r = relay.nn.relu(x)
    out = relay.add(relay.abs(r), relay.abs(r))
    before = tvm.IRModule.from_expr(relay.Function([x], out))
    expected = tvm.parser.parse(
        """#[version = "0.0.5"]
def @main(%x: Tensor[(10, 10), float32]) {
  %0 = annotation.compiler_begin(%x, compiler="py_multiple_ends");
  %1 = nn.relu(%0);
  %2 = annotation.compiler_end(%1, compiler="py_multiple_ends");
  %3 = annotation.compiler_begin(%2, compiler="default");
  %4 = abs(%3);
  %5 = annotation.compiler_end(%4, compiler="default");
  %6 = annotation.compiler_end(%1, compiler="py_multiple_ends");
  %7 = annotation.compiler_begin(%6, compiler="default");
  %8 = abs(%7);
  %9 = annotation.compiler_end(%8, compiler="default");
  %10 = annotation.compiler_begin(%5, compiler="default");
  %11 = annotation.compiler_begin(%9, compiler="default");
  %12 = add(%10, %11);
  annotation.compiler_end(%12, compiler="default")
}
"""
    )
    for annotate_non_call_ops in [False, True]:
        result = transform.AnnotateTarget("py_multiple_ends", annotate_non_call_ops)(before)
        tvm.ir.assert_structural_equal(transform.InferType()(expected), result)


def test_predicate_sees_the_typed_call():
    # TVM's test_type_propagation: the predicate reads the argument's checked type.
    seen = []

    @tvm.ir.register_op_attr("nn.relu", "target.py_type_propagation")
    def relu(expr):  # pylint: disable=unused-variable
        seen.append(expr.args[0].checked_type.dtype)
        return expr.args[0].checked_type.dtype == "float32"

    x = relay.var("x", shape=(10, 10))
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.nn.relu(relay.nn.relu(x))))
    result = transform.AnnotateTarget("py_type_propagation")(mod)
    assert seen == ["float32", "float32"]
    assert result.astext().count('compiler="py_type_propagation"') == 4

    y = relay.var("y", shape=(10, 10), dtype="float16")
    mod16 = tvm.IRModule.from_expr(relay.Function([y], relay.nn.relu(y)))
    text = transform.AnnotateTarget("py_type_propagation")(mod16).astext()
    assert "py_type_propagation" not in text


def test_constant_value_and_target_order():
    tvm.ir.register_op_attr("add", "target.py_first", False)
    tvm.ir.register_op_attr("add", "target.py_second", True)
    x = relay.var("x", shape=(2,))
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.add(x, x)))
    text = transform.AnnotateTarget(["py_first", "py_second"])(mod).astext()
    assert 'compiler="py_second"' in text and "py_first" not in text


def test_registering_again_needs_a_higher_level():
    tvm.ir.register_op_attr("tanh", "target.py_levels", True)
    with pytest.raises(tvm.error.TVMError, match="already registered"):
        tvm.ir.register_op_attr("tanh", "target.py_levels", False)
    tvm.ir.register_op_attr("tanh", "target.py_levels", False, level=11)
    x = relay.var("x", shape=(2,))
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.tanh(x)))
    assert "py_levels" not in transform.AnnotateTarget("py_levels")(mod).astext()


def test_bad_registrations_and_failing_predicates():
    with pytest.raises(tvm.error.TVMError, match="not_an_op is not registered"):
        tvm.ir.register_op_attr("not_an_op", "target.py_bad", True)
    with pytest.raises(ValueError, match="target.<compiler>"):
        tvm.ir.register_op_attr("nn.relu", "FTVMLegalize", lambda *args: None)

    @tvm.ir.register_op_attr("sigmoid", "target.py_raises")
    def sigmoid(expr):  # pylint: disable=unused-variable
        raise RuntimeError("no sigmoid today")

    x = relay.var("x", shape=(2,))
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.sigmoid(x)))
    with pytest.raises(Exception, match="no sigmoid today"):
        transform.AnnotateTarget("py_raises")(mod)
