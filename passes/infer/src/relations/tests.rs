//! The data-driven check of the relations against TVM's own output: every
//! operator call in the typed corpus files (`models/*.typed.relay`,
//! `passes/InferType/*.after.relay`) is re-typed from its printed argument
//! types and attributes, and the relation's output must be exactly the
//! printed `/* ty=… */` (dimension dtypes included); types it assigns to
//! inputs must agree with the printed argument types.
//!
//! The reader is deliberately small: it walks the syntax tree of
//! `relay_syntax`, takes each binding's type from the `/* ty=… */` comment
//! TVM prints after it, and converts attribute values per the schema.
//! Call sites it cannot read (an attrs object or a size from the metadata
//! section, a function-typed argument) are counted as skipped.

use super::by_name;
use super::test_util::{convert, default_value};
use crate::relation_contract::{RelationArgs, RelationOutcome};
use relay_ir::dtype::DataType;
use relay_ir::metadata::ObjectGraph;
use relay_ir::op;
use relay_ir::MetaObject;
use relay_ir::{AttrValue, Attrs, Dim, GlobalTypeVar, Type, TypeKind};
use relay_syntax::ast::{self, AstNode, AstToken, LiteralKind};
use relay_syntax::literal::NumberValue;
use relay_syntax::{SyntaxKind, SyntaxNode, SyntaxToken};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where the conformance data lives (`relay_test_support::tvm`).
fn corpus_root() -> Option<PathBuf> {
    relay_test_support::tvm::root_or_skip("relation corpus tests")
}

#[derive(Default, Debug, Clone)]
struct Stats {
    sites: usize,
    exact: usize,
    mismatch: usize,
    error: usize,
    waits: usize,
    skipped: usize,
    /// Outputs that differ only where TVM built a symbolic size expression
    /// (`meta[tir.Add]…`) and we give `?` (arithmetic on `?`, see
    /// `shape.rs`).
    symbolic: usize,
}

#[derive(Default)]
struct Report {
    per_op: BTreeMap<String, Stats>,
    examples: Vec<String>,
    type_cache: HashMap<String, Option<Type>>,
    /// The current file's metadata section.
    graph: Option<Arc<ObjectGraph>>,
}

impl Report {
    /// The node `meta[key][index]` of the current file's metadata.
    fn meta(&self, meta: &ast::MetaRef) -> Option<MetaObject> {
        let graph = self.graph.as_ref()?;
        let table = graph.table().ok()?;
        let node = table.get(meta.key()?, meta.index()? as usize).ok()?;
        Some(MetaObject {
            graph: graph.clone(),
            index: node.index(),
        })
    }
}

impl Report {
    fn stats(&mut self, op: &str) -> &mut Stats {
        self.per_op.entry(op.to_string()).or_default()
    }

    fn example(&mut self, text: String) {
        if self.examples.len() < 400 {
            self.examples.push(text);
        }
    }
}

/// The text of a `/* ty=… */` comment token.
fn ty_text(token: &SyntaxToken) -> Option<String> {
    if token.kind() != SyntaxKind::BLOCK_COMMENT {
        return None;
    }
    let text = token.text();
    let body = text.strip_prefix("/*")?.strip_suffix("*/")?.trim();
    let ty = body.strip_prefix("ty=")?;
    Some(ty.trim().to_string())
}

/// The `/* ty=… */` comment right after `token` (whitespace skipped).
fn comment_after_token(token: &SyntaxToken) -> Option<String> {
    let mut next = token.next_token();
    while let Some(t) = next {
        match t.kind() {
            SyntaxKind::WHITESPACE => next = t.next_token(),
            SyntaxKind::BLOCK_COMMENT => return ty_text(&t),
            _ => return None,
        }
    }
    None
}

/// The `/* ty=… */` comment right after `node`.
fn comment_after(node: &SyntaxNode) -> Option<String> {
    let mut last = node.last_token()?;
    // A node's own trailing trivia may already hold the comment.
    while last.kind().is_trivia() {
        if let Some(ty) = ty_text(&last) {
            return Some(ty);
        }
        last = last.prev_token()?;
    }
    comment_after_token(&last)
}

