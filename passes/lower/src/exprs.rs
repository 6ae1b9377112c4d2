//! Expressions, sequences, patterns and functions (TVM's `ParseExpr`,
//! `ParseBindingExpr`, `ParseCallExpr`, `ParseAtomicExpr`, `ParseMatch`,
//! `ParseFunctionDef`).
//!
//! Chains that real models make long are walked without recursion: the
//! statements of a sequence (thousands of graph bindings), the left spine of
//! infix operators and the callee spine of curried calls. Everything else
//! nests no deeper than the syntax tree, whose depth the parser bounds.
//!
//! The tree is read through the views of `tree.rs`; each accessor below
//! says in a comment which typed-AST accessor it stands for where that is
//! not obvious.

use super::DefId;
use super::{suggestion, LocalEntry, Lowerer, NameKind};
use relay_ir::diagnostic::{Code, Diagnostic};
use relay_ir::dtype::DataType;
use relay_ir::metadata::TensorData;
use relay_ir::op;
use relay_ir::{
    Clause, Constructor, DictAttrs, Expr, ExprKind, Function, FunctionData, Pattern, Type, TypeVar,
    Var, VarId,
};
use relay_syntax::ast::{self, BinOp};
use relay_syntax::green_view::{is_expr, is_pattern, is_stmt, is_type, Element, Node, Token};
use relay_syntax::literal::{parse_number, NumberValue};
use relay_syntax::SyntaxKind::{self, *};
use relay_syntax::TextRange;

/// A scalar constant of an integer literal (`support::IntImmToNDArray`).
fn int_scalar(value: i64, bits: u8) -> TensorData {
    let bytes = match bits {
        16 => (value as i16).to_le_bytes().to_vec(),
        32 => (value as i32).to_le_bytes().to_vec(),
        _ => value.to_le_bytes().to_vec(),
    };
    let bits = if matches!(bits, 16 | 32) { bits } else { 64 };
    TensorData::new(DataType::int(bits), Vec::new(), bytes).expect("a scalar has its size")
}

/// A scalar constant of a float literal (`support::FloatImmToNDArray`; a
/// float16 goes through a C++ `float` first).
fn float_scalar(value: f64, bits: u8) -> TensorData {
    let (bits, bytes) = match bits {
        16 => (
            16,
            half::f16::from_f32(value as f32)
                .to_bits()
                .to_le_bytes()
                .to_vec(),
        ),
        64 => (64, value.to_le_bytes().to_vec()),
        _ => (32, (value as f32).to_le_bytes().to_vec()),
    };
    TensorData::new(DataType::float(bits), Vec::new(), bytes).expect("a scalar has its size")
}

/// A scalar constant of `True`/`False` (`support::BoolToNDArray`).
fn bool_scalar(value: bool) -> TensorData {
    TensorData::new(DataType::bool(), Vec::new(), vec![u8::from(value)])
        .expect("a scalar has its size")
}

/// `literal::parse_number`, with a shortcut for the plain decimal
/// integers that make up most literals (`0`, `-1`, `768`): an optional `-`
/// and at most nine digits, an int32 by TVM's rules.
pub(super) fn number(text: &str) -> Result<NumberValue, String> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(digits) => (true, digits),
        None => (false, text),
    };
    if (1..=9).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit()) {
        let magnitude = digits
            .bytes()
            .fold(0i64, |acc, b| acc * 10 + i64::from(b - b'0'));
        let value = if negative { -magnitude } else { magnitude };
        return Ok(NumberValue::Int { value, bits: 32 });
    }
    parse_number(text)
}

/// `IntNumber::value`: the value of an integer token, if valid.
pub(super) fn int_value(token: Token<'_>) -> Option<i64> {
    match number(token.text()) {
        Ok(NumberValue::Int { value, .. }) => Some(value),
        _ => None,
    }
}

