"""``tvm.parser``: Relay text to modules and expressions. Errors raise
``DiagnosticError`` listing every problem with its line and column."""

from ._core import parse as _parse, parse_expr as _parse_expr


def parse(source, source_name="from_string", init_module=None, init_meta_table=None):
    """The module written in ``source``."""
    if init_meta_table:
        raise NotImplementedError("init_meta_table: write the metadata section into the text")
    return _parse(source, source_name, init_module)


def parse_expr(source):
    """The expression written in ``source``."""
    return _parse_expr(source)


def fromtext(source, source_name="from_string"):
    """TVM's old name for :func:`parse`."""
    return parse(source, source_name)


__all__ = ["parse", "parse_expr", "fromtext"]
