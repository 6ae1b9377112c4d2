//! The printer proper: a port of the algorithm of TVM v0.13's
//! `RelayTextPrinter` (`src/relay/printer/relay_text_printer.cc`), written
//! anew for our IR. The shape of TVM's code is kept on purpose, because the
//! exact output (which node gets a `%N` line, in which scope, with which
//! number) follows from the order in which it visits and memoises nodes:
//!
//! * [`Printer::print_expr`] is `PrintExpr`: it decides whether a node is
//!   written inline or bound to a fresh `%N` in the innermost open scope
//!   (`doc_stack`), and writes `free_var` lines.
//! * [`Printer::visit_expr`] is `VisitExpr` with `ExpandDataflow`: calls,
//!   tuples and projections are expanded with an explicit stack, children
//!   first (a callee before the arguments, the arguments left to right), so
//!   chains of thousands of bindings never recurse. Each node's text is
//!   computed once ([`Printer::visit_leaf`]) and memoised by identity; a
//!   node gets its `%N` when its first user prints it, which is why numbers
//!   come out in TVM's order.
//! * `let` chains are flattened iteratively. Other forms (`if`, `fn`,
//!   `match`, references, a `let` value) recurse once per level of syntactic
//!   nesting, as TVM does; [`super::print_module`] runs on a thread with a
//!   large stack so that even deeply nested IR prints.
//!
//! TVM's memo tables are the [`Nodes`] of `memo.rs`: the texts they hold
//! are [`Piece`]s, copied into a document only where they are written.

use super::defaults::{is_default, is_unconstrained_virtual_device};
use super::doc::Doc;
use super::memo::{key, FxMap, Nodes, Piece};
use super::metadata_section::{type_addr, MetaContext, MetaItem, MetaKey};
use super::scalar::{
    float_imm_text, global_name, int_imm_text, push_decimal, push_i64, push_int_imm,
    push_str_literal, push_tvm_var_name, push_var_base_name, scalar_constant_text, str_literal,
    stream_double,
};
use super::with_stack;
use crate::dtype::DataType;
use crate::metadata::{NodeRef, ObjectGraph};
use crate::op::{self, AttrsSchema};
use crate::source::GENERATED_SOURCE;
use crate::source::{FileId, SourceMap};
use crate::{
    AttrValue, Attrs, Dim, Expr, ExprKind, FunctionData, IRModule, MetaObject, Pattern, Type,
    TypeData, TypeKind, Var,
};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

/// How types the text cannot spell (incomplete types) are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TypeStyle {
    /// As TVM does: a `meta[IncompleteType][k]` reference.
    Tvm,
    /// For people: `_`, and symbolic sizes by name.
    Readable,
}

pub(crate) struct Printer<'a> {
    show_meta_data: bool,
    show_types: bool,
    type_style: TypeStyle,
    /// The texts the IR's spans point into, to find the metadata objects
    /// that constants were read from.
    sources: Option<&'a SourceMap>,
    /// Open scopes; temporaries and `free_var` lines go to the last one.
    doc_stack: Vec<Doc>,
    /// For each open [`Printer::print_scope`], the nodes whose text was
    /// made inside it and the variables bound inside it (see there).
    scope_bindings: Vec<Vec<usize>>,
    /// TVM's memo tables and the users of each node (see `memo.rs`).
    nodes: Nodes,
    /// The printed arguments of the calls being printed (a stack shared by
    /// nested calls, so that a call allocates nothing for them).
    args: Vec<Piece>,
    type_memo: FxMap<usize, Rc<str>>,
    dtype_names: FxMap<DataType, Rc<str>>,
    /// Printed doubles, by bits and dtype (see `number_text`).
    numbers: FxMap<(u64, Option<DataType>), Rc<str>>,
    /// Attrs schemas by type key, as `attrs_schema` finds them.
    schemas: FxMap<Box<str>, Option<&'static AttrsSchema>>,
    name_alloc: FxMap<String, u64>,
    temp_counter: usize,
    meta: MetaContext,
    /// The metadata section of each source file, parsed on demand.
    sections: HashMap<FileId, Option<Arc<ObjectGraph>>>,
    /// Parenthesise `match`/`let` values of `let`s (see `PrintOptions`).
    reparseable: bool,
}

