//! The metadata section and `meta[K][i]` references (TVM's `ParseMetaRef`).
//!
//! The section is parsed once into an [`ObjectGraph`] kept in an `Arc`, so
//! IR values that stay opaque ([`MetaObject`]: symbolic sizes, virtual
//! devices, variables used as attribute values) point into it. Constants are
//! decoded into [`TensorData`](relay_ir::metadata::TensorData) bit for bit. A node
//! referenced several times is one IR node, as the object is one in TVM.

use super::{token_range, Lowerer};
use relay_ir::diagnostic::{Code, Diagnostic};
use relay_ir::metadata::{MetaError, NodeRef, ObjectGraph};
use relay_ir::op::AttrType;
use relay_ir::{AttrValue, Attrs, Dim, DimId, Expr, MetaObject, Var};
use relay_syntax::ast::{self, AstNode, AstToken, TreeNode, TreeToken};
use relay_syntax::green_view::{Node, Token};
use relay_syntax::{TextRange, TextSize};
use std::collections::HashMap;
use std::sync::Arc;

/// What the file's metadata section gave.
pub(super) enum MetaState {
    /// No section: every reference is an error, as in TVM.
    Absent,
    /// A section that could not be read (reported once); references to it
    /// are not reported again.
    Failed,
    /// A readable section.
    Loaded(Box<Section>),
}

pub(super) struct Section {
    graph: Arc<ObjectGraph>,
    /// Type key → node indices of its list.
    entries: HashMap<String, Vec<usize>>,
    /// Expressions made from nodes, by node index.
    exprs: HashMap<usize, Expr>,
    /// The identity of an `IntImm` node `i` is `dim_ids.nth(i)`: one object
    /// of the section stays one object however often it is referenced.
    dim_ids: DimId,
}

/// Whether objects of this type are call attributes (`BaseAttrsNode`).
fn is_attrs_type(type_key: &str) -> bool {
    type_key == "DictAttrs"
        || type_key.starts_with("relay.attrs.")
        || super::attrs::lookup_schema(type_key).is_some()
}

impl Lowerer {
    /// Reads the `#[metadata]` section, if any.
    pub(super) fn load_metadata(&mut self, section: Option<ast::MetadataSection<Node<'_>>>) {
        let Some(token) = section.and_then(|s| s.metadata()) else {
            return;
        };
        let body = token.body();
        let body_range = token.body_range();
        let header = TextRange::new(token.syntax().text_range().start(), body_range.start());
        let graph = match ObjectGraph::parse_with(body, self.lenient) {
            Ok(graph) => graph,
            Err(MetaError::Parse { offset, message }) => {
                let offset = TextSize::from(offset.min(body.len()) as u32);
                let at = body_range.start() + offset;
                let len = if at < body_range.end() { 1 } else { 0 };
                let range = TextRange::at(at, TextSize::from(len));
                let diagnostic = Diagnostic::error(
                    Code::InvalidMetadata,
                    format!("invalid metadata section: {message}"),
                )
                .with_span(self.span(range))
                .with_label(self.span(header), "in this metadata section");
                self.push(diagnostic);
                self.meta = MetaState::Failed;
                return;
            }
            Err(error) => {
                self.error(
                    Code::InvalidMetadata,
                    header,
                    format!("invalid metadata section: {error}"),
                );
                self.meta = MetaState::Failed;
                return;
            }
        };
        let entries = match graph.table() {
            Ok(table) => {
                let mut entries = HashMap::new();
                for key in table.keys() {
                    let nodes = table.entries(key).unwrap_or_default();
                    entries.insert(key.to_string(), nodes.iter().map(NodeRef::index).collect());
                }
                entries
            }
            Err(error) => {
                self.error(
                    Code::InvalidMetadata,
                    header,
                    format!("invalid metadata section: {error}"),
                );
                self.meta = MetaState::Failed;
                return;
            }
        };
        self.meta = MetaState::Loaded(Box::new(Section {
            dim_ids: DimId::reserve(graph.nodes.len()),
            graph: Arc::new(graph),
            entries,
            exprs: HashMap::new(),
        }));
    }

