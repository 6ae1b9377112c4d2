//! Expressions, sequences, patterns and functions (TVM's `ParseExpr`,
//! `ParseBindingExpr`, `ParseCallExpr`, `ParseAtomicExpr`, `ParseMatch`,
//! `ParseFunctionDef`).
//!
//! Chains that real models make long are walked without recursion: the
//! statements of a sequence (thousands of graph bindings), the left spine of
//! infix operators and the callee spine of curried calls. Everything else
//! nests no deeper than the syntax tree, whose depth the parser bounds.
//!
//! The tree is read through the typed AST over the green tree
//! (`ast::X<Node<'_>>`, see `relay_syntax::green_view`): which child is
//! the callee of a call or the name of a `def` is the typed AST's answer.

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
use relay_syntax::ast::{self, AstNode, AstToken};
use relay_syntax::green_view::{joined_text, Element, Node, Token};
use relay_syntax::literal::{parse_number, NumberValue};
use relay_syntax::SyntaxKind::*;
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

/// `IntNumber::value`, with [`number`]'s shortcut.
pub(super) fn int_value(token: Token<'_>) -> Option<i64> {
    match number(token.text()) {
        Ok(NumberValue::Int { value, .. }) => Some(value),
        _ => None,
    }
}

/// Whether the next element after the child `node` of `parent`, skipping
/// trivia, is a `)` token.
fn followed_by_r_paren(parent: Node<'_>, node: Node<'_>) -> bool {
    let mut elements = parent.elements();
    if !elements.any(|e| matches!(e, Element::Node(n) if n == node)) {
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

/// The range of a node of the typed AST.
fn range_of<'a, A: AstNode<Node = Node<'a>>>(node: &A) -> TextRange {
    node.syntax().range()
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
    pub(super) fn expr(&mut self, expr: ast::Expr<Node<'_>>) -> Expr {
        let is_path = matches!(expr, ast::Expr::PathExpr(_));
        let lowered = self.atomic(expr);
        if is_path {
            if let ExprKind::Constructor(ctor) = lowered.kind() {
                if ctor.data().inputs.is_empty() {
                    let span = lowered.span();
                    return Expr::call(lowered, Vec::new(), None, span);
                }
            }
        }
        lowered
    }

    fn opt_expr(&mut self, expr: Option<ast::Expr<Node<'_>>>, around: TextRange) -> Expr {
        match expr {
            Some(expr) => self.expr(expr),
            None => self.missing(around),
        }
    }

    fn opt_block(&mut self, block: Option<ast::BlockExpr<Node<'_>>>, around: TextRange) -> Expr {
        match block {
            Some(block) => self.block(block),
            None => self.missing(around),
        }
    }

    /// An expression where TVM reads an atomic one (`ParseAtomicExpr`: a
    /// callee, a projected tuple, a match scrutinee, an attribute value).
    pub(super) fn atomic(&mut self, expr: ast::Expr<Node<'_>>) -> Expr {
        use ast::Expr as E;
        let range = expr.syntax().range();
        match expr {
            E::SeqExpr(seq) => self.seq(seq),
            E::BlockExpr(block) => self.block(block),
            E::Literal(literal) => self.literal(literal),
            E::LocalExpr(local) => self.local(local),
            E::GraphExpr(graph) => self.graph_use(graph),
            E::GlobalExpr(global) => self.global(global),
            E::MetaExpr(meta) => self.meta_expr(&meta),
            E::PathExpr(path) => self.path(path),
            E::FnExpr(func) => self
                .function(
                    func.type_param_list(),
                    func.param_list(),
                    func.ret_type(),
                    func.body(),
                    range,
                )
                .into_expr(),
            E::IfExpr(if_) => {
                let cond = self.opt_expr(if_.condition(), range);
                let then_branch = self.opt_block(if_.then_branch(), range);
                let else_branch = self.opt_block(if_.else_branch(), range);
                Expr::if_(cond, then_branch, else_branch, Some(self.span(range)))
            }
            E::MatchExpr(match_) => self.match_(match_),
            E::RefCreateExpr(create) => {
                let value = self.opt_expr(create.value(), range);
                Expr::new(ExprKind::RefCreate(value), Some(self.span(range)))
            }
            E::RefReadExpr(read) => {
                let reference = self.opt_expr(read.ref_expr(), range);
                Expr::new(ExprKind::RefRead(reference), Some(self.span(range)))
            }
            E::RefWriteExpr(write) => {
                let reference = self.opt_expr(write.ref_expr(), range);
                let value = self.opt_expr(write.value(), range);
                Expr::new(
                    ExprKind::RefWrite { reference, value },
                    Some(self.span(range)),
                )
            }
            // `(e)` is `e` itself.
            E::ParenExpr(paren) => self.opt_expr(paren.expr(), range),
            E::TupleExpr(tuple) => {
                let fields = tuple.fields().map(|f| self.expr(f)).collect();
                Expr::tuple(fields, Some(self.span(range)))
            }
            E::TupleGetItemExpr(get) => {
                let tuple = match get.tuple() {
                    Some(tuple) => self.atomic(tuple),
                    None => self.missing(range),
                };
                let index = match get.index() {
                    Some(index) => usize::try_from(index).unwrap_or(usize::MAX),
                    None => {
                        if let Some(token) = get.index_token() {
                            if int_value(*token.syntax()).is_some() {
                                self.error(
                                    Code::NegativeTupleIndex,
                                    token.syntax().range(),
                                    "a tuple index cannot be negative",
                                );
                            }
                        }
                        0
                    }
                };
                Expr::tuple_get_item(tuple, index, Some(self.span(range)))
            }
            E::CallExpr(call) => self.call(call),
            E::BinExpr(bin) => self.bin(bin),
        }
    }

    /// A numeric or boolean literal: a rank-0 constant.
    fn literal(&mut self, literal: ast::Literal<Node<'_>>) -> Expr {
        let range = range_of(&literal);
        let Some(token) = literal.token() else {
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
    fn local(&mut self, local: ast::LocalExpr<Node<'_>>) -> Expr {
        let range = range_of(&local);
        let Some(token) = local.name() else {
            return self.missing(range);
        };
        let name = token.name();
        let name_range = token.syntax().range();
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
        self.touch_shared();
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
    fn graph_use(&mut self, graph: ast::GraphExpr<Node<'_>>) -> Expr {
        let range = range_of(&graph);
        let Some(token) = graph.number() else {
            return self.missing(range);
        };
        let Some(number) = token.number() else {
            return self.missing(range);
        };
        if let Some((expr, _, def)) = self.graph.get(&number) {
            let (expr, def) = (expr.clone(), *def);
            if self
                .piece
                .as_ref()
                .is_some_and(|p| (def.index() as u32) < p.first_def)
            {
                self.touch_shared();
            }
            self.names.use_at(def, token.syntax().range());
            return expr;
        }
        // Maybe another definition's (in a whole lowering).
        self.touch_shared();
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
    fn define_graph(&mut self, binding: ast::GraphBinding<Node<'_>>, value: Expr) {
        let Some(token) = binding.number() else {
            return;
        };
        let Some(number) = token.number() else {
            return;
        };
        let range = token.syntax().range();
        if let Some(piece) = &mut self.piece {
            piece.graph_numbers.push(number);
        }
        if let Some(&(_, first, _)) = self.graph.get(&number) {
            self.touch_shared();
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
    fn global(&mut self, global: ast::GlobalExpr<Node<'_>>) -> Expr {
        let range = range_of(&global);
        let Some(token) = global.name() else {
            return self.missing(range);
        };
        let name = token.name();
        match self.globals.get(name) {
            Some(&def) => self.names.use_at(def, token.syntax().range()),
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
        if !entry.undefined.is_empty() {
            self.touch_shared();
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
    fn path(&mut self, path: ast::PathExpr<Node<'_>>) -> Expr {
        let range = range_of(&path);
        let span = Some(self.span(range));
        // `PathExpr::name`, borrowed from the tree when it is one token.
        let name = joined_text(path.name_tokens());
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
                let name_range = match path.segments().next() {
                    Some(ident) => ident.syntax().range(),
                    None => range,
                };
                self.names.use_at(def, name_range);
                return Expr::new(ExprKind::Constructor(ctor), span);
            }
        }
        if let Some(def) = self.lookup_op(name) {
            return Expr::op(def, span);
        }
        // An operator this build does not know (a vendor's), opaque in a
        // lenient reading; a name close to a known operator or constructor
        // stays an error (a typo, with its suggestion).
        let close_to_known = op::suggest_op(name).is_some()
            || suggestion(name, self.ctors.keys().map(String::as_str), str::to_string).is_some();
        if self.lenient && !close_to_known {
            self.touch_shared();
            let def = op::opaque_op(name);
            if self.opaque_ops_warned.insert(name.to_string()) {
                let diagnostic = relay_ir::diagnostic::Diagnostic::warning(
                    Code::OpaqueOperator,
                    format!(
                        "operator `{name}` is not registered; read as an opaque operator whose \
                         calls have an unknown type (declare it under `[ops.\"{name}\"]` in \
                         relay.toml to check it)"
                    ),
                )
                .with_span(self.span(range));
                self.push(diagnostic);
            }
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
    fn call(&mut self, call: ast::CallExpr<Node<'_>>) -> Expr {
        // The callee down the spine of curried calls (almost always just
        // `call`).
        let mut spine = SmallStack::new(call);
        let mut base = call.callee();
        while let Some(ast::Expr::CallExpr(inner)) = base {
            spine.push(inner);
            base = inner.callee();
        }
        // An unknown operator stands in as a variable: its attributes
        // cannot be checked.
        let base_is_path = matches!(base, Some(ast::Expr::PathExpr(_)));
        let mut callee = match base {
            Some(base) => self.atomic(base),
            None => self.missing(range_of(&call)),
        };
        let mut unknown = match base {
            Some(_) if base_is_path => callee.as_var().is_some(),
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
    fn apply(&mut self, callee: Expr, call: ast::CallExpr<Node<'_>>, unknown: bool) -> Expr {
        let range = range_of(&call);
        let callee_range = call.callee().map_or(range, |callee| range_of(&callee));
        let mut args = Vec::new();
        let mut meta_attrs = None;
        let mut given = Vec::new();
        if let Some(list) = call.arg_list() {
            let count = list.args().count();
            // A last argument `meta[…]` right before `)` may be the call's
            // attrs object.
            let last_meta = match list.args().last() {
                Some(ast::Expr::MetaExpr(meta))
                    if followed_by_r_paren(*list.syntax(), *meta.syntax()) =>
                {
                    Some(meta)
                }
                _ => None,
            };
            let plain = count - usize::from(last_meta.is_some());
            args.reserve_exact(count);
            for arg in list.args().take(plain) {
                args.push(self.expr(arg));
            }
            if let Some(meta) = last_meta {
                match self.meta_call_attrs(&meta) {
                    Ok(Some(attrs)) => meta_attrs = Some(attrs),
                    Ok(None) => args.push(self.meta_expr(&meta)),
                    Err(()) => args.push(self.missing(range_of(&meta))),
                }
            }
            given = self.given_attrs(list.attrs());
        }
        let attrs = if unknown {
            meta_attrs
        } else {
            self.call_attrs(&callee, callee_range, given, meta_attrs)
        };
        Expr::call(callee, args, attrs, Some(self.span(range)))
    }

    /// Infix operators: calls of `add`, `multiply`, … with no attributes.
    fn bin(&mut self, bin: ast::BinExpr<Node<'_>>) -> Expr {
        // The left operand down the spine of infix operators.
        let mut spine = SmallStack::new(bin);
        let mut lhs = bin.lhs();
        while let Some(ast::Expr::BinExpr(inner)) = lhs {
            spine.push(inner);
            lhs = inner.lhs();
        }
        let mut acc = self.opt_expr(lhs, range_of(&bin));
        for node in spine.iter_rev() {
            let range = range_of(&node);
            let rhs = self.opt_expr(node.rhs(), range);
            let op = node.op_details();
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
        let range = var.expr().span().map(|s| self.document_range(s));
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
    fn block(&mut self, block: ast::BlockExpr<Node<'_>>) -> Expr {
        self.locals.push();
        let expr = self.block_contents(block);
        self.locals.pop();
        expr
    }

    fn block_contents(&mut self, block: ast::BlockExpr<Node<'_>>) -> Expr {
        self.opt_expr(block.expr(), range_of(&block))
    }

    /// A sequence of statements and a tail (`ParseExpr` and
    /// `ParseBindingExpr` unrolled): each `let` and each `e;` wraps the rest
    /// of the sequence in a `Let`; graph bindings and `free_var`s wrap
    /// nothing.
    fn seq(&mut self, seq: ast::SeqExpr<Node<'_>>) -> Expr {
        let end = range_of(&seq).end();
        // Every child node counts, even one that is neither a statement nor
        // an expression: only the very last child can be the tail.
        let count = seq.syntax().nodes().count();
        // Most statements of a long sequence are graph bindings.
        self.graph.reserve(count);
        let mut frames: Vec<Frame> = Vec::new();
        let mut pushed = 0usize;
        let mut tail: Option<Expr> = None;
        for (i, child) in seq.syntax().nodes().enumerate() {
            let child_range = child.range();
            let start = child_range.start();
            let rest = TextRange::new(start, end);
            if let Some(stmt) = ast::Stmt::cast(child) {
                match stmt {
                    ast::Stmt::LetStmt(let_) => {
                        let ty = self.opt_ty(let_.ty());
                        let token = let_.name();
                        let (name, name_range) = match &token {
                            Some(token) => (token.name(), token.syntax().range()),
                            None => ("", child_range),
                        };
                        let var = Var::new(name, ty, Some(self.span(name_range)));
                        if token.is_some() {
                            // Bound before its value is read: `let` can recurse.
                            let visible = TextRange::new(start, end);
                            self.bind_local(NameKind::Let, name, &var, visible);
                        }
                        let value = self.opt_expr(let_.value(), child_range);
                        frames.push(Frame::Let {
                            var,
                            value,
                            range: rest,
                        });
                        self.locals.push();
                        pushed += 1;
                    }
                    ast::Stmt::GraphBinding(binding) => {
                        let value = self.opt_expr(binding.value(), child_range);
                        self.define_graph(binding, value);
                    }
                    ast::Stmt::FreeVarStmt(free) => self.free_var(free),
                    ast::Stmt::ExprStmt(stmt) => {
                        let value = self.opt_expr(stmt.expr(), child_range);
                        frames.push(Frame::Drop { value, range: rest });
                    }
                }
            } else if let Some(expr) = ast::Expr::cast(child) {
                let value = self.expr(expr);
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
    fn free_var(&mut self, free: ast::FreeVarStmt<Node<'_>>) {
        self.touch_shared();
        let Some(token) = free.name() else {
            return;
        };
        let ty = match free.ty() {
            Some(ty) => self.ty(ty),
            None => Type::incomplete(),
        };
        let range = token.syntax().range();
        let name = token.name();
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
    fn match_(&mut self, match_: ast::MatchExpr<Node<'_>>) -> Expr {
        let range = range_of(&match_);
        let data = match match_.scrutinee() {
            Some(scrutinee) => self.atomic(scrutinee),
            None => self.missing(range),
        };
        let mut clauses = Vec::new();
        for arm in match_.arms() {
            let arm_range = range_of(&arm);
            self.locals.push();
            let pattern = match arm.pattern() {
                Some(pattern) => self.pattern(pattern, arm_range),
                None => Pattern::Wildcard,
            };
            let rhs = self.opt_expr(arm.body(), arm_range);
            self.locals.pop();
            clauses.push(Clause { pattern, rhs });
        }
        Expr::new(
            ExprKind::Match {
                data,
                clauses,
                complete: !match_.is_partial(),
            },
            Some(self.span(range)),
        )
    }

    /// A pattern, binding its variables in the innermost scope (the match
    /// arm `arm`).
    fn pattern(&mut self, pattern: ast::Pattern<Node<'_>>, arm: TextRange) -> Pattern {
        match pattern {
            ast::Pattern::VarPat(var_pat) => {
                let Some(token) = var_pat.name() else {
                    return Pattern::Wildcard;
                };
                let ty = self.opt_ty(var_pat.ty());
                let name = token.name();
                let var = Var::new(name, ty, Some(self.span(token.syntax().range())));
                self.bind_local(NameKind::PatternVar, name, &var, arm);
                Pattern::Var(var)
            }
            ast::Pattern::CtorPat(ctor_pat) => {
                let Some(ident) = ctor_pat.name() else {
                    return Pattern::Wildcard;
                };
                let range = ident.syntax().range();
                let name = ident.name();
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
                let fields: Vec<Pattern> =
                    ctor_pat.fields().map(|p| self.pattern(p, arm)).collect();
                match ctor {
                    Some((ctor, _)) => Pattern::Constructor(ctor, fields),
                    None => Pattern::Wildcard,
                }
            }
            ast::Pattern::TuplePat(tuple) => {
                Pattern::Tuple(tuple.fields().map(|p| self.pattern(p, arm)).collect())
            }
            ast::Pattern::WildcardPat(_) => Pattern::Wildcard,
        }
    }

    /// `def @name…`.
    pub(super) fn def(&mut self, def: ast::Def<Node<'_>>) -> Option<Function> {
        def.name()?;
        Some(self.function(
            def.type_param_list(),
            def.param_list(),
            def.ret_type(),
            def.body(),
            range_of(&def),
        ))
    }

    /// A function (`ParseFunctionDef`) of a `def` or `fn` node, from its
    /// parts: type parameters and parameters in a new scope, attributes,
    /// return type, body.
    fn function(
        &mut self,
        type_params: Option<ast::TypeParamList<Node<'_>>>,
        params: Option<ast::ParamList<Node<'_>>>,
        ret: Option<ast::RetType<Node<'_>>>,
        body: Option<ast::BlockExpr<Node<'_>>>,
        range: TextRange,
    ) -> Function {
        self.locals.push();
        self.type_vars.push();
        let type_params: Vec<TypeVar> = type_params
            .into_iter()
            .flat_map(|list| list.type_params())
            .filter_map(|p| self.bind_type_param(p))
            .collect();
        let mut lowered_params = Vec::new();
        let mut attrs = DictAttrs::default();
        let mut virtual_device = None;
        if let Some(list) = params {
            lowered_params.reserve_exact(list.params().count());
            for param in list.params() {
                lowered_params.push(self.param(param, range));
            }
            (attrs, virtual_device) = self.function_attrs(list.attrs());
        }
        let ret_type = self.opt_ty(ret.and_then(|ret| ret.ty()));
        // The body is read in the function's scope (no extra one).
        let body = match body {
            Some(body) => self.block_contents(body),
            None => self.missing(range),
        };
        self.type_vars.pop();
        self.locals.pop();
        Function::new(
            FunctionData {
                params: lowered_params,
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
    fn param(&mut self, param: ast::Param<Node<'_>>, function: TextRange) -> Var {
        let token = param.name();
        let range = token
            .as_ref()
            .map_or(range_of(&param), |t| t.syntax().range());
        let virtual_device = param
            .attrs()
            .and_then(|attrs| self.param_virtual_device(attrs));
        let ty = self.opt_ty(param.ty());
        let name = token.as_ref().map_or("", |t| t.name());
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

/// A number as TVM's graph variables are named (`%12` is "12").
fn decimal(n: u64) -> String {
    let mut name = String::with_capacity(8);
    relay_ir::printer::push_decimal(&mut name, n);
    name
}

/// A stack of nodes that allocates only from its second element: the spine
/// of a call is nearly always one call long.
struct SmallStack<T> {
    first: T,
    rest: Vec<T>,
}

impl<T: Copy> SmallStack<T> {
    fn new(first: T) -> SmallStack<T> {
        SmallStack {
            first,
            rest: Vec::new(),
        }
    }

    fn push(&mut self, node: T) {
        self.rest.push(node);
    }

    /// The nodes, last pushed first.
    fn iter_rev(&self) -> impl Iterator<Item = T> + '_ {
        self.rest
            .iter()
            .rev()
            .copied()
            .chain(std::iter::once(self.first))
    }
}
