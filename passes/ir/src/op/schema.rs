//! The shapes of the operator table: attribute field types and defaults,
//! attribute schemas, fusion patterns and operator definitions.
//!
//! Everything here is plain data. The registry in [`super::table`] builds these
//! values once from `ops.def`; later passes (type relations, fusion, the
//! evaluator) hang their own information off [`OpDef`] by name.

use std::fmt;

/// The type of one attribute field, as declared by TVM's attrs struct.
///
/// The distinctions matter for two consumers: the printer, which omits a field
/// whose value is structurally equal to its default, and the parser, which
/// converts a `key=value` item to the field's type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttrType {
    /// C++ `int`, `int32_t` or `int64_t`: printed as a bare decimal number.
    Int,
    /// C++ `uint64_t`.
    UInt64,
    /// C++ `double`: printed with an `f` suffix; compared with an absolute
    /// tolerance of 1e-9.
    Double,
    /// C++ `bool`: printed `True` / `False`.
    Bool,
    /// The boxed `Bool` object (an `IntImm` of dtype bool).
    BoolObj,
    /// C++ `std::string` (never null).
    StdString,
    /// The `String` object (may be null).
    String,
    /// A `DataType`; the void type (`NullValue<DataType>()`) prints as `""`.
    DataType,
    /// `PrimExpr` / `IndexExpr`: an integer or float immediate, `Any`, or a
    /// symbolic expression; may be null.
    PrimExpr,
    /// `Integer`: an `IntImm` object (int32 unless suffixed); may be null.
    Integer,
    /// `FloatImm` object; may be null.
    FloatImm,
    /// `Array<T>`; may be null.
    Array(Box<AttrType>),
    /// `Optional<T>`: null or a `T`.
    Optional(Box<AttrType>),
    /// `Map<String, ObjectRef>`.
    Map,
    /// Any object (`ObjectRef`), e.g. `split`'s `indices_or_sections`, which is
    /// an integer or an array.
    ObjectRef,
    /// A Relay expression.
    Expr,
    /// A Relay constant.
    Constant,
    /// A `VirtualDevice`.
    VirtualDevice,
    /// An `EnvFunc` (a registered global function).
    EnvFunc,
    /// A TIR `IndexMap`.
    IndexMap,
}

impl AttrType {
    /// Parses the table's spelling of a type (`Array<PrimExpr>`, `int`, ...).
    pub fn parse(text: &str) -> Result<AttrType, String> {
        let text = text.trim();
        for (wrapper, make) in [
            ("Array<", AttrType::Array as fn(Box<AttrType>) -> AttrType),
            (
                "Optional<",
                AttrType::Optional as fn(Box<AttrType>) -> AttrType,
            ),
        ] {
            if let Some(rest) = text.strip_prefix(wrapper) {
                let inner = rest
                    .strip_suffix('>')
                    .ok_or_else(|| format!("unclosed `<` in type `{text}`"))?;
                return Ok(make(Box::new(AttrType::parse(inner)?)));
            }
        }
        Ok(match text {
            "int" => AttrType::Int,
            "uint64" => AttrType::UInt64,
            "double" => AttrType::Double,
            "bool" => AttrType::Bool,
            "Bool" => AttrType::BoolObj,
            "str" => AttrType::StdString,
            "String" => AttrType::String,
            "DataType" => AttrType::DataType,
            "PrimExpr" => AttrType::PrimExpr,
            "Integer" => AttrType::Integer,
            "FloatImm" => AttrType::FloatImm,
            "Map" => AttrType::Map,
            "ObjectRef" => AttrType::ObjectRef,
            "Expr" => AttrType::Expr,
            "Constant" => AttrType::Constant,
            "VirtualDevice" => AttrType::VirtualDevice,
            "EnvFunc" => AttrType::EnvFunc,
            "IndexMap" => AttrType::IndexMap,
            _ => return Err(format!("unknown attribute type `{text}`")),
        })
    }

    /// Whether a field of this type can hold a null object (`None` in the text
    /// format). C++ scalars, `std::string` and `DataType` cannot.
    pub fn is_nullable(&self) -> bool {
        !matches!(
            self,
            AttrType::Int
                | AttrType::UInt64
                | AttrType::Double
                | AttrType::Bool
                | AttrType::StdString
                | AttrType::DataType
        )
    }

    /// The element type of an `Array<T>` (also through `Optional<Array<T>>`).
    pub fn element_type(&self) -> Option<&AttrType> {
        match self {
            AttrType::Array(inner) => Some(inner),
            AttrType::Optional(inner) => inner.element_type(),
            _ => None,
        }
    }
}