impl<'a> Printer<'a> {
    pub(crate) fn new(
        show_meta_data: bool,
        show_types: bool,
        type_style: TypeStyle,
        sources: Option<&'a SourceMap>,
    ) -> Printer<'a> {
        Printer {
            show_meta_data,
            show_types,
            type_style,
            sources,
            doc_stack: Vec::new(),
            scope_bindings: Vec::new(),
            nodes: Nodes::default(),
            args: Vec::new(),
            type_memo: FxMap::default(),
            dtype_names: FxMap::default(),
            numbers: FxMap::default(),
            schemas: FxMap::default(),
            name_alloc: FxMap::default(),
            temp_counter: 0,
            meta: MetaContext::default(),
            sections: HashMap::new(),
            reparseable: true,
        }
    }

    /// See [`PrintOptions::reparseable`](super::PrintOptions::reparseable).
    pub(crate) fn reparseable(mut self, on: bool) -> Printer<'a> {
        self.reparseable = on;
        self
    }

    // ---- entry points ----

    /// `TextPrinter::PrintMod` followed by the metadata section.
    pub(crate) fn module(&mut self, m: &IRModule) -> String {
        // Each item is rendered as soon as it is printed (the same text as
        // appending them all to one document and rendering that).
        let mut out = String::new();
        version_line().render_into(&mut out);
        let mut counter = 0;
        for (_, data) in m.type_definitions() {
            if counter > 0 {
                out.push('\n');
            }
            counter += 1;
            let d = self.type_data(data);
            d.render_into(&mut out);
            out.push('\n');
        }
        for (name, f) in m.functions() {
            self.nodes.count_users(f.expr());
            if counter > 0 {
                out.push('\n');
            }
            counter += 1;
            // TVM writes a global's name as it is (`@foo.bar`); text that is
            // read again gets a name TVM's parser reads.
            let prefix = if self.reparseable {
                format!("def @{}", global_name(name))
            } else {
                format!("def @{name}")
            };
            let d = self.func(&prefix, f.data());
            d.render_into(&mut out);
            out.push('\n');
        }
        self.finish(Doc::new(), out)
    }

    /// `AsText` of an expression: `RelayTextPrinter::PrintFinal`.
    pub(crate) fn expr(&mut self, e: &Expr) -> String {
        let mut doc = version_line();
        self.nodes.count_users(e);
        let d = self.print_scope(e, false);
        doc.append(d);
        self.finish(doc, String::new())
    }

    /// A type on its own.
    pub(crate) fn type_text(&mut self, t: &Type) -> String {
        self.print_type(t).to_string()
    }

    /// Renders the last of the text, `doc`, after `out`, then the metadata
    /// section or the note saying it was left out.
    fn finish(&mut self, mut doc: Doc, mut out: String) -> String {
        if !self.meta.is_empty() {
            doc.newline();
            if self.show_meta_data {
                doc.push_str("#[metadata]").newline();
                doc.render_into(&mut out);
                out.push_str(&self.meta.section());
                return out;
            }
            doc.push_str("/* For debugging purposes the metadata section has been omitted.")
                .newline()
                .push_str(" * If you would like to see the full metadata section you can set the ")
                .newline()
                .push_str(" * option to `True` when invoking `astext`. ")
                .newline()
                .push_str(" */");
        }
        doc.render_into(&mut out);
        out
    }

    // ---- scopes ----

    /// `PrintScope`: prints `e` as the root of a new scope and puts the
    /// scope's bindings before it.
    ///
    /// A function body (`closes_names`) is the one scope whose names the
    /// parsers do not see from outside: a closure's parameters, and the
    /// `%N`s made inside it that name them. TVM's printer still refers to
    /// such a `%N` when the node is used again after the closure (as
    /// ToGraphNormalForm makes), which no parser reads: the texts made in a
    /// function body are forgotten when it closes, so that a later use
    /// prints the node again (binding it, and a closure's parameters, anew)
    /// where it is used. Branches, clauses and `let` bodies keep TVM's
    /// printing: a `%N` made in one branch and named in the other reads back
    /// (graph bindings are not scoped by the parsers).
    fn print_scope(&mut self, e: &Expr, closes_names: bool) -> Doc {
        self.doc_stack.push(Doc::new());
        if closes_names {
            self.scope_bindings.push(Vec::new());
        }
        let p = self.print_expr(e, false, true, true);
        let mut scope = self.doc_stack.pop().unwrap_or_default();
        self.nodes.put(&mut scope, p);
        if closes_names {
            for slot in self.scope_bindings.pop().unwrap_or_default() {
                self.nodes.forget_binding(slot);
            }
        }
        scope
    }

    /// `PrintBody`: `{`, the scope indented, `}`.
    fn print_body(&mut self, e: &Expr, closes_names: bool) -> Doc {
        let scope = self.print_scope(e, closes_names);
        let mut d = Doc::with_capacity(scope.len() + 2);
        d.push_str("{");
        d.newline_indented(2).append_indented(&scope, 2);
        d.newline().push_str("}");
        d
    }

    fn emit(&mut self, line: Doc) {
        match self.doc_stack.last_mut() {
            Some(top) => {
                top.append(line);
            }
            None => self.doc_stack.push(line),
        }
    }

    /// Emits `%N = printed;` (written straight into the innermost scope).
    fn emit_temp(&mut self, n: usize, printed: Piece) {
        if self.doc_stack.is_empty() {
            self.doc_stack.push(Doc::new());
        }
        if let Some(top) = self.doc_stack.last_mut() {
            top.push_str("%").push_decimal(n as u64).push_str(" = ");
            self.nodes.put(top, printed);
            top.push_str(";").newline();
        }
    }

    // ---- expressions ----

    fn always_inline(e: &Expr) -> bool {
        matches!(
            e.kind(),
            ExprKind::GlobalVar(_)
                | ExprKind::Constant(_)
                | ExprKind::Op(_)
                | ExprKind::Var(_)
                | ExprKind::Constructor(_)
        )
    }

    /// `Print(expr)`: a sub-expression in a non-root position.
    fn print(&mut self, e: &Expr) -> Piece {
        self.print_expr(e, false, false, true)
    }

    /// [`Printer::print`] as a document of its own.
    fn print_doc(&mut self, e: &Expr) -> Doc {
        let p = self.print(e);
        self.nodes.to_doc(p, 64)
    }

    /// `PrintExpr`.
    fn print_expr(&mut self, e: &Expr, meta: bool, try_inline: bool, optional_info: bool) -> Piece {
        // Each level of syntactic nesting (`fn`, `if`, `match` inside one
        // another) recurses through here.
        with_stack(|| self.print_expr_here(e, meta, try_inline, optional_info))
    }

    fn print_expr_here(
        &mut self,
        e: &Expr,
        meta: bool,
        try_inline: bool,
        optional_info: bool,
    ) -> Piece {
        let slot = self.nodes.slot(key(e));
        if !meta && self.nodes.get(slot).bound {
            // Already bound to `%N` (or an already seen variable): TVM's
            // steps below would all be memo hits giving this text.
            return self.nodes.get(slot).memo.unwrap_or(Piece::Empty);
        }
        let mut inline = Self::always_inline(e);
        if try_inline {
            inline |= self.nodes.is_unique(slot);
        }
        let mut printed = if meta {
            let text = self.constant_meta(e, true);
            self.nodes.store(Doc::text(text))
        } else if !inline && matches!(e.kind(), ExprKind::Let { .. }) {
            // A `let` in a non-root position: the chain in parentheses.
            let body = self.visit_expr(e);
            let mut inner = Doc::new();
            inner.newline();
            self.nodes.put(&mut inner, body);
            let mut d = Doc::text("(");
            d.append(inner.indent(2));
            d.newline().push_str(")");
            self.nodes.store(d)
        } else {
            self.visit_expr(e)
        };
        if optional_info {
            if let Some(info) = self.optional_info(e, slot) {
                let mut d = self.nodes.to_doc(printed, 32);
                d.push_str(&info);
                printed = self.nodes.store(d);
            }
        }
        if matches!(e.kind(), ExprKind::Var(_)) {
            // First met through the visitor rather than at a binding site:
            // the variable is free.
            let state = self.nodes.get_mut(slot);
            if !state.bound {
                state.bound = true;
                if let Some(binding) = state.result {
                    let mut line = Doc::text("free_var ");
                    self.nodes.put(&mut line, binding);
                    line.push_str(";").newline();
                    self.emit(line);
                }
            }
            return self.nodes.get(slot).memo.unwrap_or(Piece::Empty);
        }
        let state = self.nodes.get_mut(slot);
        if inline {
            state.memo = Some(printed);
            self.note_scoped(e, slot);
            return printed;
        }
        if state.bound {
            return state.memo.unwrap_or(Piece::Empty);
        }
        if matches!(e.kind(), ExprKind::Match { .. }) {
            // `%N = match …` does not parse (TVM's grammar reads a binding's
            // value as a `binop`); TVM prints it anyway.
            printed = self.parenthesised(printed);
        }
        let state = self.nodes.get_mut(slot);
        state.bound = true;
        let n = self.temp_counter;
        self.temp_counter += 1;
        state.memo = Some(Piece::Temp(n));
        self.emit_temp(n, printed);
        if let Some(bindings) = self.scope_bindings.last_mut() {
            bindings.push(slot);
        }
        Piece::Temp(n)
    }

    /// `VisitExpr`: the memoised text of `e`, computing it (and that of
    /// every dataflow node below it) without recursion on dataflow chains.
    fn visit_expr(&mut self, e: &Expr) -> Piece {
        let slot = self.nodes.slot(key(e));
        if let Some(p) = self.nodes.get(slot).memo {
            return p;
        }
        // Most nodes are met after their operands have their text (a `%N`
        // or an inlined leaf): no walk needed. Operators, globals and
        // constructors print the same whenever they are visited (nothing
        // is numbered or named), so they need not have been visited yet.
        let mut operands_done = true;
        for_each_dataflow_child(e, |child| {
            if operands_done
                && !matches!(
                    child.kind(),
                    ExprKind::Op(_) | ExprKind::GlobalVar(_) | ExprKind::Constructor(_)
                )
            {
                let child_slot = self.nodes.slot(key(child));
                operands_done = self.nodes.get(child_slot).memo.is_some();
            }
        });
        if operands_done {
            self.visit_leaf(e, slot);
            return self.nodes.get(slot).memo.unwrap_or(Piece::Empty);
        }
        // (node, its slot, whether its children were pushed)
        let mut stack: Vec<(&Expr, usize, bool)> = Vec::with_capacity(16);
        stack.push((e, slot, false));
        let mut children: Vec<&Expr> = Vec::with_capacity(8);
        while let Some(top) = stack.last_mut() {
            let (node, node_slot, expanded) = *top;
            if self.nodes.get(node_slot).memo.is_some() {
                stack.pop();
            } else if expanded {
                stack.pop();
                self.visit_leaf(node, node_slot);
            } else {
                top.2 = true;
                for_each_dataflow_child(node, |child| children.push(child));
                for child in children.drain(..) {
                    let child_slot = self.nodes.slot(key(child));
                    if self.nodes.get(child_slot).memo.is_none() {
                        stack.push((child, child_slot, false));
                    }
                }
            }
        }
        self.nodes.get(slot).memo.unwrap_or(Piece::Empty)
    }

    /// `VisitLeaf`.
    fn visit_leaf(&mut self, e: &Expr, slot: usize) {
        if self.nodes.get(slot).memo.is_some() {
            return;
        }
        let result = self.visit_kind(e);
        let state = self.nodes.get_mut(slot);
        if state.memo.is_none() {
            state.memo = Some(result);
            self.note_scoped(e, slot);
        } else {
            state.result = Some(result);
        }
    }

    /// Notes that `e`'s text was made in the innermost open scope: a text
    /// that names the scope's `%N`s and variables, forgotten with them
    /// when the scope closes (see `print_scope`). Operators, globals,
    /// constants and constructors print the same in every scope (and a
    /// constant keeps its one `meta[…]` entry); variables are noted where
    /// they are bound.
    fn note_scoped(&mut self, e: &Expr, slot: usize) {
        if matches!(
            e.kind(),
            ExprKind::Op(_)
                | ExprKind::GlobalVar(_)
                | ExprKind::Constant(_)
                | ExprKind::Constructor(_)
                | ExprKind::Var(_)
        ) {
            return;
        }
        if let Some(bindings) = self.scope_bindings.last_mut() {
            bindings.push(slot);
        }
    }

    /// The `VisitExpr_` overloads.
    fn visit_kind(&mut self, e: &Expr) -> Piece {
        let doc = match e.kind() {
            ExprKind::Var(_) => {
                let var = e.as_var().expect("a variable");
                match crate::opaque::opaque_reference(&var) {
                    Some(reference) => self.opaque_constant(e, reference, &var),
                    None => self.alloc_var(&var),
                }
            }
            ExprKind::GlobalVar(g) if self.reparseable => {
                Doc::text(format!("@{}", global_name(g.name())))
            }
            // TVM writes a global's name as it is (`@foo.bar`).
            ExprKind::GlobalVar(g) => Doc::text(format!("@{}", g.name())),
            ExprKind::Constant(data) => match scalar_constant_text(data) {
                Some(text) => Doc::text(text),
                None => return self.print_expr(e, true, false, false),
            },
            ExprKind::Tuple(fields) => {
                let start = self.args.len();
                for f in fields {
                    let p = self.print(f);
                    self.args.push(p);
                }
                let mut d = Doc::text("(");
                self.put_list(&mut d, start);
                if fields.len() == 1 {
                    d.push_str(",");
                }
                d.push_str(")");
                d
            }
            ExprKind::TupleGetItem { tuple, index } => {
                let mut d = self.print_doc(tuple);
                d.push_str(".").push_decimal(*index as u64);
                d
            }
            ExprKind::If {
                cond,
                then_branch,
                else_branch,
            } => {
                let mut d = Doc::text("if (");
                let c = self.print(cond);
                self.nodes.put(&mut d, c);
                d.push_str(") ");
                let t = self.print_body(then_branch, false);
                d.append(t).push_str(" else ");
                let f = self.print_body(else_branch, false);
                d.append(f);
                d
            }
            ExprKind::Let { .. } => self.let_chain(e),
            ExprKind::Function(f) => self.func("fn ", f),
            ExprKind::Op(op) => return Piece::Static(op.name.as_str()),
            ExprKind::Call(call) => {
                // Arguments first, so that their bindings come before the
                // callee's.
                let start = self.args.len();
                for a in &call.args {
                    let p = self.print(a);
                    self.args.push(p);
                }
                let attrs = self.call_attrs(call.attrs.as_ref(), &call.callee);
                let mut d = match call.callee.kind() {
                    ExprKind::Constructor(c) => {
                        let d = Doc::text(c.name());
                        if c.data().inputs.is_empty() {
                            self.args.truncate(start);
                            return self.nodes.store(d);
                        }
                        d
                    }
                    _ => self.print_doc(&call.callee),
                };
                d.push_str("(");
                let any_args = self.args.len() > start;
                self.put_list(&mut d, start);
                if !attrs.is_empty() {
                    if any_args {
                        d.push_str(", ");
                    }
                    d.push_str(&attrs);
                }
                d.push_str(")");
                d
            }
            ExprKind::RefCreate(value) => {
                let mut d = Doc::text("ref(");
                let v = self.print(value);
                self.nodes.put(&mut d, v);
                d.push_str(")");
                d
            }
            ExprKind::RefRead(r) => {
                let mut d = Doc::text("ref_read(");
                let v = self.print(r);
                self.nodes.put(&mut d, v);
                d.push_str(")");
                d
            }
            ExprKind::RefWrite { reference, value } => {
                let mut d = Doc::text("ref_write(");
                let r = self.print(reference);
                self.nodes.put(&mut d, r);
                d.push_str(", ");
                let v = self.print(value);
                self.nodes.put(&mut d, v);
                d.push_str(")");
                d
            }
            ExprKind::Match {
                data,
                clauses,
                complete,
            } => {
                let mut d = Doc::text(if *complete { "match (" } else { "match? (" });
                let scrutinee = self.print(data);
                self.nodes.put(&mut d, scrutinee);
                d.push_str(") {");
                let mut clause_docs = Vec::with_capacity(clauses.len());
                for clause in clauses {
                    let mut c = self.pattern(&clause.pattern);
                    c.push_str(" => ");
                    let rhs = self.print_scope(&clause.rhs, false);
                    c.append(Doc::brace("{", rhs, "}", 2)).push_str(",");
                    clause_docs.push(c);
                }
                let mut sep = Doc::new();
                sep.newline();
                let mut inner = Doc::new();
                inner.newline().append(Doc::concat(clause_docs, &sep));
                d.append(inner.indent(2));
                d.newline().push_str("}");
                d
            }
            ExprKind::Constructor(c) => Doc::text(c.name()),
        };
        self.nodes.store(doc)
    }

    /// Writes the pieces of `self.args` from `start` on, separated by
    /// `", "`, and drops them from the stack.
    fn put_list(&mut self, d: &mut Doc, start: usize) {
        for (i, &p) in self.args[start..].iter().enumerate() {
            if i > 0 {
                d.push_str(", ");
            }
            self.nodes.put(d, p);
        }
        self.args.truncate(start);
    }

    /// `(printed)`.
    fn parenthesised(&mut self, printed: Piece) -> Piece {
        let mut d = Doc::text("(");
        self.nodes.put(&mut d, printed);
        d.push_str(")");
        self.nodes.store(d)
    }

    /// `printed` in parentheses on lines of its own, indented, as TVM
    /// prints a `let` in a non-root position.
    fn parenthesised_block(&mut self, printed: Piece) -> Piece {
        let mut inner = Doc::new();
        inner.newline();
        self.nodes.put(&mut inner, printed);
        let mut d = Doc::text("(");
        d.append(inner.indent(2));
        d.newline().push_str(")");
        self.nodes.store(d)
    }

    /// A chain of `let`s, flattened: each value is printed in the scope of
    /// the previous binding, the final body in a scope of its own.
    fn let_chain(&mut self, e: &Expr) -> Doc {
        let base = self.doc_stack.len();
        let mut cur = e;
        while let ExprKind::Let { var, value, body } = cur.kind() {
            let mut d = Doc::text("let ");
            d.append(self.alloc_var(var)).push_str(" = ");
            let mut v = self.print_expr(value, false, true, true);
            if self.reparseable && !matches!(v, Piece::Temp(_)) {
                // Written in place, a `match` or `let` value does not parse
                // (the value is a `binop` in TVM's grammar, which TVM's
                // printer ignores): only these get parentheses, so all
                // text TVM can read back stays TVM's.
                match value.kind() {
                    ExprKind::Match { .. } => v = self.parenthesised(v),
                    ExprKind::Let { .. } => v = self.parenthesised_block(v),
                    _ => {}
                }
            }
            self.nodes.put(&mut d, v);
            d.push_str(";").newline();
            self.doc_stack.push(d);
            cur = body;
        }
        let body = self.print_scope(cur, false);
        let mut out = Doc::new();
        for d in self.doc_stack.drain(base..) {
            out.append(d);
        }
        out.append(body);
        out
    }

    /// `PrintFunc`: `prefix[T](params, attrs…) -> R { body }`.
    fn func(&mut self, prefix: &str, f: &FunctionData) -> Doc {
        let mut d = Doc::text(prefix);
        if !f.type_params.is_empty() {
            let names: Vec<&str> = f.type_params.iter().map(|tv| tv.name()).collect();
            d.push_str(&format!("[{}]", names.join(", ")));
        }
        d.push_str("(");
        let mut params: Vec<Doc> = f.params.iter().map(|p| self.alloc_var(p)).collect();
        for (k, v) in f.attrs.entries() {
            params.push(Doc::text(format!("{k}={}", self.attr_value(v))));
        }
        if let Some(vd) = &f.virtual_device {
            if !is_unconstrained_virtual_device(vd) {
                params.push(Doc::text(format!("virtual_device={}", self.attr_value(vd))));
            }
        }
        d.append(Doc::comma_list(params)).push_str(") ");
        if let Some(ret) = annotation(f.ret_type.as_ref()) {
            let r = self.print_type(ret);
            d.push_str("-> ").push_str(&r).push_str(" ");
        }
        let body = self.print_body(&f.body, true);
        d.append(body);
        d
    }

    /// `AllocVar`: the binding text of a variable, with a fresh unique name.
    fn alloc_var(&mut self, var: &Var) -> Doc {
        let slot = self.nodes.slot(key(var.expr()));
        if let Some(existing) = self.nodes.get(slot).memo {
            // Bound twice: TVM still prints, marking the IR as malformed.
            let mut d = self.nodes.to_doc(existing, 16);
            d.push_str("-malformed-ir");
            return d;
        }
        let mut prefix = String::with_capacity(var.name().len() + 1);
        prefix.push('%');
        if self.reparseable {
            push_var_base_name(&mut prefix, var.name());
        } else {
            push_tvm_var_name(&mut prefix, var.name());
        }
        let name = self.unique_name(prefix);
        let memo = self.nodes.store(Doc::text(name.as_str()));
        self.nodes.get_mut(slot).memo = Some(memo);
        // A closure printed again in another scope binds its parameters
        // again (see `print_scope`).
        if let Some(bindings) = self.scope_bindings.last_mut() {
            bindings.push(slot);
        }
        let data = var.data();
        let device = match &data.virtual_device {
            Some(vd) if !is_unconstrained_virtual_device(vd) => Some(self.attr_value(vd)),
            _ => None,
        };
        let ty = annotation(data.type_annotation.as_ref()).map(|t| self.print_type(t));
        let info = self.optional_info(var.expr(), slot);
        let len = name.len()
            + device.as_ref().map_or(0, |v| v.len() + 18)
            + ty.as_ref().map_or(0, |t| t.len() + 2)
            + info.as_ref().map_or(0, String::len);
        let mut d = Doc::with_capacity(len);
        d.push_str(&name);
        if let Some(v) = device {
            d.push_str(" {virtual_device=").push_str(&v).push_str("}");
        }
        if let Some(t) = ty {
            d.push_str(": ").push_str(&t);
        }
        if let Some(info) = info {
            d.push_str(&info);
        }
        d
    }

    /// A constant whose value the text did not have (see `crate::opaque`):
    /// its reference, as TVM prints a constant without its metadata, then
    /// its type (the checked one, else the one its reference was read with).
    fn opaque_constant(&mut self, e: &Expr, reference: &str, var: &Var) -> Doc {
        let slot = self.nodes.slot(key(e));
        let info = self.optional_info(e, slot).or_else(|| {
            let t = self.print_type(var.type_annotation()?);
            Some(format!(" /* ty={t} */"))
        });
        let mut d = Doc::text(reference);
        if let Some(info) = info {
            d.push_str(&info);
        }
        d
    }

    /// `GetUniqueName`: `x`, then `x1`, `x2`, … over the whole print.
    fn unique_name(&mut self, prefix: String) -> String {
        let mut unique = None;
        if let Some(counter) = self.name_alloc.get(prefix.as_str()).copied() {
            let mut n = counter;
            let mut candidate = String::with_capacity(prefix.len() + 4);
            loop {
                n += 1;
                candidate.clear();
                candidate.push_str(&prefix);
                push_decimal(&mut candidate, n);
                if !self.name_alloc.contains_key(candidate.as_str()) {
                    break;
                }
            }
            self.name_alloc.insert(prefix.clone(), n);
            unique = Some(candidate);
        }
        let unique = unique.unwrap_or(prefix);
        self.name_alloc.insert(unique.clone(), 0);
        unique
    }

    /// `PrintOptionalInfo`: ` /* ty=… */` once per node, for the node kinds
    /// TVM annotates, when the node has a checked type.
    fn optional_info(&mut self, e: &Expr, slot: usize) -> Option<String> {
        let state = self.nodes.get_mut(slot);
        if std::mem::replace(&mut state.info_done, true) || !self.show_types {
            return None;
        }
        let annotated = matches!(
            e.kind(),
            ExprKind::Constant(_)
                | ExprKind::Call(_)
                | ExprKind::Var(_)
                | ExprKind::Function(_)
                | ExprKind::Tuple(_)
                | ExprKind::TupleGetItem { .. }
        );
        match e.checked_type() {
            Some(t) if annotated => {
                let t = self.print_type(t);
                let mut info = String::with_capacity(t.len() + 12);
                info.push_str(" /* ty=");
                info.push_str(&t);
                info.push_str(" */");
                Some(info)
            }
            _ => None,
        }
    }

    fn pattern(&mut self, p: &Pattern) -> Doc {
        with_stack(|| self.pattern_here(p))
    }

    fn pattern_here(&mut self, p: &Pattern) -> Doc {
        match p {
            Pattern::Wildcard => Doc::text("_"),
            Pattern::Var(v) => self.alloc_var(v),
            Pattern::Constructor(c, fields) => {
                let mut d = Doc::text(c.name());
                if !fields.is_empty() {
                    let docs: Vec<Doc> = fields.iter().map(|f| self.pattern(f)).collect();
                    d.push_str("(").append(Doc::comma_list(docs));
                    d.push_str(")");
                }
                d
            }
            Pattern::Tuple(fields) => {
                let docs: Vec<Doc> = fields.iter().map(|f| self.pattern(f)).collect();
                let mut d = Doc::text("(");
                d.append(Doc::comma_list(docs)).push_str(")");
                d
            }
        }
    }

    // ---- metadata references ----

    /// `meta[relay.Constant][k]` for a constant that is not a simple scalar.
    /// `expression` is false for an attribute value: TVM's parser reads
    /// those without `WithSpan` and type inference never sees them, so the
    /// section's object is written back as it was.
    fn constant_meta(&mut self, e: &Expr, expression: bool) -> String {
        if let Some((origin, span, source)) = self.constant_origin(e) {
            if !expression {
                return self
                    .meta
                    .node(MetaKey::object(&origin), "relay.Constant", || {
                        MetaItem::Object(origin.clone())
                    });
            }
            return self
                .meta
                .node(MetaKey::object(&origin), "relay.Constant", || {
                    MetaItem::Reparsed {
                        origin: origin.clone(),
                        expr: e.clone(),
                        span,
                        source,
                    }
                });
        }
        self.meta
            .node(MetaKey::Expr(e.addr()), "relay.Constant", || {
                MetaItem::Constant(e.clone())
            })
    }

    /// The metadata object a constant was read from, when its span covers a
    /// `meta[relay.Constant][k]` reference of a source whose metadata
    /// section holds that very tensor, with the span TVM's parser gives the
    /// reference. Printing from that object (rather than a new one) keeps
    /// what TVM keeps from the section: its virtual device, its checked type
    /// when inference agrees with it, and which constants are one object.
    /// The source is named as TVM names it: `GeneratedSource` for the text
    /// `AnnotateSpans` prints and reads back, `from_string` (the parser's
    /// default) for any text read from a file.
    fn constant_origin(&mut self, e: &Expr) -> Option<(MetaObject, [i64; 4], &'static str)> {
        let ExprKind::Constant(data) = e.kind() else {
            return None;
        };
        let sources = self.sources?;
        let span = e.span()?;
        let file = sources.get(span.file)?;
        let source = if file.name == GENERATED_SOURCE {
            GENERATED_SOURCE
        } else {
            "from_string"
        };
        let text = file.text.clone();
        let range = usize::from(span.range.start())..usize::from(span.range.end());
        let reference = text.get(range.clone())?;
        let tvm_span = meta_ref_span(
            &text,
            range.start + (reference.len() - reference.trim_start().len()),
        )?;
        let index: usize = reference
            .trim()
            .strip_prefix("meta[relay.Constant][")?
            .strip_suffix(']')?
            .trim()
            .parse()
            .ok()?;
        let graph = self
            .sections
            .entry(span.file)
            .or_insert_with(|| metadata_section(&text).map(Arc::new))
            .clone()?;
        let table = graph.table().ok()?;
        let node = table.get("relay.Constant", index).ok()?;
        if node.type_key() != "relay.Constant" || node.tensor_field("data").ok()? != **data {
            return None;
        }
        Some((
            MetaObject {
                graph: graph.clone(),
                index: node.index(),
            },
            tvm_span,
            source,
        ))
    }

    // ---- attributes ----

    /// `PrintCallAttrs`: the attributes of a call, separated by `", "`
    /// (empty when there are none).
    fn call_attrs(&mut self, attrs: Option<&Attrs>, callee: &Expr) -> String {
        let Some(attrs) = attrs else {
            return String::new();
        };
        let op = callee.as_op();
        if let Some(op) = op {
            if self.show_meta_data && op.attrs_type.as_deref() != Some(attrs.type_key()) {
                // The parser only reads attributes of the operator's own
                // attrs type; any other is written as a meta reference.
                return self
                    .meta
                    .node(MetaKey::Attrs(attrs_addr(attrs)), attrs.type_key(), || {
                        MetaItem::Attrs(attrs.clone())
                    });
            }
        }
        let mut out = String::with_capacity(64);
        self.generic_attrs(attrs, op.is_none(), &mut out);
        out
    }

    /// `AppendGenericAttrs`: the non-default fields, then for non-operator
    /// callees the attrs type.
    fn generic_attrs(&mut self, attrs: &Attrs, include_type_key: bool, out: &mut String) {
        let schema = match self.schemas.get(attrs.type_key()) {
            Some(&schema) => schema,
            None => {
                let schema = attrs_schema(attrs.type_key());
                self.schemas.insert(attrs.type_key().into(), schema);
                schema
            }
        };
        for (i, (name, value)) in attrs.fields().iter().enumerate() {
            // Fields come in declaration order: the i-th field of the
            // schema is nearly always this one.
            let field = schema.and_then(|s| {
                s.fields
                    .get(i)
                    .filter(|f| f.name == *name)
                    .or_else(|| s.field(name))
            });
            if let Some(field) = field {
                if is_default(value, &field.ty, &field.default) {
                    continue;
                }
            }
            if !out.is_empty() {
                out.push_str(", ");
            }
            out.push_str(name);
            out.push('=');
            self.attr_value_into(value, out);
        }
        if include_type_key {
            if !out.is_empty() {
                out.push_str(", ");
            }
            out.push_str("attrs_type_key=");
            push_str_literal(out, attrs.type_key());
        }
    }

    /// `PrintAttributeValue`.
    fn attr_value(&mut self, v: &AttrValue) -> String {
        let mut out = String::new();
        self.attr_value_into(v, &mut out);
        out
    }

    /// [`Printer::attr_value`], appended to `out`.
    fn attr_value_into(&mut self, v: &AttrValue, out: &mut String) {
        match v {
            AttrValue::Null => out.push_str("None"),
            AttrValue::Int(i) => push_i64(out, *i),
            AttrValue::Double(f) => {
                let text = self.number_text(*f, None);
                out.push_str(&text);
                out.push('f');
            }
            AttrValue::Bool(b) => out.push_str(if *b { "True" } else { "False" }),
            AttrValue::Str(s) => push_str_literal(out, s),
            AttrValue::DataType(d) => push_str_literal(out, &d.to_tvm_string()),
            AttrValue::IntImm { value, dtype, .. } => push_int_imm(out, *value, *dtype),
            AttrValue::FloatImm { value, dtype } => {
                let text = self.number_text(*value, Some(*dtype));
                out.push_str(&text);
            }
            AttrValue::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    self.attr_value_into(item, out);
                }
                out.push(']');
            }
            AttrValue::Map(entries) => {
                if self.show_meta_data {
                    let addr = v as *const AttrValue as usize;
                    let text = self
                        .meta
                        .node(MetaKey::Value(addr), "Map", || MetaItem::Value(v.clone()));
                    out.push_str(&text);
                } else {
                    out.push('{');
                    for (i, (k, v)) in entries.iter().enumerate() {
                        if i > 0 {
                            out.push_str(", ");
                        }
                        push_str_literal(out, k);
                        out.push('=');
                        self.attr_value_into(v, out);
                    }
                    out.push('}');
                }
            }
            AttrValue::Any => out.push('?'),
            AttrValue::Expr(e) => {
                let text = match e.kind() {
                    ExprKind::Constant(_) => self.constant_meta(e, false),
                    ExprKind::GlobalVar(g) if !self.show_meta_data => format!("'{}'", g.name()),
                    kind => {
                        let type_key = expr_type_key(kind);
                        self.meta.node(MetaKey::Expr(e.addr()), type_key, || {
                            MetaItem::Value(v.clone())
                        })
                    }
                };
                out.push_str(&text);
            }
            AttrValue::Meta(m) => {
                let text = self.meta_object_value(m);
                out.push_str(&text);
            }
        }
    }

    /// `stream_double(v)` (no dtype) or `float_imm_text(v, dtype)`,
    /// remembered: formatting a double is slow, and models repeat a few
    /// (`epsilon=1e-05f` on every batch norm).
    fn number_text(&mut self, v: f64, dtype: Option<DataType>) -> Rc<str> {
        self.numbers
            .entry((v.to_bits(), dtype))
            .or_insert_with(|| {
                Rc::from(match dtype {
                    Some(dtype) => float_imm_text(v, dtype),
                    None => stream_double(v),
                })
            })
            .clone()
    }

    /// An attribute value read from a metadata section: strings, numbers
    /// and arrays have a text form; anything else stays a meta reference.
    fn meta_object_value(&mut self, m: &MetaObject) -> String {
        let node = match NodeRef::new(&m.graph, m.index) {
            Ok(node) if !node.is_null() => node,
            _ => return "None".to_string(),
        };
        let text = match node.type_key() {
            "runtime.String" => node.as_str().ok().map(str_literal),
            "IntImm" => match (node.int_field("value"), node.dtype_field("dtype")) {
                (Ok(v), Ok(d)) => Some(int_imm_text(v, d)),
                _ => None,
            },
            "FloatImm" => match (node.float_field("value"), node.dtype_field("dtype")) {
                (Ok(v), Ok(d)) => Some(float_imm_text(v, d)),
                _ => None,
            },
            "tir.StringImm" => node
                .field("value")
                .ok()
                .and_then(|s| s.as_str().ok().map(str_literal)),
            "tir.Any" => Some("?".to_string()),
            "Array" => node.items().ok().map(|items| {
                let items: Vec<String> = items
                    .iter()
                    .map(|item| {
                        self.meta_object_value(&MetaObject {
                            graph: m.graph.clone(),
                            index: item.index(),
                        })
                    })
                    .collect();
                format!("[{}]", items.join(", "))
            }),
            _ => None,
        };
        match text {
            Some(text) => text,
            None => {
                let type_key = node.type_key().to_string();
                self.meta.node(MetaKey::object(m), &type_key, || {
                    MetaItem::Object(m.clone())
                })
            }
        }
    }

    // ---- types ----

    fn print_type(&mut self, t: &Type) -> Rc<str> {
        let addr = type_addr(t);
        if let Some(s) = self.type_memo.get(&addr) {
            return s.clone();
        }
        let s: Rc<str> = Rc::from(with_stack(|| self.visit_type(t)));
        self.type_memo.insert(addr, s.clone());
        s
    }

    /// `DataType::to_tvm_string`, remembered (a model uses a few dtypes).
    fn dtype_name(&mut self, dtype: DataType) -> Rc<str> {
        self.dtype_names
            .entry(dtype)
            .or_insert_with(|| Rc::from(dtype.to_tvm_string()))
            .clone()
    }

    fn type_list(&mut self, ts: &[Type]) -> String {
        let mut out = String::new();
        for (i, t) in ts.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            let s = self.print_type(t);
            out.push_str(&s);
        }
        out
    }

    fn visit_type(&mut self, t: &Type) -> String {
        match t.kind() {
            TypeKind::Tensor(tt) => {
                if tt.shape.is_empty() {
                    let name = tt.dtype.to_tvm_string();
                    if !name.is_empty() {
                        return name;
                    }
                    // TVM writes a rank-0 tensor of a dtype without a name
                    // (void) as nothing at all, which no parser reads (`%x: ,`);
                    // the tensor form says the same and reads back.
                }
                let mut s = String::with_capacity(24 + 6 * tt.shape.len());
                s.push_str("Tensor[(");
                for (i, d) in tt.shape.iter().enumerate() {
                    if i > 0 {
                        s.push_str(", ");
                    }
                    match d {
                        // What `dim` writes, without a string of its own.
                        Dim::Int { value, dtype, .. } => push_int_imm(&mut s, *value, *dtype),
                        _ => {
                            let d = self.dim(d);
                            s.push_str(&d);
                        }
                    }
                }
                s.push_str("), ");
                s.push_str(&self.dtype_name(tt.dtype));
                s.push(']');
                s
            }
            TypeKind::Tuple(fields) => {
                let inner = self.type_list(fields);
                if fields.len() == 1 {
                    format!("({inner},)")
                } else {
                    format!("({inner})")
                }
            }
            TypeKind::Func(f) => {
                let mut s = String::from("fn ");
                if !f.type_params.is_empty() {
                    let names: Vec<&str> = f.type_params.iter().map(|tv| tv.name()).collect();
                    s.push_str(&format!("[{}]", names.join(", ")));
                }
                let params = self.type_list(&f.params);
                let ret = self.print_type(&f.ret);
                s.push_str(&format!("({params}) -> {ret}"));
                s
            }
            TypeKind::Var(tv) => tv.name().to_string(),
            TypeKind::GlobalVar(g) => g.name().to_string(),
            TypeKind::Call { func, args } => {
                let f = self.print_type(func);
                let args = self.type_list(args);
                format!("{f}[{args}]")
            }
            TypeKind::Ref(inner) => format!("ref({})", self.print_type(inner)),
            TypeKind::Incomplete(_) => match self.type_style {
                TypeStyle::Readable => "_".to_string(),
                TypeStyle::Tvm => {
                    self.meta
                        .node(MetaKey::Type(type_addr(t)), "IncompleteType", || {
                            MetaItem::Type(t.clone())
                        })
                }
            },
        }
    }

    /// A dimension, printed as an attribute value.
    fn dim(&mut self, d: &Dim) -> String {
        match d {
            Dim::Int { value, dtype, .. } => int_imm_text(*value, *dtype),
            Dim::Any => "?".to_string(),
            Dim::Meta(m) => match self.type_style {
                TypeStyle::Readable => readable_prim_expr(m),
                TypeStyle::Tvm => self.meta_object_value(m),
            },
            // A size type inference computed (`n * 2`): a new object of the
            // metadata section, one entry per object.
            Dim::Expr(e) => match self.type_style {
                TypeStyle::Readable => super::readable::dim(d),
                TypeStyle::Tvm => self.meta.node(MetaKey::dim_expr(e), e.type_key(), || {
                    MetaItem::Dim(d.clone())
                }),
            },
        }
    }

    /// An ADT definition: `type List[A] {` constructors `}`.
    fn type_data(&mut self, data: &TypeData) -> Doc {
        let mut d = Doc::text(format!("type {}", data.header.name()));
        if !data.type_vars.is_empty() {
            let names: Vec<&str> = data.type_vars.iter().map(|tv| tv.name()).collect();
            d.push_str(&format!("[{}]", names.join(", ")));
        }
        d.push_str(" ");
        let mut ctors = Vec::with_capacity(data.constructors.len());
        for c in &data.constructors {
            let inputs = &c.data().inputs;
            if inputs.is_empty() {
                ctors.push(Doc::text(c.name()));
            } else {
                let list = self.type_list(inputs);
                ctors.push(Doc::text(format!("{}({list})", c.name())));
            }
        }
        let any = !ctors.is_empty();
        let mut sep = Doc::text(",");
        sep.newline();
        let mut body = Doc::concat(ctors, &sep);
        if any {
            body.push_str(",");
        }
        d.append(Doc::brace("{", body, "}", 2));
        d
    }
}