/// Converts a parsed type; `None` for what the checker does not model
/// (meta sizes, type variables, function types).
fn lower_type(report: &Report, ty: &ast::Type) -> Option<Type> {
    match ty {
        ast::Type::TensorType(t) => {
            let mut dims = Vec::new();
            for dim in t.dims() {
                dims.push(match dim.kind()? {
                    ast::DimKind::Int(int) => match int.number().ok()? {
                        NumberValue::Int { value, bits } => Dim::int(value, DataType::int(bits)),
                        NumberValue::Float { .. } => return None,
                    },
                    ast::DimKind::Any(_) => Dim::Any,
                    ast::DimKind::Meta(meta) => Dim::Meta(report.meta(&meta)?),
                });
            }
            let dtype: DataType = t.dtype()?.text().parse().ok()?;
            Some(Type::tensor(dims, dtype))
        }
        ast::Type::ScalarType(s) => Some(Type::scalar(s.dtype()?.text().parse().ok()?)),
        ast::Type::TupleType(t) => Some(Type::tuple(
            t.fields()
                .map(|f| lower_type(report, &f))
                .collect::<Option<Vec<_>>>()?,
        )),
        ast::Type::NamedType(n) => {
            let name = n.name()?.text().to_string();
            let head = Type::new(TypeKind::GlobalVar(GlobalTypeVar::new(&name)));
            n.type_arg_list()?;
            let args = n
                .args()
                .map(|a| lower_type(report, &a))
                .collect::<Option<Vec<_>>>()?;
            Some(Type::new(TypeKind::Call { func: head, args }))
        }
        _ => None,
    }
}

/// Parses the text of a type by wrapping it in a parameter annotation.
fn parse_type(report: &mut Report, text: &str) -> Option<Type> {
    if let Some(cached) = report.type_cache.get(text) {
        return cached.clone();
    }
    let source = format!("#[version = \"0.0.5\"]\ndef @main(%x: {text}) {{ %x }}\n");
    let parse = relay_syntax::parse_module(&source);
    let ty = if parse.errors().is_empty() {
        parse
            .syntax_node()
            .descendants()
            .find_map(ast::Param::cast)
            .and_then(|p| p.ty())
            .and_then(|t| lower_type(report, &t))
    } else {
        None
    };
    // Meta sizes refer to the current file's metadata: not cached.
    if !text.contains("meta[") {
        report.type_cache.insert(text.to_string(), ty.clone());
    }
    ty
}

/// An attribute value as TVM's parser reads it (before conversion); `None`
/// for values the checker cannot model (`meta[…]`, expressions).
fn attr_value(report: &Report, value: &ast::AttrValue) -> Option<AttrValue> {
    Some(match value {
        ast::AttrValue::Literal(literal) => match literal.kind()? {
            LiteralKind::Int(int) => match int.number().ok()? {
                NumberValue::Int { value, bits } => AttrValue::int_imm(value, DataType::int(bits)),
                NumberValue::Float { .. } => return None,
            },
            LiteralKind::Float(float) => match float.number().ok()? {
                NumberValue::Float { value, bits } => AttrValue::FloatImm {
                    value,
                    dtype: DataType::float(bits),
                },
                NumberValue::Int { .. } => return None,
            },
            LiteralKind::Bool(b) => AttrValue::int_imm(i64::from(b.value()), DataType::INT32),
            LiteralKind::String(s) => AttrValue::Str(s.value().to_string()),
        },
        ast::AttrValue::AttrListValue(list) => AttrValue::Array(
            list.values()
                .map(|v| attr_value(report, &v))
                .collect::<Option<Vec<_>>>()?,
        ),
        ast::AttrValue::AttrParenValue(paren) => attr_value(report, &paren.value()?)?,
        ast::AttrValue::AttrNullValue(_) => AttrValue::Null,
        ast::AttrValue::MetaExpr(meta) => graph_value(report.meta(&meta.meta_ref()?)?)?,
        ast::AttrValue::Expr(_) => return None,
    })
}

