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

use super::defaults::{is_default, is_unconstrained_virtual_device};
use super::doc::Doc;
use super::meta::{type_addr, MetaContext, MetaItem, MetaKey};
use super::scalar::{
    float_imm_text, global_name, int_imm_text, scalar_constant_text, str_literal, stream_double,
    var_base_name,
};
use crate::ir::{
    AttrValue, Attrs, Dim, Expr, ExprKind, FunctionData, IRModule, MetaObject, Pattern, Type,
    TypeData, TypeKind, Var,
};
use crate::meta::{NodeRef, ObjectGraph};
use crate::op::{self, AttrsSchema};
use crate::source::{FileId, SourceMap};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// The identity of a node for the memo tables: its address, except that a
/// variable is identified by its id (every occurrence of a variable should
/// be the same node, but a rewrite that re-creates it keeps the id).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Key {
    Node(usize),
    Var(u64),
}

fn key(e: &Expr) -> Key {
    match e.kind() {
        ExprKind::Var(v) => Key::Var(v.id.0),
        _ => Key::Node(e.addr()),
    }
}

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
    /// The text of each node printed so far (for a bound node, its `%N`).
    memo: FxMap<Key, Doc>,
    /// The full binding text of variables first met as free variables.
    result_memo: FxMap<Key, Doc>,
    /// Nodes already given a `%N` line or a `free_var` line.
    var_memo: FxSet<Key>,
    /// Nodes whose `/* ty=… */` comment was already produced.
    opt_info_memo: FxSet<Key>,
    type_memo: FxMap<usize, String>,
    name_alloc: FxMap<String, u64>,
    temp_counter: usize,
    /// Number of users of each node in the function being printed (TVM's
    /// `DependencyGraph`).
    parents: FxMap<Key, u32>,
    meta: MetaContext,
    /// The metadata section of each source file, parsed on demand.
    sections: HashMap<FileId, Option<Arc<ObjectGraph>>>,
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
            memo: FxMap::default(),
            result_memo: FxMap::default(),
            var_memo: FxSet::default(),
            opt_info_memo: FxSet::default(),
            type_memo: FxMap::default(),
            name_alloc: FxMap::default(),
            temp_counter: 0,
            parents: FxMap::default(),
            meta: MetaContext::default(),
            sections: HashMap::new(),
        }
    }

    // ---- entry points ----

    /// `TextPrinter::PrintMod` followed by the metadata section.
    pub(crate) fn module(&mut self, m: &IRModule) -> String {
        let mut doc = version_line();
        let mut counter = 0;
        for (_, data) in m.type_definitions() {
            if counter > 0 {
                doc.newline();
            }
            counter += 1;
            let d = self.type_data(data);
            doc.append(d).newline();
        }
        for (name, f) in m.functions() {
            self.parents = dependency_counts(f.expr());
            if counter > 0 {
                doc.newline();
            }
            counter += 1;
            let prefix = format!("def @{}", global_name(name));
            let d = self.func(&prefix, f.data());
            doc.append(d).newline();
        }
        self.finish(doc)
    }

    /// `AsText` of an expression: `RelayTextPrinter::PrintFinal`.
    pub(crate) fn expr(&mut self, e: &Expr) -> String {
        let mut doc = version_line();
        self.parents = dependency_counts(e);
        let d = self.print_scope(e);
        doc.append(d);
        self.finish(doc)
    }

    /// A type on its own.
    pub(crate) fn type_text(&mut self, t: &Type) -> String {
        self.print_type(t)
    }

    fn finish(&mut self, mut doc: Doc) -> String {
        let mut out = String::new();
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
    fn print_scope(&mut self, e: &Expr) -> Doc {
        self.doc_stack.push(Doc::new());
        let d = self.print_expr(e, false, true, true);
        let mut scope = self.doc_stack.pop().unwrap_or_default();
        scope.append(d);
        scope
    }

    /// `PrintBody`: `{`, the scope indented, `}`.
    fn print_body(&mut self, e: &Expr) -> Doc {
        let scope = self.print_scope(e);
        let mut inner = Doc::new();
        inner.newline().append(scope);
        let mut d = Doc::text("{");
        d.append(inner.indent(2));
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

    fn is_unique(&self, e: &Expr) -> bool {
        self.parents.get(&key(e)).is_none_or(|&n| n < 2)
    }

    /// `Print(expr)`: a sub-expression in a non-root position.
    fn print(&mut self, e: &Expr) -> Doc {
        self.print_expr(e, false, false, true)
    }

    /// `PrintExpr`.
    fn print_expr(&mut self, e: &Expr, meta: bool, try_inline: bool, optional_info: bool) -> Doc {
        let k = key(e);
        if !meta && self.var_memo.contains(&k) {
            // Already bound to `%N` (or an already seen variable): TVM's
            // steps below would all be memo hits giving this text.
            return self.memo.get(&k).cloned().unwrap_or_default();
        }
        let mut inline = Self::always_inline(e);
        if try_inline {
            inline |= self.is_unique(e);
        }
        let mut printed = if meta {
            Doc::text(self.constant_meta(e, true))
        } else if !inline && matches!(e.kind(), ExprKind::Let { .. }) {
            // A `let` in a non-root position: the chain in parentheses.
            let body = self.visit_expr(e);
            let mut inner = Doc::new();
            inner.newline().append(body);
            let mut d = Doc::text("(");
            d.append(inner.indent(2));
            d.newline().push_str(")");
            d
        } else {
            self.visit_expr(e)
        };
        if optional_info {
            let info = self.optional_info(e);
            printed.append(info);
        }
        if matches!(e.kind(), ExprKind::Var(_)) {
            // First met through the visitor rather than at a binding site:
            // the variable is free.
            if self.var_memo.insert(k) {
                if let Some(binding) = self.result_memo.get(&k).cloned() {
                    let mut line = Doc::text("free_var ");
                    line.append(binding).push_str(";").newline();
                    self.emit(line);
                }
            }
            return self.memo.get(&k).cloned().unwrap_or_default();
        }
        if inline {
            self.memo.insert(k, printed.clone());
            return printed;
        }
        if !self.var_memo.insert(k) {
            return self.memo.get(&k).cloned().unwrap_or_default();
        }
        let temp = Doc::text(format!("%{}", self.temp_counter));
        self.temp_counter += 1;
        self.memo.insert(k, temp.clone());
        let mut line = temp.clone();
        line.push_str(" = ").append(printed);
        line.push_str(";").newline();
        self.emit(line);
        temp
    }

    /// `VisitExpr`: the memoised text of `e`, computing it (and that of
    /// every dataflow node below it) without recursion on dataflow chains.
    fn visit_expr(&mut self, e: &Expr) -> Doc {
        if let Some(d) = self.memo.get(&key(e)) {
            return d.clone();
        }
        let mut stack: Vec<(Expr, bool)> = vec![(e.clone(), false)];
        while let Some(top) = stack.last_mut() {
            if self.memo.contains_key(&key(&top.0)) {
                stack.pop();
            } else if top.1 {
                let (node, _) = stack.pop().expect("the stack is not empty");
                self.visit_leaf(&node);
            } else {
                top.1 = true;
                let node = top.0.clone();
                let memo = &self.memo;
                for_each_dataflow_child(&node, |child| {
                    if !memo.contains_key(&key(child)) {
                        stack.push((child.clone(), false));
                    }
                });
            }
        }
        self.memo.get(&key(e)).cloned().unwrap_or_default()
    }

    /// `VisitLeaf`.
    fn visit_leaf(&mut self, e: &Expr) {
        let k = key(e);
        if self.memo.contains_key(&k) {
            return;
        }
        let result = self.visit_kind(e);
        if let std::collections::hash_map::Entry::Vacant(slot) = self.memo.entry(k) {
            slot.insert(result);
        } else {
            self.result_memo.insert(k, result);
        }
    }

    /// The `VisitExpr_` overloads.
    fn visit_kind(&mut self, e: &Expr) -> Doc {
        match e.kind() {
            ExprKind::Var(_) => {
                let var = e.as_var().expect("a variable");
                self.alloc_var(&var)
            }
            ExprKind::GlobalVar(g) => Doc::text(format!("@{}", global_name(g.name()))),
            ExprKind::Constant(data) => match scalar_constant_text(data) {
                Some(text) => Doc::text(text),
                None => self.print_expr(e, true, false, false),
            },
            ExprKind::Tuple(fields) => {
                let docs: Vec<Doc> = fields.iter().map(|f| self.print(f)).collect();
                let n = docs.len();
                let mut d = Doc::text("(");
                d.append(Doc::comma_list(docs));
                if n == 1 {
                    d.push_str(",");
                }
                d.push_str(")");
                d
            }
            ExprKind::TupleGetItem { tuple, index } => {
                let mut d = self.print(tuple);
                d.push_str(&format!(".{index}"));
                d
            }
            ExprKind::If {
                cond,
                then_branch,
                else_branch,
            } => {
                let mut d = Doc::text("if (");
                let c = self.print(cond);
                d.append(c).push_str(") ");
                let t = self.print_body(then_branch);
                d.append(t).push_str(" else ");
                let f = self.print_body(else_branch);
                d.append(f);
                d
            }
            ExprKind::Let { .. } => self.let_chain(e),
            ExprKind::Function(f) => self.func("fn ", f),
            ExprKind::Op(op) => Doc::text(op.name.as_str()),
            ExprKind::Call(call) => {
                // Arguments first, so that their bindings come before the
                // callee's.
                let mut args: Vec<Doc> = call.args.iter().map(|a| self.print(a)).collect();
                args.extend(self.call_attrs(call.attrs.as_ref(), &call.callee));
                let mut d = match call.callee.kind() {
                    ExprKind::Constructor(c) => {
                        let d = Doc::text(c.name());
                        if c.data().inputs.is_empty() {
                            return d;
                        }
                        d
                    }
                    _ => self.print(&call.callee),
                };
                d.push_str("(");
                for (i, arg) in args.into_iter().enumerate() {
                    if i > 0 {
                        d.push_str(", ");
                    }
                    d.append(arg);
                }
                d.push_str(")");
                d
            }
            ExprKind::RefCreate(value) => {
                let mut d = Doc::text("ref(");
                let v = self.print(value);
                d.append(v).push_str(")");
                d
            }
            ExprKind::RefRead(r) => {
                let mut d = Doc::text("ref_read(");
                let v = self.print(r);
                d.append(v).push_str(")");
                d
            }
            ExprKind::RefWrite { reference, value } => {
                let mut d = Doc::text("ref_write(");
                let r = self.print(reference);
                d.append(r).push_str(", ");
                let v = self.print(value);
                d.append(v).push_str(")");
                d
            }
            ExprKind::Match {
                data,
                clauses,
                complete,
            } => {
                let mut d = Doc::text(if *complete { "match (" } else { "match? (" });
                let scrutinee = self.print(data);
                d.append(scrutinee).push_str(") {");
                let mut clause_docs = Vec::with_capacity(clauses.len());
                for clause in clauses {
                    let mut c = self.pattern(&clause.pattern);
                    c.push_str(" => ");
                    let rhs = self.print_scope(&clause.rhs);
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
        }
    }

    /// A chain of `let`s, flattened: each value is printed in the scope of
    /// the previous binding, the final body in a scope of its own.
    fn let_chain(&mut self, e: &Expr) -> Doc {
        let base = self.doc_stack.len();
        let mut cur = e.clone();
        while let ExprKind::Let { var, value, body } = cur.kind() {
            let mut d = Doc::text("let ");
            d.append(self.alloc_var(var)).push_str(" = ");
            let v = self.print_expr(value, false, true, true);
            d.append(v).push_str(";").newline();
            self.doc_stack.push(d);
            let next = body.clone();
            cur = next;
        }
        let body = self.print_scope(&cur);
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
            d.push_str(&format!("-> {r} "));
        }
        let body = self.print_body(&f.body);
        d.append(body);
        d
    }

    /// `AllocVar`: the binding text of a variable, with a fresh unique name.
    fn alloc_var(&mut self, var: &Var) -> Doc {
        let k = key(var.expr());
        if let Some(existing) = self.memo.get(&k) {
            // Bound twice: TVM still prints, marking the IR as malformed.
            let mut d = existing.clone();
            d.push_str("-malformed-ir");
            return d;
        }
        let name = self.unique_name(&format!("%{}", var_base_name(var.name())));
        self.memo.insert(k, Doc::text(name.as_str()));
        let mut d = Doc::text(name);
        let data = var.data();
        if let Some(vd) = &data.virtual_device {
            if !is_unconstrained_virtual_device(vd) {
                let v = self.attr_value(vd);
                d.push_str(&format!(" {{virtual_device={v}}}"));
            }
        }
        if let Some(t) = annotation(data.type_annotation.as_ref()) {
            let t = self.print_type(t);
            d.push_str(": ").push_str(&t);
        }
        let info = self.optional_info(var.expr());
        d.append(info);
        d
    }

    /// `GetUniqueName`: `x`, then `x1`, `x2`, … over the whole print.
    fn unique_name(&mut self, prefix: &str) -> String {
        let mut unique = prefix.to_string();
        if let Some(counter) = self.name_alloc.get(prefix).copied() {
            let mut n = counter;
            loop {
                n += 1;
                let candidate = format!("{prefix}{n}");
                if !self.name_alloc.contains_key(&candidate) {
                    unique = candidate;
                    break;
                }
            }
            self.name_alloc.insert(prefix.to_string(), n);
        }
        self.name_alloc.insert(unique.clone(), 0);
        unique
    }

    /// `PrintOptionalInfo`: ` /* ty=… */` once per node, for the node kinds
    /// TVM annotates, when the node has a checked type.
    fn optional_info(&mut self, e: &Expr) -> Doc {
        if !self.opt_info_memo.insert(key(e)) || !self.show_types {
            return Doc::new();
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
            Some(t) if annotated => Doc::text(format!(" /* ty={} */", self.print_type(t))),
            _ => Doc::new(),
        }
    }

    fn pattern(&mut self, p: &Pattern) -> Doc {
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
        if let Some((origin, span)) = self.constant_origin(e) {
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
    fn constant_origin(&mut self, e: &Expr) -> Option<(MetaObject, [i64; 4])> {
        let ExprKind::Constant(data) = e.kind() else {
            return None;
        };
        let sources = self.sources?;
        let span = e.span()?;
        let text = sources.get(span.file)?.text.clone();
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
        ))
    }

    // ---- attributes ----

    /// `PrintCallAttrs`.
    fn call_attrs(&mut self, attrs: Option<&Attrs>, callee: &Expr) -> Vec<Doc> {
        let Some(attrs) = attrs else {
            return Vec::new();
        };
        let op = callee.as_op();
        if let Some(op) = op {
            if self.show_meta_data && op.attrs_type.as_deref() != Some(attrs.type_key()) {
                // The parser only reads attributes of the operator's own
                // attrs type; any other is written as a meta reference.
                let text =
                    self.meta
                        .node(MetaKey::Attrs(attrs_addr(attrs)), attrs.type_key(), || {
                            MetaItem::Attrs(attrs.clone())
                        });
                return vec![Doc::text(text)];
            }
        }
        self.generic_attrs(attrs, op.is_none())
    }

    /// `AppendGenericAttrs`: the non-default fields, then for non-operator
    /// callees the attrs type.
    fn generic_attrs(&mut self, attrs: &Attrs, include_type_key: bool) -> Vec<Doc> {
        let schema = attrs_schema(attrs.type_key());
        let mut docs = Vec::new();
        for (name, value) in attrs.fields() {
            if let Some(field) = schema.and_then(|s| s.field(name)) {
                if is_default(value, &field.ty, &field.default) {
                    continue;
                }
            }
            docs.push(Doc::text(format!("{name}={}", self.attr_value(value))));
        }
        if include_type_key {
            docs.push(Doc::text(format!(
                "attrs_type_key={}",
                str_literal(attrs.type_key())
            )));
        }
        docs
    }

    /// `PrintAttributeValue`.
    fn attr_value(&mut self, v: &AttrValue) -> String {
        match v {
            AttrValue::Null => "None".to_string(),
            AttrValue::Int(i) => i.to_string(),
            AttrValue::Double(f) => format!("{}f", stream_double(*f)),
            AttrValue::Bool(b) => if *b { "True" } else { "False" }.to_string(),
            AttrValue::Str(s) => str_literal(s),
            AttrValue::DataType(d) => str_literal(&d.to_tvm_string()),
            AttrValue::IntImm { value, dtype } => int_imm_text(*value, *dtype),
            AttrValue::FloatImm { value, dtype } => float_imm_text(*value, *dtype),
            AttrValue::Array(items) => {
                let items: Vec<String> = items.iter().map(|i| self.attr_value(i)).collect();
                format!("[{}]", items.join(", "))
            }
            AttrValue::Map(entries) => {
                if self.show_meta_data {
                    let addr = v as *const AttrValue as usize;
                    self.meta
                        .node(MetaKey::Value(addr), "Map", || MetaItem::Value(v.clone()))
                } else {
                    let items: Vec<String> = entries
                        .iter()
                        .map(|(k, v)| format!("{}={}", str_literal(k), self.attr_value(v)))
                        .collect();
                    format!("{{{}}}", items.join(", "))
                }
            }
            AttrValue::Any => "?".to_string(),
            AttrValue::Expr(e) => match e.kind() {
                ExprKind::Constant(_) => self.constant_meta(e, false),
                ExprKind::GlobalVar(g) if !self.show_meta_data => format!("'{}'", g.name()),
                kind => {
                    let type_key = expr_type_key(kind);
                    self.meta.node(MetaKey::Expr(e.addr()), type_key, || {
                        MetaItem::Value(v.clone())
                    })
                }
            },
            AttrValue::Meta(m) => self.meta_object_value(m),
        }
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

    fn print_type(&mut self, t: &Type) -> String {
        let addr = type_addr(t);
        if let Some(s) = self.type_memo.get(&addr) {
            return s.clone();
        }
        let s = self.visit_type(t);
        self.type_memo.insert(addr, s.clone());
        s
    }

    fn type_list(&mut self, ts: &[Type]) -> String {
        let items: Vec<String> = ts.iter().map(|t| self.print_type(t)).collect();
        items.join(", ")
    }

    fn visit_type(&mut self, t: &Type) -> String {
        match t.kind() {
            TypeKind::Tensor(tt) => {
                if tt.shape.is_empty() {
                    return tt.dtype.to_tvm_string();
                }
                let dims: Vec<String> = tt.shape.iter().map(|d| self.dim(d)).collect();
                format!(
                    "Tensor[({}), {}]",
                    dims.join(", "),
                    tt.dtype.to_tvm_string()
                )
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
            Dim::Int { value, dtype } => int_imm_text(*value, *dtype),
            Dim::Any => "?".to_string(),
            Dim::Meta(m) => match self.type_style {
                TypeStyle::Readable => readable_prim_expr(m),
                TypeStyle::Tvm => self.meta_object_value(m),
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
    Some([line, column, end_line, end_column])
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
fn for_each_dataflow_child(e: &Expr, mut push: impl FnMut(&Expr)) {
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

/// TVM's `DependencyGraph` reduced to what the printer asks of it: how many
/// uses each node has (a node used twice by one parent counts twice).
/// Match patterns are not uses.
fn dependency_counts(root: &Expr) -> FxMap<Key, u32> {
    let mut counts: FxMap<Key, u32> = FxMap::default();
    let mut seen: FxSet<usize> = FxSet::default();
    let mut stack: Vec<&Expr> = vec![root];
    seen.insert(root.addr());
    while let Some(e) = stack.pop() {
        let mut add = |c: &Expr| {
            *counts.entry(key(c)).or_insert(0) += 1;
        };
        let children: Vec<&Expr> = match e.kind() {
            ExprKind::Var(_)
            | ExprKind::GlobalVar(_)
            | ExprKind::Constant(_)
            | ExprKind::Op(_)
            | ExprKind::Constructor(_) => Vec::new(),
            ExprKind::Call(call) => std::iter::once(&call.callee).chain(&call.args).collect(),
            ExprKind::Tuple(fields) => fields.iter().collect(),
            ExprKind::TupleGetItem { tuple, .. } => vec![tuple],
            ExprKind::RefCreate(v) | ExprKind::RefRead(v) => vec![v],
            ExprKind::RefWrite { reference, value } => vec![reference, value],
            ExprKind::If {
                cond,
                then_branch,
                else_branch,
            } => vec![cond, then_branch, else_branch],
            ExprKind::Function(f) => f
                .params
                .iter()
                .map(Var::expr)
                .chain(std::iter::once(&f.body))
                .collect(),
            ExprKind::Let { var, value, body } => vec![var.expr(), value, body],
            ExprKind::Match { data, clauses, .. } => std::iter::once(data)
                .chain(clauses.iter().map(|c| &c.rhs))
                .collect(),
        };
        for c in children {
            add(c);
            if seen.insert(c.addr()) {
                stack.push(c);
            }
        }
    }
    counts
}

/// A fast hasher for the printer's memo tables, whose keys are addresses,
/// ids and short names (the Fx hash of rustc; no protection against
/// adversarial keys is needed here).
#[derive(Default, Clone, Copy)]
pub(crate) struct FxHasher(u64);

const FX_SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl std::hash::Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut a = [0u8; 8];
            a.copy_from_slice(c);
            self.write_u64(u64::from_le_bytes(a));
        }
        for &b in chunks.remainder() {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u8(&mut self, v: u8) {
        self.write_u64(u64::from(v));
    }

    fn write_u32(&mut self, v: u32) {
        self.write_u64(u64::from(v));
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(FX_SEED);
    }

    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

pub(crate) type FxBuild = std::hash::BuildHasherDefault<FxHasher>;
pub(crate) type FxMap<K, V> = HashMap<K, V, FxBuild>;
pub(crate) type FxSet<K> = HashSet<K, FxBuild>;
