//! The kinds of tokens and nodes in a Relay syntax tree.
//!
//! One enum covers both, as in rust-analyzer: tokens first (trivia, literals,
//! keywords, punctuation), then nodes. The numbering is private; only the
//! names are part of the API.

/// Every token and node kind of the Relay text format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u16)]
#[allow(non_camel_case_types)]
pub enum SyntaxKind {
    // ---- trivia ----
    /// Spaces, tabs and newlines (a `\r` directly before a `\n` included).
    WHITESPACE = 0,
    /// `// …` up to the end of the line.
    LINE_COMMENT,
    /// `/* … */`, nesting as TVM's tokenizer does.
    BLOCK_COMMENT,

    // ---- literals and names ----
    /// A plain identifier: `nn`, `conv2d`, `Tensor`, `float32`, `List`, `None`.
    IDENT,
    /// `%x`: a local variable (the name may contain `/`).
    LOCAL,
    /// `%0`: a graph binding number.
    GRAPH,
    /// `@f`: a global function.
    GLOBAL,
    /// An integer literal with an optional `i16`/`i32`/`i64` suffix.
    INT,
    /// A float literal with an `f` suffix (`1f`, `0.5f`, `1e-05f`, `2f64`, `inff`).
    FLOAT,
    /// `True` or `False`.
    BOOL,
    /// `"…"`; a backslash escapes the next character (TVM has no escapes).
    STRING,
    /// `meta[Key][i]`.
    META_REF,
    /// `#[version = "0.0.5"]`.
    VERSION_ATTR,
    /// `#[metadata]` and everything after it up to end of file.
    METADATA,

    // ---- keywords ----
    LET_KW,
    FN_KW,
    DEF_KW,
    IF_KW,
    ELSE_KW,
    TYPE_KW,
    MATCH_KW,
    /// `match?`: a partial match.
    MATCH_Q_KW,
    EXTERN_KW,
    FREE_VAR_KW,
    REF_KW,
    REF_READ_KW,
    REF_WRITE_KW,
    /// `_` (wildcard pattern, incomplete type).
    UNDERSCORE,

    // ---- punctuation ----
    L_PAREN,
    R_PAREN,
    L_BRACK,
    R_BRACK,
    L_CURLY,
    R_CURLY,
    COMMA,
    DOT,
    SEMICOLON,
    COLON,
    EQ,
    PLUS,
    MINUS,
    STAR,
    SLASH,
    L_ANGLE,
    R_ANGLE,
    BANG,
    QUESTION,
    /// A `%` not followed by a name or a number.
    PERCENT,
    /// A `@` not followed by a name.
    AT,
    /// A character or run of characters the format has no token for.
    ERROR_TOKEN,
    /// The end of the input, as the parser sees it; never in a tree.
    EOF,

    // ---- nodes: files and definitions ----
    /// A module: version header, definitions, metadata.
    SOURCE_FILE,
    /// One expression (`tvm.relay.parse_expr`), with an optional version header.
    EXPR_FILE,
    /// The `#[version = …]` header.
    VERSION,
    /// The `#[metadata]` section.
    METADATA_SECTION,
    /// `def @name[T](params) -> R { body }`.
    DEF,
    /// `type Name[A] { Ctor(T), … }`.
    TYPE_DEF,
    /// `extern type Name[A]`.
    EXTERN_TYPE_DEF,
    /// `[A, B]` after a `def`, `fn` or `type` name.
    TYPE_PARAM_LIST,
    /// One `A` of a type parameter list.
    TYPE_PARAM,
    /// `{ Ctor, Ctor(T, U) }` of a type definition.
    CTOR_LIST,
    /// One constructor of a type definition.
    CTOR_DEF,
    /// `(T, U)` of a constructor definition.
    CTOR_FIELD_LIST,

    // ---- nodes: functions ----
    /// `(params…, attrs…)` of a `def` or `fn`.
    PARAM_LIST,
    /// `%x {virtual_device=…}: T`.
    PARAM,
    /// `{virtual_device=…}` after a parameter name.
    PARAM_ATTRS,
    /// `-> T` of a function.
    RET_TYPE,

