//! The matcher: TVM's `DFPatternMatcher` (`src/relay/ir/dataflow_matcher.cc`).
//!
//! Its rules, which decide what matches and what a rewrite sees:
//! * A memo records, per pattern node, the expressions it matched. With
//!   memoization on, a pattern node that already matched only matches the
//!   same expression node again: a pattern node used twice must find a
//!   shared sub-expression.
//! * A failed sub-match forgets everything matched since it started (a
//!   watermark over the matched pattern nodes); a pattern node forgotten
//!   this way loses all its entries.
//! * A call pattern commits to the first way its arguments match; calls to
//!   `add` and `multiply` are also tried with the pattern's arguments
//!   reversed. A `divide(multiply(a, b), c)` pattern also matches
//!   `multiply(a, divide(b, c))`-shaped expressions and the reverse
//!   (TVM's associativity rules).
//! * Type, dtype and shape patterns read the expression's checked type, or
//!   infer the expression on its own when it has none.
//! * A dominator pattern matches the child, then requires every input path
//!   to reach the parent through nodes matching the path pattern (with
//!   memoization off along the path, so the path pattern may match many
//!   nodes), and the parent to be dominated by the child in the expression's
//!   post-dominator tree.

use crate::graph::ExprGraph;
use crate::pattern::{Pattern, PatternKind, ShapeDim};
use relay_ir::equal::{structural_equal, types_equal};
use relay_ir::op::OpPattern;
use relay_ir::ty::Dim;
use relay_ir::{AttrValue, Expr, ExprKind, Type};
use std::collections::HashMap;

/// What each pattern node matched: pattern node → expressions, in the order
/// matched (TVM's `Map<DFPattern, Array<Expr>>`).
#[derive(Debug, Clone, Default)]
pub struct NodeMap {
    entries: HashMap<usize, (Pattern, Vec<Expr>)>,
}

impl NodeMap {
    /// The expressions `pattern` matched (empty if none).
    pub fn get(&self, pattern: &Pattern) -> &[Expr] {
        self.entries
            .get(&pattern.addr())
            .map_or(&[], |(_, e)| e.as_slice())
    }

    pub fn contains(&self, pattern: &Pattern) -> bool {
        self.entries.contains_key(&pattern.addr())
    }

    /// Every entry (pattern node, its matches), in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&Pattern, &[Expr])> {
        self.entries.values().map(|(p, e)| (p, e.as_slice()))
    }

    pub(crate) fn map_exprs(&self, mut f: impl FnMut(&Expr) -> Expr) -> NodeMap {
        NodeMap {
            entries: self
                .entries
                .iter()
                .map(|(k, (p, es))| (*k, (p.clone(), es.iter().map(&mut f).collect())))
                .collect(),
        }
    }
}

/// A matcher over the expressions of one graph.
pub struct Matcher<'g> {
    graph: Option<&'g ExprGraph>,
    memo: NodeMap,
    matched: Vec<Pattern>,
    memoize: bool,
}

/// `match(pattern, expr)`: whether `expr` matches `pattern`.
pub fn matches(pattern: &Pattern, expr: &Expr) -> bool {
    let graph = ExprGraph::new(expr);
    Matcher::new(Some(&graph)).match_at(pattern, expr)
}

