"""``tvm.target``: a target as a ``with`` scope. Passes run inside the scope
see its kind (``llvm``) as the pass context's target."""

import threading

_scopes = threading.local()


def _stack():
    if not hasattr(_scopes, "stack"):
        _scopes.stack = []
    return _scopes.stack


class Target:
    """A compilation target, named as TVM names them (``"llvm"``,
    ``"llvm -mcpu=skylake"``); the kind is the first word."""

    def __init__(self, target, host=None):
        if isinstance(target, Target):
            target = target.text
        if not isinstance(target, str) or not target.strip():
            raise ValueError("a target is a non-empty string such as 'llvm'")
        self.text = target.strip()
        self.kind = self.text.split()[0]
        self.host = host

    def __enter__(self):
        _stack().append(self)
        return self

    def __exit__(self, *exc):
        _stack().pop()

    def __str__(self):
        return self.text

    def __repr__(self):
        return f"Target({self.text!r})"

    @staticmethod
    def current(allow_none=True):
        stack = _stack()
        if stack:
            return stack[-1]
        if allow_none:
            return None
        raise ValueError("no target is in scope")


def create(target):
    """TVM's old spelling of ``Target(target)``."""
    return Target(target)


def _current_target_name():
    current = Target.current()
    return current.kind if current is not None else None


__all__ = ["Target", "create"]
