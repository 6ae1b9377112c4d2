"""``tvm.transform``: passes, ``Sequential``, ``PassContext`` and the
``module_pass`` decorator. Every pass — built in, composed or written in
Python — runs in the Rust pass manager under ``PassContext.current()``."""

import functools
import inspect
import threading
import types

from . import _core
from ._core import Pass, ModulePass, FunctionPass, Sequential, PassInfo

_local = threading.local()


def _stack():
    if not hasattr(_local, "stack"):
        _local.stack = []
    return _local.stack


class PassContext:
    """The context passes run under: ``with PassContext(opt_level=3): …``.

    ``required_pass`` passes always run, ``disabled_pass`` passes never run
    in a ``Sequential``, ``config`` is checked against the registered keys,
    ``instruments`` observe every pass run inside the context.
    """

    def __init__(
        self,
        opt_level=2,
        required_pass=None,
        disabled_pass=None,
        instruments=None,
        config=None,
        trace=None,
        _handle=None,
    ):
        self.opt_level = opt_level
        self.required_pass = list(required_pass or [])
        self.disabled_pass = list(disabled_pass or [])
        self.config = dict(config or {})
        instruments = list(instruments or [])
        if trace is not None:
            instruments.append(_TraceInstrument(trace))
        self._instruments = instruments or None
        if _handle is None:
            _handle = _core.PassContextHandle(
                opt_level,
                self.required_pass,
                self.disabled_pass,
                instruments,
                self.config,
            )
        self._handle = _handle

    @property
    def instruments(self):
        return self._instruments

    def __enter__(self):
        self._handle.enter()
        _stack().append(self)
        return self

    def __exit__(self, exc_type, exc, tb):
        stack = _stack()
        if stack and stack[-1] is self:
            stack.pop()
        try:
            self._handle.exit()
        except _core.TVMError:
            self._instruments = None
            raise

    def override_instruments(self, instruments):
        """Exits the current instruments and enters ``instruments``."""
        instruments = list(instruments or [])
        try:
            self._handle.override_instruments(instruments)
        except _core.TVMError:
            self._instruments = None
            raise
        self._instruments = instruments or None

    @staticmethod
    def current():
        """The innermost entered context of this thread, or the default one."""
        stack = _stack()
        if stack:
            return stack[-1]
        if not hasattr(_local, "default"):
            _local.default = PassContext(_handle=_core.PassContextHandle.default_context())
        return _local.default

    @staticmethod
    def list_configs():
        """The registered config keys."""
        return dict(_core.config_keys())

    def __repr__(self):
        return (
            f"PassContext(opt_level={self.opt_level}, required_pass={self.required_pass}, "
            f"disabled_pass={self.disabled_pass}, config={self.config})"
        )


class _TraceInstrument:
    """``build_config(trace=f)``: ``f(mod, info, is_before)`` around each pass."""

    def __init__(self, trace):
        self.trace = trace

    def run_before_pass(self, mod, info):
        self.trace(mod, info, True)

    def run_after_pass(self, mod, info):
        self.trace(mod, info, False)


def _wrap_class_module_pass(pass_cls, pass_info):
    class PyModulePass(ModulePass):
        """A module pass made from a class with ``transform_module``."""

        def __init__(self, *args, **kwargs):
            inst = pass_cls(*args, **kwargs)

            def _pass_func(mod, ctx):
                return inst.transform_module(mod, ctx)

            self._init_handle(
                _core.make_module_pass(_pass_func, pass_info.name, pass_info.opt_level, pass_info.required)
            )
            self._inst = inst

        def __getattr__(self, name):
            return self._inst.__getattribute__(name)

    functools.update_wrapper(PyModulePass.__init__, pass_cls.__init__)
    PyModulePass.__name__ = pass_cls.__name__
    PyModulePass.__doc__ = pass_cls.__doc__
    PyModulePass.__module__ = pass_cls.__module__
    return PyModulePass


def module_pass(pass_func=None, opt_level=None, name=None, required=None, traceable=False):
    """Makes a module pass from a function ``(mod, ctx) -> mod`` or a class
    with ``transform_module(self, mod, ctx)``; usable as a decorator with or
    without arguments, as TVM's."""
    del traceable
    if opt_level is None:
        raise ValueError("Please provide opt_level for the module pass.")
    required = list(required or [])
    if not isinstance(required, (list, tuple)):
        raise TypeError("Required is expected to be the type of list/tuple.")

    def create_module_pass(pass_arg):
        fname = name if name else pass_arg.__name__
        info = PassInfo(opt_level, fname, required)
        if inspect.isclass(pass_arg):
            return _wrap_class_module_pass(pass_arg, info)
        if not isinstance(pass_arg, (types.FunctionType, types.LambdaType, functools.partial)) and not callable(pass_arg):
            raise TypeError("pass_func must be a callable for Module pass")
        return _core.make_module_pass(pass_arg, fname, opt_level, required)

    if pass_func:
        return create_module_pass(pass_func)
    return create_module_pass


def PrintIR(header="", show_meta_data=False):
    """A pass that prints the module (to stderr) and leaves it unchanged."""
    return _core.create_pass("PrintIR", {"header": header, "show_meta_data": show_meta_data})


def pipeline(text):
    """A pass from pipeline text, as ``relay opt -p`` reads it."""
    return _core.pipeline(text)


__all__ = [
    "Pass",
    "ModulePass",
    "FunctionPass",
    "Sequential",
    "PassInfo",
    "PassContext",
    "module_pass",
    "PrintIR",
    "pipeline",
]