impl fmt::Display for AttrType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            AttrType::Array(inner) => return write!(f, "Array<{inner}>"),
            AttrType::Optional(inner) => return write!(f, "Optional<{inner}>"),
            AttrType::Int => "int",
            AttrType::UInt64 => "uint64",
            AttrType::Double => "double",
            AttrType::Bool => "bool",
            AttrType::BoolObj => "Bool",
            AttrType::StdString => "str",
            AttrType::String => "String",
            AttrType::DataType => "DataType",
            AttrType::PrimExpr => "PrimExpr",
            AttrType::Integer => "Integer",
            AttrType::FloatImm => "FloatImm",
            AttrType::Map => "Map",
            AttrType::ObjectRef => "ObjectRef",
            AttrType::Expr => "Expr",
            AttrType::Constant => "Constant",
            AttrType::VirtualDevice => "VirtualDevice",
            AttrType::EnvFunc => "EnvFunc",
            AttrType::IndexMap => "IndexMap",
        };
        f.write_str(name)
    }
}

/// The declared default of an attribute field.
///
/// The meaning of a variant depends on the field's [`AttrType`]:
/// * `Int` is a C++ integer for `Int`/`UInt64`, and an int32 `IntImm` for
///   `Integer` and for elements of `Array<PrimExpr>` / `Array<Integer>`.
/// * `Double` is a C++ double for `Double`, and a float32 `FloatImm` for
///   elements of `Array<PrimExpr>`. Such a `FloatImm` holds the literal
///   rounded to f32 (TVM builds it from a C++ `float`), so a parsed `0.1f`
///   is *not* structurally equal to a default element `0.1`.
/// * `Bool` is a C++ bool for `Bool` and a boxed `Bool` for `BoolObj`.
#[derive(Debug, Clone, PartialEq)]
pub enum AttrDefault {
    /// No default: the field must be given when the attrs object is built,
    /// and the printer always prints it.
    Required,
    /// A null object (`NullValue<T>()`), printed `None`.
    Null,
    Int(i64),
    Double(f64),
    Bool(bool),
    /// A string (for `StdString` and `String` fields).
    Str(String),
    /// A data type by name, e.g. `"float32"`; the empty string is the void
    /// type (`NullValue<DataType>()`).
    DataType(String),
    /// An array; elements as described above.
    Array(Vec<AttrDefault>),
    /// An empty `Map`.
    EmptyMap,
    /// `VirtualDevice::FullyUnconstrained()`.
    FullyUnconstrained,
}

impl AttrDefault {
    /// Whether the field has no default.
    pub fn is_required(&self) -> bool {
        matches!(self, AttrDefault::Required)
    }

    /// The void `DataType` default.
    pub fn is_void_dtype(&self) -> bool {
        matches!(self, AttrDefault::DataType(name) if name.is_empty())
    }

    /// The elements of an integer-array default such as `[1, 1]`; `None` when
    /// the default is not an array of integers.
    pub fn as_int_array(&self) -> Option<Vec<i64>> {
        match self {
            AttrDefault::Array(items) => items
                .iter()
                .map(|item| match item {
                    AttrDefault::Int(v) => Some(*v),
                    _ => None,
                })
                .collect(),
            _ => None,
        }
    }
}

/// Writes the default in the table's own syntax (`[1, 1]`, `void`, `"NCHW"`,
/// `required`, ...), which is also what hover text shows.
impl fmt::Display for AttrDefault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AttrDefault::Required => f.write_str("required"),
            AttrDefault::Null => f.write_str("null"),
            AttrDefault::Int(v) => write!(f, "{v}"),
            AttrDefault::Double(v) => write!(f, "{v:?}"),
            AttrDefault::Bool(v) => write!(f, "{v}"),
            AttrDefault::Str(s) => write!(f, "{s:?}"),
            AttrDefault::DataType(s) if s.is_empty() => f.write_str("void"),
            AttrDefault::DataType(s) => write!(f, "{s:?}"),
            AttrDefault::Array(items) => {
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str("]")
            }
            AttrDefault::EmptyMap => f.write_str("{}"),
            AttrDefault::FullyUnconstrained => f.write_str("unconstrained"),
        }
    }
}

/// One field of an attrs type.
#[derive(Debug, Clone, PartialEq)]
pub struct AttrField {
    pub name: String,
    pub ty: AttrType,
    pub default: AttrDefault,
    /// A lower bound TVM checks when the attrs object is built.
    pub lower_bound: Option<f64>,
}

impl AttrField {
    /// Whether the field has no default.
    pub fn is_required(&self) -> bool {
        self.default.is_required()
    }
}

/// A call-attributes type, e.g. `relay.attrs.Conv2DAttrs`, with its fields in
/// declaration order (which is also the order the printer writes them in).
#[derive(Debug, Clone, PartialEq)]
pub struct AttrsSchema {
    pub type_key: String,
    pub fields: Vec<AttrField>,
}

impl AttrsSchema {
    /// The field called `name`.
    pub fn field(&self, name: &str) -> Option<&AttrField> {
        self.fields.iter().find(|field| field.name == name)
    }

