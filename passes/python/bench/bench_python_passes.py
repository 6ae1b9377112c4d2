"""Times Python passes on real models: an identity ExprMutator and a
function_pass rewriting every nn.relu into clip, each run N times; prints
the medians. Usage: python bench/bench_python_passes.py MODEL.relay [...]
(e.g. ../shared/tvm/models/resnet152.relay)."""

import statistics
import sys
import time

import relay_tools as tvm
from relay_tools import relay


class ReluToClip(relay.ExprMutator):
    def visit_call(self, call):
        new = super().visit_call(call)
        if isinstance(new.op, tvm.ir.Op) and new.op.name == "nn.relu":
            return relay.clip(new.args[0], 0.0, 6.0)
        return new


@relay.transform.function_pass(opt_level=0)
def relu_to_clip(func, mod, ctx):
    return ReluToClip().visit(func)


def median_ms(run, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main(paths, repeat=7):
    for path in paths:
        with open(path) as f:
            mod = tvm.parser.parse(f.read(), path)
        mod = relay.transform.InferType()(mod)
        main_fn = mod["main"]
        nodes = []
        relay.analysis.post_order_visit(main_fn, nodes.append)

        def identity():
            out = relay.ExprMutator().visit(main_fn)
            assert out.same_as(main_fn)

        relus = sum(1 for n in nodes if isinstance(n, relay.Call) and getattr(n.op, "name", "") == "nn.relu")

        def rewrite():
            relu_to_clip(mod)

        rewritten = relu_to_clip(mod)
        assert "nn.relu(" not in rewritten.astext(show_meta_data=False)
        assert relus == 0 or "clip(" in rewritten.astext(show_meta_data=False)

        def rewrite_only():
            ReluToClip().visit(main_fn)

        print(f"{path}: {len(nodes)} nodes, {relus} nn.relu")
        print(f"  identity ExprMutator          median {median_ms(identity, repeat):8.1f} ms")
        print(f"  ReluToClip mutator alone      median {median_ms(rewrite_only, repeat):8.1f} ms")
        print(f"  function_pass (+ InferType)   median {median_ms(rewrite, repeat):8.1f} ms")


if __name__ == "__main__":
    main(sys.argv[1:])