impl<'g> Matcher<'g> {
    /// A matcher; dominator patterns need the graph of the expressions
    /// they are matched in (without one they never match).
    pub fn new(graph: Option<&'g ExprGraph>) -> Matcher<'g> {
        Matcher {
            graph,
            memo: NodeMap::default(),
            matched: Vec::new(),
            memoize: true,
        }
    }

    /// Matches `pattern` at `expr` with an empty memo.
    pub fn match_at(&mut self, pattern: &Pattern, expr: &Expr) -> bool {
        self.memo = NodeMap::default();
        self.matched.clear();
        self.visit(pattern, expr)
    }

    /// What the last successful match matched.
    pub fn memo(&self) -> &NodeMap {
        &self.memo
    }

    fn clear_from(&mut self, watermark: usize) {
        for p in self.matched.drain(watermark..) {
            self.memo.entries.remove(&p.addr());
        }
    }

    fn visit(&mut self, pattern: &Pattern, expr: &Expr) -> bool {
        if self.memoize {
            if let Some((_, seen)) = self.memo.entries.get(&pattern.addr()) {
                return seen.first().is_some_and(|e| e.ptr_eq(expr));
            }
        }
        let watermark = self.matched.len();
        let out = self.visit_kind(pattern, expr);
        if out {
            self.memo
                .entries
                .entry(pattern.addr())
                .or_insert_with(|| (pattern.clone(), Vec::new()))
                .1
                .push(expr.clone());
            self.matched.push(pattern.clone());
        } else {
            self.clear_from(watermark);
        }
        out
    }

    fn visit_kind(&mut self, pattern: &Pattern, expr: &Expr) -> bool {
        match pattern.kind() {
            PatternKind::Wildcard => true,
            PatternKind::Var { name } => match expr.kind() {
                ExprKind::Var(v) => name.is_empty() || *name == v.name,
                _ => false,
            },
            PatternKind::Constant => matches!(expr.kind(), ExprKind::Constant(_)),
            PatternKind::Expr(e) => same_expr(e, expr),
            PatternKind::Alt(left, right) => self.visit(left, expr) || self.visit(right, expr),
            PatternKind::Call { callee, args } => self.visit_call(pattern, callee, args, expr),
            PatternKind::Function { params, body } => match expr.kind() {
                ExprKind::Function(f) => {
                    if let Some(params) = params {
                        if params.len() != f.params.len() {
                            return false;
                        }
                        for (p, v) in params.iter().zip(&f.params) {
                            if !self.visit(p, v.expr()) {
                                return false;
                            }
                        }
                    }
                    self.visit(body, &f.body)
                }
                _ => false,
            },
            PatternKind::Tuple(fields) => match expr.kind() {
                ExprKind::Tuple(values) => match fields {
                    None => true,
                    Some(fields) => {
                        fields.len() == values.len()
                            && fields.iter().zip(values).all(|(p, e)| self.visit(p, e))
                    }
                },
                _ => false,
            },
            PatternKind::TupleGetItem { tuple, index } => match expr.kind() {
                ExprKind::TupleGetItem { tuple: t, index: i } => {
                    index.is_none_or(|want| want == *i) && self.visit(tuple, t)
                }
                _ => false,
            },
            PatternKind::If {
                cond,
                then_branch,
                else_branch,
            } => match expr.kind() {
                ExprKind::If {
                    cond: c,
                    then_branch: t,
                    else_branch: e,
                } => {
                    self.visit(cond, c) && self.visit(then_branch, t) && self.visit(else_branch, e)
                }
                _ => false,
            },
            PatternKind::Let { var, value, body } => match expr.kind() {
                ExprKind::Let {
                    var: v,
                    value: x,
                    body: b,
                } => self.visit(var, v.expr()) && self.visit(value, x) && self.visit(body, b),
                _ => false,
            },
            PatternKind::Attr { pattern, attrs } => {
                self.visit(pattern, expr) && attrs_match(attrs, expr)
            }
            PatternKind::Type { pattern, ty } => {
                type_of(expr).is_some_and(|t| types_equal(ty, &t)) && self.visit(pattern, expr)
            }
            PatternKind::DataType { pattern, dtype } => {
                type_of(expr)
                    .as_ref()
                    .and_then(Type::as_tensor)
                    .is_some_and(|t| t.dtype == *dtype)
                    && self.visit(pattern, expr)
            }
            PatternKind::Shape { pattern, shape } => {
                type_of(expr)
                    .as_ref()
                    .and_then(Type::as_tensor)
                    .is_some_and(|t| shape_equal(shape, &t.shape))
                    && self.visit(pattern, expr)
            }
            PatternKind::Dominator {
                parent,
                path,
                child,
            } => {
                if !self.visit(child, expr) {
                    return false;
                }
                let matches_path = self.matches_path(parent, path, expr);
                self.memoize = true;
                matches_path && self.dominates_parent(parent, expr)
            }
        }
    }

    fn visit_call(
        &mut self,
        pattern: &Pattern,
        callee: &Pattern,
        args: &Option<Vec<Pattern>>,
        expr: &Expr,
    ) -> bool {
        let Some(call) = expr.as_call() else {
            return false;
        };
        let watermark = self.matched.len();
        if self.visit(callee, &call.callee) {
            let watermark2 = self.matched.len();
            let match_args = |m: &mut Self, pattern_args: &mut dyn Iterator<Item = &Pattern>| {
                let ok = match args {
                    None => true,
                    Some(list) if list.len() == call.args.len() => {
                        pattern_args.zip(&call.args).all(|(p, e)| m.visit(p, e))
                    }
                    Some(_) => false,
                };
                if !ok {
                    m.clear_from(watermark2);
                }
                ok
            };
            let empty: Vec<Pattern> = Vec::new();
            let list = args.as_ref().unwrap_or(&empty);
            if match_args(self, &mut list.iter()) {
                return true;
            }
            if matches!(op_name_of(callee), Some("add" | "multiply"))
                && match_args(self, &mut list.iter().rev())
            {
                return true;
            }
            return false;
        }
        self.clear_from(watermark);
        self.associate(pattern, args, expr, call, watermark)
    }

    /// TVM's rewriting of `divide(multiply(a, b), c)` patterns to match
    /// `multiply(a, divide(b, c))` and of `multiply(a, divide(b, c))`
    /// patterns to match `divide(multiply(a, b), c)`, tried when the callee
    /// did not match.
    fn associate(
        &mut self,
        pattern: &Pattern,
        args: &Option<Vec<Pattern>>,
        expr: &Expr,
        call: &relay_ir::Call,
        watermark: usize,
    ) -> bool {
        let PatternKind::Call { callee, .. } = pattern.kind() else {
            return false;
        };
        let Some(args) = args else {
            return false;
        };
        let is_expr_op = |e: &Expr, name: &str| {
            e.as_call()
                .and_then(|c| c.callee.as_op())
                .is_some_and(|op| op.name == name)
        };
        if op_name_of(callee) == Some("divide") {
            if let Some(PatternKind::Call {
                callee: inner_callee,
                args: Some(inner_args),
            }) = args.first().map(Pattern::kind)
            {
                if op_name_of(inner_callee) == Some("multiply")
                    && is_expr_op(expr, "multiply")
                    && (call.args.first().is_some_and(|a| is_expr_op(a, "divide"))
                        || call.args.get(1).is_some_and(|a| is_expr_op(a, "divide")))
                    && inner_args.len() == 2
                    && args.len() == 2
                {
                    for arg_id in 0..2 {
                        let div = callee.call(vec![inner_args[arg_id].clone(), args[1].clone()]);
                        let mul =
                            inner_callee.call(vec![inner_args[(arg_id + 1) % 2].clone(), div]);
                        if self.visit(&mul, expr) {
                            return true;
                        }
                        self.clear_from(watermark);
                    }
                    return false;
                }
            }
        }
        if op_name_of(callee) == Some("multiply") && args.len() == 2 {
            for arg_id in 0..2 {
                if let PatternKind::Call {
                    callee: inner_callee,
                    args: Some(inner_args),
                } = args[arg_id].kind()
                {
                    if op_name_of(inner_callee) == Some("divide")
                        && inner_args.len() == 2
                        && is_expr_op(expr, "divide")
                        && (call.args.first().is_some_and(|a| is_expr_op(a, "multiply"))
                            || call.args.get(1).is_some_and(|a| is_expr_op(a, "multiply")))
                    {
                        let mul = callee
                            .call(vec![inner_args[0].clone(), args[(arg_id + 1) % 2].clone()]);
                        let div = inner_callee.call(vec![mul, inner_args[1].clone()]);
                        return self.visit(&div, expr);
                    }
                }
            }
        }
        false
    }

    /// Every input of `expr` (but a call's callee) reaches the parent
    /// through nodes matching `path`.
    fn matches_path(&mut self, parent: &Pattern, path: &Pattern, expr: &Expr) -> bool {
        let Some(graph) = self.graph else {
            return false;
        };
        // An explicit stack: paths through deep graphs must not recurse.
        let mut stack = vec![expr.clone()];
        while let Some(current) = stack.pop() {
            let Some(node) = graph.node_of(&current) else {
                return false;
            };
            let callee = current.as_call().map(|c| c.callee.clone());
            let mut counted = 0usize;
            let mut next = Vec::new();
            for &input in &graph.nodes[node].inputs {
                let input = &graph.nodes[input].expr;
                if callee.as_ref().is_some_and(|c| c.ptr_eq(input)) {
                    continue;
                }
                counted += 1;
                self.memoize = true;
                if !self.visit(parent, input) {
                    self.memoize = false;
                    if !self.visit(path, input) {
                        return false;
                    }
                    next.push(input.clone());
                }
            }
            if counted == 0 {
                // TVM: a node with no inputs ends no path at the parent.
                return false;
            }
            // TVM recurses into each path node as it is found; the order
            // only matters for which memo entries the path leaves.
            stack.extend(next.into_iter().rev());
        }
        true
    }

    /// Some node the child dominates matches the parent.
    fn dominates_parent(&mut self, parent: &Pattern, expr: &Expr) -> bool {
        let Some(graph) = self.graph else {
            return false;
        };
        let Some(start) = graph.node_of(expr) else {
            return false;
        };
        let mut stack = vec![start];
        let mut visited = std::collections::HashSet::new();
        while let Some(current) = stack.pop() {
            for &child in &graph.nodes[current].dominator_children {
                if visited.insert(child) {
                    if self.visit(parent, &graph.nodes[child].expr) {
                        return true;
                    }
                    stack.push(child);
                }
            }
        }
        false
    }
}

/// The operator name of an `is_op(…)` pattern.
pub(crate) fn op_name_of(pattern: &Pattern) -> Option<&'static str> {
    match pattern.kind() {
        PatternKind::Expr(e) => e.as_op().map(|op| op.name.as_str()),
        _ => None,
    }
}