    /// The graph and node index `meta[K][i]` refers to; a bad reference is
    /// reported with TVM's wording at the reference.
    fn resolve_meta(
        &mut self,
        meta: &ast::MetaRef<Token<'_>>,
    ) -> Option<(Arc<ObjectGraph>, usize)> {
        let range = token_range(meta);
        let key = meta.key()?;
        let index_text = meta.index_text().unwrap_or("");
        let found = match &self.meta {
            MetaState::Failed => return None,
            MetaState::Absent => None,
            MetaState::Loaded(section) => match section.entries.get(key) {
                None => None,
                Some(list) => {
                    let node = meta
                        .index()
                        .and_then(|i| usize::try_from(i).ok())
                        .and_then(|i| list.get(i).copied());
                    match node {
                        Some(node) => return Some((Arc::clone(&section.graph), node)),
                        None => Some(()),
                    }
                }
            },
        };
        match found {
            // The key exists but not the index.
            Some(()) => self.error(
                Code::InvalidMetadata,
                range,
                format!("the node index `{index_text}` is out of bounds for `{key}`"),
            ),
            None => {
                let message = MetaError::NoEntry {
                    type_key: key.to_string(),
                }
                .to_string();
                let help = matches!(self.meta, MetaState::Absent)
                    .then(|| "this text has no `#[metadata]` section".to_string());
                self.error_with_help(Code::InvalidMetadata, range, message, help);
            }
        }
        None
    }

    fn cached_meta_expr(&self, index: usize) -> Option<Expr> {
        match &self.meta {
            MetaState::Loaded(section) => section.exprs.get(&index).cloned(),
            _ => None,
        }
    }

    fn cache_meta_expr(&mut self, index: usize, expr: &Expr) {
        if let MetaState::Loaded(section) = &mut self.meta {
            section.exprs.insert(index, expr.clone());
        }
    }

    fn report_meta_error(&mut self, range: TextRange, error: MetaError) {
        self.error(
            Code::InvalidMetadata,
            range,
            format!("cannot read this metadata object: {error}"),
        );
    }

    /// `meta[K][i]` as an expression: a constant or a variable.
    pub(super) fn meta_expr(&mut self, expr: &ast::MetaExpr<Node<'_>>) -> Expr {
        self.touch_shared();
        let range = expr.syntax().text_range();
        let Some(token) = expr.meta_ref() else {
            return self.missing(range);
        };
        if self.lenient && matches!(self.meta, MetaState::Absent) {
            return self.opaque_meta_expr(range);
        }
        let Some((graph, index)) = self.resolve_meta(&token) else {
            return self.missing(range);
        };
        self.meta_node_expr(&graph, index, range)
            .unwrap_or_else(|| self.missing(range))
    }

    /// A lenient reading of `meta[K][i]` in a text without a metadata
    /// section (`show_meta_data=False`): a constant of unknown value, typed
    /// by the `/* ty=… */` comment after the reference when there is one
    /// (see `relay_ir::opaque`). Warned once per reference.
    fn opaque_meta_expr(&mut self, range: TextRange) -> Expr {
        let Some(text) = self.source_text() else {
            return self.missing(range);
        };
        let reference = text[range].to_string();
        let annotation = type_comment_after(text, usize::from(range.end())).map(str::to_string);
        if let Some(var) = self.opaque_constants.get(&reference) {
            return var.expr().clone();
        }
        let ty = annotation.as_deref().and_then(|t| self.type_from_text(t));
        let message = match (&annotation, &ty) {
            (Some(t), Some(_)) => format!(
                "`{reference}` refers to a metadata section the text does not have; read as a \
                 constant of type `{t}` whose value is unknown"
            ),
            _ => format!(
                "`{reference}` refers to a metadata section the text does not have, and no \
                 `/* ty=… */` comment gives its type; read as a tensor of unknown type and value"
            ),
        };
        self.warning(Code::MetaWithoutSection, range, message);
        let var = relay_ir::opaque::opaque_constant(&reference, ty, Some(self.span(range)));
        self.opaque_constants.insert(reference, var.clone());
        var.expr().clone()
    }

