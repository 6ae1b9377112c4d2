//! The stable codes of diagnostics: one table, here, of every code with its
//! layer, a title, a paragraph of explanation and an example that produces
//! it. `relay explain CODE` prints the explanation and the example; the
//! rendered output (`error[E0101]: …`), the language server's
//! `Diagnostic.code` and `relay check --format json` show the code.
//!
//! Codes are grouped by the layer that finds the problem: `E00xx` syntax,
//! `E01xx` names (lowering), `E02xx` types, `E03xx` passes and pipelines;
//! warnings are `W` codes in the same ranges. A code, once given out, keeps
//! its meaning; adding one is one entry of `codes!` (a test runs every
//! example through the `relay` binary and checks it reports its code).

use super::Layer;

/// How an example is run to show its code (by `relay explain` readers, and
/// by the test that checks every example).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Run {
    /// `relay check FILE`.
    Check,
    /// `relay check --pipeline PIPELINE FILE`.
    Pipeline(&'static str),
    /// `relay check --pipeline PIPELINE FILE` with this `relay.toml` next
    /// to the file.
    Project {
        relay_toml: &'static str,
        pipeline: &'static str,
    },
    /// `relay opt FILE ARGS…`.
    Opt(&'static [&'static str]),
    /// `relay diff FILE OTHER`, OTHER holding this text.
    DiffWith(&'static str),
    /// `relay run FILE ARGS…`.
    Run(&'static [&'static str]),
    /// `relay check --lenient FILE`: what a lenient reading accepts.
    Lenient,
    /// `relay fmt --upgrade FILE`: what the upgrade to Relay 0.0.5 refuses.
    Upgrade,
    /// No input produces it: it reports a bug in `relay` itself.
    NotReproducible,
}

/// An example of a code: Relay text and how to run it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Example {
    pub text: &'static str,
    pub run: Run,
}

const fn check(text: &'static str) -> Example {
    Example {
        text,
        run: Run::Check,
    }
}

const fn lenient(text: &'static str) -> Example {
    Example {
        text,
        run: Run::Lenient,
    }
}

const fn pipeline(pipeline: &'static str, text: &'static str) -> Example {
    Example {
        text,
        run: Run::Pipeline(pipeline),
    }
}

/// What the table says about one code.
#[derive(Debug)]
pub struct CodeInfo {
    /// `E0101`, `W0101`.
    pub id: &'static str,
    pub layer: Layer,
    /// One line: what went wrong.
    pub title: &'static str,
    /// A paragraph: why it is an error and how to fix it.
    pub explanation: &'static str,
    pub example: Example,
}

macro_rules! codes {
    ($($name:ident = $id:literal, $layer:ident, $title:literal,
       $explanation:literal, $example:expr;)*) => {
        /// A stable diagnostic code (see the module documentation).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code {
            $($name,)*
        }

        impl Code {
            /// Every code, in table order.
            pub const ALL: &'static [Code] = &[$(Code::$name,)*];

            /// The table entry of this code.
            pub fn info(self) -> &'static CodeInfo {
                match self {
                    $(Code::$name => {
                        static INFO: CodeInfo = CodeInfo {
                            id: $id,
                            layer: Layer::$layer,
                            title: $title,
                            explanation: $explanation,
                            example: $example,
                        };
                        &INFO
                    })*
                }
            }
        }
    };
}