    /// The declaration index of the field called `name`.
    pub fn field_index(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|field| field.name == name)
    }

    /// Field names in declaration order.
    pub fn field_names(&self) -> impl Iterator<Item = &str> {
        self.fields.iter().map(|field| field.name.as_str())
    }

    /// The fields that have no default.
    pub fn required_fields(&self) -> impl Iterator<Item = &AttrField> {
        self.fields.iter().filter(|field| field.is_required())
    }
}

/// TVM's `TOpPattern`, the operator's fusion class. The discriminants are
/// TVM's integer codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OpPattern {
    ElemWise = 0,
    Broadcast = 1,
    Injective = 2,
    CommReduce = 3,
    OutEWiseFusable = 4,
    Tuple = 7,
    Opaque = 8,
}

impl OpPattern {
    /// All patterns, in code order.
    pub const ALL: [OpPattern; 7] = [
        OpPattern::ElemWise,
        OpPattern::Broadcast,
        OpPattern::Injective,
        OpPattern::CommReduce,
        OpPattern::OutEWiseFusable,
        OpPattern::Tuple,
        OpPattern::Opaque,
    ];

    /// TVM's integer code.
    pub fn code(self) -> i32 {
        self as i32
    }

    /// The pattern with TVM's integer code `code`.
    pub fn from_code(code: i32) -> Option<OpPattern> {
        OpPattern::ALL.into_iter().find(|p| p.code() == code)
    }

    /// The name used in the table (`ElemWise`, `OutEWiseFusable`, ...).
    pub fn name(self) -> &'static str {
        match self {
            OpPattern::ElemWise => "ElemWise",
            OpPattern::Broadcast => "Broadcast",
            OpPattern::Injective => "Injective",
            OpPattern::CommReduce => "CommReduce",
            OpPattern::OutEWiseFusable => "OutEWiseFusable",
            OpPattern::Tuple => "Tuple",
            OpPattern::Opaque => "Opaque",
        }
    }

    /// The pattern named `name` (as returned by [`OpPattern::name`]).
    pub fn from_name(name: &str) -> Option<OpPattern> {
        OpPattern::ALL.into_iter().find(|p| p.name() == name)
    }
}

impl fmt::Display for OpPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One declared argument of an operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpArg {
    pub name: String,
    /// TVM's free-form kind text, e.g. `Tensor`, `Tuple`, `1D Tensor`.
    pub kind: String,
}

/// One operator of the registry.
#[derive(Debug, Clone, PartialEq)]
pub struct OpDef {
    pub name: String,
    /// Number of inputs; -1 means variadic. It normally equals
    /// `arguments.len()`, but TVM registers a few ops inconsistently (e.g.
    /// `dyn.strided_slice` declares 4 inputs and 5 arguments) and the table
    /// keeps what TVM declares.
    pub num_inputs: i32,
    pub arguments: Vec<OpArg>,
    /// The declared attrs type key, `None` when the op declares none. The key
    /// `DictAttrs` (used by `vm.invoke_tvm_op`) is an open dictionary with no
    /// schema.
    pub attrs_type: Option<String>,
    /// For an operator that registers no attrs type (`attrs_type` is
    /// `None`): the type TVM's Python API builds its calls' attributes with
    /// (`cumsum`: `relay.attrs.ScanopAttrs`). TVM prints such attributes as
    /// a `meta[…]` reference, since its parser could not tell their type.
    pub call_attrs_type: Option<String>,
    /// `TOpPattern`; `None` when TVM registers none (fusion then treats the op
    /// as opaque, see [`OpDef::fusion_pattern`]).
    pub pattern: Option<OpPattern>,
    /// `TOpIsStateful` (unset counts as false).
    pub stateful: bool,
    /// `TNonComputational` (unset counts as false).
    pub non_computational: bool,
    /// TVM's support level, when registered.
    pub support_level: Option<u32>,
    /// The name of the type relation TVM registers (`Identity`, `Broadcast`,
    /// `Conv2D`, ...); later work maps it to an implementation.
    pub type_rel: Option<String>,
    /// One line for hover documentation.
    pub description: String,
}

impl OpDef {
    /// The schema of the declared attrs type.
    pub fn attrs(&self) -> Option<&'static AttrsSchema> {
        self.attrs_type.as_deref().and_then(super::attrs_schema)
    }

    /// The attrs type of this operator's calls: the registered one, else
    /// the one TVM builds them with ([`OpDef::call_attrs_type`]).
    pub fn call_attrs(&self) -> Option<&str> {
        self.attrs_type
            .as_deref()
            .or(self.call_attrs_type.as_deref())
    }

    /// Whether the op takes any number of inputs.
    pub fn is_variadic(&self) -> bool {
        self.num_inputs < 0
    }

    /// The pattern fusion uses: the registered one, or `Opaque` when none is
    /// registered.
    pub fn fusion_pattern(&self) -> OpPattern {
        self.pattern.unwrap_or(OpPattern::Opaque)
    }

    /// The argument names in order.
    pub fn argument_names(&self) -> impl Iterator<Item = &str> {
        self.arguments.iter().map(|arg| arg.name.as_str())
    }
}
