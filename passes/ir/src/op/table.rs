//! Loading the operator table: the parser for the `ops.def` format (described
//! at the top of that file) and the process-wide registry built from it once.
//!
//! The table is static data compiled into the crate, so a malformed table is a
//! bug: [`registry`] panics on it, and the unit tests load the table so that
//! this can never happen at run time.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::schema::{AttrDefault, AttrField, AttrType, AttrsSchema, OpArg, OpDef, OpPattern};

/// The table text, compiled in.
pub(crate) const TABLE: &str = include_str!("ops.def");

/// The attrs type key of an open dictionary; it has no schema.
pub(crate) const DICT_ATTRS: &str = "DictAttrs";

/// The parsed table with its name indexes.
#[derive(Debug)]
pub(crate) struct Registry {
    pub(crate) ops: Vec<OpDef>,
    pub(crate) schemas: Vec<AttrsSchema>,
    op_index: HashMap<String, usize>,
    schema_index: HashMap<String, usize>,
}

impl Registry {
    pub(crate) fn op(&self, name: &str) -> Option<&OpDef> {
        self.op_index.get(name).map(|&i| &self.ops[i])
    }

    pub(crate) fn schema(&self, type_key: &str) -> Option<&AttrsSchema> {
        self.schema_index.get(type_key).map(|&i| &self.schemas[i])
    }
}

/// The registry built from [`TABLE`] on first use.
pub(crate) fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| match parse_table(TABLE) {
        Ok(registry) => registry,
        Err(err) => panic!("malformed operator table ops.def: {err}"),
    })
}

/// A table error with its 1-based line number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TableError {
    pub(crate) line: usize,
    pub(crate) message: String,
}

impl std::fmt::Display for TableError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

enum Block {
    None,
    Attrs(AttrsSchema),
    Op(OpBuilder),
}

struct OpBuilder {
    line: usize,
    name: String,
    arguments: Option<Vec<OpArg>>,
    num_inputs: Option<i32>,
    attrs_type: Option<String>,
    call_attrs_type: Option<String>,
    pattern: Option<OpPattern>,
    stateful: bool,
    non_computational: bool,
    flags_seen: bool,
    support_level: Option<u32>,
    type_rel: Option<String>,
    description: Option<String>,
}

impl OpBuilder {
    fn new(line: usize, name: String) -> OpBuilder {
        OpBuilder {
            line,
            name,
            arguments: None,
            num_inputs: None,
            attrs_type: None,
            call_attrs_type: None,
            pattern: None,
            stateful: false,
            non_computational: false,
            flags_seen: false,
            support_level: None,
            type_rel: None,
            description: None,
        }
    }

    fn finish(self) -> Result<OpDef, TableError> {
        let err = |message: String| TableError {
            line: self.line,
            message,
        };
        let arguments = self
            .arguments
            .ok_or_else(|| err(format!("op `{}` has no `args` line", self.name)))?;
        let description = self
            .description
            .ok_or_else(|| err(format!("op `{}` has no `doc` line", self.name)))?;
        let num_inputs = match self.num_inputs {
            Some(n) => n,
            None => i32::try_from(arguments.len()).map_err(|_| err("too many args".into()))?,
        };
        Ok(OpDef {
            name: self.name,
            num_inputs,
            arguments,
            attrs_type: self.attrs_type,
            call_attrs_type: self.call_attrs_type,
            pattern: self.pattern,
            stateful: self.stateful,
            non_computational: self.non_computational,
            support_level: self.support_level,
            type_rel: self.type_rel,
            description,
        })
    }
}

