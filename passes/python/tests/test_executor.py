"""``relay.create_executor`` on the reference interpreter, used as TVM's
tests use it: ``create_executor(kind, mod=...).evaluate(expr)(*args)``
returning arrays compared against numpy.

The operator checks follow TVM's tests/python/relay/test_op_level1.py
(unary and binary elementwise operators, bias_add, softmax, log_softmax,
concatenate, dense): each builds a function, runs it with every executor
kind TVM's tests loop over, and compares with numpy at TVM's tolerances.
The others cover the interface: ``evaluate()`` on ``mod["main"]``, a
``GlobalVar``, a closed expression, keyword arguments, ``params``,
``binds``, tuples, ADT values and errors.
"""

import numpy as np
import pytest

import relay_tools as tvm
from relay_tools import relay

KINDS = ["debug", "graph", "vm"]


def run(func, *args, kind="debug", mod=None):
    return relay.create_executor(kind, mod=mod).evaluate(func)(*args)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    "op, ref, low",
    [
        (relay.log, np.log, 0.01),
        (relay.exp, np.exp, -1.0),
        (relay.sqrt, np.sqrt, 0.01),
        (relay.rsqrt, lambda x: 1 / np.sqrt(x), 0.01),
        (relay.sigmoid, sigmoid, -1.0),
        (relay.tanh, np.tanh, -1.0),
        (relay.negative, np.negative, -1.0),
        (relay.nn.relu, lambda x: np.maximum(x, 0), -1.0),
    ],
    ids=["log", "exp", "sqrt", "rsqrt", "sigmoid", "tanh", "negative", "relu"],
)
def test_unary_op(kind, op, ref, low):
    shape = (10, 4)
    x = relay.var("x", relay.TensorType(shape, "float32"))
    func = relay.Function([x], op(x))
    data = np.random.uniform(low=low, high=1.0, size=shape).astype("float32")
    result = run(func, data, kind=kind)
    np.testing.assert_allclose(result.numpy(), ref(data), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "op, ref",
    [
        (relay.add, np.add),
        (relay.subtract, np.subtract),
        (relay.multiply, np.multiply),
        (relay.divide, np.divide),
    ],
    ids=["add", "subtract", "multiply", "divide"],
)
def test_binary_op_broadcasts(op, ref):
    x = relay.var("x", shape=(5, 10, 5))
    y = relay.var("y", shape=(5, 10, 5))
    z = relay.var("z", shape=(10, 1))
    func = relay.Function([x, y, z], op(op(x, y), z))
    a = np.random.rand(5, 10, 5).astype("float32")
    b = np.random.rand(5, 10, 5).astype("float32")
    c = np.random.rand(10, 1).astype("float32") + 0.5
    result = run(func, a, b, c, kind="graph")
    np.testing.assert_allclose(result.numpy(), ref(ref(a, b), c), rtol=1e-5)


def test_bias_add():
    x = relay.var("x", shape=(10, 2, 3, 3))
    bias = relay.var("bias", shape=(2,))
    func = relay.Function([x, bias], relay.nn.bias_add(x, bias))
    x_data = np.random.uniform(size=(10, 2, 3, 3)).astype("float32")
    b_data = np.random.uniform(size=(2,)).astype("float32")
    result = run(func, x_data, b_data)
    np.testing.assert_allclose(result.numpy(), x_data + b_data.reshape(2, 1, 1), rtol=1e-5)


def test_softmax_and_log_softmax():
    x = relay.var("x", shape=(10, 4))
    data = np.random.uniform(size=(10, 4)).astype("float32")
    e = np.exp(data - data.max(axis=1, keepdims=True))
    expected = e / e.sum(axis=1, keepdims=True)
    softmax = run(relay.Function([x], relay.nn.softmax(x, axis=1)), data)
    np.testing.assert_allclose(softmax.numpy(), expected, rtol=1e-5)
    log_softmax = run(relay.Function([x], relay.nn.log_softmax(x, axis=1)), data)
    np.testing.assert_allclose(log_softmax.numpy(), np.log(expected), rtol=1e-5, atol=1e-6)


def test_concatenate_and_dense():
    x = relay.var("x", shape=(10, 5))
    y = relay.var("y", shape=(10, 5))
    w = relay.var("w", shape=(3, 10))
    func = relay.Function([x, y, w], relay.nn.dense(relay.concatenate((x, y), axis=1), w, units=3))
    a = np.random.rand(10, 5).astype("float32")
    b = np.random.rand(10, 5).astype("float32")
    c = np.random.rand(3, 10).astype("float32")
    result = run(func, a, b, c)
    np.testing.assert_allclose(result.numpy(), np.concatenate((a, b), axis=1) @ c.T, rtol=1e-5)


def test_evaluate_without_expr_runs_main_of_the_module():
    x = relay.var("x", shape=(3,))
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.multiply(x, relay.const(2.0))))
    data = np.array([1.0, -2.0, 0.5], dtype="float32")
    result = relay.create_executor("debug", mod=mod).evaluate()(data)
    assert isinstance(result, tvm.nd.NDArray)
    np.testing.assert_array_equal(result.numpy(), data * 2)
    # numpy takes the result as an array.
    np.testing.assert_array_equal(np.asarray(result), data * 2)