/// A written type annotation. An incomplete type at the top of an
/// annotation is no annotation: it is what `_` and a missing type become,
/// and TVM's parser represents both as a null type, which prints nothing.
fn annotation(t: Option<&Type>) -> Option<&Type> {
    t.filter(|t| !t.is_incomplete())
}

fn version_line() -> Doc {
    let mut d = Doc::text("#[version = \"0.0.5\"]");
    d.newline();
    d
}

/// The identity of an attrs object: the address of its (shared, never
/// empty) type key, which lives in the reference-counted object.
fn attrs_addr(attrs: &Attrs) -> usize {
    attrs.type_key().as_ptr() as usize
}

/// The schema of an attrs type, from the operator table (which also holds
/// the types libtvm registers for no operator, such as `attrs.TestAttrs`).
pub(crate) fn attrs_schema(type_key: &str) -> Option<&'static AttrsSchema> {
    op::attrs_schema(type_key)
}

/// The type key TVM gives an expression node.
fn expr_type_key(kind: &ExprKind) -> &'static str {
    match kind {
        ExprKind::Var(_) => "relay.Var",
        ExprKind::GlobalVar(_) => "GlobalVar",
        ExprKind::Constant(_) => "relay.Constant",
        ExprKind::Tuple(_) => "relay.Tuple",
        ExprKind::TupleGetItem { .. } => "relay.TupleGetItem",
        ExprKind::Call(_) => "relay.Call",
        ExprKind::Let { .. } => "relay.Let",
        ExprKind::If { .. } => "relay.If",
        ExprKind::Function(_) => "relay.Function",
        ExprKind::Match { .. } => "relay.Match",
        ExprKind::RefCreate(_) => "relay.RefCreate",
        ExprKind::RefRead(_) => "relay.RefRead",
        ExprKind::RefWrite { .. } => "relay.RefWrite",
        ExprKind::Constructor(_) => "relay.Constructor",
        ExprKind::Op(_) => "Op",
    }
}