/// Parses a whole table and checks its cross references (every op's attrs
/// type has a schema; names are unique).
pub(crate) fn parse_table(text: &str) -> Result<Registry, TableError> {
    let mut ops = Vec::new();
    let mut schemas = Vec::new();
    let mut op_lines = Vec::new();
    let mut block = Block::None;

    let close = |block: Block,
                 ops: &mut Vec<OpDef>,
                 op_lines: &mut Vec<usize>,
                 schemas: &mut Vec<AttrsSchema>|
     -> Result<(), TableError> {
        match block {
            Block::None => {}
            Block::Attrs(schema) => schemas.push(schema),
            Block::Op(builder) => {
                op_lines.push(builder.line);
                ops.push(builder.finish()?);
            }
        }
        Ok(())
    };

    for (index, raw) in text.lines().enumerate() {
        let line_no = index + 1;
        let err = |message: String| TableError {
            line: line_no,
            message,
        };
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if !raw.starts_with(char::is_whitespace) {
            let previous = std::mem::replace(&mut block, Block::None);
            close(previous, &mut ops, &mut op_lines, &mut schemas)?;
            block = match trimmed.split_once(' ') {
                Some(("attrs", key)) => Block::Attrs(AttrsSchema {
                    type_key: checked_name(key.trim()).map_err(err)?,
                    fields: Vec::new(),
                }),
                Some(("op", name)) => Block::Op(OpBuilder::new(
                    line_no,
                    checked_name(name.trim()).map_err(err)?,
                )),
                _ => {
                    return Err(err(format!(
                        "expected `attrs KEY` or `op NAME`, found `{trimmed}`"
                    )))
                }
            };
            continue;
        }
        match &mut block {
            Block::None => return Err(err("indented line outside a block".into())),
            Block::Attrs(schema) => {
                let field = parse_field(trimmed).map_err(err)?;
                if schema.field(&field.name).is_some() {
                    return Err(err(format!("duplicate field `{}`", field.name)));
                }
                schema.fields.push(field);
            }
            Block::Op(builder) => parse_op_line(builder, trimmed).map_err(err)?,
        }
    }
    close(block, &mut ops, &mut op_lines, &mut schemas)?;

    let mut schema_index = HashMap::new();
    for (i, schema) in schemas.iter().enumerate() {
        if schema_index.insert(schema.type_key.clone(), i).is_some() {
            return Err(TableError {
                line: 0,
                message: format!("duplicate attrs schema `{}`", schema.type_key),
            });
        }
    }
    let mut op_index = HashMap::new();
    for (i, op) in ops.iter().enumerate() {
        let line = op_lines[i];
        if op_index.insert(op.name.clone(), i).is_some() {
            return Err(TableError {
                line,
                message: format!("duplicate op `{}`", op.name),
            });
        }
        if let Some(key) = &op.attrs_type {
            if key != DICT_ATTRS && !schema_index.contains_key(key) {
                return Err(TableError {
                    line,
                    message: format!("op `{}` uses unknown attrs type `{key}`", op.name),
                });
            }
        }
    }
    Ok(Registry {
        ops,
        schemas,
        op_index,
        schema_index,
    })
}

