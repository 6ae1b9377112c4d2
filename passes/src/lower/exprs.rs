//! Expressions, sequences, patterns and functions (TVM's `ParseExpr`,
//! `ParseBindingExpr`, `ParseCallExpr`, `ParseAtomicExpr`, `ParseMatch`,
//! `ParseFunctionDef`).
//!
//! Chains that real models make long are walked without recursion: the
//! statements of a sequence (thousands of graph bindings), the left spine of
//! infix operators and the callee spine of curried calls. Everything else
//! nests no deeper than the syntax tree, whose depth the parser bounds.

use super::DefId;
use super::{suggestion, token_range, LocalEntry, Lowerer, NameKind};
use crate::diagnostic::{Diagnostic, Layer};
use crate::dtype::DataType;
use crate::ir::{
    Clause, Constructor, DictAttrs, Expr, ExprKind, Function, FunctionData, Pattern, Type, TypeVar,
    Var, VarId,
};
use crate::meta::TensorData;
use crate::op;
use relay_syntax::ast::{self, AstNode, LiteralKind};
use relay_syntax::literal::NumberValue;
use relay_syntax::{SyntaxElement, SyntaxKind, SyntaxNode, TextRange};

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

/// Whether the next token after `node` (skipping trivia) is `)`.
fn followed_by_r_paren(node: &SyntaxNode) -> bool {
    let mut next = node.next_sibling_or_token();
    while let Some(element) = next {
        match element {
            SyntaxElement::Token(token) if token.kind().is_trivia() => {
                next = token.next_sibling_or_token();
            }
            SyntaxElement::Token(token) => return token.kind() == SyntaxKind::R_PAREN,
            SyntaxElement::Node(_) => return false,
        }
    }
    false
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
    pub(super) fn expr(&mut self, expr: &ast::Expr) -> Expr {
        let lowered = self.atomic(expr);
        if let ast::Expr::PathExpr(_) = expr {
            if let ExprKind::Constructor(ctor) = lowered.kind() {
                if ctor.data().inputs.is_empty() {
                    let span = lowered.span();
                    return Expr::call(lowered, Vec::new(), None, span);
                }
            }
        }
        lowered
    }

    fn opt_expr(&mut self, expr: Option<ast::Expr>, around: TextRange) -> Expr {
        match expr {
            Some(expr) => self.expr(&expr),
            None => self.missing(around),
        }
    }

    /// An expression where TVM reads an atomic one (`ParseAtomicExpr`: a
    /// callee, a projected tuple, a match scrutinee, an attribute value).
    pub(super) fn atomic(&mut self, expr: &ast::Expr) -> Expr {
        let range = expr.syntax().text_range();
        let span = Some(self.span(range));
        match expr {
            ast::Expr::SeqExpr(seq) => self.seq(seq),
            ast::Expr::BlockExpr(block) => self.block(block),
            ast::Expr::Literal(literal) => self.literal(literal),
            ast::Expr::LocalExpr(local) => self.local(local),
            ast::Expr::GraphExpr(graph) => self.graph_use(graph),
            ast::Expr::GlobalExpr(global) => self.global(global),
            ast::Expr::MetaExpr(meta) => self.meta_expr(meta),
            ast::Expr::PathExpr(path) => self.path(path),
            ast::Expr::FnExpr(func) => self
                .function(
                    func.type_params(),
                    func.param_list(),
                    func.ret_type(),
                    func.body(),
                    range,
                )
                .into_expr(),
            ast::Expr::IfExpr(if_) => {
                let cond = self.opt_expr(if_.condition(), range);
                let then_branch = match if_.then_branch() {
                    Some(block) => self.block(&block),
                    None => self.missing(range),
                };
                let else_branch = match if_.else_branch() {
                    Some(block) => self.block(&block),
                    None => self.missing(range),
                };
                Expr::if_(cond, then_branch, else_branch, span)
            }
            ast::Expr::MatchExpr(match_) => self.match_(match_),
            ast::Expr::RefCreateExpr(r) => {
                let value = self.opt_expr(r.value(), range);
                Expr::new(ExprKind::RefCreate(value), span)
            }
            ast::Expr::RefReadExpr(r) => {
                let reference = self.opt_expr(r.ref_expr(), range);
                Expr::new(ExprKind::RefRead(reference), span)
            }
            ast::Expr::RefWriteExpr(r) => {
                let reference = self.opt_expr(r.ref_expr(), range);
                let value = self.opt_expr(r.value(), range);
                Expr::new(ExprKind::RefWrite { reference, value }, span)
            }
            // `(e)` is `e` itself.
            ast::Expr::ParenExpr(paren) => self.opt_expr(paren.expr(), range),
            ast::Expr::TupleExpr(tuple) => {
                let fields = tuple.fields().map(|f| self.expr(&f)).collect();
                Expr::tuple(fields, span)
            }
            ast::Expr::TupleGetItemExpr(item) => {
                let tuple = match item.tuple() {
                    Some(tuple) => self.atomic(&tuple),
                    None => self.missing(range),
                };
                let index = match item.index() {
                    Some(index) => usize::try_from(index).unwrap_or(usize::MAX),
                    None => {
                        if let Some(token) = item.index_token() {
                            if token.value().is_some() {
                                self.error(token_range(&token), "a tuple index cannot be negative");
                            }
                        }
                        0
                    }
                };
                Expr::tuple_get_item(tuple, index, span)
            }
            ast::Expr::CallExpr(call) => self.call(call),
            ast::Expr::BinExpr(bin) => self.bin(bin),
        }
    }

    /// A numeric or boolean literal: a rank-0 constant.
    fn literal(&mut self, literal: &ast::Literal) -> Expr {
        let range = literal.syntax().text_range();
        let data = match literal.kind() {
            Some(LiteralKind::Int(int)) => match int.number() {
                Ok(NumberValue::Int { value, bits }) => int_scalar(value, bits),
                // The lexer reports malformed numbers.
                _ => int_scalar(0, 32),
            },
            Some(LiteralKind::Float(float)) => match float.number() {
                Ok(NumberValue::Float { value, bits }) => float_scalar(value, bits),
                _ => float_scalar(0.0, 32),
            },
            Some(LiteralKind::Bool(b)) => bool_scalar(b.value()),
            Some(LiteralKind::String(_)) | None => return self.missing(range),
        };
        Expr::constant(data, Some(self.span(range)))
    }

    /// `%x`: the innermost binding, else a `free_var`.
    fn local(&mut self, local: &ast::LocalExpr) -> Expr {
        let range = local.syntax().text_range();
        let Some(token) = local.name() else {
            return self.missing(range);
        };
        let name = token.name();
        let name_range = token_range(&token);
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
    fn graph_use(&mut self, graph: &ast::GraphExpr) -> Expr {
        let range = graph.syntax().text_range();
        let Some(token) = graph.number() else {
            return self.missing(range);
        };
        let Some(number) = token.number() else {
            return self.missing(range);
        };
        if let Some((expr, _, def)) = self.graph.get(&number) {
            let (expr, def) = (expr.clone(), *def);
            self.names.use_at(def, token_range(&token));
            return expr;
        }
        let diagnostic = Diagnostic::error(
            Layer::Name,
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
    fn define_graph(&mut self, binding: &ast::GraphBinding, value: Expr) {
        let Some(token) = binding.number() else {
            return;
        };
        let Some(number) = token.number() else {
            return;
        };
        let range = token_range(&token);
        if let Some(&(_, first, _)) = self.graph.get(&number) {
            let diagnostic = Diagnostic::warning(
                Layer::Name,
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
                .define(NameKind::Graph, &number.to_string(), Some(range), None);
            return;
        }
        // Visible for the rest of the parse, as TVM's table.
        let visible = TextRange::new(range.start(), self.text_end.max(range.start()));
        let def = self.names.define(
            NameKind::Graph,
            &number.to_string(),
            Some(range),
            Some(visible),
        );
        self.graph.insert(number, (value, range, def));
    }

    /// `@f`: a global by name; in a module, it must be defined.
    fn global(&mut self, global: &ast::GlobalExpr) -> Expr {
        let range = global.syntax().text_range();
        let Some(token) = global.name() else {
            return self.missing(range);
        };
        let name = token.name();
        match self.globals.get(name) {
            Some(&def) => self.names.use_at(def, token_range(&token)),
            None if self.module_mode => {
                let help = suggestion(name, self.globals.keys().map(String::as_str), |n| {
                    format!("@{n}")
                });
                self.error_with_help(range, format!("unknown global `@{name}`"), help);
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
                    Layer::Name,
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
                Layer::Name,
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
    fn path(&mut self, path: &ast::PathExpr) -> Expr {
        let range = path.syntax().text_range();
        let span = Some(self.span(range));
        let name = path.name();
        let later_ctor = self
            .ctors
            .get(&name)
            .and_then(|e| e.range)
            .is_some_and(|r| r.start() > range.start());
        // TVM would read an operator of that name when the constructor is
        // not defined yet.
        if !(later_ctor && op::lookup(&name).is_some()) {
            if let Some((ctor, def)) = self.lookup_ctor(&name, range) {
                // A constructor's name is one identifier.
                let name_range = match path.segments().next() {
                    Some(ident) => token_range(&ident),
                    None => range,
                };
                self.names.use_at(def, name_range);
                return Expr::new(ExprKind::Constructor(ctor), span);
            }
        }
        if let Some(def) = op::lookup(&name) {
            return Expr::op(def, span);
        }
        let help = op::suggest_op(&name)
            .map(|s| format!("did you mean `{s}`?"))
            .or_else(|| suggestion(&name, self.ctors.keys().map(String::as_str), str::to_string));
        self.error_with_help(
            range,
            format!("operator `{name}` not found, perhaps you forgot to register it?"),
            help,
        );
        Var::new(name, None, span).into_expr()
    }

    /// A call, with its curried calls: `f(a)(b)`.
    fn call(&mut self, call: &ast::CallExpr) -> Expr {
        let mut spine = vec![call.clone()];
        let mut base = call.callee();
        while let Some(ast::Expr::CallExpr(inner)) = &base {
            spine.push(inner.clone());
            base = inner.callee();
        }
        let mut callee = match &base {
            Some(base) => self.atomic(base),
            None => self.missing(call.syntax().text_range()),
        };
        // An unknown operator stands in as a variable: its attributes
        // cannot be checked.
        let mut unknown = match &base {
            Some(ast::Expr::PathExpr(_)) => callee.as_var().is_some(),
            Some(_) => false,
            None => true,
        };
        for call in spine.iter().rev() {
            callee = self.apply(callee, call, unknown);
            unknown = false;
        }
        callee
    }

    /// One argument list applied to `callee` (`unknown`: a stand-in for a
    /// callee that could not be resolved).
    fn apply(&mut self, callee: Expr, call: &ast::CallExpr, unknown: bool) -> Expr {
        let range = call.syntax().text_range();
        let callee_range = call
            .callee()
            .map_or(range, |callee| callee.syntax().text_range());
        let mut args = Vec::new();
        let mut meta_attrs = None;
        let mut given = Vec::new();
        if let Some(list) = call.arg_list() {
            let nodes: Vec<ast::Expr> = list.args().collect();
            // A last argument `meta[…]` right before `)` may be the call's
            // attrs object.
            let last_meta = match nodes.last() {
                Some(ast::Expr::MetaExpr(meta)) if followed_by_r_paren(meta.syntax()) => {
                    Some(meta.clone())
                }
                _ => None,
            };
            let plain = nodes.len() - usize::from(last_meta.is_some());
            for arg in &nodes[..plain] {
                args.push(self.expr(arg));
            }
            if let Some(meta) = last_meta {
                match self.meta_call_attrs(&meta) {
                    Ok(Some(attrs)) => meta_attrs = Some(attrs),
                    Ok(None) => args.push(self.meta_expr(&meta)),
                    Err(()) => args.push(self.missing(meta.syntax().text_range())),
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
    fn bin(&mut self, bin: &ast::BinExpr) -> Expr {
        let mut spine = vec![bin.clone()];
        let mut lhs = bin.lhs();
        while let Some(ast::Expr::BinExpr(inner)) = &lhs {
            spine.push(inner.clone());
            lhs = inner.lhs();
        }
        let mut acc = self.opt_expr(lhs, bin.syntax().text_range());
        for node in spine.iter().rev() {
            let range = node.syntax().text_range();
            let rhs = self.opt_expr(node.rhs(), range);
            let op_range = node.op_range().unwrap_or(range);
            let op_expr = match node.op().and_then(|o| op::lookup(o.op_name())) {
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
                Layer::Name,
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
    fn block(&mut self, block: &ast::BlockExpr) -> Expr {
        self.locals.push();
        let expr = self.block_contents(block);
        self.locals.pop();
        expr
    }

    fn block_contents(&mut self, block: &ast::BlockExpr) -> Expr {
        let range = block.syntax().text_range();
        self.opt_expr(block.expr(), range)
    }

    /// A sequence of statements and a tail (`ParseExpr` and
    /// `ParseBindingExpr` unrolled): each `let` and each `e;` wraps the rest
    /// of the sequence in a `Let`; graph bindings and `free_var`s wrap
    /// nothing.
    fn seq(&mut self, seq: &ast::SeqExpr) -> Expr {
        let seq_range = seq.syntax().text_range();
        let end = seq_range.end();
        let children: Vec<SyntaxNode> = seq.syntax().children().collect();
        let mut frames: Vec<Frame> = Vec::new();
        let mut pushed = 0usize;
        let mut tail: Option<Expr> = None;
        let count = children.len();
        for (i, child) in children.into_iter().enumerate() {
            let start = child.text_range().start();
            let rest = TextRange::new(start, end);
            if let Some(stmt) = ast::Stmt::cast(child.clone()) {
                match stmt {
                    ast::Stmt::LetStmt(let_) => {
                        let ty = self.opt_ty(let_.ty());
                        let (name, name_range) = match let_.name() {
                            Some(token) => (token.name().to_string(), token_range(&token)),
                            None => (String::new(), let_.syntax().text_range()),
                        };
                        let var = Var::new(name.clone(), ty, Some(self.span(name_range)));
                        if let_.name().is_some() {
                            // Bound before its value is read: `let` can recurse.
                            let visible = TextRange::new(start, end);
                            self.bind_local(NameKind::Let, &name, &var, visible);
                        }
                        let value = self.opt_expr(let_.value(), let_.syntax().text_range());
                        frames.push(Frame::Let {
                            var,
                            value,
                            range: rest,
                        });
                        self.locals.push();
                        pushed += 1;
                    }
                    ast::Stmt::GraphBinding(binding) => {
                        let value = self.opt_expr(binding.value(), binding.syntax().text_range());
                        self.define_graph(&binding, value);
                    }
                    ast::Stmt::FreeVarStmt(free) => self.free_var(&free),
                    ast::Stmt::ExprStmt(stmt) => {
                        let value = self.opt_expr(stmt.expr(), stmt.syntax().text_range());
                        frames.push(Frame::Drop { value, range: rest });
                    }
                }
            } else if let Some(expr) = ast::Expr::cast(child) {
                let value = self.expr(&expr);
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
    fn free_var(&mut self, free: &ast::FreeVarStmt) {
        let Some(token) = free.name() else {
            return;
        };
        let ty = match free.ty() {
            Some(ty) => self.ty(&ty),
            None => Type::incomplete(),
        };
        let range = token_range(&token);
        let name = token.name();
        if let Some(LocalEntry { var: existing, .. }) = self.free_vars.get(name) {
            let mut diagnostic = Diagnostic::warning(
                Layer::Name,
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
    fn match_(&mut self, match_: &ast::MatchExpr) -> Expr {
        let range = match_.syntax().text_range();
        let data = match match_.scrutinee() {
            Some(scrutinee) => self.atomic(&scrutinee),
            None => self.missing(range),
        };
        let mut clauses = Vec::new();
        for arm in match_.arms() {
            let arm_range = arm.syntax().text_range();
            self.locals.push();
            let pattern = match arm.pattern() {
                Some(pattern) => self.pattern(&pattern, arm_range),
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
    fn pattern(&mut self, pattern: &ast::Pattern, arm: TextRange) -> Pattern {
        match pattern {
            ast::Pattern::WildcardPat(_) => Pattern::Wildcard,
            ast::Pattern::VarPat(var_pat) => {
                let Some(token) = var_pat.name() else {
                    return Pattern::Wildcard;
                };
                let ty = self.opt_ty(var_pat.ty());
                let var = Var::new(token.name(), ty, Some(self.span(token_range(&token))));
                self.bind_local(NameKind::PatternVar, token.name(), &var, arm);
                Pattern::Var(var)
            }
            ast::Pattern::CtorPat(ctor_pat) => {
                let Some(ident) = ctor_pat.name() else {
                    return Pattern::Wildcard;
                };
                let range = token_range(&ident);
                let ctor = self.lookup_ctor(ident.name(), range);
                if let Some((_, def)) = ctor {
                    self.names.use_at(def, range);
                } else {
                    let name = ident.name();
                    let help =
                        suggestion(name, self.ctors.keys().map(String::as_str), str::to_string);
                    self.error_with_help(
                        range,
                        format!(
                            "undefined constructor name `{name}`, perhaps you intended to write a \
                             pattern variable, considering changing this to `%{name}`"
                        ),
                        help,
                    );
                }
                let fields: Vec<Pattern> =
                    ctor_pat.fields().map(|p| self.pattern(&p, arm)).collect();
                match ctor {
                    Some((ctor, _)) => Pattern::Constructor(ctor, fields),
                    None => Pattern::Wildcard,
                }
            }
            ast::Pattern::TuplePat(tuple) => {
                Pattern::Tuple(tuple.fields().map(|p| self.pattern(&p, arm)).collect())
            }
        }
    }

    /// `def @name…`.
    pub(super) fn def(&mut self, def: &ast::Def) -> Option<Function> {
        def.name()?;
        Some(self.function(
            def.type_params(),
            def.param_list(),
            def.ret_type(),
            def.body(),
            def.syntax().text_range(),
        ))
    }

    /// A function (`ParseFunctionDef`): type parameters and parameters in a
    /// new scope, attributes, return type, body.
    fn function(
        &mut self,
        type_params: impl Iterator<Item = ast::TypeParam>,
        param_list: Option<ast::ParamList>,
        ret: Option<ast::RetType>,
        body: Option<ast::BlockExpr>,
        range: TextRange,
    ) -> Function {
        self.locals.push();
        self.type_vars.push();
        let type_params: Vec<TypeVar> = type_params
            .filter_map(|p| self.bind_type_param(&p))
            .collect();
        let mut params = Vec::new();
        let mut attrs = DictAttrs::default();
        let mut virtual_device = None;
        if let Some(list) = param_list {
            for param in list.params() {
                params.push(self.param(&param, range));
            }
            (attrs, virtual_device) = self.function_attrs(list.attrs());
        }
        let ret_type = self.opt_ty(ret.and_then(|r| r.ty()));
        // The body is read in the function's scope (no extra one).
        let body = match body {
            Some(body) => self.block_contents(&body),
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
    fn param(&mut self, param: &ast::Param, function: TextRange) -> Var {
        let token = param.name();
        let range = token
            .as_ref()
            .map_or(param.syntax().text_range(), token_range);
        let virtual_device = param
            .attrs()
            .and_then(|attrs| self.param_virtual_device(&attrs));
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
