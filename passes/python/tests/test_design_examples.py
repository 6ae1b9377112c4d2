"""The Python examples of TVM's pass-infrastructure design
(docs/arch/pass_infra.rst and the "use pass infra" how-to), run with only
the imports changed: ``import relay_tools as tvm``, ``from relay_tools
import relay``."""

import numpy as np

import relay_tools as tvm
from relay_tools import relay
from relay_tools import transform


def example():
    shape = (1, 64, 54, 54)
    c_data = np.empty(shape).astype("float32")
    c = relay.const(c_data)
    weight = relay.var("weight", shape=(64, 64, 3, 3))
    x = relay.var("x", relay.TensorType((1, 64, 56, 56), "float32"))
    conv = relay.nn.conv2d(x, weight)
    y = relay.add(c, c)
    y = relay.multiply(y, relay.const(2, "float32"))
    y = relay.add(conv, y)
    z = relay.add(y, c)
    z1 = relay.add(y, c)
    z2 = relay.add(z, z1)
    return relay.Function([x, weight], z2)


def count_calls(expr, name):
    found = []

    def visit(node):
        if isinstance(node, relay.Call) and isinstance(node.op, tvm.ir.Op) and node.op.name == name:
            found.append(node)

    relay.analysis.post_order_visit(expr, visit)
    return len(found)


def test_module_pass_adding_abs():
    @tvm.transform.module_pass(opt_level=2)
    def transform(mod, ctx):
        tp = relay.TensorType((10,), "float32")
        x = relay.var("x", tp)
        gv = relay.GlobalVar("abs")
        func = relay.Function([x], relay.abs(x))
        new_mod = tvm.IRModule({gv: func})
        new_mod.update(mod)
        return new_mod

    module_pass = transform
    assert isinstance(module_pass, tvm.transform.ModulePass)
    assert module_pass.info.opt_level == 2

    mod = tvm.IRModule.from_expr(example())
    new_mod = module_pass(mod)
    assert "abs" in new_mod and "main" in new_mod
    assert count_calls(new_mod["abs"], "abs") == 1
    assert "abs" not in mod, "the module passed in is left as it was"


def test_class_decorated_function_pass_replaces_every_function():
    @relay.transform.function_pass(opt_level=1)
    class TestReplaceFunc:
        def __init__(self, new_func):
            self.new_func = new_func

        def transform_function(self, func, mod, ctx):
            # just for demo purposes
            # transform func to new_func
            return self.new_func

    x = relay.var("x", shape=(10, 20))
    f1 = relay.Function([x], x)
    f2 = relay.Function([x], relay.log(x))
    # fpass is now a special pass that replaces every
    # function to f1
    fpass = TestReplaceFunc(f1)
    # now every function in input_mod is replaced by f1
    input_mod = tvm.IRModule({"main": f2, "other": relay.Function([x], relay.exp(x))})
    res_mod = fpass(input_mod)
    typed_f1 = relay.testing.run_infer_type(f1)
    for gv in res_mod.get_global_vars():
        assert tvm.ir.structural_equal(res_mod[gv], typed_f1)
    assert fpass.new_func.same_as(f1), "attributes of the instance are reachable"


def sequential():
    return tvm.transform.Sequential(
        [
            relay.transform.InferType(),
            relay.transform.FoldConstant(),
            relay.transform.EliminateCommonSubexpr(),
            relay.transform.AlterOpLayout(),
        ]
    )


def test_sequential_under_opt_level_3_with_llvm():
    mod = tvm.IRModule.from_expr(example())
    assert count_calls(mod["main"], "multiply") == 1
    with tvm.transform.PassContext(opt_level=3):
        with tvm.target.Target("llvm"):
            mod = sequential()(mod)
    main = mod["main"]
    # FoldConstant folded (c + c) * 2, EliminateCommonSubexpr merged z and z1.
    assert count_calls(main, "multiply") == 0
    assert count_calls(main, "add") == 3
    # AlterOpLayout with an llvm target turns the convolution into NCHWc.
    assert count_calls(main, "nn.contrib_conv2d_NCHWc") == 1
    assert count_calls(main, "nn.conv2d") == 0
    assert main.checked_type.ret_type.shape == [1, 64, 54, 54]


def test_sequential_at_default_opt_level_skips_opt_level_3_passes():
    mod = tvm.IRModule.from_expr(example())
    mod = sequential()(mod)  # opt_level 2: EliminateCommonSubexpr (3) and AlterOpLayout (3) skipped
    main = mod["main"]
    assert count_calls(main, "multiply") == 0
    assert count_calls(main, "add") == 4
    assert count_calls(main, "nn.conv2d") == 1


def test_sequential_with_print_ir(capfd):
    seq = tvm.transform.Sequential(
        [
            relay.transform.InferType(),
            relay.transform.FoldConstant(),
            tvm.transform.PrintIR(),
            relay.transform.EliminateCommonSubexpr(),
            relay.transform.AlterOpLayout(),
        ]
    )
    mod = tvm.IRModule.from_expr(example())
    with tvm.transform.PassContext(opt_level=3):
        with tvm.target.Target("llvm"):
            mod = seq(mod)
    err = capfd.readouterr().err
    assert "PrintIR" in err
    # Printed after FoldConstant, before EliminateCommonSubexpr and AlterOpLayout.
    assert "nn.conv2d" in err and "contrib_conv2d_NCHWc" not in err
    assert count_calls(mod["main"], "nn.contrib_conv2d_NCHWc") == 1


def test_disabled_pass():
    mod = tvm.IRModule.from_expr(example())
    with tvm.transform.PassContext(opt_level=3, disabled_pass=["EliminateCommonSubexpr"]):
        mod = sequential()(mod)
    main = mod["main"]
    assert count_calls(main, "multiply") == 0
    assert count_calls(main, "add") == 4, "z and z1 stay apart without EliminateCommonSubexpr"


def test_custom_function_pass_with_mutator():
    @relay.transform.function_pass(opt_level=1)
    class CustomPipeline:
        """Simple test function to replace one argument to another."""

        def __init__(self, multiplier, dev):
            self.multiplier = multiplier
            self.dev = dev

        # This function can define a pass.
        def transform_function(self, func, mod, ctx):
            obj = self

            class ReplaceConstant(tvm.relay.ExprMutator):
                def visit_constant(self, c):
                    return relay.multiply(obj.multiplier, c)

            return ReplaceConstant().visit(func)

    f = example()
    mod = tvm.IRModule.from_expr(f)
    custom_pass = CustomPipeline(multiplier=relay.const(3, "float32"), dev=tvm.nd.cpu(0))
    assert custom_pass.info.name == "CustomPipeline"
    mod3 = custom_pass(mod)
    # Three constant nodes (c, used three times, and 2f) each get multiplied.
    assert count_calls(mod3["main"], "multiply") == 1 + 2


def test_instrument_printing_before_each_pass(capsys):
    @tvm.instrument.pass_instrument
    class PrintIR:
        """Print the name of the pass, the IR, only before passes execute."""

        def run_before_pass(self, mod, info):
            print("Running pass: {}", info)
            print(mod)

    mod = tvm.IRModule.from_expr(example())
    with tvm.transform.PassContext(opt_level=3, instruments=[PrintIR()]):
        with tvm.target.Target("llvm"):
            mod = sequential()(mod)
    out = capsys.readouterr().out
    for name in ["sequential", "InferType", "FoldConstant", "EliminateCommonSubexpr", "AlterOpLayout"]:
        assert f"pass name: {name}," in out