/// `StructuralEqual()(pattern_expr, expr)`; operators compare by identity of
/// the registered operator.
fn same_expr(pattern: &Expr, expr: &Expr) -> bool {
    match (pattern.as_op(), expr.as_op()) {
        (Some(a), Some(b)) => std::ptr::eq(a, b),
        (Some(_), None) | (None, Some(_)) => false,
        (None, None) => pattern.ptr_eq(expr) || structural_equal(pattern, expr, false),
    }
}

/// The type of `expr`: its checked type, or inferred on its own (TVM's
/// matcher infers the expression in a fresh module).
fn type_of(expr: &Expr) -> Option<Type> {
    if let Some(t) = expr.checked_type() {
        return Some(t.clone());
    }
    let (typed, diagnostics) = relay_infer::infer_expr(expr, None);
    if diagnostics.iter().any(|d| d.is_error()) {
        return None;
    }
    typed.checked_type().cloned()
}

fn shape_equal(pattern: &[ShapeDim], shape: &[Dim]) -> bool {
    pattern.len() == shape.len()
        && pattern.iter().zip(shape).all(|(p, d)| match (p, d) {
            (ShapeDim::Known(v), Dim::Int { value, .. }) => v == value,
            (ShapeDim::Any, Dim::Any) => true,
            _ => false,
        })
}