/// Op names and type keys: dotted identifiers.
fn checked_name(name: &str) -> Result<String, String> {
    let valid = !name.is_empty()
        && name.split('.').all(|part| {
            part.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
    if valid {
        Ok(name.to_string())
    } else {
        Err(format!("invalid name `{name}`"))
    }
}

/// `name: TYPE = DEFAULT [min BOUND]` or `name: TYPE required [min BOUND]`.
fn parse_field(line: &str) -> Result<AttrField, String> {
    let (name, rest) = line
        .split_once(':')
        .ok_or_else(|| format!("expected `field: type ...`, found `{line}`"))?;
    let name = name.trim();
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') || name.is_empty() {
        return Err(format!("invalid field name `{name}`"));
    }
    let rest = rest.trim_start();
    let type_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    let ty = AttrType::parse(&rest[..type_end])?;
    let mut rest = rest[type_end..].trim();

    let mut lower_bound = None;
    if let Some(pos) = rest.rfind(" min ") {
        let bound = rest[pos + 5..].trim();
        lower_bound = Some(
            bound
                .parse::<f64>()
                .map_err(|_| format!("invalid lower bound `{bound}`"))?,
        );
        rest = rest[..pos].trim();
    }
    let default = if rest == "required" {
        AttrDefault::Required
    } else if let Some(literal) = rest.strip_prefix('=') {
        let literal = parse_literal(literal.trim())?;
        check_default(&ty, literal).map_err(|e| format!("field `{name}`: {e}"))?
    } else {
        return Err(format!(
            "field `{name}`: expected `= DEFAULT` or `required`, found `{rest}`"
        ));
    };
    Ok(AttrField {
        name: name.to_string(),
        ty,
        default,
        lower_bound,
    })
}

/// A default literal before it is checked against the field type.
#[derive(Debug, Clone, PartialEq)]
enum Literal {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
    Null,
    Void,
    EmptyMap,
    Unconstrained,
    Array(Vec<Literal>),
}

fn parse_literal(text: &str) -> Result<Literal, String> {
    let mut parser = LiteralParser { text, pos: 0 };
    let literal = parser.value()?;
    parser.skip_spaces();
    if parser.pos != text.len() {
        return Err(format!(
            "unexpected `{}` after default",
            &text[parser.pos..]
        ));
    }
    Ok(literal)
}

struct LiteralParser<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> LiteralParser<'a> {
    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    fn skip_spaces(&mut self) {
        let rest = self.rest();
        self.pos += rest.len() - rest.trim_start().len();
    }

    fn value(&mut self) -> Result<Literal, String> {
        self.skip_spaces();
        let rest = self.rest();
        if rest.starts_with('[') {
            self.pos += 1;
            let mut items = Vec::new();
            loop {
                self.skip_spaces();
                if self.rest().starts_with(']') {
                    self.pos += 1;
                    return Ok(Literal::Array(items));
                }
                if !items.is_empty() {
                    if !self.rest().starts_with(',') {
                        return Err(format!(
                            "expected `,` or `]` in array, found `{}`",
                            self.rest()
                        ));
                    }
                    self.pos += 1;
                }
                items.push(self.value()?);
            }
        }
        if let Some(body) = rest.strip_prefix('"') {
            let end = body.find('"').ok_or("unterminated string")?;
            if body[..end].contains('\\') {
                return Err("escapes are not supported in table strings".into());
            }
            self.pos += end + 2;
            return Ok(Literal::Str(body[..end].to_string()));
        }
        let len = rest
            .find(|c: char| c.is_whitespace() || c == ',' || c == ']')
            .unwrap_or(rest.len());
        let token = &rest[..len];
        self.pos += len;
        Ok(match token {
            "" => return Err("missing value".into()),
            "true" => Literal::Bool(true),
            "false" => Literal::Bool(false),
            "null" => Literal::Null,
            "void" => Literal::Void,
            "{}" => Literal::EmptyMap,
            "unconstrained" => Literal::Unconstrained,
            _ if token.contains(['.', 'e', 'E']) => Literal::Float(
                token
                    .parse::<f64>()
                    .map_err(|_| format!("invalid number `{token}`"))?,
            ),
            _ => Literal::Int(
                token
                    .parse::<i64>()
                    .map_err(|_| format!("invalid value `{token}`"))?,
            ),
        })
    }
}

