"""Errors: ``TVMError`` (a failing pass, instrument or context) and
``DiagnosticError`` (syntax, name or type errors with their places)."""

from ._core import TVMError, DiagnosticError

__all__ = ["TVMError", "DiagnosticError"]