/// An object of the metadata section as an attribute value: immediates,
/// strings and arrays are read, anything else stays a reference.
fn graph_value(meta: MetaObject) -> Option<AttrValue> {
    let node = meta.graph.nodes.get(meta.index)?;
    Some(match node.type_key.as_str() {
        "" => AttrValue::Null,
        "IntImm" => AttrValue::int_imm(
            node.attrs.get("value")?.parse().ok()?,
            node.attrs.get("dtype")?.parse().ok()?,
        ),
        "FloatImm" => AttrValue::FloatImm {
            value: node.attrs.get("value")?.parse().ok()?,
            dtype: node.attrs.get("dtype")?.parse().ok()?,
        },
        "runtime.String" => AttrValue::Str(node.repr_str()?.to_string()),
        "Array" => AttrValue::Array(
            node.data
                .iter()
                .map(|&i| {
                    graph_value(MetaObject {
                        graph: meta.graph.clone(),
                        index: i,
                    })
                })
                .collect::<Option<Vec<_>>>()?,
        ),
        "tir.Any" => AttrValue::Any,
        _ => AttrValue::Meta(meta),
    })
}

/// An attrs object of the metadata section, field by field per its schema.
fn graph_attrs(meta: &MetaObject) -> Option<Attrs> {
    let node = meta.graph.nodes.get(meta.index)?;
    let schema = op::attrs_schema(&node.type_key)?;
    let mut fields = Vec::new();
    for field in &schema.fields {
        let Some(raw) = node.attrs.get(&field.name) else {
            fields.push((field.name.clone(), default_value(&field.default, &field.ty)));
            continue;
        };
        let value = match &field.ty {
            op::AttrType::Int | op::AttrType::UInt64 => AttrValue::Int(raw.parse().ok()?),
            op::AttrType::Bool => AttrValue::Bool(raw != "0"),
            op::AttrType::Double => AttrValue::Double(raw.parse().ok()?),
            op::AttrType::DataType => AttrValue::DataType(if raw.is_empty() {
                DataType::void()
            } else {
                raw.parse().ok()?
            }),
            op::AttrType::StdString => AttrValue::Str(raw.clone()),
            ty => convert(
                graph_value(MetaObject {
                    graph: meta.graph.clone(),
                    index: raw.parse().ok()?,
                })?,
                ty,
            ),
        };
        fields.push((field.name.clone(), value));
    }
    Some(Attrs::new(schema.type_key.clone(), fields))
}

struct Scopes(Vec<HashMap<String, Type>>);

impl Scopes {
    fn get(&self, name: &str) -> Option<Type> {
        self.0.iter().rev().find_map(|s| s.get(name)).cloned()
    }

    fn insert(&mut self, name: String, ty: Type) {
        if let Some(scope) = self.0.last_mut() {
            scope.insert(name, ty);
        }
    }
}