def test_a_global_var_calls_into_the_module():
    mod = tvm.parser.fromtext(
        '#[version = "0.0.5"]\n'
        "def @double(%x: Tensor[(2), int32]) -> Tensor[(2), int32] { add(%x, %x) }\n"
        "def @main(%y: Tensor[(2), int32]) -> Tensor[(2), int32] { @double(@double(%y)) }\n"
    )
    ex = relay.create_executor("vm", mod=mod)
    np.testing.assert_array_equal(ex.evaluate(mod.get_global_var("double"))(np.array([1, 2], "int32")).numpy(), [2, 4])
    np.testing.assert_array_equal(ex.evaluate()(np.array([1, 2], "int32")).numpy(), [4, 8])
    # A function expression sees the module's globals.
    z = relay.var("z", shape=(2,), dtype="int32")
    through = relay.Function([z], relay.Call(mod.get_global_var("double"), [z]))
    np.testing.assert_array_equal(ex.evaluate(through)([3, 4]).numpy(), [6, 8])


def test_a_closed_expression_evaluates_to_its_value():
    value = relay.create_executor().evaluate(relay.add(relay.const(1.5), relay.const(2.0)))
    assert value.numpy() == np.float32(3.5)
    pair = relay.create_executor().evaluate(relay.Tuple([relay.const(1), relay.const(2.0)]))
    assert isinstance(pair, tuple)
    assert [p.numpy().item() for p in pair] == [1, 2.0]
    assert [p.dtype for p in pair] == ["int32", "float32"]


def test_keyword_arguments_params_and_binds():
    x = relay.var("x", shape=(2,))
    y = relay.var("y", shape=(2,))
    func = relay.Function([x, y], relay.subtract(x, y))
    a = np.array([5.0, 6.0], "float32")
    b = np.array([1.0, 2.0], "float32")
    ex = relay.create_executor("debug")
    np.testing.assert_array_equal(ex.evaluate(func)(y=b, x=a).numpy(), a - b)
    # params binds main's parameters by name: the others are passed.
    mod = tvm.IRModule.from_expr(func)
    bound = relay.create_executor("graph", mod=mod, params={"y": b})
    np.testing.assert_array_equal(bound.evaluate()(a).numpy(), a - b)
    # binds replaces variables of the expression by values.
    value = ex.evaluate(relay.add(x, relay.const(1.0)), binds={x: a})
    np.testing.assert_array_equal(value.numpy(), a + 1)


def test_tuple_arguments_and_results():
    t = relay.var("t", relay.TupleType([relay.TensorType((2,), "float32"), relay.TensorType((), "int32")]))
    func = relay.Function([t], relay.Tuple([relay.TupleGetItem(t, 1), relay.TupleGetItem(t, 0)]))
    first, second = run(func, (np.array([1.0, 2.0], "float32"), np.array(7, "int32")))
    assert first.numpy() == 7
    np.testing.assert_array_equal(second.numpy(), [1.0, 2.0])


def test_adt_values_come_back_as_runtime_values():
    mod = tvm.parser.fromtext(
        '#[version = "0.0.5"]\n'
        "type List[A] { Cons(A, List[A]), Nil }\n"
        "def @main(%x: float32) -> List[float32] { Cons(%x, Cons(add(%x, 1f), Nil)) }\n"
        "def @length(%l: List[float32]) -> int32 {\n"
        "  match (%l) { Cons(_, %rest) => add(1, @length(%rest)), Nil => 0 }\n"
        "}\n"
    )
    ex = relay.create_executor("debug", mod=mod)
    value = ex.evaluate()(np.float32(2.0))
    assert value.kind == "adt" and value.constructor == "Cons" and value.tag == 0
    head, tail = value.fields
    assert head.numpy() == 2.0
    assert tail.fields[0].numpy() == 3.0
    assert tail.fields[1].constructor == "Nil" and tail.fields[1].tag == 1
    # A run-time value goes back in as an argument.
    assert ex.evaluate(mod.get_global_var("length"))(value).numpy() == 2


def test_errors():
    x = relay.var("x", shape=(2,))
    func = relay.Function([x], relay.nn.relu(x))
    ex = relay.create_executor()
    with pytest.raises(TypeError, match="1 argument"):
        ex.evaluate(func)(np.zeros(2, "float32"), np.zeros(2, "float32"))
    with pytest.raises(ValueError, match="does not fit"):
        ex.evaluate(func)(np.zeros(3, "float32"))
    with pytest.raises(RuntimeError, match="unknown executor kind"):
        relay.create_executor("cuda_graph")
    with pytest.raises(ValueError, match="no main"):
        relay.create_executor().evaluate()()
    # A run-time error says where: a match no clause fits.
    mod = tvm.parser.fromtext(
        '#[version = "0.0.5"]\n'
        "type List[A] { Cons(A, List[A]), Nil }\n"
        "def @main() -> float32 { match? (Nil) { Cons(%x, _) => %x } }\n"
    )
    with pytest.raises(tvm.error.TVMError, match=r":3:\d+: .*match"):
        relay.create_executor(mod=mod).evaluate()()
    # A type error is raised before anything runs.
    y = relay.var("y", shape=(3,))
    with pytest.raises(tvm.error.TVMError):
        ex.evaluate(relay.Function([x, y], relay.add(x, y)))(np.zeros(2, "float32"), np.zeros(3, "float32"))
