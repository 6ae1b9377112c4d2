"""Python passes and instruments run inside the Rust pass manager: the
context's opt_level, disabled_pass and required_pass decide whether they
run, their ``required`` passes run first, the timing instrument and
``PrintIR`` see them, and a failure is a ``TVMError`` naming the pass with
the Python exception as its cause, the input module untouched."""

import pytest

import relay_tools as tvm
from relay_tools import relay
from relay_tools.instrument import pass_instrument, PassTimingInstrument
from conftest import get_test_model


@pass_instrument
class Recorder:
    def __init__(self):
        self.ran = []

    def run_before_pass(self, mod, info):
        self.ran.append(info.name)


def relu_model():
    x = relay.var("x", shape=(2, 3))
    return tvm.IRModule.from_expr(relay.nn.relu(relay.add(x, x)))


@relay.transform.function_pass(opt_level=2, name="ReluToClip", required=["InferType"])
def relu_to_clip(func, mod, ctx):
    class Rewrite(relay.ExprMutator):
        def visit_call(self, call):
            new = super().visit_call(call)
            if isinstance(new.op, tvm.ir.Op) and new.op.name == "nn.relu":
                return relay.clip(new.args[0], 0.0, 6.0)
            return new

    return Rewrite().visit(func)


def count(mod, name):
    found = []
    relay.analysis.post_order_visit(
        mod["main"], lambda n: found.append(n) if isinstance(n, relay.Call) and getattr(n.op, "name", "") == name else None
    )
    return len(found)


def test_python_pass_in_sequential_runs_at_its_opt_level():
    recorder = Recorder()
    seq = tvm.transform.Sequential([relu_to_clip, relay.transform.FoldConstant()])
    with tvm.transform.PassContext(opt_level=1, instruments=[recorder]):
        out = seq(relu_model())
    assert count(out, "nn.relu") == 1, "opt_level 1 < 2: the Python pass is skipped"
    assert "ReluToClip" not in recorder.ran
    recorder = Recorder()
    with tvm.transform.PassContext(opt_level=2, instruments=[recorder]):
        out = seq(relu_model())
    assert count(out, "nn.relu") == 0 and count(out, "clip") == 1
    # Its required InferType runs first, the function pass's InferType after it.
    assert recorder.ran[:4] == ["sequential", "InferType", "ReluToClip", "InferType"]
    clip = out["main"].body
    assert clip.attrs.a_min == 0.0 and clip.attrs["a_max"] == 6.0
    assert str(clip.checked_type) == "Tensor[(2, 3), float32]"


def test_disabled_and_required_python_pass():
    seq = tvm.transform.Sequential([relu_to_clip])
    with tvm.transform.PassContext(opt_level=3, disabled_pass=["ReluToClip"]):
        assert count(seq(relu_model()), "nn.relu") == 1
    with tvm.transform.PassContext(opt_level=0, required_pass=["ReluToClip"]):
        assert count(seq(relu_model()), "clip") == 1


def test_python_instrument_vetoes_a_rust_pass_in_a_pipeline():
    @pass_instrument
    class NoFold:
        def should_run(self, mod, info):
            return info.name != "FoldConstant"

    x = relay.var("x", shape=(2,))
    mod = tvm.IRModule.from_expr(relay.add(x, relay.add(relay.const(1.0), relay.const(2.0))))
    seq = tvm.transform.pipeline("InferType, FoldConstant")
    with tvm.transform.PassContext(instruments=[NoFold()]):
        kept = seq(mod)
    assert count(kept, "add") == 2
    assert count(seq(mod), "add") == 1


def test_timing_and_print_ir_see_python_passes(capfd):
    timing = PassTimingInstrument()
    seq = tvm.transform.Sequential([relu_to_clip, tvm.transform.PrintIR(header="after ReluToClip")])
    with tvm.transform.PassContext(opt_level=3, instruments=[timing]):
        seq(relu_model())
        profile = timing.render()
    assert "ReluToClip" in profile and "InferType" in profile
    err = capfd.readouterr().err
    assert "after ReluToClip" in err and "clip(" in err


def test_exception_names_the_pass_and_keeps_the_module():
    @tvm.transform.module_pass(opt_level=0, name="Exploding")
    def exploding(mod, ctx):
        mod["main"] = relay.Function([], relay.const(0.0))
        raise ValueError("no luck")

    mod = get_test_model()
    before = mod.astext()
    with pytest.raises(tvm.error.TVMError, match="pass Exploding failed: ValueError: no luck") as info:
        tvm.transform.Sequential([relay.transform.InferType(), exploding])(mod)
    assert isinstance(info.value.__cause__, ValueError)
    assert mod.astext() == before


def test_function_pass_exception_and_wrong_return():
    @relay.transform.function_pass(opt_level=0)
    def wrong(func, mod, ctx):
        return 3

    with pytest.raises(tvm.error.TVMError, match="wrong") as info:
        wrong(get_test_model())
    assert isinstance(info.value.__cause__, TypeError)


def test_python_pass_sees_the_current_context():
    seen = []

    @tvm.transform.module_pass(opt_level=0)
    def look(mod, ctx):
        seen.append((ctx.opt_level, ctx is tvm.transform.PassContext.current()))
        return mod

    with tvm.transform.PassContext(opt_level=3):
        look(get_test_model())
    assert seen == [(3, True)]


def test_registry_pass_parameters_are_checked():
    assert isinstance(relay.transform.FuseOps(fuse_opt_level=2), tvm.transform.Pass)
    assert relay.transform.FuseOps(fuse_opt_level=2).describe() == "FuseOps(fuse_opt_level=2)"
    assert relay.transform.FoldConstant(True).describe() == "FoldConstant(fold_qnn=true)"
    with pytest.raises(TypeError):
        relay.transform.FoldConstant(fold_qn=True)
    with pytest.raises(ValueError, match="fuse_opt_level"):
        relay.transform.FuseOps(fuse_opt_level="high")


def test_every_registered_pass_has_a_constructor():
    names = {spec[0] for spec in tvm._core.pass_specs()}
    assert {"InferType", "FoldConstant", "FuseOps", "AlterOpLayout", "ConvertLayout"} <= names
    for name in names:
        assert callable(getattr(relay.transform, name)), name


def test_map_parameters_reach_the_pass():
    x = relay.var("x", shape=(1, 3, 8, 8))
    w = relay.var("w", shape=(4, 3, 3, 3))
    mod = tvm.IRModule.from_expr(relay.nn.relu(relay.nn.conv2d(x, w, kernel_size=3, channels=4)))
    seq = tvm.transform.Sequential(
        [relay.transform.InferType(), relay.transform.ConvertLayout({"nn.conv2d": ["NHWC", "default"]})]
    )
    with tvm.transform.PassContext(opt_level=3):
        out = seq(mod)
    assert count(out, "layout_transform") == 3
    text = out.astext(show_meta_data=False)
    assert 'data_layout="NHWC", kernel_layout="HWIO"' in text, text