/// The type of an argument expression.
fn expr_type(report: &mut Report, scopes: &Scopes, expr: &ast::Expr) -> Option<Type> {
    if let Some(text) = comment_after(expr.syntax()) {
        return parse_type(report, &text);
    }
    match expr {
        ast::Expr::LocalExpr(local) => scopes.get(&format!("%{}", local.name()?.name())),
        ast::Expr::GraphExpr(graph) => scopes.get(&format!("%{}", graph.number()?.number()?)),
        ast::Expr::TupleExpr(tuple) => Some(Type::tuple(
            tuple
                .fields()
                .map(|f| expr_type(report, scopes, &f))
                .collect::<Option<Vec<_>>>()?,
        )),
        ast::Expr::ParenExpr(paren) => expr_type(report, scopes, &paren.expr()?),
        // A scalar literal is a rank-0 constant of its written width.
        ast::Expr::Literal(literal) => match literal.kind()? {
            LiteralKind::Int(int) => match int.number().ok()? {
                NumberValue::Int { bits, .. } => Some(Type::scalar(DataType::int(bits))),
                NumberValue::Float { .. } => None,
            },
            LiteralKind::Float(float) => match float.number().ok()? {
                NumberValue::Float { bits, .. } => Some(Type::scalar(DataType::float(bits))),
                NumberValue::Int { .. } => None,
            },
            LiteralKind::Bool(_) => Some(Type::scalar(DataType::bool())),
            LiteralKind::String(_) => None,
        },
        // A constant's type is its data's (`ConstantNode::tensor_type`:
        // int32 dimensions).
        ast::Expr::MetaExpr(meta) => {
            let meta = report.meta(&meta.meta_ref()?)?;
            let node = meta.graph.nodes.get(meta.index)?;
            if node.type_key != "relay.Constant" {
                return None;
            }
            let data = meta
                .graph
                .tensor(node.attrs.get("data")?.parse().ok()?)
                .ok()?;
            Some(Type::tensor(
                data.shape.iter().map(|&d| Dim::int32(d)).collect(),
                data.dtype,
            ))
        }
        ast::Expr::TupleGetItemExpr(item) => {
            let tuple = expr_type(report, scopes, &item.tuple()?)?;
            tuple.as_tuple()?.get(item.index()? as usize).cloned()
        }
        _ => None,
    }
}

/// Whether `ours` is `expected` with `?` where TVM has a symbolic size
/// expression (anything but a plain variable) from the metadata section.
fn approximates(ours: &Type, expected: &Type) -> bool {
    match (ours.kind(), expected.kind()) {
        (TypeKind::Tensor(x), TypeKind::Tensor(y)) => {
            x.dtype == y.dtype
                && x.shape.len() == y.shape.len()
                && x.shape.iter().zip(&y.shape).all(|(p, q)| {
                    p == q
                        || matches!((p, q), (Dim::Any, Dim::Meta(m))
                            if !matches!(m.type_key(), "tir.Var" | "tir.SizeVar"))
                })
        }
        (TypeKind::Tuple(x), TypeKind::Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| approximates(p, q))
        }
        _ => ours == expected,
    }
}

/// Whether two types could unify (`?` matches any size).
fn compatible(a: &Type, b: &Type) -> bool {
    match (a.kind(), b.kind()) {
        (TypeKind::Tensor(x), TypeKind::Tensor(y)) => {
            x.dtype == y.dtype
                && x.shape.len() == y.shape.len()
                && x.shape.iter().zip(&y.shape).all(|(p, q)| {
                    p == q
                        || matches!(p, Dim::Any)
                        || matches!(q, Dim::Any)
                        || p.as_int().is_some() && p.as_int() == q.as_int()
                })
        }
        (TypeKind::Tuple(x), TypeKind::Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| compatible(p, q))
        }
        _ => a == b,
    }
}

