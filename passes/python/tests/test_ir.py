"""The IR from Python: node classes with TVM's constructors and fields,
types, attributes as Python values, operators generated from the table,
functors, analyses, structural comparison, parsing and tensors."""

import inspect

import numpy as np
import pytest

import relay_tools as tvm
from relay_tools import relay


def test_operator_signatures_come_from_the_table():
    sig = inspect.signature(relay.nn.conv2d)
    params = list(sig.parameters)
    assert params[:4] == ["data", "weight", "strides", "padding"]
    assert sig.parameters["strides"].default == (1, 1)
    assert sig.parameters["data_layout"].default == "NCHW"
    assert sig.parameters["groups"].default == 1
    assert "data" in inspect.signature(relay.nn.relu).parameters
    assert callable(relay.qnn.op.conv2d) and callable(relay.image.resize2d)
    assert len(relay.op.OPERATORS) > 300
    with pytest.raises(TypeError, match="did you mean `strides`"):
        relay.nn.conv2d(relay.var("x"), relay.var("w"), stride=(2, 2))
    with pytest.raises(TypeError):
        relay.add(relay.var("x"))


def test_call_fields_and_attrs():
    x = relay.var("x", shape=(1, 3, 8, 8))
    w = relay.var("w", shape=(4, 3, 3, 3))
    call = relay.nn.conv2d(x, w, strides=2, padding=1, channels=4, kernel_size=(3, 3))
    assert isinstance(call, relay.Call) and isinstance(call, relay.Expr)
    assert call.op == relay.op.get("nn.conv2d") and call.op.name == "nn.conv2d"
    assert [a.name_hint for a in call.args] == ["x", "w"]
    assert call.attrs.strides == [2, 2]
    assert call.attrs["padding"] == [1, 1, 1, 1]
    assert call.attrs.channels == 4 and call.attrs.out_dtype == ""
    assert "kernel_layout" in call.attrs.keys()
    with pytest.raises(ValueError, match="checked_type"):
        call.checked_type
    mod = relay.transform.InferType()(tvm.IRModule.from_expr(call))
    typed = mod["main"].body
    assert isinstance(typed.checked_type, relay.TensorType)
    assert typed.checked_type.shape == [1, 4, 4, 4] and typed.checked_type.dtype == "float32"
    assert isinstance(mod["main"].checked_type, relay.FuncType)


def test_nodes_round_trip_through_constructors():
    x = relay.var("x", "float32")
    v = relay.Var("v")
    t = relay.Tuple([x, relay.const(1.0)])
    body = relay.Let(v, relay.TupleGetItem(t, 0), relay.If(relay.const(True), v, x))
    f = relay.Function([x], body, ret_type=relay.TensorType((), "float32"), attrs={"Primitive": 1})
    assert f.params[0].same_as(x) and f.body.var.same_as(v)
    assert f.attrs["Primitive"] == 1 and f.ret_type == relay.TensorType((), "float32")
    assert isinstance(f.body.value, relay.TupleGetItem) and f.body.value.index == 0
    assert isinstance(f.body.body, relay.If)
    text = tvm.IRModule.from_expr(f).astext()
    assert "let %v" in text and "if (True)" in text
    g = f.with_attr("Inline", 1)
    assert g.attrs["Inline"] == 1 and f.attrs["Primitive"] == 1


def test_adts_and_match_from_text():
    mod = tvm.parser.parse(
        """#[version = "0.0.5"]
type Box[A] { Full(A), Empty }
def @get(%b: Box[float32]) -> float32 {
  match (%b) {
    Full(%v) => %v,
    Empty => 0f,
  }
}"""
    )
    m = mod["get"].body
    assert isinstance(m, relay.Match) and m.complete
    assert isinstance(m.clauses[0].lhs, relay.PatternConstructor)
    assert m.clauses[0].lhs.constructor.name_hint == "Full"
    assert isinstance(m.clauses[0].lhs.patterns[0], relay.PatternVar)
    box = mod.get_global_type_var("Box")
    assert [c.name_hint for c in mod[box].constructors] == ["Full", "Empty"]
    empty = mod.get_constructor("Empty")
    assert empty.tag == 1 and empty.belong_to == box
    typed = relay.transform.InferType()(mod)
    assert str(typed["get"].checked_type) == "fn (Box[float32]) -> float32"


def test_module_mutation_and_lookup():
    x = relay.var("x", shape=(2,))
    mod = tvm.IRModule()
    mod["f"] = relay.Function([x], relay.abs(x), ret_type=relay.TensorType((2,)))
    gv = mod.get_global_var("f")
    assert isinstance(gv, relay.GlobalVar) and gv.name_hint == "f"
    assert mod[gv].same_as(mod["f"]) and "f" in mod and len(mod) == 1
    mod.update(tvm.IRModule({"g": relay.Function([x], x)}))
    assert sorted(g.name_hint for g in mod.functions) == ["f", "g"]
    with pytest.raises(KeyError):
        mod["missing"]
    with pytest.raises(tvm.error.TVMError):
        mod.get_global_var("missing")
    # A call to a global, through GlobalVar.__call__.
    y = relay.var("y", shape=(2,))
    mod["main"] = relay.Function([y], gv(y))
    typed = relay.transform.InferType()(mod)
    assert str(typed["main"].body.checked_type) == "Tensor[(2), float32]"


