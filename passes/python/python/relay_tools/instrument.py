"""``tvm.instrument``: observers of pass runs. An instrument is any object
with some of the hooks ``enter_pass_ctx``, ``exit_pass_ctx``,
``should_run(mod, info)``, ``run_before_pass(mod, info)`` and
``run_after_pass(mod, info)``; the pass manager calls them around every
pass, Rust or Python. ``should_run`` returning False skips the pass."""

import inspect

from ._core import PassTimingInstrument


class PassInstrument:
    """Base class of instruments (hooks that are not defined do nothing)."""


def pass_instrument(pi_cls=None):
    """Decorates a class as an instrument, as TVM's ``pass_instrument``."""

    def create_pass_instrument(pi_cls):
        if not inspect.isclass(pi_cls):
            raise TypeError("pi_cls must be a class")
        if issubclass(pi_cls, PassInstrument):
            return pi_cls
        return type(
            pi_cls.__name__,
            (pi_cls, PassInstrument),
            {"__module__": pi_cls.__module__, "__doc__": pi_cls.__doc__, "__qualname__": pi_cls.__qualname__},
        )

    if pi_cls:
        return create_pass_instrument(pi_cls)
    return create_pass_instrument


@pass_instrument
class PrintBeforeAll:
    """Prints the pass and the module before every pass."""

    def run_before_pass(self, mod, info):
        print(f"Before Running Pass: {info}")
        print(mod)


@pass_instrument
class PrintAfterAll:
    """Prints the pass and the module after every pass."""

    def run_after_pass(self, mod, info):
        print(f"After Running Pass: {info}")
        print(mod)


@pass_instrument
class PassPrintingInstrument:
    """Prints the module before the passes named in
    ``print_before_pass_names`` and after those in
    ``print_after_pass_names``."""

    def __init__(self, print_before_pass_names, print_after_pass_names):
        self.print_before_pass_names = list(print_before_pass_names)
        self.print_after_pass_names = list(print_after_pass_names)

    def run_before_pass(self, mod, info):
        if info.name in self.print_before_pass_names:
            print(f"Print IR before: {info.name}\n{mod}\n\n")

    def run_after_pass(self, mod, info):
        if info.name in self.print_after_pass_names:
            print(f"Print IR after: {info.name}\n{mod}\n\n")


__all__ = [
    "PassInstrument",
    "pass_instrument",
    "PassTimingInstrument",
    "PrintBeforeAll",
    "PrintAfterAll",
    "PassPrintingInstrument",
]