/// The literal token of a `LITERAL` node (`Literal::token`).
pub(super) fn literal_token(literal: Node<'_>) -> Option<Token<'_>> {
    literal
        .tokens()
        .find(|t| matches!(t.kind(), INT | FLOAT | BOOL | STRING))
}

/// Whether the next element after the child `node` of `parent`, skipping
/// trivia, is a `)` token.
fn followed_by_r_paren(parent: Node<'_>, node: Node<'_>) -> bool {
    let mut elements = parent.elements();
    if !elements.any(|e| matches!(e, Element::Node(n) if n.same(node))) {
        return false;
    }
    for element in elements {
        match element {
            Element::Token(token) if token.kind().is_trivia() => {}
            Element::Token(token) => return token.kind() == R_PAREN,
            Element::Node(_) => return false,
        }
    }
    false
}

/// The first token of an infix operator.
const OP_START: &[SyntaxKind] = &[STAR, SLASH, PLUS, MINUS, L_ANGLE, R_ANGLE, EQ, BANG];

/// `BinExpr::op_details`: the operator of an infix expression and the range
/// of its tokens (both tokens of `<=`, written without a space between).
fn bin_op(bin: Node<'_>) -> Option<(BinOp, TextRange)> {
    let mut elements = bin.elements();
    let first = elements.find_map(|e| match e {
        Element::Token(t) if OP_START.contains(&t.kind()) => Some(t),
        _ => None,
    })?;
    let second = elements
        .next()
        .and_then(Element::into_token)
        .filter(|t| t.kind() == EQ);
    let op = match (first.kind(), second.is_some()) {
        (STAR, _) => BinOp::Mul,
        (SLASH, _) => BinOp::Div,
        (PLUS, _) => BinOp::Add,
        (MINUS, _) => BinOp::Sub,
        (L_ANGLE, false) => BinOp::Lt,
        (L_ANGLE, true) => BinOp::Le,
        (R_ANGLE, false) => BinOp::Gt,
        (R_ANGLE, true) => BinOp::Ge,
        (EQ, true) => BinOp::Eq,
        (BANG, true) => BinOp::Ne,
        _ => return None,
    };
    let end = match (second, op) {
        (Some(second), BinOp::Le | BinOp::Ge | BinOp::Eq | BinOp::Ne) => second.range().end(),
        _ => first.range().end(),
    };
    Some((op, TextRange::new(first.range().start(), end)))
}

/// What a statement of a sequence wraps around the rest of it.
enum Frame {
    /// `let %x = value;`: `Let(x, value, rest)`.
    Let {
        var: Var,
        value: Expr,
        range: TextRange,
    },
    /// `value;`: `Let(<fresh>, value, rest)`.
    Drop { value: Expr, range: TextRange },
}

impl Lowerer {
    /// An expression where TVM reads a whole expression or an operand
    /// (`ParseExpr`, `ParseCallExpr`): a constructor without fields that is
    /// not called becomes a call with no arguments.
    pub(super) fn expr(&mut self, expr: Node<'_>) -> Expr {
        let lowered = self.atomic(expr);
        if expr.kind() == PATH_EXPR {
            if let ExprKind::Constructor(ctor) = lowered.kind() {
                if ctor.data().inputs.is_empty() {
                    let span = lowered.span();
                    return Expr::call(lowered, Vec::new(), None, span);
                }
            }
        }
        lowered
    }

    fn opt_expr(&mut self, expr: Option<Node<'_>>, around: TextRange) -> Expr {
        match expr {
            Some(expr) => self.expr(expr),
            None => self.missing(around),
        }
    }

    /// An expression where TVM reads an atomic one (`ParseAtomicExpr`: a
    /// callee, a projected tuple, a match scrutinee, an attribute value).
    pub(super) fn atomic(&mut self, expr: Node<'_>) -> Expr {
        let range = expr.range();
        match expr.kind() {
            SEQ_EXPR => self.seq(expr),
            BLOCK_EXPR => self.block(expr),
            LITERAL => self.literal(expr),
            LOCAL_EXPR => self.local(expr),
            GRAPH_EXPR => self.graph_use(expr),
            GLOBAL_EXPR => self.global(expr),
            META_EXPR => match self.ast::<ast::MetaExpr>(expr) {
                Some(meta) => self.meta_expr(&meta),
                None => self.missing(range),
            },
            PATH_EXPR => self.path(expr),
            FN_EXPR => self.function(expr, range).into_expr(),
            IF_EXPR => {
                // `IfExpr::condition`, `then_branch`, `else_branch`.
                let condition = expr.child_of(CONDITION).and_then(|c| c.child(is_expr));
                let cond = self.opt_expr(condition, range);
                let then_branch = match expr.child_before(&[ELSE_KW], is_block) {
                    Some(block) => self.block(block),
                    None => self.missing(range),
                };
                let else_branch = match expr.child_after(&[ELSE_KW], is_block) {
                    Some(block) => self.block(block),
                    None => self.missing(range),
                };
                Expr::if_(cond, then_branch, else_branch, Some(self.span(range)))
            }
            MATCH_EXPR => self.match_(expr),
            REF_CREATE_EXPR => {
                let value = self.opt_expr(expr.child(is_expr), range);
                Expr::new(ExprKind::RefCreate(value), Some(self.span(range)))
            }
            REF_READ_EXPR => {
                let reference = self.opt_expr(expr.child(is_expr), range);
                Expr::new(ExprKind::RefRead(reference), Some(self.span(range)))
            }
            REF_WRITE_EXPR => {
                // `RefWriteExpr::ref_expr` and `value`: around the `,`.
                let reference = self.opt_expr(expr.child_before(&[COMMA], is_expr), range);
                let value = self.opt_expr(expr.child_after(&[COMMA], is_expr), range);
                Expr::new(
                    ExprKind::RefWrite { reference, value },
                    Some(self.span(range)),
                )
            }
            // `(e)` is `e` itself.
            PAREN_EXPR => self.opt_expr(expr.child(is_expr), range),
            TUPLE_EXPR => {
                let fields = expr.children(is_expr).map(|f| self.expr(f)).collect();
                Expr::tuple(fields, Some(self.span(range)))
            }
            TUPLE_GET_ITEM_EXPR => {
                let tuple = match expr.child(is_expr) {
                    Some(tuple) => self.atomic(tuple),
                    None => self.missing(range),
                };
                // `TupleGetItemExpr::index_token` and `index`.
                let token = expr.token(INT);
                let index = token.and_then(|token| match token.text().parse::<u64>() {
                    Ok(index) => Some(index),
                    Err(_) => int_value(token).and_then(|value| u64::try_from(value).ok()),
                });
                let index = match index {
                    Some(index) => usize::try_from(index).unwrap_or(usize::MAX),
                    None => {
                        if let Some(token) = token {
                            if int_value(token).is_some() {
                                self.error(
                                    Code::NegativeTupleIndex,
                                    token.range(),
                                    "a tuple index cannot be negative",
                                );
                            }
                        }
                        0
                    }
                };
                Expr::tuple_get_item(tuple, index, Some(self.span(range)))
            }
            CALL_EXPR => self.call(expr),
            BIN_EXPR => self.bin(expr),
            // Not an expression: callers only pass expression nodes.
            _ => self.missing(range),
        }
    }

    /// A numeric or boolean literal: a rank-0 constant.
    fn literal(&mut self, literal: Node<'_>) -> Expr {
        let range = literal.range();
        let Some(token) = literal_token(literal) else {
            return self.missing(range);
        };
        let data = match token.kind() {
            INT => match number(token.text()) {
                Ok(NumberValue::Int { value, bits }) => int_scalar(value, bits),
                // The lexer reports malformed numbers.
                _ => int_scalar(0, 32),
            },
            FLOAT => match number(token.text()) {
                Ok(NumberValue::Float { value, bits }) => float_scalar(value, bits),
                _ => float_scalar(0.0, 32),
            },
            BOOL => bool_scalar(token.text() == "True"),
            _ => return self.missing(range),
        };
        Expr::constant(data, Some(self.span(range)))
    }

    /// `%x`: the innermost binding, else a `free_var`.
    fn local(&mut self, local: Node<'_>) -> Expr {
        let range = local.range();
        let Some(token) = local.token(LOCAL) else {
            return self.missing(range);
        };
        let name = token.name_after('%');
        let name_range = token.range();
        let found = self
            .locals
            .lookup(name)
            .or_else(|| self.free_vars.get(name))
            .map(|entry| (entry.var.expr().clone(), entry.def));
        if let Some((expr, def)) = found {
            self.names.use_at(def, name_range);
            return expr;
        }
        let candidates: Vec<&str> = self
            .locals
            .visible_names()
            .chain(self.free_vars.keys().map(String::as_str))
            .collect();
        let help = suggestion(name, candidates, |n| format!("%{n}"));
        self.error_with_help(
            Code::UndeclaredLocal,
            range,
            "this local variable has not been previously declared",
            help,
        );
        let span = Some(self.span(range));
        let entry = match self.undeclared.get(name) {
            Some(entry) => entry.clone(),
            None => {
                // Every use of the name shares one definition, outside the text.
                let def = self.names.define(NameKind::Undeclared, name, None, None);
                let entry = LocalEntry {
                    var: Var::new(name, None, span),
                    def,
                };
                self.undeclared.insert(name.to_string(), entry.clone());
                entry
            }
        };
        self.names.use_at(entry.def, name_range);
        entry.var.expr().clone()
    }

    /// `%0`: the expression the binding stands for.
    fn graph_use(&mut self, graph: Node<'_>) -> Expr {
        let range = graph.range();
        let Some(token) = graph.token(GRAPH) else {
            return self.missing(range);
        };
        let Some(number) = graph_number(token) else {
            return self.missing(range);
        };
        if let Some((expr, _, def)) = self.graph.get(&number) {
            let (expr, def) = (expr.clone(), *def);
            self.names.use_at(def, token.range());
            return expr;
        }
        let diagnostic = Diagnostic::error(
            Code::UndefinedGraphBinding,
            format!("graph variable %{number} has not been defined yet"),
        )
        .with_span(self.span(range))
        .with_note(format!(
            "TVM aborts here with \"Local variable %{number} has not yet been defined\""
        ));
        self.push(diagnostic);
        Var::new(number.to_string(), None, Some(self.span(range))).into_expr()
    }

    /// `%N = value;`: the first definition of a number wins, for the whole
    /// parse.
    fn define_graph(&mut self, binding: Node<'_>, value: Expr) {
        let Some(token) = binding.token(GRAPH) else {
            return;
        };
        let Some(number) = graph_number(token) else {
            return;
        };
        let range = token.range();
        if let Some(&(_, first, _)) = self.graph.get(&number) {
            let diagnostic = Diagnostic::warning(
                Code::Redefinition,
                format!(
                    "graph binding %{number} is already defined; TVM keeps the first definition"
                ),
            )
            .with_span(self.span(range))
            .with_label(self.span(first), "first defined here");
            self.push(diagnostic);
            // Not a definition uses can resolve to, but still the
            // definition of its own token.
            self.names
                .define(NameKind::Graph, decimal(number), Some(range), None);
            return;
        }
        // Visible for the rest of the parse, as TVM's table.
        let visible = TextRange::new(range.start(), self.text_end.max(range.start()));
        let def = self
            .names
            .define(NameKind::Graph, decimal(number), Some(range), Some(visible));
        self.graph.insert(number, (value, range, def));
    }

    /// `@f`: a global by name; in a module, it must be defined.
    fn global(&mut self, global: Node<'_>) -> Expr {
        let range = global.range();
        let Some(token) = global.token(GLOBAL) else {
            return self.missing(range);
        };
        let name = token.name_after('@');
        match self.globals.get(name) {
            Some(&def) => self.names.use_at(def, token.range()),
            None if self.module_mode => {
                let help = suggestion(name, self.globals.keys().map(String::as_str), |n| {
                    format!("@{n}")
                });
                self.error_with_help(
                    Code::UnknownGlobal,
                    range,
                    format!("unknown global `@{name}`"),
                    help,
                );
            }
            None => {}
        }
        Expr::global(name, Some(self.span(range)))
    }

    /// A constructor by name, as seen at `use_range`. TVM knows a
    /// constructor only after its definition; a use before it is reported
    /// (and resolved anyway).
    fn lookup_ctor(&mut self, name: &str, use_range: TextRange) -> Option<(Constructor, DefId)> {
        let entry = self.ctors.get(name)?.clone();
        if let Some(defined) = entry.range {
            if defined.start() > use_range.start() {
                let diagnostic = Diagnostic::error(
                    Code::ConstructorBeforeDefinition,
                    format!("constructor `{name}` is used before its definition"),
                )
                .with_span(self.span(use_range))
                .with_label(self.span(defined), "defined here")
                .with_note(
                    "TVM knows a constructor only after its `type` definition; move the type up",
                );
                self.push(diagnostic);
            }
        }
        for (type_name, range) in &entry.undefined {
            let diagnostic = Diagnostic::error(
                Code::UnknownConstructor,
                format!("constructor `{name}` has a field of the undefined type `{type_name}`"),
            )
            .with_span(self.span(use_range))
            .with_label(self.span(*range), "this type is not defined")
            .with_note(format!(
                "TVM: the type variable : `{type_name}` is undefined"
            ));
            self.push(diagnostic);
        }
        Some((entry.ctor, entry.def))
    }

    /// A name without a sigil: a constructor, else an operator.
    fn path(&mut self, path: Node<'_>) -> Expr {
        let range = path.range();
        let span = Some(self.span(range));
        // `PathExpr::name`.
        let name = path.dotted_text();
        let name = name.as_ref();
        let later_ctor = self
            .ctors
            .get(name)
            .and_then(|e| e.range)
            .is_some_and(|r| r.start() > range.start());
        // TVM would read an operator of that name when the constructor is
        // not defined yet.
        if !(later_ctor && self.lookup_op(name).is_some()) {
            if let Some((ctor, def)) = self.lookup_ctor(name, range) {
                // A constructor's name is one identifier.
                let name_range = match path.token(IDENT) {
                    Some(ident) => ident.range(),
                    None => range,
                };
                self.names.use_at(def, name_range);
                return Expr::new(ExprKind::Constructor(ctor), span);
            }
        }
        if let Some(def) = self.lookup_op(name) {
            return Expr::op(def, span);
        }
        let help = op::suggest_op(name)
            .map(|s| format!("did you mean `{s}`?"))
            .or_else(|| suggestion(name, self.ctors.keys().map(String::as_str), str::to_string));
        self.error_with_help(
            Code::UnknownOperator,
            range,
            format!("operator `{name}` not found, perhaps you forgot to register it?"),
            help,
        );
        Var::new(name, None, span).into_expr()
    }

    /// A call, with its curried calls: `f(a)(b)`.
    fn call(&mut self, call: Node<'_>) -> Expr {
        // `CallExpr::callee`, down the spine of curried calls (almost
        // always just `call`).
        let mut spine = SmallStack::new(call);
        let mut base = call.child(is_expr);
        while let Some(inner) = base.filter(|b| b.kind() == CALL_EXPR) {
            spine.push(inner);
            base = inner.child(is_expr);
        }
        let mut callee = match base {
            Some(base) => self.atomic(base),
            None => self.missing(call.range()),
        };
        // An unknown operator stands in as a variable: its attributes
        // cannot be checked.
        let mut unknown = match base {
            Some(base) if base.kind() == PATH_EXPR => callee.as_var().is_some(),
            Some(_) => false,
            None => true,
        };
        for call in spine.iter_rev() {
            callee = self.apply(callee, call, unknown);
            unknown = false;
        }
        callee
    }

    /// One argument list applied to `callee` (`unknown`: a stand-in for a
    /// callee that could not be resolved).
    fn apply(&mut self, callee: Expr, call: Node<'_>, unknown: bool) -> Expr {
        let range = call.range();
        let callee_range = call.child(is_expr).map_or(range, |callee| callee.range());
        let mut args = Vec::new();
        let mut meta_attrs = None;
        let mut given = Vec::new();
        // `CallExpr::arg_list`, `ArgList::args` and `ArgList::attrs`.
        if let Some(list) = call.child_of(ARG_LIST) {
            let count = list.children(is_expr).count();
            // A last argument `meta[…]` right before `)` may be the call's
            // attrs object.
            let last_meta = list
                .children(is_expr)
                .last()
                .filter(|last| last.kind() == META_EXPR && followed_by_r_paren(list, *last));
            let plain = count - usize::from(last_meta.is_some());
            args.reserve_exact(count);
            for arg in list.children(is_expr).take(plain) {
                args.push(self.expr(arg));
            }
            if let Some(meta) = last_meta {
                match self.ast::<ast::MetaExpr>(meta) {
                    Some(meta) => match self.meta_call_attrs(&meta) {
                        Ok(Some(attrs)) => meta_attrs = Some(attrs),
                        Ok(None) => args.push(self.meta_expr(&meta)),
                        Err(()) => args.push(self.missing(meta_range(&meta))),
                    },
                    None => args.push(self.missing(meta.range())),
                }
            }
            given = self.given_attrs(list.children_of(ATTR));
        }
        let attrs = if unknown {
            meta_attrs
        } else {
            self.call_attrs(&callee, callee_range, given, meta_attrs)
        };
        Expr::call(callee, args, attrs, Some(self.span(range)))
    }

    /// Infix operators: calls of `add`, `multiply`, … with no attributes.
    fn bin(&mut self, bin: Node<'_>) -> Expr {
        // `BinExpr::lhs` and `rhs`: around the operator.
        let mut spine = SmallStack::new(bin);
        let mut lhs = bin.child_before(OP_START, is_expr);
        while let Some(inner) = lhs.filter(|l| l.kind() == BIN_EXPR) {
            spine.push(inner);
            lhs = inner.child_before(OP_START, is_expr);
        }
        let mut acc = self.opt_expr(lhs, bin.range());
        for node in spine.iter_rev() {
            let range = node.range();
            let rhs = self.opt_expr(node.child_after(OP_START, is_expr), range);
            let op = bin_op(node);
            let op_range = op.map_or(range, |(_, op_range)| op_range);
            let op_expr = match op.and_then(|(o, _)| self.lookup_op(o.op_name())) {
                Some(def) => Expr::op(def, Some(self.span(op_range))),
                None => self.missing(op_range),
            };
            acc = Expr::call(op_expr, vec![acc, rhs], None, Some(self.span(range)));
        }
        acc
    }

    /// Binds a local in the innermost scope, visible over `visible`; a name
    /// the scope binds already keeps its first binding, as in TVM (the new
    /// binding is still a definition, of its own token only).
    fn bind_local(&mut self, kind: NameKind, name: &str, var: &Var, visible: TextRange) {
        let range = var.expr().span().map(|s| s.range);
        let def = self.names.define(kind, name, range, Some(visible));
        let entry = LocalEntry {
            var: var.clone(),
            def,
        };
        if let Err(LocalEntry { var: existing, .. }) = self.locals.add(name, entry) {
            let mut diagnostic = Diagnostic::warning(
                Code::Redefinition,
                format!(
                    "`%{name}` is already bound in this scope; TVM keeps resolving `%{name}` to \
                     the earlier binding"
                ),
            );
            if let Some(span) = var.expr().span() {
                diagnostic = diagnostic.with_span(span);
            }
            if let Some(span) = existing.expr().span() {
                diagnostic = diagnostic.with_label(span, "the earlier binding");
            }
            self.push(diagnostic);
        }
    }

    /// `{ … }` with a scope of its own.
    fn block(&mut self, block: Node<'_>) -> Expr {
        self.locals.push();
        let expr = self.block_contents(block);
        self.locals.pop();
        expr
    }

    fn block_contents(&mut self, block: Node<'_>) -> Expr {
        self.opt_expr(block.child(is_expr), block.range())
    }

    /// A sequence of statements and a tail (`ParseExpr` and
    /// `ParseBindingExpr` unrolled): each `let` and each `e;` wraps the rest
    /// of the sequence in a `Let`; graph bindings and `free_var`s wrap
    /// nothing.
    fn seq(&mut self, seq: Node<'_>) -> Expr {
        let end = seq.range().end();
        // Every child node counts, even one that is neither a statement nor
        // an expression: only the very last child can be the tail.
        let count = seq.nodes().count();
        // Most statements of a long sequence are graph bindings.
        self.graph.reserve(count);
        let mut frames: Vec<Frame> = Vec::new();
        let mut pushed = 0usize;
        let mut tail: Option<Expr> = None;
        for (i, child) in seq.nodes().enumerate() {
            let child_range = child.range();
            let start = child_range.start();
            let rest = TextRange::new(start, end);
            let kind = child.kind();
            if is_stmt(kind) {
                match kind {
                    LET_STMT => {
                        // `LetStmt::ty`, `name` and `value`.
                        let ty = self.opt_ty(child.child(is_type));
                        let token = child.token(LOCAL);
                        let (name, name_range) = match token {
                            Some(token) => (token.name_after('%'), token.range()),
                            None => ("", child_range),
                        };
                        let var = Var::new(name, ty, Some(self.span(name_range)));
                        if token.is_some() {
                            // Bound before its value is read: `let` can recurse.
                            let visible = TextRange::new(start, end);
                            self.bind_local(NameKind::Let, name, &var, visible);
                        }
                        let value = self.opt_expr(child.child(is_expr), child_range);
                        frames.push(Frame::Let {
                            var,
                            value,
                            range: rest,
                        });
                        self.locals.push();
                        pushed += 1;
                    }
                    GRAPH_BINDING => {
                        let value = self.opt_expr(child.child(is_expr), child_range);
                        self.define_graph(child, value);
                    }
                    FREE_VAR_STMT => self.free_var(child),
                    _ => {
                        let value = self.opt_expr(child.child(is_expr), child_range);
                        frames.push(Frame::Drop { value, range: rest });
                    }
                }
            } else if is_expr(kind) {
                let value = self.expr(child);
                if i + 1 == count {
                    tail = Some(value);
                } else {
                    frames.push(Frame::Drop { value, range: rest });
                }
            }
        }
        let mut body = match tail {
            Some(tail) => tail,
            None => self.missing(TextRange::empty(end)),
        };
        for frame in frames.into_iter().rev() {
            body = match frame {
                Frame::Let { var, value, range } => {
                    Expr::let_(var, value, body, Some(self.span(range)))
                }
                Frame::Drop { value, range } => {
                    let var = Var::new("", Some(Type::incomplete()), value.span());
                    Expr::let_(var, value, body, Some(self.span(range)))
                }
            };
        }
        for _ in 0..pushed {
            self.locals.pop();
        }
        body
    }

    /// `free_var %x: T`: visible for the rest of the parse.
    fn free_var(&mut self, free: Node<'_>) {
        let Some(token) = free.token(LOCAL) else {
            return;
        };
        let ty = match free.child(is_type) {
            Some(ty) => self.ty(ty),
            None => Type::incomplete(),
        };
        let range = token.range();
        let name = token.name_after('%');
        if let Some(LocalEntry { var: existing, .. }) = self.free_vars.get(name) {
            let mut diagnostic = Diagnostic::warning(
                Code::Redefinition,
                format!(
                    "free variable `%{name}` is declared again; TVM keeps the first declaration"
                ),
            )
            .with_span(self.span(range));
            if let Some(span) = existing.expr().span() {
                diagnostic = diagnostic.with_label(span, "first declared here");
            }
            self.push(diagnostic);
            self.names
                .define(NameKind::FreeVar, name, Some(range), None);
            return;
        }
        let var = Var::new(name, Some(ty), Some(self.span(range)));
        let visible = TextRange::new(range.start(), self.text_end.max(range.start()));
        let def = self
            .names
            .define(NameKind::FreeVar, name, Some(range), Some(visible));
        self.free_vars
            .insert(name.to_string(), LocalEntry { var, def });
    }

    /// `match (e) { p => e, … }`.
    fn match_(&mut self, match_: Node<'_>) -> Expr {
        let range = match_.range();
        let data = match match_.child(is_expr) {
            Some(scrutinee) => self.atomic(scrutinee),
            None => self.missing(range),
        };
        let mut clauses = Vec::new();
        // `MatchExpr::arms`; `MatchArm::pattern` and `body`.
        let arms = match_.child_of(MATCH_ARM_LIST);
        for arm in arms
            .into_iter()
            .flat_map(|list| list.children_of(MATCH_ARM))
        {
            let arm_range = arm.range();
            self.locals.push();
            let pattern = match arm.child(is_pattern) {
                Some(pattern) => self.pattern(pattern, arm_range),
                None => Pattern::Wildcard,
            };
            let rhs = self.opt_expr(arm.child(is_expr), arm_range);
            self.locals.pop();
            clauses.push(Clause { pattern, rhs });
        }
        Expr::new(
            ExprKind::Match {
                data,
                clauses,
                complete: match_.token(MATCH_Q_KW).is_none(),
            },
            Some(self.span(range)),
        )
    }

    /// A pattern, binding its variables in the innermost scope (the match
    /// arm `arm`).
    fn pattern(&mut self, pattern: Node<'_>, arm: TextRange) -> Pattern {
        match pattern.kind() {
            VAR_PAT => {
                let Some(token) = pattern.token(LOCAL) else {
                    return Pattern::Wildcard;
                };
                let ty = self.opt_ty(pattern.child(is_type));
                let name = token.name_after('%');
                let var = Var::new(name, ty, Some(self.span(token.range())));
                self.bind_local(NameKind::PatternVar, name, &var, arm);
                Pattern::Var(var)
            }
            CTOR_PAT => {
                let Some(ident) = pattern.token(IDENT) else {
                    return Pattern::Wildcard;
                };
                let range = ident.range();
                let name = ident.text();
                let ctor = self.lookup_ctor(name, range);
                if let Some((_, def)) = ctor {
                    self.names.use_at(def, range);
                } else {
                    let help =
                        suggestion(name, self.ctors.keys().map(String::as_str), str::to_string);
                    self.error_with_help(
                        Code::UnknownConstructor,
                        range,
                        format!(
                            "undefined constructor name `{name}`, perhaps you intended to write a \
                             pattern variable, considering changing this to `%{name}`"
                        ),
                        help,
                    );
                }
                let fields: Vec<Pattern> = fields(pattern).map(|p| self.pattern(p, arm)).collect();
                match ctor {
                    Some((ctor, _)) => Pattern::Constructor(ctor, fields),
                    None => Pattern::Wildcard,
                }
            }
            TUPLE_PAT => Pattern::Tuple(fields(pattern).map(|p| self.pattern(p, arm)).collect()),
            // `_`.
            _ => Pattern::Wildcard,
        }
    }

    /// `def @name…`.
    pub(super) fn def(&mut self, def: Node<'_>) -> Option<Function> {
        def.token(GLOBAL)?;
        Some(self.function(def, def.range()))
    }

    /// A function (`ParseFunctionDef`) of a `def` or `fn` node: type
    /// parameters and parameters in a new scope, attributes, return type,
    /// body.
    fn function(&mut self, signature: Node<'_>, range: TextRange) -> Function {
        self.locals.push();
        self.type_vars.push();
        // The accessors of `fn_signature_accessors!`.
        let type_params: Vec<TypeVar> = signature
            .child_of(TYPE_PARAM_LIST)
            .into_iter()
            .flat_map(|list| list.children_of(TYPE_PARAM))
            .filter_map(|p| self.bind_type_param(p))
            .collect();
        let mut params = Vec::new();
        let mut attrs = DictAttrs::default();
        let mut virtual_device = None;
        if let Some(list) = signature.child_of(PARAM_LIST) {
            params.reserve_exact(list.children_of(PARAM).count());
            for param in list.children_of(PARAM) {
                params.push(self.param(param, range));
            }
            (attrs, virtual_device) = self.function_attrs(list.children_of(ATTR));
        }
        let ret = signature
            .child_of(RET_TYPE)
            .and_then(|ret| ret.child(is_type));
        let ret_type = self.opt_ty(ret);
        // The body is read in the function's scope (no extra one).
        let body = match signature.child_of(BLOCK_EXPR) {
            Some(body) => self.block_contents(body),
            None => self.missing(range),
        };
        self.type_vars.pop();
        self.locals.pop();
        Function::new(
            FunctionData {
                params,
                body,
                ret_type,
                type_params,
                attrs,
                virtual_device,
            },
            Some(self.span(range)),
        )
    }

    /// `%x {virtual_device=…}: T`, a parameter of the function at `function`.
    fn param(&mut self, param: Node<'_>, function: TextRange) -> Var {
        // `Param::name`, `attrs` and `ty`.
        let token = param.token(LOCAL);
        let range = token.map_or(param.range(), |t| t.range());
        let virtual_device = param
            .child_of(PARAM_ATTRS)
            .and_then(|attrs| self.param_virtual_device(attrs));
        let ty = self.opt_ty(param.child(is_type));
        let name = token.map_or("", |t| t.name_after('%'));
        let var = Var::with_id(
            VarId::fresh(),
            name,
            ty,
            virtual_device,
            Some(self.span(range)),
        );
        if token.is_some() {
            self.bind_local(NameKind::Param, name, &var, function);
        }
        var
    }
}

/// `CtorPat::fields`, `TuplePat::fields`.
fn fields(pattern: Node<'_>) -> impl Iterator<Item = Node<'_>> {
    pattern
        .child_of(PAT_LIST)
        .into_iter()
        .flat_map(|list| list.children(is_pattern))
}

fn is_block(kind: SyntaxKind) -> bool {
    kind == BLOCK_EXPR
}

/// `Graph::number`: the number of a `%N` token (`str::parse`, with a
/// shortcut for plain digits).
fn graph_number(token: Token<'_>) -> Option<u64> {
    let digits = token.name_after('%');
    if (1..=19).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit()) {
        return Some(
            digits
                .bytes()
                .fold(0u64, |acc, b| acc * 10 + u64::from(b - b'0')),
        );
    }
    digits.parse().ok()
}

/// The range of a typed node.
fn meta_range(meta: &ast::MetaExpr) -> TextRange {
    ast::AstNode::syntax(meta).text_range()
}

/// A number as TVM's graph variables are named (`%12` is "12").
fn decimal(n: u64) -> String {
    let mut name = String::with_capacity(8);
    relay_ir::printer::push_decimal(&mut name, n);
    name
}

/// A stack of nodes that allocates only from its second element: the spine
/// of a call is nearly always one call long.
struct SmallStack<'a> {
    first: Node<'a>,
    rest: Vec<Node<'a>>,
}

impl<'a> SmallStack<'a> {
    fn new(first: Node<'a>) -> SmallStack<'a> {
        SmallStack {
            first,
            rest: Vec::new(),
        }
    }

    fn push(&mut self, node: Node<'a>) {
        self.rest.push(node);
    }

    /// The nodes, last pushed first.
    fn iter_rev(&self) -> impl Iterator<Item = Node<'a>> + '_ {
        self.rest
            .iter()
            .rev()
            .copied()
            .chain(std::iter::once(self.first))
    }
}
