"""``relay.ExprFunctor``, ``ExprVisitor`` and ``ExprMutator``, as TVM's:
``visit`` dispatches on the node class and memoises by node, so a node
shared by several users is visited once."""

import sys

from .._core import (
    Expr,
    Var,
    GlobalVar,
    Constant,
    Tuple,
    TupleGetItem,
    Call,
    Let,
    If,
    Function,
    Match,
    Clause,
    RefCreate,
    RefRead,
    RefWrite,
    Constructor,
    Op,
)

_DISPATCH = {
    Function: "visit_function",
    Call: "visit_call",
    Let: "visit_let",
    Var: "visit_var",
    GlobalVar: "visit_global_var",
    If: "visit_if",
    Tuple: "visit_tuple",
    TupleGetItem: "visit_tuple_getitem",
    Constant: "visit_constant",
    Op: "visit_op",
    RefCreate: "visit_ref_create",
    RefRead: "visit_ref_read",
    RefWrite: "visit_ref_write",
    Constructor: "visit_constructor",
    Match: "visit_match",
}

# Real models are chains thousands of nodes deep; the visitor recurses once
# per level (Python 3.11 keeps those frames off the C stack).
_DEPTH = 100_000


class ExprFunctor:
    """Dispatches ``visit(expr)`` to ``visit_<kind>`` and memoises results."""

    def __init__(self):
        self.memo_map = {}
        if sys.getrecursionlimit() < _DEPTH:
            sys.setrecursionlimit(_DEPTH)

    def visit(self, expr):
        memo = self.memo_map
        if expr in memo:
            return memo[expr]
        method = _DISPATCH.get(type(expr))
        if method is None:
            for cls, name in _DISPATCH.items():
                if isinstance(expr, cls):
                    method = name
                    break
            else:
                raise TypeError(f"warning unhandled case: {type(expr)}")
        res = getattr(self, method)(expr)
        memo[expr] = res
        return res

    def visit_function(self, _):
        raise NotImplementedError()

    def visit_let(self, _):
        raise NotImplementedError()

    def visit_call(self, _):
        raise NotImplementedError()

    def visit_var(self, _):
        raise NotImplementedError()

    def visit_type(self, typ):
        return typ

    def visit_if(self, _):
        raise NotImplementedError()

    def visit_tuple(self, _):
        raise NotImplementedError()

    def visit_tuple_getitem(self, _):
        raise NotImplementedError()

    def visit_global_var(self, _):
        raise NotImplementedError()

    def visit_op(self, _):
        raise NotImplementedError()

    def visit_constant(self, _):
        raise NotImplementedError()

    def visit_ref_create(self, _):
        raise NotImplementedError()

    def visit_ref_write(self, _):
        raise NotImplementedError()

    def visit_ref_read(self, _):
        raise NotImplementedError()

    def visit_constructor(self, _):
        raise NotImplementedError()

    def visit_match(self, _):
        raise NotImplementedError()


class ExprVisitor(ExprFunctor):
    """Visits every node once."""

    def visit_tuple(self, tup):
        for x in tup.fields:
            self.visit(x)

    def visit_call(self, call):
        self.visit(call.op)
        for a in call.args:
            self.visit(a)

    def visit_var(self, var):
        pass

    def visit_let(self, let):
        self.visit(let.var)
        self.visit(let.value)
        self.visit(let.body)

    def visit_function(self, fn):
        for x in fn.params:
            self.visit(x)
        self.visit(fn.body)

    def visit_if(self, i):
        self.visit(i.cond)
        self.visit(i.true_branch)
        self.visit(i.false_branch)

    def visit_global_var(self, gv):
        pass

    def visit_constructor(self, c):
        pass

    def visit_op(self, op):
        pass

    def visit_constant(self, const):
        pass

    def visit_ref_create(self, r):
        self.visit(r.value)

    def visit_ref_read(self, r):
        self.visit(r.ref)

    def visit_ref_write(self, r):
        self.visit(r.ref)
        self.visit(r.value)

    def visit_tuple_getitem(self, t):
        self.visit(t.tuple_value)

    def visit_match(self, m):
        self.visit(m.data)
        for c in m.clauses:
            self.visit(c.rhs)


def _same(old, new):
    return len(old) == len(new) and all(a.same_as(b) for a, b in zip(old, new))


class ExprMutator(ExprFunctor):
    """Rebuilds the expression bottom-up; a node whose children are all
    unchanged is kept as it is (so an identity mutator returns its input)."""

    def visit_function(self, fn):
        new_params = [self.visit(x) for x in fn.params]
        new_body = self.visit(fn.body)
        if _same(fn.params, new_params) and new_body.same_as(fn.body):
            return fn
        return Function(list(new_params), new_body, fn.ret_type, fn.type_params, fn.attrs)

    def visit_let(self, let):
        new_var = self.visit(let.var)
        new_val = self.visit(let.value)
        new_body = self.visit(let.body)
        if new_var.same_as(let.var) and new_val.same_as(let.value) and new_body.same_as(let.body):
            return let
        return Let(new_var, new_val, new_body)

    def visit_call(self, call):
        new_fn = self.visit(call.op)
        args = call.args
        new_args = [self.visit(arg) for arg in args]
        if new_fn.same_as(call.op) and _same(args, new_args):
            return call
        return Call(new_fn, new_args, call.attrs)

    def visit_var(self, var):
        return var

    def visit_global_id(self, global_var):
        return global_var

    def visit_if(self, ite):
        c, t, f = self.visit(ite.cond), self.visit(ite.true_branch), self.visit(ite.false_branch)
        if c.same_as(ite.cond) and t.same_as(ite.true_branch) and f.same_as(ite.false_branch):
            return ite
        return If(c, t, f)

    def visit_tuple(self, tup):
        fields = tup.fields
        new_fields = [self.visit(field) for field in fields]
        if _same(fields, new_fields):
            return tup
        return Tuple(new_fields)

    def visit_tuple_getitem(self, op):
        tuple_value = self.visit(op.tuple_value)
        if tuple_value.same_as(op.tuple_value):
            return op
        return TupleGetItem(tuple_value, op.index)

    def visit_global_var(self, gvar):
        return gvar

    def visit_op(self, op):
        return op

    def visit_constant(self, const):
        return const

    def visit_constructor(self, con):
        return con

    def visit_match(self, m):
        data = self.visit(m.data)
        clauses = [Clause(c.lhs, self.visit(c.rhs)) for c in m.clauses]
        if data.same_as(m.data) and all(a.rhs.same_as(b.rhs) for a, b in zip(m.clauses, clauses)):
            return m
        return Match(data, clauses, complete=m.complete)

    def visit_ref_create(self, r):
        value = self.visit(r.value)
        return r if value.same_as(r.value) else RefCreate(value)

    def visit_ref_write(self, r):
        ref, value = self.visit(r.ref), self.visit(r.value)
        return r if ref.same_as(r.ref) and value.same_as(r.value) else RefWrite(ref, value)

    def visit_ref_read(self, r):
        ref = self.visit(r.ref)
        return r if ref.same_as(r.ref) else RefRead(ref)


__all__ = ["ExprFunctor", "ExprVisitor", "ExprMutator"]