/// Checks a literal against the field type and converts it to the default the
/// registry stores.
fn check_default(ty: &AttrType, literal: Literal) -> Result<AttrDefault, String> {
    let mismatch = |literal: &Literal| Err(format!("default {literal:?} does not fit type `{ty}`"));
    if literal == Literal::Null {
        return if ty.is_nullable() {
            Ok(AttrDefault::Null)
        } else {
            mismatch(&literal)
        };
    }
    match (ty, literal) {
        (AttrType::Int | AttrType::Integer | AttrType::PrimExpr, Literal::Int(v)) => {
            Ok(AttrDefault::Int(v))
        }
        (AttrType::UInt64, Literal::Int(v)) if v >= 0 => Ok(AttrDefault::Int(v)),
        (AttrType::Double | AttrType::FloatImm, Literal::Int(v)) => {
            Ok(AttrDefault::Double(v as f64))
        }
        (AttrType::Double | AttrType::FloatImm | AttrType::PrimExpr, Literal::Float(v)) => {
            Ok(AttrDefault::Double(v))
        }
        (AttrType::Bool | AttrType::BoolObj, Literal::Bool(v)) => Ok(AttrDefault::Bool(v)),
        (AttrType::StdString | AttrType::String, Literal::Str(s)) => Ok(AttrDefault::Str(s)),
        (AttrType::DataType, Literal::Void) => Ok(AttrDefault::DataType(String::new())),
        (AttrType::DataType, Literal::Str(s)) if !s.is_empty() => Ok(AttrDefault::DataType(s)),
        (AttrType::Array(inner), Literal::Array(items)) => items
            .into_iter()
            .map(|item| check_default(inner, item))
            .collect::<Result<Vec<_>, _>>()
            .map(AttrDefault::Array),
        (AttrType::Optional(inner), literal) => check_default(inner, literal),
        (AttrType::Map, Literal::EmptyMap) => Ok(AttrDefault::EmptyMap),
        (AttrType::VirtualDevice, Literal::Unconstrained) => Ok(AttrDefault::FullyUnconstrained),
        (_, literal) => mismatch(&literal),
    }
}

fn parse_op_line(builder: &mut OpBuilder, line: &str) -> Result<(), String> {
    let (key, value) = line
        .split_once(':')
        .ok_or_else(|| format!("expected `key: value`, found `{line}`"))?;
    let value = value.trim();
    let duplicate = || Err(format!("duplicate `{key}` line"));
    match key {
        "args" => {
            if builder.arguments.is_some() {
                return duplicate();
            }
            builder.arguments = Some(parse_args(value)?);
        }
        "num_inputs" => {
            if builder.num_inputs.is_some() {
                return duplicate();
            }
            let n = value
                .parse::<i32>()
                .map_err(|_| format!("invalid num_inputs `{value}`"))?;
            if n < -1 {
                return Err(format!("invalid num_inputs `{value}`"));
            }
            builder.num_inputs = Some(n);
        }
        "attrs" => {
            if builder.attrs_type.is_some() {
                return duplicate();
            }
            builder.attrs_type = Some(checked_name(value)?);
        }
        "call_attrs" => {
            if builder.call_attrs_type.is_some() {
                return duplicate();
            }
            builder.call_attrs_type = Some(checked_name(value)?);
        }
        "pattern" => {
            if builder.pattern.is_some() {
                return duplicate();
            }
            builder.pattern = Some(
                OpPattern::from_name(value).ok_or_else(|| format!("unknown pattern `{value}`"))?,
            );
        }
        "flags" => {
            if builder.flags_seen {
                return duplicate();
            }
            builder.flags_seen = true;
            for flag in value.split_whitespace() {
                match flag {
                    "stateful" => builder.stateful = true,
                    "non_computational" => builder.non_computational = true,
                    _ => return Err(format!("unknown flag `{flag}`")),
                }
            }
        }
        "level" => {
            if builder.support_level.is_some() {
                return duplicate();
            }
            builder.support_level = Some(
                value
                    .parse()
                    .map_err(|_| format!("invalid level `{value}`"))?,
            );
        }
        "rel" => {
            if builder.type_rel.is_some() {
                return duplicate();
            }
            builder.type_rel = Some(checked_name(value)?);
        }
        "doc" => {
            if builder.description.is_some() {
                return duplicate();
            }
            if value.is_empty() {
                return Err("empty doc".into());
            }
            builder.description = Some(value.to_string());
        }
        _ => return Err(format!("unknown op property `{key}`")),
    }
    Ok(())
}