    // ---- nodes: expressions ----
    /// A sequence: bindings and `;`-separated statements ending in an expression.
    SEQ_EXPR,
    /// `let %x: T = value;` inside a sequence.
    LET_STMT,
    /// `%0 = value;` inside a sequence.
    GRAPH_BINDING,
    /// `free_var %x: T` inside a sequence.
    FREE_VAR_STMT,
    /// `expr;` inside a sequence.
    EXPR_STMT,
    /// `{ … }`: a block with its own scope (also function bodies and if branches).
    BLOCK_EXPR,
    /// An integer, float or boolean literal (or a string, as an attribute value).
    LITERAL,
    /// A use of `%x`.
    LOCAL_EXPR,
    /// A use of `%0`.
    GRAPH_EXPR,
    /// A use of `@f`.
    GLOBAL_EXPR,
    /// `meta[relay.Constant][0]` as an expression or attribute value.
    META_EXPR,
    /// An operator or constructor name: `nn.conv2d`, `add`, `Cons`.
    PATH_EXPR,
    /// `fn [T](params) -> R { body }`.
    FN_EXPR,
    /// `if (cond) { … } else { … }`.
    IF_EXPR,
    /// The parenthesised condition of an `if`.
    CONDITION,
    /// `match (e) { … }` or `match? (e) { … }`.
    MATCH_EXPR,
    /// `{ arm, … }` of a match.
    MATCH_ARM_LIST,
    /// `pattern => expr`.
    MATCH_ARM,
    /// `ref(e)`.
    REF_CREATE_EXPR,
    /// `ref_read(r)`.
    REF_READ_EXPR,
    /// `ref_write(r, v)`.
    REF_WRITE_EXPR,
    /// `(e)`.
    PAREN_EXPR,
    /// `()`, `(e,)`, `(a, b)`.
    TUPLE_EXPR,
    /// `e.0`.
    TUPLE_GET_ITEM_EXPR,
    /// `callee(args…, attrs…)`.
    CALL_EXPR,
    /// `(args…, attrs…)` of a call.
    ARG_LIST,
    /// `lhs op rhs` for `* / + - < <= > >= == !=`.
    BIN_EXPR,

    // ---- nodes: attributes ----
    /// `key=value` in a call, a parameter list or parameter attributes.
    ATTR,
    /// The (possibly dotted) key of an attribute: `axis`, `relay.reshape_only`.
    ATTR_KEY,
    /// `[v, …]` as an attribute value.
    ATTR_LIST_VALUE,
    /// `(v)` as an attribute value.
    ATTR_PAREN_VALUE,
    /// `None` or `nullptr` as an attribute value.
    ATTR_NULL_VALUE,

    // ---- nodes: patterns ----
    /// `_`.
    WILDCARD_PAT,
    /// `%x` or `%x: T` in a pattern.
    VAR_PAT,
    /// `Ctor` or `Ctor(p, …)`.
    CTOR_PAT,
    /// `(p, …)`.
    TUPLE_PAT,
    /// `(p, …)` after a constructor or as a tuple pattern.
    PAT_LIST,

    // ---- nodes: types ----
    /// `Tensor[(1, ?, 3), float32]`.
    TENSOR_TYPE,
    /// `(1, ?, 3)` of a tensor type.
    SHAPE,
    /// One dimension of a shape: an integer, `?` or a meta reference.
    DIM,
    /// A dtype name standing for a rank-0 tensor: `float32`, `int8x4`, `bool`.
    SCALAR_TYPE,
    /// `()`, `(T,)`, `(T)`, `(A, B)`: always a tuple type.
    TUPLE_TYPE,
    /// `fn (A, B) -> R`.
    FN_TYPE,
    /// A type variable or ADT, possibly applied: `A`, `List[A]`.
    NAMED_TYPE,
    /// `[A, B]` arguments of a named type.
    TYPE_ARG_LIST,
    /// `_`: a type left to inference.
    INCOMPLETE_TYPE,
    /// `ref(T)`: TVM prints it but cannot read it; we read it.
    REF_TYPE,

    /// Text the parser could not make sense of.
    ERROR,

    #[doc(hidden)]
    __LAST,
}

use SyntaxKind::*;

impl SyntaxKind {
    /// Whitespace and comments: kept in the tree, skipped by the parser.
    pub fn is_trivia(self) -> bool {
        matches!(self, WHITESPACE | LINE_COMMENT | BLOCK_COMMENT)
    }

