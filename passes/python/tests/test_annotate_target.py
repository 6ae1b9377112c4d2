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
    # TVM's expected module: relu's input begins and its two uses end in
    # `py_multiple_ends`; everything else is `default` (4 begins, 3 ends).
    results = []
    for annotate_non_call_ops in [False, True]:
        result = transform.AnnotateTarget("py_multiple_ends", annotate_non_call_ops)(before)
        text = result.astext()
        assert text.count('"compiler": "py_multiple_ends"') == 3
        assert text.count('"compiler": "default"') == 7
        assert text.count("annotation.compiler_begin") == 5
        assert text.count("annotation.compiler_end") == 5
        results.append(result)
    tvm.ir.assert_structural_equal(results[0], results[1])


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
    assert result.astext().count('"compiler": "py_type_propagation"') == 4

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
    assert '"compiler": "py_second"' in text and "py_first" not in text


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