/// `none`, or `name (kind), name (kind), ...`.
fn parse_args(value: &str) -> Result<Vec<OpArg>, String> {
    if value == "none" {
        return Ok(Vec::new());
    }
    value
        .split(',')
        .map(|item| {
            let item = item.trim();
            let (name, kind) = item
                .strip_suffix(')')
                .and_then(|item| item.split_once(" ("))
                .ok_or_else(|| format!("expected `name (kind)`, found `{item}`"))?;
            let name = name.trim();
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(format!("invalid argument name `{name}`"));
            }
            Ok(OpArg {
                name: name.to_string(),
                kind: kind.trim().to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err_of(text: &str) -> TableError {
        parse_table(text).expect_err("table should be rejected")
    }

    #[test]
    fn parses_a_small_table() {
        let table = "# comment\n\
            attrs relay.attrs.TestAttrs\n\
            \x20 axis: int = -1 min -1\n\
            \x20 shape: Optional<Array<Integer>> required\n\
            \x20 scales: Array<PrimExpr> = [1, 0.5]\n\
            \x20 dtype: DataType = void\n\
            \n\
            op test.op\n\
            \x20 args: data (Tensor), other (1D Tensor)\n\
            \x20 attrs: relay.attrs.TestAttrs\n\
            \x20 pattern: Injective\n\
            \x20 flags: stateful\n\
            \x20 level: 3\n\
            \x20 doc: A test op.\n";
        let registry = parse_table(table).unwrap();
        let schema = registry.schema("relay.attrs.TestAttrs").unwrap();
        assert_eq!(schema.fields[0].default, AttrDefault::Int(-1));
        assert_eq!(schema.fields[0].lower_bound, Some(-1.0));
        assert!(schema.fields[1].is_required());
        assert_eq!(
            schema.fields[2].default,
            AttrDefault::Array(vec![AttrDefault::Int(1), AttrDefault::Double(0.5)])
        );
        assert!(schema.fields[3].default.is_void_dtype());
        let op = registry.op("test.op").unwrap();
        assert_eq!(op.num_inputs, 2);
        assert_eq!(op.arguments[1].kind, "1D Tensor");
        assert_eq!(op.pattern, Some(OpPattern::Injective));
        assert!(op.stateful && !op.non_computational);
        assert_eq!(op.support_level, Some(3));
    }

    #[test]
    fn rejects_malformed_tables_with_line_numbers() {
        let e = err_of("attrs relay.attrs.A\n  x: integer = 1\n");
        assert_eq!(e.line, 2);
        assert!(e.message.contains("unknown attribute type"), "{e}");

        let e = err_of("attrs relay.attrs.A\n  x: int = \"one\"\n");
        assert!(e.message.contains("does not fit"), "{e}");

        let e = err_of("attrs relay.attrs.A\n  x: int = null\n");
        assert!(e.message.contains("does not fit"), "{e}");

        let e = err_of("attrs relay.attrs.A\n  x: int\n");
        assert!(
            e.message.contains("expected `= DEFAULT` or `required`"),
            "{e}"
        );

        let e = err_of("op a\n  args: data (Tensor)\n  attrs: relay.attrs.Missing\n  doc: x\n");
        assert_eq!(e.line, 1);
        assert!(e.message.contains("unknown attrs type"), "{e}");

        let e = err_of("op a\n  args: data (Tensor)\n");
        assert!(e.message.contains("no `doc`"), "{e}");

        let e = err_of("op a\n  args: none\n  doc: x\nop a\n  args: none\n  doc: y\n");
        assert_eq!(e.line, 4);

        let e = err_of("op a\n  args: none\n  pattern: Fancy\n  doc: x\n");
        assert_eq!(e.line, 3);

        let e = err_of("  stray: line\n");
        assert_eq!(e.line, 1);
    }

    #[test]
    fn the_compiled_in_table_loads() {
        let registry = parse_table(TABLE).unwrap_or_else(|e| panic!("ops.def: {e}"));
        assert!(registry.ops.len() >= 300);
        assert!(registry.schemas.len() >= 140);
    }
}
