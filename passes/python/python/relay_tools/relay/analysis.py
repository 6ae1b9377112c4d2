"""``relay.analysis``: variables of an expression, ``post_order_visit`` and
``well_formed``."""

from .._core import free_vars, bound_vars, all_vars, post_order_visit, well_formed

__all__ = ["free_vars", "bound_vars", "all_vars", "post_order_visit", "well_formed"]
