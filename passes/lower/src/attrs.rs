//! Attributes: values (TVM's `ParseAttributeValue`), call attributes built
//! the way TVM's reflection builds an attrs object (`ParseCallArgs`,
//! `ReflectionVTable::CreateObject`, `AttrsNode::InitByPackedArgs`), and
//! function and parameter attributes (`ParseFunctionDef`).
//!
//! A call's attrs object has every field of its schema, in declaration
//! order: the given value converted to the field's type as TVM's
//! `AttrInitVisitor`/`SetValue` converts a packed argument, or the declared
//! default. A missing required field, an unknown key and a value of the wrong
//! type are errors (TVM's `AttrError`s), reported at the call and recovered
//! from with the default.

use super::exprs::number;
use super::{suggestion, Lowerer};
use relay_ir::diagnostic::{Code, Diagnostic};
use relay_ir::dtype::DataType;
pub use relay_ir::op::{self, default_value, AttrField, AttrType, AttrsSchema};
use relay_ir::{AttrValue, Attrs, DictAttrs, Expr, ExprKind};
use relay_syntax::ast::{self, AstNode, AstToken};
use relay_syntax::green_view::{joined_text, Node};
use relay_syntax::literal::NumberValue;
use relay_syntax::TextRange;
use std::borrow::Cow;

/// TVM's key for a function's (or a parameter's) virtual device.
const VIRTUAL_DEVICE: &str = "virtual_device";

/// The key that names the attrs type of a call whose callee declares none.
const ATTRS_TYPE_KEY: &str = "attrs_type_key";

/// One `key=value` of a call, with its value as TVM's parser reads it.
pub(super) struct Given<'a> {
    /// The key, borrowed from the tree unless it is dotted.
    key: Cow<'a, str>,
    value: AttrValue,
    key_range: TextRange,
    value_range: TextRange,
    /// Whether the value was written as `meta[…]` (a failed reference reads
    /// as null and has been reported already).
    from_meta: bool,
}

/// The schema of an attrs type. The operator table also holds the types
/// libtvm registers for no operator (`attrs.TestAttrs`).
pub(super) fn lookup_schema(type_key: &str) -> Option<&'static AttrsSchema> {
    op::attrs_schema(type_key)
}

/// How `value` reads in a message.
fn describe(value: &AttrValue) -> String {
    match value {
        AttrValue::Null => "`None`".to_string(),
        AttrValue::Int(_) | AttrValue::IntImm { .. } => "an integer".to_string(),
        AttrValue::Double(_) | AttrValue::FloatImm { .. } => "a float".to_string(),
        AttrValue::Bool(_) => "a boolean".to_string(),
        AttrValue::Str(s) => format!("the string \"{s}\""),
        AttrValue::DataType(_) => "a data type".to_string(),
        AttrValue::Array(_) => "a list".to_string(),
        AttrValue::Map(_) => "a map".to_string(),
        AttrValue::Any => "`?`".to_string(),
        AttrValue::Expr(_) => "an expression".to_string(),
        AttrValue::Meta(m) => format!("a `{}` object", m.type_key()),
    }
}