/// `AttrPattern` on what the inner pattern matched.
fn attrs_match(attrs: &[(String, AttrValue)], expr: &Expr) -> bool {
    match expr.kind() {
        ExprKind::Op(op) => attrs.iter().all(|(name, want)| {
            let have = match name.as_str() {
                "TOpPattern" => op.pattern.map(|p| AttrValue::Int(op_pattern_code(p))),
                "TOpIsStateful" => Some(AttrValue::Bool(op.stateful)),
                "TNonComputational" => Some(AttrValue::Bool(op.non_computational)),
                _ => None,
            };
            have.is_some_and(|have| attr_value_matches(want, &have))
        }),
        ExprKind::Call(call) => match &call.attrs {
            None => attrs.is_empty(),
            Some(call_attrs) => attrs.iter().all(|(name, want)| {
                call_attrs
                    .get(name)
                    .is_some_and(|have| attr_value_matches(want, have))
            }),
        },
        ExprKind::Function(f) => attrs.iter().all(|(name, want)| {
            f.attrs
                .get(name)
                .is_some_and(|have| attr_value_matches(want, have))
        }),
        _ => false,
    }
}

fn op_pattern_code(p: OpPattern) -> i64 {
    p as i64
}

/// TVM's `MatchRetValue`/structural equality between an attribute value
/// written in a pattern and the one found: integers, floats and strings by
/// value (whatever their immediates' dtypes), arrays element by element.
pub fn attr_value_matches(want: &AttrValue, have: &AttrValue) -> bool {
    let int_of = |v: &AttrValue| match v {
        AttrValue::Int(i) => Some(*i),
        AttrValue::IntImm { value, .. } => Some(*value),
        AttrValue::Bool(b) => Some(i64::from(*b)),
        _ => None,
    };
    let float_of = |v: &AttrValue| match v {
        AttrValue::Double(x) => Some(*x),
        AttrValue::FloatImm { value, .. } => Some(*value),
        _ => None,
    };
    let str_of = |v: &AttrValue| match v {
        AttrValue::Str(s) => Some(s.clone()),
        AttrValue::DataType(d) => Some(d.to_string()),
        _ => None,
    };
    match want {
        AttrValue::Int(_) | AttrValue::IntImm { .. } | AttrValue::Bool(_) => {
            int_of(want).is_some() && int_of(want) == int_of(have)
        }
        AttrValue::Double(_) | AttrValue::FloatImm { .. } => {
            float_of(want).is_some() && float_of(want) == float_of(have)
        }
        AttrValue::Str(_) | AttrValue::DataType(_) => {
            str_of(want).is_some() && str_of(want) == str_of(have)
        }
        AttrValue::Array(items) => match have {
            AttrValue::Array(found) => {
                items.len() == found.len()
                    && items
                        .iter()
                        .zip(found)
                        .all(|(w, h)| attr_value_matches(w, h))
            }
            _ => false,
        },
        AttrValue::Null => have.is_null(),
        other => relay_ir::attr_equal::values_equal(
            other,
            have,
            relay_ir::attr_equal::AttrEquality::TVM_PASSES,
        ),
    }
}