impl Code {
    /// `E0101`.
    pub fn id(self) -> &'static str {
        self.info().id
    }

    pub fn layer(self) -> Layer {
        self.info().layer
    }

    /// Whether this is a warning code (`W…`).
    pub fn is_warning(self) -> bool {
        self.id().starts_with('W')
    }

    /// The code written `id` (`E0101`, `e0101` or `0101`… as rustc's
    /// `--explain` reads them: case and a missing letter are forgiven).
    pub fn parse(id: &str) -> Option<Code> {
        let id = id.trim();
        Code::ALL.iter().copied().find(|code| {
            let known = code.id();
            known.eq_ignore_ascii_case(id) || (id.len() == 4 && &known[1..] == id)
        })
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

codes! {
    // ---- syntax ----
    Lexical = "E0001", Syntax, "unreadable text",
    "The text holds something that is no token of the Relay text format: a \
     stray character, a string, block comment or `#[…]` attribute that is \
     never closed, or a `meta[…]` reference that is not `meta[Key][index]`. \
     Remove the text or complete the token.",
    check("#[version = \"0.0.5\"]\ndef @main(%x: float32) { %x $ }\n");

    InvalidNumber = "E0002", Syntax, "invalid number literal",
    "A number literal is malformed or does not fit its type (integers are \
     64-bit, TVM's limit). Write the number in range, or with a suffix \
     (`1f`, `2i64`) that TVM reads.",
    check("#[version = \"0.0.5\"]\ndef @main() { 99999999999999999999 }\n");

    UnexpectedToken = "E0003", Syntax, "unexpected token",
    "The grammar does not allow this token where it stands; the message \
     says what was expected instead (TVM's `expected … found …`). A run of \
     text that cannot be read is reported once, at its first token.",
    check("#[version = \"0.0.5\"]\ndef @main(%x: float32) { let = %x; %x }\n");

    UnclosedDelimiter = "E0004", Syntax, "unclosed delimiter",
    "A `(`, `[` or `{` is never closed: the text ends, or moves on to the \
     next definition or another group's closer, first. The error points \
     where the closer is missing; a label points at the opening bracket.",
    check("#[version = \"0.0.5\"]\ndef @main(%x: float32) { add(%x, %x }\n");

    VersionHeader = "E0005", Syntax, "missing or unsupported version header",
    "A module must start with `#[version = \"0.0.5\"]`, the only version of \
     the text format TVM v0.13 reads. Add the header as the first line, or \
     correct the version.",
    check("def @main(%x: float32) { %x }\n");

    NestingLimit = "E0006", Syntax, "nesting or chain too deep",
    "The text nests deeper, or chains more infix operators or curried calls, \
     than the parser follows (limits that keep every later stage off a \
     stack overflow). Bind intermediate values with `let`.",
    check(DEEP);

    // ---- names ----
    UndeclaredLocal = "E0101", Name, "undeclared local variable",
    "A `%name` is used that no parameter, `let`, pattern or `free_var` \
     declares in scope. Declare it, or correct the name (the help line \
     suggests a close one). The definition is not type-checked; the others \
     still are.",
    check("#[version = \"0.0.5\"]\ndef @main(%x: float32) { add(%x, %y) }\n");

    UnknownGlobal = "E0102", Name, "unknown global function",
    "An `@name` is used that no `def` of the module defines. Define the \
     function or correct the name.",
    check("#[version = \"0.0.5\"]\ndef @main(%x: float32) { @helper(%x) }\n");

    UnknownOperator = "E0103", Name, "unknown operator",
    "A name without a sigil is neither a constructor nor an operator of \
     TVM v0.13's registry. Correct the name (the help line suggests a close \
     one), or write a constructor's `type` definition.",
    check("#[version = \"0.0.5\"]\ndef @main(%x: float32) { nn.rleu(%x) }\n");

    UnknownType = "E0104", Name, "unknown type or dtype",
    "A type names a dtype TVM does not know, or an ADT no `type` defines. \
     Correct the name or define the type.",
    check("#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(2), flaot32]) { %x }\n");

    UnknownConstructor = "E0105", Name, "unknown constructor",
    "A pattern or expression names a constructor no `type` defines, or a \
     constructor whose fields use an undefined type. A pattern variable is \
     written with `%`.",
    check("#[version = \"0.0.5\"]\ntype T { A }\ndef @main(%t: T) { match (%t) { B => 0 } }\n");

    UndefinedGraphBinding = "E0106", Name, "graph variable used before its binding",
    "A graph variable `%N` is used before any `%N = …;` binds it. Bind it \
     first; graph variables are numbered in text order.",
    check("#[version = \"0.0.5\"]\ndef @main(%x: float32) { %0 = add(%x, %1); %0 }\n");

    DuplicateDefinition = "E0107", Name, "name defined twice",
    "Two `type` definitions, or two constructors, have the same name. TVM \
     rejects the module; rename one of them.",
    check("#[version = \"0.0.5\"]\ntype T { A }\ntype T { B }\n");

    ConstructorBeforeDefinition = "E0108", Name, "constructor used before its type",
    "A constructor is used in the text before the `type` definition that \
     declares it; TVM reads definitions in order. Move the `type` up.",
    check("#[version = \"0.0.5\"]\ndef @main() { A }\ntype T { A }\n");

    UnknownAttribute = "E0109", Name, "unknown attribute",
    "A call gives an attribute its operator's attributes type does not \
     have, or names an attributes type (`attrs_type_key`) that does not \
     exist. Correct the name (the help line suggests a close one).",
    check("#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(1, 2), float32]) { nn.softmax(%x, axes=1) }\n");

    InvalidAttributeValue = "E0110", Name, "invalid attribute value",
    "An attribute's value has the wrong type (a number where a list is \
     expected, a string for a number…) or is outside the field's bounds. \
     The caret marks the value; the message says what the field takes.",
    check("#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(1, 2), float32]) { nn.softmax(%x, axis=\"one\") }\n");

    MissingAttribute = "E0111", Name, "missing required attribute",
    "An operator's attributes type has a field without a default, and the \
     call does not give it. Give it in the call's attributes.",
    check("#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(1, 2), float32]) { cast(%x) }\n");

    InvalidMetadata = "E0112", Name, "invalid metadata reference",
    "A `meta[Key][i]` reference names an object the `#[metadata]` section \
     does not have (or there is no section), an object of the wrong kind \
     for its place, or the section itself cannot be read.",
    check("#[version = \"0.0.5\"]\ndef @main() { meta[relay.Constant][0] }\n");

    NegativeTupleIndex = "E0113", Name, "negative tuple index",
    "A tuple projection `t.N` has a negative index; indices start at 0.",
    check("#[version = \"0.0.5\"]\ndef @main(%t: (float32, float32)) { %t.-1 }\n");

    InvalidUpgrade = "E0114", Name, "text the upgrade cannot rewrite",
    "`relay fmt --upgrade` (and the editor's \"Upgrade to Relay 0.0.5\") \
     rewrites only what a lenient reading accepted and keeps every other \
     byte, comments included. When a rewrite would clash with the text (a \
     frontend name whose TVM spelling the file already uses for another \
     variable) or cannot be written (a metadata field of a kind it does \
     not encode), the file is left unchanged and the place is reported: \
     make that change by hand, then upgrade again.",
    Example {
        text: "def @main(%a.b: float32, %a_b: float32) { add(%a.b, %a_b) }\n",
        run: Run::Upgrade,
    };

    Redefinition = "W0101", Name, "name bound again",
    "A global, graph variable, local variable, free variable or type \
     parameter is bound again where TVM keeps one of the bindings (the \
     message says which). Rename one of them to say what you mean.",
    check("#[version = \"0.0.5\"]\ndef @f() { 1 }\ndef @f() { 2 }\n");

    DuplicateAttribute = "W0102", Name, "attribute given twice",
    "A call gives the same attribute twice; the last value is used. Remove \
     one of them.",
    check("#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(1, 2), float32]) { nn.softmax(%x, axis=1, axis=0) }\n");

    IgnoredAttributes = "W0103", Name, "attributes ignored",
    "Attributes TVM reads and then drops: a parameter's attributes other \
     than a lone `virtual_device=…`, or a call with an empty \
     `attrs_type_key`. Remove them.",
    check("#[version = \"0.0.5\"]\ndef @main(%x {foo=1}: float32) { %x }\n");

    UndefinedFieldType = "W0104", Name, "constructor field of an undefined type",
    "A constructor's field uses a type no `type` defines. TVM reports it \
     only where the constructor is used (E0105); define the type.",
    check("#[version = \"0.0.5\"]\ntype T { A(Missing) }\n");

    // ---- what a lenient reading accepts (`--lenient`, the editor) ----
    NoVersionHeader = "W0001", Syntax, "no version header",
    "The file has no `#[version = \"0.0.5\"]` header, as text printed by \
     older TVM versions or pasted without its first line. TVM v0.13's parser \
     rejects it; a lenient reading takes it as version 0.0.5. Insert the \
     header (the editor's quick fix does) or run `relay fmt --upgrade`.",
    lenient("def @main(%x: float32) { %x }\n");

    OtherVersionHeader = "W0002", Syntax, "another version's header",
    "The header names a version other than 0.0.5 (older TVM wrote \
     `0.0.4`). TVM v0.13's parser rejects it; a lenient reading takes the \
     text as version 0.0.5. Change the header to `#[version = \"0.0.5\"]`.",
    lenient("#[version = \"0.0.4\"]\ndef @main(%x: float32) { %x }\n");

    ExpressionFile = "W0003", Syntax, "file read as an expression",
    "The file is one `fn (…) { … }` expression, not a module (what \
     `print(func)` writes). TVM reads it only with `relay.parse_expr` \
     (`relay check --expr`); a lenient reading takes the function as the \
     module's `@main`. `relay fmt --upgrade` writes it as a module.",
    lenient("fn (%x: float32) { %x }\n");

    FrontendName = "W0004", Syntax, "name as frontends write it",
    "A local or global name holds `.`, `:N` or starts with a digit \
     (`%conv1.weight`, `%input_tensor:0`, `%1_bn.gamma`, `@foo.bar`): \
     frontends name parameters so and TVM prints them unquoted, but its \
     parser stops the name at the first such character. A lenient reading \
     takes the whole as one name; rename it to letters, digits and `_` for \
     TVM (`relay fmt --upgrade` does).",
    lenient("#[version = \"0.0.5\"]\ndef @main(%conv1.weight: float32) { %conv1.weight }\n");

    MetaWithoutSection = "W0105", Name, "metadata reference without a section",
    "A `meta[…][i]` reference in a text with no `#[metadata]` section, as \
     `astext(show_meta_data=False)` prints. A lenient reading takes a \
     `meta[relay.Constant][i]` as a constant whose value is unknown: its \
     type comes from the `/* ty=… */` comment after it, otherwise it is a \
     tensor of unknown type; passes that need the value (FoldConstant) \
     leave it alone. Print the module with its metadata to keep the values.",
    lenient("#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(3), float32]) {\n  add(%x, meta[relay.Constant][0] /* ty=Tensor[(3), float32] */)\n}\n");

    OldAttributes = "W0106", Name, "attributes of another TVM version",
    "A call lacks an attribute TVM v0.13 requires but older versions did \
     not have (`strided_slice` without `axes`, `nn.dense` without `units`, \
     `BatchMatmulAttrs` without `transpose_a`/`transpose_b`). A lenient \
     reading gives it the value those versions meant (the message says \
     which); write it out to read the text with TVM v0.13.",
    lenient("#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(4, 4), float32], %w: Tensor[(8, 4), float32]) { nn.dense(%x, %w) }\n");

    DroppedAttribute = "W0107", Name, "unknown attribute dropped",
    "A call gives an attribute its attributes type does not have in TVM \
     v0.13 (another version's field). TVM rejects it (E0109); a lenient \
     reading drops it. A name close to a field v0.13 has is taken for a \
     typo and stays an error (E0109, with the suggestion). Remove it.",
    lenient("#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(1, 4), float32]) { nn.softmax(%x, axis=1, foo=2) }\n");

    AttrsTypeFromOperator = "W0108", Name, "attributes type taken from the operator",
    "TVM prints calls such as `annotation.cast_hint(%x, dtype=\"int8\")`, \
     but its parser cannot tell which attributes type to build, because \
     the operator registers none. A lenient reading uses the type TVM \
     builds such calls with (`relay.attrs.CastHintAttrs`); add \
     `attrs_type_key=\"…\"` for TVM v0.13.",
    lenient("#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(3), float32]) { annotation.cast_hint(%x, dtype=\"int8\") }\n");

    OpaqueOperator = "W0109", Name, "unknown operator read as opaque",
    "A call of an operator this build does not know (a vendor fork's or an \
     in-house one). TVM rejects it (E0103); a lenient reading takes it as an \
     opaque operator: its calls take any arguments and attributes and have \
     an unknown type, and the rest of the module is still checked. One \
     warning per operator name.",
    lenient("#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(3), float32]) { vendor.accelerator_call(%x, kernel=\"k\") }\n");

    // ---- types ----
    TypeMismatch = "E0201", Type, "type mismatch",
    "Two types that must be the same are not: an argument and its \
     parameter, the branches of an `if`, a value and its annotation. The \
     message shows both types (and the dimension that conflicts).",
    check("#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(4), float32]) { let %y: Tensor[(3), float32] = %x; %y }\n");

    OperatorTypeError = "E0202", Type, "operator arguments rejected",
    "An operator's type relation rejects the types of its arguments or its \
     attributes (shapes that do not broadcast, an axis out of range, \
     mismatched dtypes…); the message is the relation's, in TVM's words.",
    check("#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(2, 3), float32], %y: Tensor[(4, 3), float32]) { add(%x, %y) }\n");

    ArgumentCount = "E0203", Type, "wrong number of arguments",
    "A function or operator is called with more or fewer arguments (or type \
     arguments) than it takes.",
    check("#[version = \"0.0.5\"]\ndef @f(%a: float32) -> float32 { %a }\ndef @main(%x: float32) { @f(%x, %x) }\n");

    NotAFunction = "E0204", Type, "call of a value that is not a function",
    "Only expressions of a function type can be called; the callee here has \
     another type.",
    check("#[version = \"0.0.5\"]\ndef @main(%x: float32) { %x(%x) }\n");

    UninferredType = "E0205", Type, "type could not be inferred",
    "Type inference found no type for an expression: nothing constrains it \
     (an unannotated parameter that is only passed through). Annotate it.",
    check("#[version = \"0.0.5\"]\ndef @main(%x) { %x }\n");

    NonExhaustiveMatch = "E0206", Type, "match does not cover every case",
    "A `match` (not `match?`) must handle every value of its type; the \
     message lists the patterns that are not covered. Add clauses, a `_` \
     clause, or write `match?`.",
    check(LIST_HEAD);

    PatternMismatch = "E0207", Type, "pattern does not fit the value",
    "A pattern does not fit the type of the value matched: a constructor of \
     another type, a tuple pattern of another length, or constructor fields \
     that do not match its definition.",
    check(TUPLE_PATTERN);

    IllKindedType = "E0208", Type, "ill-formed type",
    "A type is not well formed: an ADT applied to the wrong number of type \
     arguments, or a type used where another kind is needed.",
    check(LIST_ARITY);

    // ---- passes ----
    PassFailed = "E0301", Pass, "pass failed",
    "A pass (built in or external) could not transform the module: it says \
     why. The module is left as it was before the pipeline.",
    pipeline("RemoveUnusedFunctions", "#[version = \"0.0.5\"]\ndef @helper(%x: float32) { %x }\n");

    InvalidPipeline = "E0302", Pass, "invalid pipeline",
    "A pipeline (`-p`, `--pipeline`, `relay.toml`) names a pass that is not \
     registered, or is not written as `Pass, Pass(option=value), \
     Sequential(…)`.",
    pipeline("NoSuchPass", "#[version = \"0.0.5\"]\ndef @main(%x: float32) { %x }\n");

    ProjectConfig = "E0303", Pass, "invalid relay.toml",
    "The project's `relay.toml` cannot be read: it is not TOML, or a \
     `[passes.…]`, `[pipelines]` or `[context]` entry is malformed.",
    Example {
        text: "#[version = \"0.0.5\"]\ndef @main(%x: float32) { %x }\n",
        run: Run::Project { relay_toml: "[passes.Broken]\ncommand = []\n", pipeline: "InferType" },
    };

    ModulesDiffer = "E0304", Pass, "modules differ",
    "`relay diff` found the two modules structurally different; the \
     diagnostic points at the first difference in each.",
    Example {
        text: "#[version = \"0.0.5\"]\ndef @main(%x: float32) { %x }\n",
        run: Run::DiffWith("#[version = \"0.0.5\"]\ndef @main(%x: float32) { add(%x, %x) }\n"),
    };

    RuntimeError = "E0305", Pass, "run-time error",
    "`relay run` (or the semantic check of `relay opt --check-semantics`) \
     could not finish running the program: a `match` no clause fits, an \
     index out of range, an operator the evaluator has no kernel for, \
     recursion deeper than the limit. The span is the expression that \
     failed.",
    Example {
        text: "#[version = \"0.0.5\"]\ntype List[A] { Cons(A, List[A]), Nil }\ndef @main() -> float32 { match? (Nil) { Cons(%x, _) => %x } }\n",
        run: Run::Run(&[]),
    };

    InternalError = "E0399", Pass, "internal error",
    "A stage of `relay` itself failed (a panic caught by the language \
     server, or an inconsistency a pass detected). The other results are \
     still shown. This is a bug: please report it with the input.",
    Example { text: "", run: Run::NotReproducible };

    PassWarning = "W0301", Pass, "pass warning",
    "A pass left part of the module unchanged, or could not do something it \
     was asked to (write a reproducer…); the message says what.",
    Example {
        text: "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32]) { nn.conv2d(%x, %w) }\n",
        run: Run::Opt(&["-p", "AlterOpLayout", "--opt-level", "3", "--target", "llvm -mcpu=skylake"]),
    };
}

const LIST_HEAD: &str = "#[version = \"0.0.5\"]
type List[A] { Cons(A, List[A]), Nil }
def @head(%l: List[float32]) -> float32 { match (%l) { Cons(%x, _) => %x } }
";

const TUPLE_PATTERN: &str = "#[version = \"0.0.5\"]
def @main(%t: (float32, float32)) -> float32 { match (%t) { (%a, %b, %c) => %a } }
";

const LIST_ARITY: &str = "#[version = \"0.0.5\"]
type List[A] { Cons(A, List[A]), Nil }
def @main(%l: List[float32, float32]) { %l }
";

/// 300 nested parentheses: past the parser's nesting limit (256).
const DEEP: &str = concat!(
    "#[version = \"0.0.5\"]\ndef @main() { ",
    "((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((",
    "((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((",
    "((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((",
    "((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((",
    "((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((",
    "1",
    "))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))",
    "))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))",
    "))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))",
    "))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))",
    "))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))",
    " }\n"
);