/// Converts a value as TVM converts a packed argument to a field of type
/// `ty`; the error says what the value is.
pub(super) fn convert(value: AttrValue, ty: &AttrType) -> Result<AttrValue, String> {
    use AttrValue as V;
    let mismatch = |value: &AttrValue| Err(describe(value));
    match ty {
        AttrType::Int | AttrType::UInt64 => match value {
            V::Int(v) | V::IntImm { value: v, .. } => Ok(V::Int(v)),
            V::Bool(b) => Ok(V::Int(i64::from(b))),
            other => mismatch(&other),
        },
        AttrType::Bool => match value {
            V::Int(v) | V::IntImm { value: v, .. } => Ok(V::Bool(v != 0)),
            V::Bool(b) => Ok(V::Bool(b)),
            other => mismatch(&other),
        },
        AttrType::Double => match value {
            V::Int(v) | V::IntImm { value: v, .. } => Ok(V::Double(v as f64)),
            V::Double(v) | V::FloatImm { value: v, .. } => Ok(V::Double(v)),
            other => mismatch(&other),
        },
        AttrType::StdString => match value {
            V::Str(s) => Ok(V::Str(s)),
            other => mismatch(&other),
        },
        AttrType::String => match value {
            V::Str(_) | V::Null => Ok(value),
            other => mismatch(&other),
        },
        AttrType::DataType => match value {
            V::Str(s) => match DataType::parse(&s) {
                Ok(dtype) => Ok(V::DataType(dtype)),
                Err(_) => Err(format!("the string \"{s}\", which is not a data type")),
            },
            V::DataType(_) => Ok(value),
            // A null `DataType` argument is the void type.
            V::Null => Ok(V::DataType(DataType::void())),
            other => mismatch(&other),
        },
        AttrType::PrimExpr => match value {
            // `PrimExpr::FromObject_` makes a string a `tir.StringImm`,
            // which prints as the string.
            V::IntImm { .. } | V::FloatImm { .. } | V::Null | V::Any | V::Str(_) => Ok(value),
            V::Int(v) => Ok(V::int_imm(v, DataType::INT32)),
            V::Meta(ref m) if m.type_key().starts_with("tir.") => Ok(value),
            other => mismatch(&other),
        },
        AttrType::Integer | AttrType::BoolObj => match value {
            V::IntImm { .. } | V::Null => Ok(value),
            V::Int(v) => Ok(V::int_imm(v, DataType::INT32)),
            other => mismatch(&other),
        },
        AttrType::FloatImm => match value {
            V::FloatImm { .. } | V::Null => Ok(value),
            other => mismatch(&other),
        },
        AttrType::Array(inner) => match value {
            // Elements are type-checked as they are (`ObjectTypeChecker`),
            // without the conversions of a packed argument.
            V::Array(items) => items
                .into_iter()
                .map(|item| match (&**inner, item) {
                    (AttrType::PrimExpr, V::Str(s)) => Err(describe(&V::Str(s))),
                    (_, item) => convert(item, inner),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(V::Array)
                .map_err(|found| format!("a list containing {found}")),
            V::Null => Ok(V::Null),
            other => mismatch(&other),
        },
        AttrType::Optional(inner) => match value {
            V::Null => Ok(V::Null),
            other => convert(other, inner),
        },
        AttrType::Map => match value {
            V::Map(_) | V::Null => Ok(value),
            V::Meta(ref m) if m.type_key() == "Map" => Ok(value),
            other => mismatch(&other),
        },
        AttrType::ObjectRef => Ok(value),
        AttrType::Expr => match value {
            V::Expr(_) | V::Null => Ok(value),
            V::Meta(ref m) if m.type_key().starts_with("relay.") => Ok(value),
            other => mismatch(&other),
        },
        AttrType::Constant => match value {
            V::Null => Ok(value),
            V::Expr(ref e) if matches!(e.kind(), ExprKind::Constant(_)) => Ok(value),
            other => mismatch(&other),
        },
        AttrType::VirtualDevice => match value {
            V::Null => Ok(value),
            V::Meta(ref m) if m.type_key() == "VirtualDevice" => Ok(value),
            other => mismatch(&other),
        },
        AttrType::EnvFunc | AttrType::IndexMap => match value {
            V::Meta(_) | V::Null => Ok(value),
            other => mismatch(&other),
        },
    }
}

/// Builds a `DictAttrs` object from the given items, in order (a key given
/// twice keeps its first place and its last value, as TVM's `Map` does).
fn dict_attrs(given: Vec<Given<'_>>) -> Attrs {
    let mut dict = DictAttrs::default();
    for g in given {
        dict.set(&g.key, g.value);
    }
    Attrs::new("DictAttrs", dict.entries().to_vec())
}

impl Lowerer {
    /// The value of an attribute as TVM's parser reads it, before any
    /// conversion: integers and floats are immediates with their width,
    /// `True`/`False` int32 immediates, strings strings, `[…]` arrays, `(v)`
    /// is `v`, `None`/`nullptr` null, `meta[…]` the object, anything else an
    /// expression.
    pub(super) fn attr_value(&mut self, value: ast::AttrValue<Node<'_>>) -> AttrValue {
        match value {
            ast::AttrValue::Literal(literal) => match literal.kind() {
                Some(ast::LiteralKind::Int(int)) => match number(int.text()) {
                    Ok(NumberValue::Int { value, bits }) => {
                        AttrValue::int_imm(value, DataType::int(bits))
                    }
                    _ => AttrValue::Null,
                },
                Some(ast::LiteralKind::Float(float)) => match number(float.text()) {
                    Ok(NumberValue::Float { value, bits }) => AttrValue::FloatImm {
                        value,
                        dtype: DataType::float(bits),
                    },
                    _ => AttrValue::Null,
                },
                Some(ast::LiteralKind::Bool(b)) => {
                    AttrValue::int_imm(i64::from(b.value()), DataType::INT32)
                }
                Some(ast::LiteralKind::String(string)) => {
                    AttrValue::Str(string.value().into_owned())
                }
                None => AttrValue::Null,
            },
            ast::AttrValue::MetaExpr(meta) => self.meta_attr_value(&meta),
            ast::AttrValue::AttrListValue(list) => {
                AttrValue::Array(list.values().map(|v| self.attr_value(v)).collect())
            }
            ast::AttrValue::AttrParenValue(paren) => match paren.value() {
                Some(inner) => self.attr_value(inner),
                None => AttrValue::Null,
            },
            ast::AttrValue::AttrNullValue(_) => AttrValue::Null,
            ast::AttrValue::Expr(expr) => AttrValue::Expr(self.atomic(expr)),
        }
    }

    /// The `key=value` items of a call, in order. A key given twice is
    /// kept twice (the last value counts) and gets a warning.
    pub(super) fn given_attrs<'a>(
        &mut self,
        attrs: impl Iterator<Item = ast::Attr<Node<'a>>>,
    ) -> Vec<Given<'a>> {
        let mut out: Vec<Given<'a>> = Vec::new();
        for attr in attrs {
            let Some(key_node) = attr.key_node() else {
                continue;
            };
            // `AttrKey::name`, borrowed from the tree when it is one token.
            let key = joined_text(key_node.name_tokens());
            let key_range = key_node.syntax().range();
            let (value, value_range, from_meta) = match attr.value() {
                Some(v) => (
                    self.attr_value(v),
                    v.syntax().range(),
                    matches!(v, ast::AttrValue::MetaExpr(_)),
                ),
                None => (AttrValue::Null, key_range, true),
            };
            if let Some(previous) = out.iter().find(|g| g.key == key) {
                let diagnostic = Diagnostic::warning(
                    Code::DuplicateAttribute,
                    format!("attribute `{key}` is given twice; the last value is used"),
                )
                .with_span(self.span(key_range))
                .with_label(self.span(previous.key_range), "first given here");
                self.push(diagnostic);
            }
            if out.is_empty() {
                // Calls take a few attributes: grow once.
                out.reserve(4);
            }
            out.push(Given {
                key,
                value,
                key_range,
                value_range,
                from_meta,
            });
        }
        out
    }

    /// The attrs object of a call (`ParseCallArgs`): `meta` when the last
    /// argument was an attrs object; for an operator with an attrs type, an
    /// object of that type (all defaults when nothing is given); otherwise
    /// the type named by `attrs_type_key`, or none when no attribute is given.
    /// Built from the text (not read from the metadata section, whose
    /// objects keep their identity), it is shared with every equal one
    /// when the lowering interns (the editor's: see `Lowerer`'s `interner`).
    pub(super) fn call_attrs(
        &mut self,
        callee: &Expr,
        callee_range: TextRange,
        given: Vec<Given<'_>>,
        meta: Option<Attrs>,
    ) -> Option<Attrs> {
        if meta.is_some() {
            return meta;
        }
        let attrs = self.attrs_from_text(callee, callee_range, given)?;
        Some(match &self.interner {
            Some(interner) => interner.attrs(attrs),
            None => attrs,
        })
    }

    /// The attrs object of a call without a `meta[…]` attrs argument.
    fn attrs_from_text(
        &mut self,
        callee: &Expr,
        callee_range: TextRange,
        mut given: Vec<Given<'_>>,
    ) -> Option<Attrs> {
        let op = callee.as_op();
        if let Some(key) = op.and_then(|op| op.attrs_type.as_deref()) {
            if op::is_dict_attrs(key) {
                return Some(dict_attrs(given));
            }
            if let Some(schema) = self.op_schema(key) {
                return Some(self.schema_attrs(schema, given, callee_range));
            }
        }
        if given.is_empty() {
            return None;
        }
        let untyped = op.filter(|_| self.lenient).and_then(|op| {
            let key = op::untyped_op_attrs_type(&op.name)?;
            Some((op, key, self.op_schema(key)?))
        });
        if let Some((op, key, schema)) = untyped {
            if !given.iter().any(|g| g.key == ATTRS_TYPE_KEY) {
                self.warning(
                    Code::AttrsTypeFromOperator,
                    callee_range,
                    format!(
                        "`{}` registers no attributes type, so TVM's parser cannot read these \
                         attributes; read as `{key}`, the type TVM builds them with",
                        op.name
                    ),
                );
                return Some(self.schema_attrs(schema, given, callee_range));
            }
        }
        let Some(position) = given.iter().rposition(|g| g.key == ATTRS_TYPE_KEY) else {
            let help = match op {
                Some(op) => format!("`{}` takes no attributes", op.name),
                None => format!(
                    "a call of something other than an operator takes attributes only with \
                     `{ATTRS_TYPE_KEY}=\"…\"` naming their type"
                ),
            };
            self.error_with_help(
                Code::UnknownAttribute,
                callee_range,
                "unable to determine the 'attrs_type_key' with which to represent the call \
                 attributes for this operator",
                Some(help),
            );
            return None;
        };
        let key = given.remove(position);
        given.retain(|g| g.key != ATTRS_TYPE_KEY);
        match key.value {
            AttrValue::Str(s) if s.is_empty() => {
                let diagnostic = Diagnostic::warning(
                    Code::IgnoredAttributes,
                    "`attrs_type_key` is empty, so TVM drops the call's attributes",
                )
                .with_span(self.span(key.value_range));
                self.push(diagnostic);
                None
            }
            AttrValue::Str(s) if op::is_dict_attrs(&s) => Some(dict_attrs(given)),
            AttrValue::Str(s) => match lookup_schema(&s) {
                Some(schema) => Some(self.schema_attrs(schema, given, callee_range)),
                None => {
                    let help = suggestion(
                        &s,
                        op::all_attrs_schemas().iter().map(|s| s.type_key.as_str()),
                        str::to_string,
                    );
                    self.error_with_help(
                        Code::UnknownAttribute,
                        key.value_range,
                        format!("`{s}` is not a registered attributes type"),
                        help,
                    );
                    None
                }
            },
            AttrValue::Null if key.from_meta => None,
            other => {
                self.error(
                    Code::InvalidAttributeValue,
                    key.value_range,
                    format!(
                        "`{ATTRS_TYPE_KEY}` must be a string, found {}",
                        describe(&other)
                    ),
                );
                None
            }
        }
    }

    /// An attrs object of `schema` from the given items.
    fn schema_attrs(
        &mut self,
        schema: &'static AttrsSchema,
        mut given: Vec<Given<'_>>,
        anchor: TextRange,
    ) -> Attrs {
        let type_key = schema.type_key.as_str();
        let mut used = vec![false; given.len()];
        let mut fields = Vec::with_capacity(schema.fields.len());
        let mut missing = Vec::new();
        for field in &schema.fields {
            let mut chosen = None;
            for (i, g) in given.iter().enumerate() {
                if g.key == field.name {
                    used[i] = true;
                    chosen = Some(i);
                }
            }
            let value = match chosen {
                Some(i) => self.field_value(type_key, field, &mut given[i]),
                None if field.is_required() && self.lenient => {
                    match op::older_default(type_key, &field.name) {
                        Some((value, versions)) => {
                            self.older_value_warning(
                                type_key,
                                &field.name,
                                &value,
                                versions,
                                anchor,
                            );
                            value
                        }
                        None => {
                            missing.push(field.name.as_str());
                            default_value(&field.default, &field.ty)
                        }
                    }
                }
                None => {
                    if field.is_required() {
                        missing.push(field.name.as_str());
                    }
                    default_value(&field.default, &field.ty)
                }
            };
            fields.push((field.name.clone(), value));
        }
        for (g, used) in given.iter().zip(used) {
            if used {
                continue;
            }
            let help = op::suggest_attr(schema, &g.key).map(|s| format!("did you mean `{s}`?"));
            // Leniently, a field close to one v0.13 has stays an error (a
            // typo, with its suggestion); another version's field is dropped.
            let mut diagnostic = if self.lenient && help.is_none() {
                Diagnostic::warning(
                    Code::DroppedAttribute,
                    format!(
                        "`{type_key}` does not have field `{}` in TVM v0.13; dropped",
                        g.key
                    ),
                )
            } else {
                Diagnostic::error(
                    Code::UnknownAttribute,
                    format!("`{type_key}` does not have field `{}`", g.key),
                )
            }
            .with_span(self.span(g.key_range));
            if let Some(help) = help {
                diagnostic = diagnostic.with_help(help);
            }
            let names: Vec<&str> = schema.field_names().collect();
            diagnostic = diagnostic.with_note(if names.is_empty() {
                format!("`{type_key}` has no fields")
            } else {
                format!("possible fields: {}", names.join(", "))
            });
            self.push(diagnostic);
        }
        if !missing.is_empty() {
            let list = missing
                .iter()
                .map(|name| format!("`{name}`"))
                .collect::<Vec<_>>()
                .join(", ");
            let message = if missing.len() == 1 {
                format!("{type_key}: Cannot find required field {list} during initialization")
            } else {
                format!("{type_key}: Cannot find required fields {list} during initialization")
            };
            let help = format!(
                "give {} in the call's attributes (`None` stands for a null object)",
                missing
                    .iter()
                    .map(|name| format!("`{name}=…`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            self.error_with_help(Code::MissingAttribute, anchor, message, Some(help));
        }
        Attrs::new(type_key, fields)
    }

    /// Warns that `field` of `type_key`, which v0.13 requires and the text
    /// lacks, takes the value `value` other versions meant.
    pub(super) fn older_value_warning(
        &mut self,
        type_key: &str,
        field: &str,
        value: &AttrValue,
        versions: &str,
        anchor: TextRange,
    ) {
        let shown = match value {
            AttrValue::Null => "None".to_string(),
            AttrValue::Bool(true) => "True".to_string(),
            AttrValue::Bool(false) => "False".to_string(),
            other => describe(other),
        };
        self.warning(
            Code::OldAttributes,
            anchor,
            format!(
                "{type_key}: no `{field}`, which TVM v0.13 requires; read as `{field}={shown}`, \
                 what TVM {versions} meant"
            ),
        );
    }

    /// The given value of `field`, converted; on a mismatch, reported, and
    /// the default.
    fn field_value(
        &mut self,
        type_key: &str,
        field: &AttrField,
        given: &mut Given<'_>,
    ) -> AttrValue {
        let value = std::mem::replace(&mut given.value, AttrValue::Null);
        if given.from_meta && value.is_null() && !field.ty.is_nullable() {
            // A failed meta reference, reported already.
            return default_value(&field.default, &field.ty);
        }
        if let (AttrType::DataType, AttrValue::Str(s)) = (&field.ty, &value) {
            if DataType::parse(s).is_err() {
                let help = suggestion(
                    s,
                    super::types::COMMON_DTYPES.iter().copied(),
                    str::to_string,
                );
                self.error_with_help(
                    Code::UnknownType,
                    given.value_range,
                    format!("unknown type `{s}`"),
                    help,
                );
                return default_value(&field.default, &field.ty);
            }
        }
        let given_kind = match &value {
            AttrValue::Array(_) => AttrValue::Array(Vec::new()),
            AttrValue::Null => AttrValue::Null,
            _ => AttrValue::Any,
        };
        match convert(value, &field.ty) {
            Ok(value) => {
                if let Some(bound) = field.lower_bound {
                    let number = match &value {
                        AttrValue::Int(v) => Some(*v as f64),
                        AttrValue::Double(v) => Some(*v),
                        _ => None,
                    };
                    if let Some(number) = number.filter(|n| *n < bound) {
                        self.error(
                            Code::InvalidAttributeValue,
                            given.value_range,
                            format!(
                                "{type_key}.{}: value {number} is smaller than the lower bound \
                                 {bound}",
                                field.name
                            ),
                        );
                    }
                }
                value
            }
            Err(found) => {
                let wants_list = field.ty.element_type().is_some()
                    && !matches!(given_kind, AttrValue::Array(_) | AttrValue::Null);
                let help = wants_list.then(|| "write a list, e.g. `[…]`".to_string());
                self.error_with_help(
                    Code::InvalidAttributeValue,
                    given.value_range,
                    format!(
                        "the value of `{}` must be of type `{}`, found {found}",
                        field.name, field.ty
                    ),
                    help,
                );
                default_value(&field.default, &field.ty)
            }
        }
    }

    /// Function attributes: a dictionary in the order written, and the
    /// `virtual_device=…` item, which TVM takes out of the dictionary.
    pub(super) fn function_attrs<'a>(
        &mut self,
        attrs: impl Iterator<Item = ast::Attr<Node<'a>>>,
    ) -> (DictAttrs, Option<AttrValue>) {
        let mut dict = DictAttrs::default();
        let mut virtual_device = None;
        for g in self.given_attrs(attrs) {
            if g.key == VIRTUAL_DEVICE {
                virtual_device = self.virtual_device(g);
            } else {
                dict.set(&g.key, g.value);
            }
        }
        (dict, virtual_device)
    }

    /// `{virtual_device=…}` after a parameter. TVM reads it only when it is
    /// the one item there.
    pub(super) fn param_virtual_device(
        &mut self,
        attrs: ast::ParamAttrs<Node<'_>>,
    ) -> Option<AttrValue> {
        let given = self.given_attrs(attrs.attrs());
        let distinct: std::collections::HashSet<&str> = given.iter().map(|g| &*g.key).collect();
        if distinct.len() == 1 && distinct.contains(VIRTUAL_DEVICE) {
            return given
                .into_iter()
                .last()
                .and_then(|g| self.virtual_device(g));
        }
        if !given.is_empty() {
            let diagnostic = Diagnostic::warning(
                Code::IgnoredAttributes,
                "TVM reads a parameter's attributes only when they are a lone \
                 `virtual_device=…`; these are ignored",
            )
            .with_span(self.span(attrs.syntax().range()));
            self.push(diagnostic);
        }
        None
    }

    /// Checks that a `virtual_device` value is a virtual device object.
    fn virtual_device(&mut self, g: Given<'_>) -> Option<AttrValue> {
        match g.value {
            AttrValue::Meta(ref m) if m.type_key() == "VirtualDevice" => Some(g.value),
            AttrValue::Null if g.from_meta => None,
            other => {
                self.error(
                    Code::InvalidAttributeValue,
                    g.value_range,
                    format!(
                        "`virtual_device` must be a virtual device (`meta[VirtualDevice][i]`), \
                         found {}",
                        describe(&other)
                    ),
                );
                None
            }
        }
    }
}