fn check_call(report: &mut Report, scopes: &Scopes, call: &ast::CallExpr, file: &str) {
    let Some(ast::Expr::PathExpr(path)) = call.callee() else {
        return;
    };
    let name = path.name();
    let Some(op) = op::lookup(&name) else {
        return;
    };
    let Some(rel_name) = op.type_rel.as_deref() else {
        return;
    };
    let Some(expected_text) = comment_after(call.syntax()) else {
        return;
    };
    report.stats(&name).sites += 1;
    let skip = |report: &mut Report, why: &str| {
        report.stats(&name).skipped += 1;
        report.example(format!("SKIP {name} ({why}) in {file}"));
    };
    let Some(rel) = by_name(rel_name) else {
        return skip(report, "no relation");
    };
    let Some(expected) = parse_type(report, &expected_text) else {
        return skip(report, "output type not modelled");
    };
    let mut inputs = Vec::new();
    let mut meta_attrs = None;
    for arg in call.args() {
        if let ast::Expr::MetaExpr(meta) = &arg {
            if meta
                .syntax()
                .text()
                .to_string()
                .starts_with("meta[relay.attrs.")
            {
                let attrs = meta
                    .meta_ref()
                    .and_then(|m| report.meta(&m))
                    .and_then(|m| graph_attrs(&m));
                match attrs {
                    Some(attrs) => meta_attrs = Some(attrs),
                    None => return skip(report, "attrs in metadata not modelled"),
                }
                continue;
            }
        }
        match expr_type(report, scopes, &arg) {
            Some(ty) => inputs.push(ty),
            None => return skip(report, "argument type not modelled"),
        }
    }
    let attrs = match op.attrs() {
        _ if meta_attrs.is_some() => meta_attrs,
        None => None,
        Some(schema) => {
            let mut given = Vec::new();
            for attr in call.attrs() {
                let Some(key) = attr.key() else {
                    return skip(report, "attr key");
                };
                let Some(field) = schema.field(&key) else {
                    return skip(report, "unknown attr");
                };
                let Some(value) = attr.value().and_then(|v| attr_value(report, &v)) else {
                    return skip(report, "attr value not modelled");
                };
                given.push((key, convert(value, &field.ty)));
            }
            let fields = schema
                .fields
                .iter()
                .map(|field| {
                    let value = given
                        .iter()
                        .rev()
                        .find(|(k, _)| *k == field.name)
                        .map(|(_, v)| v.clone())
                        .unwrap_or_else(|| default_value(&field.default, &field.ty));
                    (field.name.clone(), value)
                })
                .collect();
            Some(Attrs::new(schema.type_key.clone(), fields))
        }
    };
    let mut slots = inputs.clone();
    slots.push(Type::incomplete());
    let result = rel(&RelationArgs::new(&slots, attrs.as_ref()));
    let text = call.syntax().text().to_string();
    let short: String = text.chars().take(160).collect();
    // Some pass inputs were printed with a metadata section that does not
    // hold the constants their text refers to (several different constants
    // are all `meta[relay.Constant][0]`); a disagreement there is the data's.
    let exact = matches!(&result, Ok(RelationOutcome::Solved(assigns) | RelationOutcome::Pending(assigns))
        if assigns.iter().filter(|(slot, _)| *slot == inputs.len()).take(1).all(|(_, ty)| *ty == expected));
    if !exact && file.ends_with(".before.relay") && text.contains("meta[relay.Constant]") {
        return skip(report, "pass input whose metadata disagrees with its text");
    }
    match result {
        Err(err) => {
            report.stats(&name).error += 1;
            report.example(format!(
                "ERROR {name}: {} :: {short} in {file}",
                err.message
            ));
        }
        Ok(RelationOutcome::NotReady) => {
            report.stats(&name).waits += 1;
            report.example(format!("WAIT {name}: {short} in {file}"));
        }
        // A relation that assigns and then waits leaves the output with
        // what it assigned (TVM's `broadcast_to`).
        Ok(RelationOutcome::Solved(assigns) | RelationOutcome::Pending(assigns)) => {
            let out = inputs.len();
            let mut ok = assigns.iter().any(|(slot, _)| *slot == out);
            let mut first_out = true;
            let mut symbolic = false;
            for (slot, ty) in &assigns {
                if *slot == out {
                    // The first assignment gives the output its type (dim
                    // dtypes included); later ones are unified with it, and
                    // unification keeps the existing dims.
                    let agrees = if first_out {
                        *ty == expected
                    } else {
                        compatible(ty, &expected)
                    };
                    if first_out && !agrees && approximates(ty, &expected) {
                        symbolic = true;
                        first_out = false;
                        continue;
                    }
                    first_out = false;
                    if !agrees {
                        ok = false;
                        report.example(format!(
                            "MISMATCH {name}: got {} expected {} :: {short} in {file}",
                            super::display::ty(ty),
                            super::display::ty(&expected)
                        ));
                    }
                } else if !compatible(ty, &inputs[*slot]) {
                    ok = false;
                    report.example(format!(
                        "MISMATCH {name}: input {slot} got {} printed {} :: {short} in {file}",
                        super::display::ty(ty),
                        super::display::ty(&inputs[*slot])
                    ));
                }
            }
            if ok && symbolic {
                report.stats(&name).symbolic += 1;
                report.example(format!("SYMBOLIC {name}: {short} in {file}"));
            } else if ok {
                report.stats(&name).exact += 1;
            } else {
                report.stats(&name).mismatch += 1;
            }
        }
    }
}

