"""``relay.transform.gradient`` as TVM's tests/python/relay/test_pass_gradient.py
uses it: differentiate a type-checked function, type-check the result, run
it with ``create_executor("debug")`` and compare the value and the gradient
with numpy."""

import numpy as np
import pytest

import relay_tools as tvm
from relay_tools import relay
from relay_tools.relay import transform
from relay_tools.relay.testing import run_infer_type

SHAPE = (10, 10)
T = relay.TensorType(SHAPE, "float32")


def rand(*shape):
    return np.random.uniform(-1, 1, size=shape).astype("float32")


def evaluate(func, *args, mod=None):
    return relay.create_executor("debug", mod=mod).evaluate(func)(*args)


def test_add():
    x = relay.var("x", T)
    back_func = run_infer_type(transform.gradient(run_infer_type(relay.Function([x], x + x))))
    assert back_func.checked_type == relay.FuncType([T], relay.TupleType([T, relay.TupleType([T])]))
    x_np = rand(*SHAPE)
    forward, (grad,) = evaluate(back_func, x_np)
    np.testing.assert_allclose(forward.numpy(), 2 * x_np)
    np.testing.assert_allclose(grad.numpy(), 2 * np.ones_like(x_np))


def test_multiply_with_let_and_ref():
    x = relay.var("x", T)
    y = relay.var("y", T)
    r = relay.Var("r")
    body = relay.Let(r, relay.RefCreate(x * y), relay.RefRead(r))
    back_func = run_infer_type(transform.gradient(run_infer_type(relay.Function([x, y], body))))
    x_np, y_np = rand(*SHAPE), rand(*SHAPE)
    forward, (grad_x, grad_y) = evaluate(back_func, x_np, y_np)
    np.testing.assert_allclose(forward.numpy(), x_np * y_np, rtol=1e-6)
    np.testing.assert_allclose(grad_x.numpy(), y_np, rtol=1e-6)
    np.testing.assert_allclose(grad_y.numpy(), x_np, rtol=1e-6)


def test_global_function_adds_its_gradient_to_the_module():
    mod = tvm.IRModule()
    x = relay.Var("x", T)
    double = relay.GlobalVar("double")
    mod[double] = relay.Function([x], x + x)
    y = relay.Var("y", T)
    q = relay.GlobalVar("q")
    mod[q] = relay.Function([y], double(double(y)))
    mod = transform.InferType()(mod)
    mod["grad"] = transform.gradient(q, mod)
    assert "double_grad" in mod
    mod = transform.InferType()(mod)
    back_func = mod["grad"]
    x_np = rand(*SHAPE)
    forward, (grad,) = evaluate(back_func, x_np, mod=mod)
    np.testing.assert_allclose(forward.numpy(), 4 * x_np, rtol=1e-6)
    np.testing.assert_allclose(grad.numpy(), 4 * np.ones_like(x_np))


def test_first_order_mode():
    x = relay.var("x", T)
    func = run_infer_type(relay.Function([x], x))
    with pytest.warns(DeprecationWarning):
        back_func = run_infer_type(transform.gradient(func, mode="first_order"))
    x_np = rand(*SHAPE)
    forward, (grad,) = evaluate(back_func, x_np)
    np.testing.assert_allclose(forward.numpy(), x_np)
    np.testing.assert_allclose(grad.numpy(), np.ones_like(x_np))


def test_first_order_mode_refuses_a_module():
    x = relay.var("x", T)
    func = run_infer_type(relay.Function([x], x))
    with pytest.warns(DeprecationWarning), pytest.raises(RuntimeError, match="FirstOrderGradient"):
        transform.gradient(func, tvm.IRModule(), mode="first_order")


def test_unknown_mode():
    x = relay.var("x", T)
    with pytest.raises(Exception, match="unknown mode"):
        transform.gradient(relay.Function([x], x), mode="second_order")


def test_tuple_parameter_is_refused():
    tup = relay.var("tup", relay.TupleType([T, T]))
    func = run_infer_type(relay.Function([tup], relay.TupleGetItem(tup, 0)))
    with pytest.raises(tvm.error.TVMError, match="input parameters need to be tensor"):
        transform.gradient(func)