/// A symbolic size for people: a variable's name, else `?`.
fn readable_prim_expr(m: &MetaObject) -> String {
    let Ok(node) = NodeRef::new(&m.graph, m.index) else {
        return "?".to_string();
    };
    match node.type_key() {
        "tir.Var" | "tir.SizeVar" => node
            .field("name")
            .ok()
            .and_then(|n| n.as_str().ok().map(str::to_string))
            .unwrap_or_else(|| "?".to_string()),
        "IntImm" => node
            .int_field("value")
            .map(|v| v.to_string())
            .unwrap_or_else(|_| "?".to_string()),
        _ => "?".to_string(),
    }
}

/// The graph of the `#[metadata]` section of a source text, if it has one.
/// The span TVM's parser leaves on the object `meta[K][i]` at byte `start`
/// of `text` refers to: its tokenizer takes the start column after having
/// consumed `meta[` and the end column after the closing `]` (lines and
/// columns count from 1, columns in bytes), and `WithSpan` writes that onto
/// the shared object itself. `[line, column, end_line, end_column]`.
fn meta_ref_span(text: &str, start: usize) -> Option<[i64; 4]> {
    let rest = text.get(start..)?;
    let first = rest.find(']')?;
    let second = rest[first + 1..].find(']')? + first + 1;
    let position = |at: usize| -> Option<(i64, i64)> {
        let before = text.get(..at)?;
        let line = before.bytes().filter(|&b| b == b'\n').count() as i64 + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        Some((line, (at - line_start) as i64 + 1))
    };
    let (line, column) = position(start + "meta[".len())?;
    let (end_line, end_column) = position(start + second + 1)?;
    let line_start = text.get(..start)?.rfind('\n').map_or(0, |i| i + 1);
    let drift = tokenizer_column_drift(text.get(line_start..start)?.as_bytes());
    Some([line, column + drift, end_line, end_column + drift])
}