fn walk(report: &mut Report, scopes: &mut Scopes, node: &SyntaxNode, file: &str) {
    match node.kind() {
        SyntaxKind::DEF | SyntaxKind::FN_EXPR | SyntaxKind::MATCH_ARM => {
            scopes.0.push(HashMap::new());
            for child in node.children() {
                walk(report, scopes, &child, file);
            }
            scopes.0.pop();
            return;
        }
        SyntaxKind::PARAM => {
            if let Some(param) = ast::Param::cast(node.clone()) {
                if let (Some(name), Some(text)) = (param.name(), comment_after(node)) {
                    if let Some(ty) = parse_type(report, &text) {
                        scopes.insert(format!("%{}", name.name()), ty);
                    }
                }
            }
            return;
        }
        SyntaxKind::VAR_PAT => {
            if let Some(pat) = ast::VarPat::cast(node.clone()) {
                if let (Some(name), Some(text)) = (pat.name(), comment_after(node)) {
                    if let Some(ty) = parse_type(report, &text) {
                        scopes.insert(format!("%{}", name.name()), ty);
                    }
                }
            }
            return;
        }
        SyntaxKind::LET_STMT => {
            if let Some(stmt) = ast::LetStmt::cast(node.clone()) {
                let text = match (stmt.ty(), stmt.name()) {
                    (Some(ty), _) => comment_after(ty.syntax()),
                    (None, Some(name)) => comment_after_token(name.syntax()),
                    _ => None,
                };
                if let (Some(name), Some(text)) = (stmt.name(), text) {
                    if let Some(ty) = parse_type(report, &text) {
                        scopes.insert(format!("%{}", name.name()), ty);
                    }
                }
                if let Some(value) = stmt.value() {
                    walk(report, scopes, value.syntax(), file);
                }
            }
            return;
        }
        SyntaxKind::GRAPH_BINDING => {
            if let Some(binding) = ast::GraphBinding::cast(node.clone()) {
                if let Some(value) = binding.value() {
                    walk(report, scopes, value.syntax(), file);
                    let ty = expr_type(report, scopes, &value);
                    if let (Some(number), Some(ty)) =
                        (binding.number().and_then(|n| n.number()), ty)
                    {
                        scopes.insert(format!("%{number}"), ty);
                    }
                }
            }
            return;
        }
        _ => {}
    }
    for child in node.children() {
        walk(report, scopes, &child, file);
    }
    if node.kind() == SyntaxKind::CALL_EXPR {
        if let Some(call) = ast::CallExpr::cast(node.clone()) {
            check_call(report, scopes, &call, file);
        }
    }
}

fn check_file(report: &mut Report, path: &Path) {
    let Ok(text) = std::fs::read_to_string(path) else {
        return;
    };
    let parse = relay_syntax::parse_module(&text);
    report.graph = parse
        .source_file()
        .and_then(|f| f.metadata())
        .and_then(|m| m.body())
        .and_then(|body| ObjectGraph::parse(&body).ok())
        .map(Arc::new);
    let mut scopes = Scopes(vec![HashMap::new()]);
    let file = path.display().to_string();
    walk(report, &mut scopes, &parse.syntax_node(), &file);
}

fn files_in(dir: PathBuf, suffix: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.to_string_lossy().ends_with(suffix))
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

/// The files TVM printed right after `InferType`.
fn typed_files(root: &Path) -> Vec<PathBuf> {
    let mut files = files_in(root.join("models"), ".typed.relay");
    files.extend(files_in(root.join("passes/InferType"), ".after.relay"));
    files
}