def test_functors_are_memoised():
    x = relay.var("x", shape=(2,))
    shared = relay.exp(x)
    expr = relay.add(shared, shared)

    class Count(relay.ExprVisitor):
        def __init__(self):
            super().__init__()
            self.calls = 0

        def visit_call(self, call):
            self.calls += 1
            super().visit_call(call)

    counter = Count()
    counter.visit(expr)
    assert counter.calls == 2, "the shared exp is visited once"
    same = relay.ExprMutator().visit(expr)
    assert same.same_as(expr), "an identity mutator returns its input"

    class ExpToLog(relay.ExprMutator):
        def visit_call(self, call):
            new = super().visit_call(call)
            return relay.log(new.args[0]) if new.op.name == "exp" else new

    out = ExpToLog().visit(expr)
    assert out.args[0].same_as(out.args[1]), "sharing is kept"
    assert out.args[0].op.name == "log"


def test_analysis():
    x, y, z = relay.var("x"), relay.var("y"), relay.var("z")
    f = relay.Function([x], relay.Let(z, relay.add(x, y), z))
    assert [v.name_hint for v in relay.analysis.free_vars(f)] == ["y"]
    assert sorted(v.name_hint for v in relay.analysis.bound_vars(f)) == ["x", "z"]
    assert sorted(v.name_hint for v in relay.analysis.all_vars(f)) == ["x", "y", "z"]
    order = []
    relay.analysis.post_order_visit(f, lambda n: order.append(type(n).__name__))
    assert order[-1] == "Function" and order.index("Call") < order.index("Let")
    assert relay.analysis.well_formed(f)
    assert not relay.analysis.well_formed(relay.Tuple([relay.Function([x], x), relay.Function([x], x)]))


def test_structural_equal_hash_and_message():
    def make(c):
        x = relay.var("x", shape=(2,))
        return relay.Function([x], relay.add(x, relay.const(c)))

    a, b, c = make(1.0), make(1.0), make(2.0)
    assert tvm.ir.structural_equal(a, b) and not tvm.ir.structural_equal(a, c)
    assert tvm.ir.structural_hash(a) == tvm.ir.structural_hash(b)
    tvm.ir.assert_structural_equal(a, b)
    with pytest.raises(ValueError, match="StructuralEqual check failed"):
        tvm.ir.assert_structural_equal(a, c)
    ma, mc = tvm.IRModule.from_expr(a), tvm.IRModule.from_expr(c)
    assert not tvm.ir.structural_equal(ma, mc)
    assert tvm.ir.structural_hash(ma) != tvm.ir.structural_hash(mc)


def test_constants_and_ndarrays():
    data = np.arange(6, dtype="float32").reshape(2, 3)
    c = relay.const(data)
    assert c.data.shape == (2, 3) and c.data.dtype == "float32"
    np.testing.assert_array_equal(c.data.numpy(), data)
    assert relay.const(3).data.dtype == "int32" and relay.const(True).data.dtype == "bool"
    assert relay.const(2, "float16").data.numpy() == np.float16(2)
    nd = tvm.nd.array(np.ones((2, 2), dtype="int8"))
    assert nd.tolist() == [[1, 1], [1, 1]] and nd.asnumpy().dtype == np.int8
    assert tvm.nd.array([[1.5, 2.0]]).dtype == "float32"


def test_parse_errors_point_at_the_text():
    with pytest.raises(tvm.error.DiagnosticError) as info:
        tvm.parser.parse('#[version = "0.0.5"]\ndef @main() { add(%x, 1f) }')
    message = str(info.value)
    assert "from_string:2:19" in message and "^^" in message
    with pytest.raises(tvm.error.DiagnosticError):
        relay.parse_expr("add(1f,")
    e = relay.parse_expr("add(1f, 2f)")
    assert isinstance(e, relay.Call) and e.op.name == "add"
    m = relay.fromtext('#[version = "0.0.5"]\ndef @main() { 1f }')
    assert isinstance(m, tvm.IRModule)


def test_stubs_are_current():
    """The committed .pyi stubs of the generated modules match what
    tools/gen_stubs.py writes from today's operator table and registry."""
    import importlib.util
    import os

    path = os.path.join(os.path.dirname(__file__), "..", "tools", "gen_stubs.py")
    spec = importlib.util.spec_from_file_location("gen_stubs", path)
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    for stub_path, text in gen.outputs().items():
        with open(stub_path) as f:
            assert f.read() == text, f"{stub_path} is stale: run python tools/gen_stubs.py"


def test_core_stub_names_every_class():
    """_core.pyi declares every class and function of the extension."""
    import os

    stub = open(os.path.join(os.path.dirname(tvm.__file__), "_core.pyi")).read()
    for name in dir(tvm._core):
        if not name.startswith("__"):
            assert f"class {name}" in stub or f"def {name}(" in stub, name