    /// Keywords of the format (for highlighting and completion).
    pub fn is_keyword(self) -> bool {
        matches!(
            self,
            LET_KW
                | FN_KW
                | DEF_KW
                | IF_KW
                | ELSE_KW
                | TYPE_KW
                | MATCH_KW
                | MATCH_Q_KW
                | EXTERN_KW
                | FREE_VAR_KW
                | REF_KW
                | REF_READ_KW
                | REF_WRITE_KW
        )
    }

    /// True for token kinds, false for node kinds.
    pub fn is_token(self) -> bool {
        (self as u16) < (SOURCE_FILE as u16)
    }

    /// How a token is named in a diagnostic, in TVM's words where TVM names it
    /// (``expected `)` found identifier``).
    pub fn describe(self) -> &'static str {
        match self {
            WHITESPACE => "whitespace",
            LINE_COMMENT | BLOCK_COMMENT => "comment",
            IDENT => "identifier",
            LOCAL => "local variable",
            GRAPH => "graph variable",
            GLOBAL => "global variable",
            INT => "integer",
            FLOAT => "float",
            BOOL => "boolean",
            STRING => "string literal",
            META_REF => "`meta`",
            VERSION_ATTR => "version attribute",
            METADATA => "metadata section",
            LET_KW => "`let`",
            FN_KW => "`fn`",
            DEF_KW => "`def`",
            IF_KW => "`if`",
            ELSE_KW => "`else`",
            TYPE_KW => "`type`",
            MATCH_KW => "`match`",
            MATCH_Q_KW => "`match?`",
            EXTERN_KW => "`extern`",
            FREE_VAR_KW => "`free_var`",
            REF_KW => "`ref`",
            REF_READ_KW => "`ref_read`",
            REF_WRITE_KW => "`ref_write`",
            UNDERSCORE => "`_`",
            L_PAREN => "`(`",
            R_PAREN => "`)`",
            L_BRACK => "`[`",
            R_BRACK => "`]`",
            L_CURLY => "`{`",
            R_CURLY => "`}`",
            COMMA => "`,`",
            DOT => "`.`",
            SEMICOLON => "`;`",
            COLON => "`:`",
            EQ => "`=`",
            PLUS => "`+`",
            MINUS => "`-`",
            STAR => "`*`",
            SLASH => "`/`",
            L_ANGLE => "`<`",
            R_ANGLE => "`>`",
            BANG => "`!`",
            QUESTION => "`?`",
            PERCENT => "`%`",
            AT => "`@`",
            ERROR_TOKEN => "unknown",
            EOF => "end of file",
            _ => "syntax node",
        }
    }

    /// The keyword kind for an identifier's text, if it is one.
    pub fn from_keyword(text: &str) -> Option<SyntaxKind> {
        Some(match text {
            "let" => LET_KW,
            "fn" => FN_KW,
            "def" => DEF_KW,
            "if" => IF_KW,
            "else" => ELSE_KW,
            "type" => TYPE_KW,
            "match" => MATCH_KW,
            "extern" => EXTERN_KW,
            "free_var" => FREE_VAR_KW,
            "ref" => REF_KW,
            "ref_read" => REF_READ_KW,
            "ref_write" => REF_WRITE_KW,
            _ => return None,
        })
    }
}

impl From<SyntaxKind> for rowan::SyntaxKind {
    fn from(kind: SyntaxKind) -> Self {
        rowan::SyntaxKind(kind as u16)
    }
}

/// The rowan language tag of Relay trees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RelayLanguage {}

impl rowan::Language for RelayLanguage {
    type Kind = SyntaxKind;

    // Inlined across crates: readers of the tree ask it for every child they
    // step over.
    #[inline]
    fn kind_from_raw(raw: rowan::SyntaxKind) -> SyntaxKind {
        assert!(raw.0 <= __LAST as u16, "invalid syntax kind {}", raw.0);
        // SAFETY: the enum is `repr(u16)` with contiguous discriminants from 0
        // to `__LAST`, and the bound was checked above.
        unsafe { std::mem::transmute::<u16, SyntaxKind>(raw.0) }
    }

    #[inline]
    fn kind_to_raw(kind: SyntaxKind) -> rowan::SyntaxKind {
        kind.into()
    }
}

/// A node of a Relay syntax tree.
pub type SyntaxNode = rowan::SyntaxNode<RelayLanguage>;
/// A token of a Relay syntax tree.
pub type SyntaxToken = rowan::SyntaxToken<RelayLanguage>;
/// A node or a token.
pub type SyntaxElement = rowan::SyntaxElement<RelayLanguage>;