/// How far TVM's tokenizer column has run ahead of the true column at the
/// end of `line` (a line's text before a token). Its `MatchString` tries
/// `inff` and `meta[` at a token's start and, on a mismatch, moves the
/// position back but not the column: every token that starts with a proper
/// prefix of one of them (`init_states` starts with `in`, `mean` with `me`)
/// adds that prefix's length to every later column of the line.
fn tokenizer_column_drift(line: &[u8]) -> i64 {
    fn prefix(rest: &[u8], word: &[u8]) -> usize {
        rest.iter().zip(word).take_while(|(a, b)| a == b).count()
    }
    let ident = |c: u8| c == b'_' || c == b'/' || c.is_ascii_alphanumeric();
    let mut drift = 0;
    let mut i = 0;
    while i < line.len() {
        let c = line[i];
        let rest = &line[i..];
        match c {
            b'"' => {
                i += 1 + rest[1..]
                    .iter()
                    .position(|&b| b == b'"')
                    .map_or(rest.len(), |p| p + 1);
            }
            b' ' | b'\t' | b'\r' => i += 1,
            b'/' if rest.get(1) == Some(&b'/') => break,
            b'/' if rest.get(1) == Some(&b'*') => {
                // A nested block comment; one left open ends the line.
                let mut depth = 1;
                i += 2;
                while i < line.len() && depth > 0 {
                    if line[i..].starts_with(b"/*") {
                        depth += 1;
                        i += 2;
                    } else if line[i..].starts_with(b"*/") {
                        depth -= 1;
                        i += 2;
                    } else {
                        i += 1;
                    }
                }
            }
            b'-' => {
                let negs = rest.iter().take_while(|&&b| b == b'-').count();
                let k = prefix(&rest[negs..], b"inff");
                if k < 4 {
                    drift += k as i64;
                }
                i += negs + if k == 4 { 4 } else { 0 };
            }
            b'0'..=b'9' => {
                i += 1;
                while i < line.len()
                    && matches!(line[i], b'0'..=b'9' | b'.' | b'e' | b'E' | b'-' | b'+')
                {
                    i += 1;
                }
                if i < line.len() && matches!(line[i], b'f' | b'i') {
                    i += 1;
                    while i < line.len()
                        && matches!(line[i], b'0'..=b'9' | b'.' | b'e' | b'E' | b'-' | b'+')
                    {
                        i += 1;
                    }
                }
            }
            _ => {
                let k = prefix(rest, b"inff");
                if k == 4 {
                    i += 4;
                    continue;
                }
                drift += k as i64;
                if b".,=;:()+*<>{}[]!@?".contains(&c) {
                    i += 1;
                    continue;
                }
                let k = prefix(rest, b"meta[");
                if k == 5 {
                    // Another reference: up to its second `]`.
                    let mut closing = 0;
                    while i < line.len() && closing < 2 {
                        closing += usize::from(line[i] == b']');
                        i += 1;
                    }
                    continue;
                }
                drift += k as i64;
                if c == b'%' {
                    i += 1;
                    while i < line.len() && line[i].is_ascii_digit() {
                        i += 1;
                    }
                } else if ident(c) && !c.is_ascii_digit() {
                    while i < line.len() && ident(line[i]) {
                        i += 1;
                    }
                } else {
                    while i < line.len() && !matches!(line[i], b' ' | b'\t' | b'\n') {
                        i += 1;
                    }
                }
            }
        }
    }
    drift
}