/// Every other typed text: the inputs and results of the other passes
/// (TVM printed both, with the types of its own inference), and the
/// parser's prints of whole modules.
fn other_typed_files(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join("passes"))
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    dirs.sort();
    for dir in dirs {
        if dir.ends_with("InferType") {
            continue;
        }
        // Inputs were printed by TVM too, typed when the test inferred them.
        // (`parse-*` inputs are parser sources, some of them mutated: not
        // TVM's prints.)
        let mut texts = files_in(dir.clone(), ".after.relay");
        texts.extend(
            files_in(dir, ".before.relay")
                .into_iter()
                .filter(|p| !p.to_string_lossy().contains("/parse-")),
        );
        for file in texts {
            let json = file
                .to_string_lossy()
                .replace(".after.relay", ".json")
                .replace(".before.relay", ".json");
            let meta = std::fs::read_to_string(json).unwrap_or_default();
            if !meta.contains("\"types_from_text_differ\": true") {
                files.push(file);
            }
        }
    }
    for file in files_in(root.join("parser/ok"), ".expected") {
        let json = file.to_string_lossy().replace(".expected", ".json");
        if std::fs::read_to_string(json).is_ok_and(|m| m.contains("\"entry\": \"module\"")) {
            files.push(file);
        }
    }
    files
}

/// Checks every call site of `files` and prints the table and the
/// disagreements; returns the totals.
fn run_corpus(files: &[PathBuf], title: &str) -> Stats {
    let mut report = Report::default();
    for file in files {
        check_file(&mut report, file);
    }
    let mut total = Stats::default();
    println!("== {title}: {} files", files.len());
    println!(
        "{:<36} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6}",
        "op", "sites", "exact", "symb", "mism", "error", "wait", "skip"
    );
    for (op, s) in &report.per_op {
        println!(
            "{op:<36} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6}",
            s.sites, s.exact, s.symbolic, s.mismatch, s.error, s.waits, s.skipped
        );
        total.symbolic += s.symbolic;
        total.sites += s.sites;
        total.exact += s.exact;
        total.mismatch += s.mismatch;
        total.error += s.error;
        total.waits += s.waits;
        total.skipped += s.skipped;
    }
    println!(
        "{:<36} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6}",
        "TOTAL",
        total.sites,
        total.exact,
        total.symbolic,
        total.mismatch,
        total.error,
        total.waits,
        total.skipped
    );
    for line in &report.examples {
        if !line.starts_with("SKIP") && !line.starts_with("SYMBOLIC") {
            println!("{line}");
        }
    }
    if std::env::var("RELAY_SHOW_SKIPS").is_ok() {
        for line in report
            .examples
            .iter()
            .filter(|l| l.starts_with("SKIP") || l.starts_with("SYMBOLIC"))
        {
            println!("{line}");
        }
    }
    total
}

#[test]
fn corpus_call_sites_match_tvm() {
    let Some(root) = corpus_root() else {
        eprintln!("conformance data not found; skipping");
        return;
    };
    let total = run_corpus(&typed_files(&root), "InferType outputs");
    assert!(total.sites > 0, "no call sites found in {}", root.display());
    assert_eq!(
        total.mismatch + total.error + total.waits,
        0,
        "relations disagree with TVM on some corpus call sites (see the list above)"
    );
}

/// About 165 000 call sites: a few seconds in release, minutes in debug.
/// Run with `cargo test --release -p relay-passes infer::relations -- --ignored`.
#[test]
#[ignore]
fn other_typed_texts_match_tvm() {
    let Some(root) = corpus_root() else {
        eprintln!("conformance data not found; skipping");
        return;
    };
    let total = run_corpus(&other_typed_files(&root), "other passes and parser prints");
    assert!(total.sites > 0, "no call sites found in {}", root.display());
    assert_eq!(
        total.mismatch + total.error + total.waits,
        0,
        "relations disagree with TVM on some corpus call sites (see the list above)"
    );
}