    /// The type written `text` (from a `/* ty=… */` comment), if it reads
    /// as one.
    fn type_from_text(&self, text: &str) -> Option<relay_ir::Type> {
        let wrapped = format!("fn (%x: {text}) {{ %x }}");
        let parse = relay_syntax::parse_expr(&wrapped);
        if !parse.errors().is_empty() {
            return None;
        }
        let (expr, diagnostics) = super::lower_expr(self.file, &parse.expr_file()?);
        if diagnostics.iter().any(|d| d.is_error()) {
            return None;
        }
        expr.as_function()?
            .params()
            .first()?
            .type_annotation()
            .cloned()
    }

    /// The expression for node `index`, reporting what is not one.
    fn meta_node_expr(
        &mut self,
        graph: &Arc<ObjectGraph>,
        index: usize,
        range: TextRange,
    ) -> Option<Expr> {
        if let Some(expr) = self.cached_meta_expr(index) {
            return Some(expr);
        }
        let node = match NodeRef::new(graph, index) {
            Ok(node) => node,
            Err(error) => {
                self.report_meta_error(range, error);
                return None;
            }
        };
        let span = Some(self.span(range));
        let expr = match node.type_key() {
            "relay.Constant" => match node.tensor_field("data") {
                Ok(data) => Expr::constant(data, span),
                Err(error) => {
                    self.report_meta_error(range, error);
                    return None;
                }
            },
            "relay.Var" => {
                let name = node
                    .field("vid")
                    .and_then(|vid| vid.field("name_hint"))
                    .and_then(|name| name.as_str().map(str::to_string));
                match name {
                    Ok(name) => Var::new(name, None, span).into_expr(),
                    Err(error) => {
                        self.report_meta_error(range, error);
                        return None;
                    }
                }
            }
            type_key if is_attrs_type(type_key) => {
                self.error(
                    Code::InvalidMetadata,
                    range,
                    format!(
                        "this is an attributes object (`{type_key}`), which can only be the last \
                         argument of a call"
                    ),
                );
                return None;
            }
            type_key => {
                let shown = if type_key.is_empty() {
                    "null"
                } else {
                    type_key
                };
                self.error(
                    Code::InvalidMetadata,
                    range,
                    format!(
                        "this metadata object is a `{shown}`; only `relay.Constant` and \
                         `relay.Var` objects can be used as expressions"
                    ),
                );
                return None;
            }
        };
        self.cache_meta_expr(index, &expr);
        Some(expr)
    }

    /// `meta[K][i]` as an attribute value: what TVM's reflection sees.
    pub(super) fn meta_attr_value(&mut self, expr: &ast::MetaExpr<Node<'_>>) -> AttrValue {
        self.touch_shared();
        let range = expr.syntax().text_range();
        let Some(token) = expr.meta_ref() else {
            return AttrValue::Null;
        };
        match self.resolve_meta(&token) {
            Some((graph, index)) => self.meta_node_value(&graph, index, range),
            None => AttrValue::Null,
        }
    }