fn metadata_section(text: &str) -> Option<ObjectGraph> {
    const MARK: &str = "#[metadata]";
    let at = if text.starts_with(MARK) {
        0
    } else {
        text.find(&format!("\n{MARK}"))? + 1
    };
    ObjectGraph::parse(&text[at + MARK.len()..]).ok()
}

/// Calls `push` on the children `ExpandDataflow` pushes, in push order
/// (the last one is visited first): a call's arguments from last to first
/// then its callee (for `call_lowered`, the fields of its argument tuple
/// instead of the tuple), a tuple's fields from last to first, a
/// projection's tuple.
fn for_each_dataflow_child<'e>(e: &'e Expr, mut push: impl FnMut(&'e Expr)) {
    match e.kind() {
        ExprKind::Call(call) => {
            let lowered = call
                .callee
                .as_op()
                .is_some_and(|op| op.name == "call_lowered");
            match (lowered, call.args.get(1).map(Expr::kind)) {
                (true, Some(ExprKind::Tuple(fields))) => {
                    fields.iter().rev().for_each(&mut push);
                    push(&call.args[0]);
                }
                _ => call.args.iter().rev().for_each(&mut push),
            }
            push(&call.callee);
        }
        ExprKind::Tuple(fields) => fields.iter().rev().for_each(push),
        ExprKind::TupleGetItem { tuple, .. } => push(tuple),
        _ => {}
    }
}