    /// A node as an attribute value: immediates, strings and arrays by
    /// value, constants as expressions, anything else opaque.
    fn meta_node_value(
        &mut self,
        graph: &Arc<ObjectGraph>,
        index: usize,
        range: TextRange,
    ) -> AttrValue {
        let node = match NodeRef::new(graph, index) {
            Ok(node) => node,
            Err(error) => {
                self.report_meta_error(range, error);
                return AttrValue::Null;
            }
        };
        let id = self.meta_dim_id(graph, index);
        let read = |node: NodeRef<'_>| -> Result<Option<AttrValue>, MetaError> {
            Ok(Some(match node.type_key() {
                "" => AttrValue::Null,
                "IntImm" => AttrValue::IntImm {
                    value: node.int_field("value")?,
                    dtype: node.dtype_field("dtype")?,
                    id,
                },
                "FloatImm" => AttrValue::FloatImm {
                    value: node.float_field("value")?,
                    dtype: node.dtype_field("dtype")?,
                },
                "runtime.String" => AttrValue::Str(node.as_str()?.to_string()),
                _ => return Ok(None),
            }))
        };
        match read(node) {
            Ok(Some(value)) => value,
            Ok(None) => match node.type_key() {
                "Array" => {
                    let items: Vec<usize> = match node.items() {
                        Ok(items) => items.iter().map(NodeRef::index).collect(),
                        Err(error) => {
                            self.report_meta_error(range, error);
                            return AttrValue::Null;
                        }
                    };
                    AttrValue::Array(
                        items
                            .into_iter()
                            .map(|item| self.meta_node_value(graph, item, range))
                            .collect(),
                    )
                }
                "relay.Constant" => match self.meta_node_expr(graph, index, range) {
                    Some(expr) => AttrValue::Expr(expr),
                    None => AttrValue::Null,
                },
                _ => AttrValue::Meta(MetaObject {
                    graph: Arc::clone(graph),
                    index,
                }),
            },
            Err(error) => {
                self.report_meta_error(range, error);
                AttrValue::Null
            }
        }
    }

    /// The identity of an `IntImm` node of the section (a new one for a
    /// node of another graph).
    fn meta_dim_id(&self, graph: &Arc<ObjectGraph>, index: usize) -> DimId {
        match &self.meta {
            MetaState::Loaded(section) if Arc::ptr_eq(&section.graph, graph) => {
                section.dim_ids.nth(index)
            }
            _ => DimId::fresh(),
        }
    }

    /// `meta[K][i]` as a shape dimension: an integer or a symbolic size.
    pub(super) fn meta_dim(&mut self, meta: &ast::MetaRef<Token<'_>>) -> Dim {
        self.touch_shared();
        let range = token_range(meta);
        let Some((graph, index)) = self.resolve_meta(meta) else {
            return Dim::Any;
        };
        let Ok(node) = NodeRef::new(&graph, index) else {
            return Dim::Any;
        };
        match node.type_key() {
            "IntImm" => match (node.int_field("value"), node.dtype_field("dtype")) {
                (Ok(value), Ok(dtype)) => Dim::Int {
                    value,
                    dtype,
                    id: self.meta_dim_id(&graph, index),
                },
                (Err(error), _) | (_, Err(error)) => {
                    self.report_meta_error(range, error);
                    Dim::Any
                }
            },
            type_key if type_key.starts_with("tir.") => Dim::Meta(MetaObject {
                graph: Arc::clone(&graph),
                index,
            }),
            type_key => {
                self.error(
                    Code::InvalidMetadata,
                    range,
                    format!(
                        "a shape dimension must be an integer expression, but this metadata \
                         object is a `{type_key}`"
                    ),
                );
                Dim::Any
            }
        }
    }

    /// The trailing `meta[…]` argument of a call, when it is an attrs
    /// object: `Ok(Some(attrs))`. `Ok(None)` when it is another object (an
    /// ordinary argument), `Err(())` when the reference is bad (reported).
    pub(super) fn meta_call_attrs(
        &mut self,
        expr: &ast::MetaExpr<Node<'_>>,
    ) -> Result<Option<Attrs>, ()> {
        self.touch_shared();
        let range = expr.syntax().text_range();
        let Some(token) = expr.meta_ref() else {
            return Err(());
        };
        if self.lenient && matches!(self.meta, MetaState::Absent) {
            // No section: an attrs object cannot be made up, anything else
            // is a value (see `opaque_meta_expr`).
            return match token.key() {
                Some(key) if is_attrs_type(key) => {
                    self.resolve_meta(&token);
                    Err(())
                }
                _ => Ok(None),
            };
        }
        let Some((graph, index)) = self.resolve_meta(&token) else {
            return Err(());
        };
        let Ok(node) = NodeRef::new(&graph, index) else {
            return Err(());
        };
        let type_key = node.type_key().to_string();
        if !is_attrs_type(&type_key) {
            return Ok(None);
        }
        if type_key == "DictAttrs" {
            let entries = match node.field("__dict__").and_then(|d| d.map_entries()) {
                Ok(entries) => entries,
                Err(error) => {
                    self.report_meta_error(range, error);
                    return Err(());
                }
            };
            let mut fields = Vec::new();
            for (key, value) in entries {
                let key = match key {
                    relay_ir::metadata::MapKey::Str(s) => s.to_string(),
                    relay_ir::metadata::MapKey::Node(k) => {
                        k.as_str().unwrap_or_default().to_string()
                    }
                };
                let value = self.meta_node_value(&graph, value.index(), range);
                fields.push((key, value));
            }
            return Ok(Some(Attrs::new(type_key, fields)));
        }
        let Some(schema) = super::attrs::lookup_schema(&type_key) else {
            self.error(
                Code::InvalidMetadata,
                range,
                format!("`{type_key}` is not an attributes type lowering knows"),
            );
            return Err(());
        };
        let mut fields = Vec::with_capacity(schema.fields.len());
        for field in &schema.fields {
            let name = field.name.as_str();
            if self.lenient && node.attr(name).is_none() {
                // An attrs object another TVM version saved, without a
                // field v0.13 has: the value that version meant, else the
                // field's default.
                let (value, versions) = relay_ir::op::older_default(&type_key, name)
                    .unwrap_or_else(|| {
                        (
                            relay_ir::op::default_value(&field.default, &field.ty),
                            "versions without it",
                        )
                    });
                self.older_value_warning(&type_key, name, &value, versions, range);
                fields.push((field.name.clone(), value));
                continue;
            }
            let value: Result<AttrValue, MetaError> = match &field.ty {
                AttrType::Int | AttrType::UInt64 => node.int_field(name).map(AttrValue::Int),
                AttrType::Double => node.float_field(name).map(AttrValue::Double),
                AttrType::Bool => node.bool_field(name).map(AttrValue::Bool),
                AttrType::StdString => node.str_field(name).map(|s| AttrValue::Str(s.to_string())),
                AttrType::DataType => node.dtype_field(name).map(AttrValue::DataType),
                ty => match node.field(name) {
                    Ok(child) => {
                        let value = self.meta_node_value(&graph, child.index(), range);
                        super::attrs::convert(value, ty).map_err(|found| MetaError::Node {
                            node: index,
                            message: format!(
                                "field `{name}` of `{type_key}` must be a `{ty}`, found {found}"
                            ),
                        })
                    }
                    Err(error) => Err(error),
                },
            };
            let value = match value {
                Ok(value) => value,
                Err(error) => {
                    self.report_meta_error(range, error);
                    relay_ir::op::default_value(&field.default, &field.ty)
                }
            };
            fields.push((field.name.clone(), value));
        }
        Ok(Some(Attrs::new(type_key, fields)))
    }
}

/// The type of a `/* ty=… */` comment right after `end` in `text` (white
/// space between is skipped): the text after `ty=` up to the end of the
/// comment or a following ` span=`.
fn type_comment_after(text: &str, end: usize) -> Option<&str> {
    let rest = text.get(end..)?.trim_start();
    let body = rest.strip_prefix("/*")?;
    let body = &body[..body.find("*/")?];
    let ty = body.trim_start().strip_prefix("ty=")?;
    let ty = match ty.find(" span=") {
        Some(i) => &ty[..i],
        None => ty,
    };
    Some(ty.trim()).filter(|t| !t.is_empty())
}
