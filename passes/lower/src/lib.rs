//! Lowering: from the typed syntax tree of `relay_syntax` to the IR, with
//! name resolution and diagnostics.
//!
//! This is the semantic half of TVM v0.13's `src/relay/parser/parser.cc`: the
//! syntax crate decides what the text *says*, lowering decides what it
//! *means*. The semantics are TVM's, quirks included, but where TVM aborts at
//! the first problem lowering reports a [`Diagnostic`] (layer
//! [`Layer::Name`](relay_ir::diagnostic::Layer::Name)), recovers and goes on, so
//! one run reports every name error of a file.
//!
//! * [`lower_module`] / [`parse_and_lower`]: `tvm.relay.parse` (without the
//!   `InferType` TVM runs afterwards); [`lower_module_into`] seeds the module
//!   as TVM's `init_module` does (how `nat.rly` sees the prelude's `List`).
//! * [`lower_expr`] / [`parse_and_lower_expr`]: `tvm.relay.parse_expr` (one
//!   expression, no module: globals and ADT names are not checked).
//!
//! Every IR node carries the [`Span`] of the syntax node
//! it came from. What lowering resolves, and how:
//!
//! * **Locals.** Scopes as TVM pushes them: a function's parameters and body,
//!   each `if` branch, each match clause (with its pattern variables), every
//!   `{ }` block, and the rest of a sequence after each `let`. A `let` binds
//!   its variable *before* its value is read (so `let %f = fn () { %f() }`
//!   recurses) and into the scope that is current, which for the first `let`
//!   of a chain is the enclosing one. TVM's scopes are hash maps whose
//!   `insert` keeps an existing entry, so a name bound twice in one scope
//!   keeps resolving to the first binding; we do the same and warn.
//!   `free_var`s are visible for the rest of the parse. Every use of a
//!   variable is the very `Var` node of its binding.
//! * **Graph bindings** `%N = e;` make `%N` stand for the node `e` itself (a
//!   DAG). As in TVM the table belongs to the whole parse and the first
//!   definition of a number wins (a later one gets a warning).
//! * **Globals** are interned by name; in a module, one no `def` defines is an
//!   error. A `def` defining a name again replaces the earlier one (warning).
//! * **Names without a sigil**: a constructor, else an operator
//!   ([`relay_ir::op::lookup`]). A constructor with no fields that is not called
//!   becomes `Call(C, [])`.
//! * **Call attributes** are built as TVM's reflection builds them: every
//!   field of the operator's attrs schema in declaration order, converted to
//!   the field's type, defaults for the rest (see `attrs.rs`).
//! * **Types**: dtypes, tensor shapes, tuples, function types, type
//!   parameters in scope, ADT applications (`List[A]`, and `List` as a call
//!   with no arguments, as TVM does).
//! * **Metadata**: the `#[metadata]` section is read once
//!   ([`ObjectGraph::parse`](relay_ir::metadata::ObjectGraph::parse)) and
//!   `meta[K][i]` resolves to constants with their exact data, variables,
//!   shape dimensions, virtual devices or attrs objects.

mod attrs;

mod exprs;
mod incremental;
mod metadata_refs;
mod names;
mod scope;
mod types;
mod upgrade;

pub use self::incremental::{lower_incrementally, DefinitionSpans, IncrementalLowering};
pub use self::names::{DefId, Definition, NameIndex, NameKind, Occurrence};
pub use self::upgrade::upgrade;

use relay_ir::diagnostic::{Code, Diagnostic, Diagnostics};
use relay_ir::dtype::DataType;
use relay_ir::interner::Interner;
use relay_ir::op::{AttrsSchema, OpDef};
use relay_ir::source::{FileId, SourceMap, Span};
use relay_ir::{Constructor, Expr, GlobalTypeVar, IRModule, TypeVar, Var};
use relay_syntax::ast::{self, AstNode, AstToken, TreeToken};
use relay_syntax::{TextRange, TextSize};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use self::metadata_refs::MetaState;
use self::names::NameRecorder;
use self::scope::{FastHashMap, Scopes};
use relay_syntax::green_view::Node;

/// The result of lowering a module: the module, what was found wrong, and
/// how every name of the text was resolved.
#[derive(Debug)]
pub struct Lowered {
    pub module: IRModule,
    pub diagnostics: Diagnostics,
    /// Every definition and use site of a name, with what each use resolves
    /// to (go to definition, references and rename read it).
    pub names: NameIndex,
}

/// How to lower a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LowerOptions {
    /// Read what other TVM versions and dumps write (see
    /// [`relay_syntax::ParseOptions::lenient`]): `meta[…]` references with no
    /// metadata section, attributes of other versions, attributes of
    /// operators that register no attributes type. Each is a warning.
    pub lenient: bool,
}

impl LowerOptions {
    pub const STRICT: LowerOptions = LowerOptions { lenient: false };
    pub const LENIENT: LowerOptions = LowerOptions { lenient: true };

    /// The parse options that go with these.
    pub fn parse_options(self) -> relay_syntax::ParseOptions {
        relay_syntax::ParseOptions {
            lenient: self.lenient,
        }
    }
}

/// Lowers a parsed module (`tvm.relay.parse`). The spans of the result point
/// into `file`; the caller owns the [`SourceMap`] (the module's `sources` are
/// left empty).
pub fn lower_module(file: FileId, root: &ast::SourceFile) -> Lowered {
    lower_module_into(file, root, IRModule::new())
}

/// [`lower_module`] with options.
pub fn lower_module_with(file: FileId, root: &ast::SourceFile, options: LowerOptions) -> Lowered {
    lower_module_into_with(file, root, IRModule::new(), options)
}

/// Lowers what a module parse gave: a module, or (for a lenient parse of a
/// text that is one expression, [`relay_syntax::LeniencyKind::ExpressionFile`])
/// a module whose `@main` is that expression, as TVM's
/// `IRModule.from_expr` makes it. `None` when the parse has no root.
pub fn lower_parse(
    file: FileId,
    parse: &relay_syntax::Parse,
    options: LowerOptions,
) -> Option<Lowered> {
    if let Some(root) = parse.source_file() {
        return Some(lower_module_with(file, &root, options));
    }
    let root = parse.expr_file()?;
    let (expr, diagnostics) = lower_expr_with(file, &root, options);
    let mut module = IRModule::new();
    let function = match expr.as_function() {
        Some(function) => function,
        None => relay_ir::Function::new(
            relay_ir::FunctionData {
                params: Vec::new(),
                body: expr.clone(),
                ret_type: None,
                type_params: Vec::new(),
                attrs: Default::default(),
                virtual_device: None,
            },
            expr.span(),
        ),
    };
    module.add_function("main", function);
    Some(Lowered {
        module,
        diagnostics,
        names: NameIndex::default(),
    })
}

/// Lowers a parsed module into `init`, as TVM's `init_module`: its global
/// functions and type definitions (with their constructors) are known to the
/// text, and the text's definitions are added to it.
pub fn lower_module_into(file: FileId, root: &ast::SourceFile, init: IRModule) -> Lowered {
    lower_module_into_with(file, root, init, LowerOptions::STRICT)
}

/// [`lower_module_into`] with options.
pub fn lower_module_into_with(
    file: FileId,
    root: &ast::SourceFile,
    init: IRModule,
    options: LowerOptions,
) -> Lowered {
    let mut lw = Lowerer::new(file, true);
    lw.set_options(options, root.syntax());
    lw.text_end = root.syntax().text_range().end();
    // The typed AST over the green tree: the same accessors, no cursors.
    let root = root.to_green();
    let mut module = init;
    lw.seed(&module);
    lw.load_metadata(root.metadata());

    let items: Vec<ast::Item<Node<'_>>> = root.items().collect();
    let duplicate_types = lw.declare_items(&items);
    lw.lower_type_items(&items, &duplicate_types, &mut module);

    for item in &items {
        if let ast::Item::Def(def) = item {
            let function = lw.def(*def);
            if let (Some(name), Some(function)) = (def.name(), function) {
                module.add_function(name.name(), function);
            }
        }
    }

    let (diagnostics, names) = lw.finish();
    Lowered {
        module,
        diagnostics,
        names,
    }
}

impl Lowerer {
    /// Declares what every item defines, wherever it is in the file
    /// (globals and ADT names may be used before their definition).
    /// Returns the starts of the names of duplicate type definitions.
    fn declare_items(&mut self, items: &[ast::Item<Node<'_>>]) -> HashSet<TextSize> {
        // Every name a definition introduces, wherever it is in the file: globals
        // and ADT names may be used before their definition.
        let mut def_ranges: HashMap<String, TextRange> = HashMap::new();
        let mut duplicate_types: HashSet<TextSize> = HashSet::new();
        for item in items {
            match item {
                ast::Item::Def(def) => {
                    let Some(name) = def.name() else { continue };
                    let range = name.syntax().range();
                    if let Some(previous) = def_ranges.get(name.name()) {
                        let diagnostic = Diagnostic::warning(
                            Code::Redefinition,
                            format!(
                                "`@{}` is defined again; TVM keeps the last definition",
                                name.name()
                            ),
                        )
                        .with_span(self.span(range))
                        .with_label(self.span(*previous), "previous definition here");
                        self.push(diagnostic);
                    }
                    def_ranges.insert(name.name().to_string(), range);
                    // Uses resolve to the last definition, the one TVM keeps.
                    let def = self
                        .names
                        .define(NameKind::Global, name.name(), Some(range), None);
                    self.globals.insert(name.name().to_string(), def);
                }
                ast::Item::TypeDef(_) | ast::Item::ExternTypeDef(_) => {
                    let Some(token) = item.name_token() else {
                        continue;
                    };
                    let name = token.text().to_string();
                    let range = token.range();
                    let def = self
                        .names
                        .define(NameKind::TypeName, &name, Some(range), None);
                    if let Some(previous) = self.adts.get(&name) {
                        let mut diagnostic = Diagnostic::error(
                            Code::DuplicateDefinition,
                            format!("a type with the name `{name}` was previously defined"),
                        )
                        .with_span(self.span(range));
                        if let Some(previous) = previous.range {
                            diagnostic =
                                diagnostic.with_label(self.span(previous), "first defined here");
                        }
                        self.push(diagnostic);
                        duplicate_types.insert(range.start());
                        continue;
                    }
                    self.adts.insert(
                        name.clone(),
                        AdtEntry {
                            header: GlobalTypeVar::new(&name),
                            range: Some(range),
                            def,
                        },
                    );
                }
            }
        }
        duplicate_types
    }

    /// Lowers the type definitions into `module` (before the bodies, so
    /// constructors are known in every body).
    fn lower_type_items(
        &mut self,
        items: &[ast::Item<Node<'_>>],
        duplicate_types: &HashSet<TextSize>,
        module: &mut IRModule,
    ) {
        for item in items {
            let data = match item {
                ast::Item::TypeDef(def) => {
                    self.type_def(def.name(), def.type_params(), def.ctors())
                }
                // Constructors of an `extern type` are a syntax error; TVM keeps
                // none of them in a well-formed module.
                ast::Item::ExternTypeDef(def) => {
                    self.type_def(def.name(), def.type_params(), std::iter::empty())
                }
                ast::Item::Def(_) => continue,
            };
            let is_duplicate = item
                .name_token()
                .is_some_and(|t| duplicate_types.contains(&t.range().start()));
            if let Some(data) = data {
                if !is_duplicate {
                    module.add_type_definition(data);
                }
            }
        }
    }
}

/// Lowers a parsed expression (`tvm.relay.parse_expr`): `free_var`s declare
/// free variables, globals and ADT names are not checked (there is no
/// module), a `#[metadata]` section may follow.
pub fn lower_expr(file: FileId, root: &ast::ExprFile) -> (Expr, Diagnostics) {
    lower_expr_with(file, root, LowerOptions::STRICT)
}

/// [`lower_expr`] with options.
pub fn lower_expr_with(
    file: FileId,
    root: &ast::ExprFile,
    options: LowerOptions,
) -> (Expr, Diagnostics) {
    let mut lw = Lowerer::new(file, false);
    lw.set_options(options, root.syntax());
    lw.text_end = root.syntax().text_range().end();
    let range = root.syntax().text_range();
    let root = root.to_green();
    lw.load_metadata(root.metadata());
    // TVM's `ParseExpr` pushes one scope before reading the expression.
    lw.locals.push();
    let expr = match root.expr() {
        Some(expr) => lw.expr(expr),
        None => lw.missing(range),
    };
    lw.locals.pop();
    (expr, lw.finish().0)
}

/// Parses and lowers a module text. The text is registered in the module's
/// `sources` under `name`; syntax errors come first in the diagnostics (layer
/// `Syntax`), then lowering's, each group in text order.
pub fn parse_and_lower(name: &str, text: &str) -> (IRModule, Diagnostics) {
    parse_and_lower_with(name, text, LowerOptions::STRICT)
}

/// [`parse_and_lower`] with options: a lenient reading also reads a text
/// that is one `fn` expression (as the module's `@main`), and reports what
/// it accepted as warnings.
pub fn parse_and_lower_with(
    name: &str,
    text: &str,
    options: LowerOptions,
) -> (IRModule, Diagnostics) {
    let mut sources = SourceMap::new();
    let file = sources.add(name, text);
    let parse =
        relay_syntax::parse_with(text, relay_syntax::Entry::Module, options.parse_options());
    let mut diagnostics: Vec<Diagnostic> = Diagnostic::of_parse(file, &parse);
    let (mut module, lowered) = match lower_parse(file, &parse, options) {
        Some(lowered) => (lowered.module, lowered.diagnostics),
        None => (IRModule::new(), Diagnostics::new()),
    };
    diagnostics.extend(lowered);
    module.sources = sources;
    (module, diagnostics.into_iter().collect())
}

/// Parses `text` and lowers its definitions into `module`, which they may
/// refer to (TVM's `IRModule::Import`: a library file added to a module).
/// The text is registered in the module's `sources` under `name`; a
/// definition whose name the module already has is an error.
pub fn parse_and_lower_into(module: IRModule, name: &str, text: &str) -> (IRModule, Diagnostics) {
    let mut sources = module.sources.clone();
    let file = sources.add(name, text);
    let parse = relay_syntax::parse_module(text);
    let mut diagnostics: Vec<Diagnostic> = parse
        .errors()
        .iter()
        .map(|e| Diagnostic::from_syntax_error(file, e))
        .collect();
    let mut module = match parse.source_file() {
        Some(root) => {
            let lowered = lower_module_into(file, &root, module);
            diagnostics.extend(lowered.diagnostics);
            lowered.module
        }
        None => module,
    };
    module.sources = sources;
    (module, diagnostics.into_iter().collect())
}

/// Parses and lowers one expression. Its spans point into file 0 of a source
/// map holding just this text (`SourceMap::new().add(name, text)`); use
/// [`parse_and_lower_expr_in`] to register the text in a map of your own.
pub fn parse_and_lower_expr(name: &str, text: &str) -> (Expr, Diagnostics) {
    let mut sources = SourceMap::new();
    parse_and_lower_expr_in(&mut sources, name, text)
}

/// [`parse_and_lower_expr`], registering the text in `sources`.
pub fn parse_and_lower_expr_in(
    sources: &mut SourceMap,
    name: &str,
    text: &str,
) -> (Expr, Diagnostics) {
    parse_and_lower_expr_in_with(sources, name, text, LowerOptions::STRICT)
}

/// [`parse_and_lower_expr_in`] with options.
pub fn parse_and_lower_expr_in_with(
    sources: &mut SourceMap,
    name: &str,
    text: &str,
    options: LowerOptions,
) -> (Expr, Diagnostics) {
    let file = sources.add(name, text);
    let parse = relay_syntax::parse_with(text, relay_syntax::Entry::Expr, options.parse_options());
    let mut diagnostics: Vec<Diagnostic> = Diagnostic::of_parse(file, &parse);
    let (expr, lowered) = match parse.expr_file() {
        Some(root) => lower_expr_with(file, &root, options),
        None => {
            let span = Span::new(file, TextRange::empty(TextSize::from(0)));
            (
                Var::new("missing", None, Some(span)).into_expr(),
                Diagnostics::new(),
            )
        }
    };
    diagnostics.extend(lowered);
    (expr, diagnostics.into_iter().collect())
}

/// An ADT name known to the lowering.
#[derive(Debug, Clone)]
struct AdtEntry {
    header: GlobalTypeVar,
    /// The name token of its definition (`None` for the initial module's).
    range: Option<TextRange>,
    /// Its definition in the name index.
    def: DefId,
}

/// A constructor known to the lowering.
#[derive(Debug, Clone)]
struct CtorEntry {
    ctor: Constructor,
    /// The name token of its definition (`None` for the initial module's).
    range: Option<TextRange>,
    /// ADT names its fields use that no `type` defines, with their ranges.
    /// TVM notices them only where the constructor is used.
    undefined: Vec<(String, TextRange)>,
    /// Its definition in the name index.
    def: DefId,
}

/// A local variable in scope: its IR variable and its definition.
#[derive(Debug, Clone)]
struct LocalEntry {
    var: Var,
    def: DefId,
}

/// The state of one lowering run: TVM's `Parser` minus the token stream.
pub(crate) struct Lowerer {
    file: FileId,
    diagnostics: Vec<Diagnostic>,
    /// Module mode: globals and ADT names are checked against the module.
    module_mode: bool,
    /// Local variables in scope.
    locals: Scopes<LocalEntry>,
    /// `free_var` declarations, visible for the rest of the parse.
    free_vars: FastHashMap<String, LocalEntry>,
    /// The variables made up for undeclared locals, one per name.
    undeclared: FastHashMap<String, LocalEntry>,
    /// Type parameters in scope, with their definitions.
    type_vars: Scopes<(TypeVar, DefId)>,
    /// Graph bindings of the whole parse: the node, its binding's range and
    /// its definition.
    graph: FastHashMap<u64, (Expr, TextRange, DefId)>,
    /// The global functions the module defines, with the definition uses
    /// resolve to.
    globals: FastHashMap<String, DefId>,
    /// ADT names the module defines.
    adts: FastHashMap<String, AdtEntry>,
    /// Constructors defined so far.
    ctors: FastHashMap<String, CtorEntry>,
    /// While lowering a constructor's fields: the undefined ADT names met.
    undefined_in_ctor: Option<Vec<(String, TextRange)>>,
    /// The metadata section.
    meta: MetaState,
    /// Definitions and uses of names, as they are resolved.
    names: NameRecorder,
    /// The end of the text: `free_var`s and graph bindings are visible up
    /// to it.
    text_end: TextSize,
    /// Operators by name, as [`relay_ir::op::lookup`] finds them.
    ops: FastHashMap<Box<str>, Option<&'static OpDef>>,
    /// Dtypes by name, as [`DataType::parse`] reads them.
    dtypes: FastHashMap<Box<str>, DataType>,
    /// Attrs schemas by the address of their operator's attrs type key.
    schemas: FastHashMap<usize, Option<&'static AttrsSchema>>,
    /// Whether to read leniently (see [`LowerOptions::lenient`]).
    lenient: bool,
    /// The tree's root, in a lenient reading: the `/* ty=… */` comments
    /// of `meta[…]` references without a section are read from its text.
    source_root: Option<relay_syntax::GreenNode>,
    /// That text, made on first use (rare: writing out a 10 MB module's
    /// text took a third of its lowering).
    source_text: Option<String>,
    /// Constants with no value in the text, by reference: one node per
    /// reference, as one metadata entry is one object.
    opaque_constants: FastHashMap<String, Var>,
    /// Unknown operators read as opaque ones, warned about once each.
    opaque_ops_warned: HashSet<String>,
    /// The definition being lowered for incremental lowering (see
    /// `incremental.rs`), if any.
    piece: Option<Piece>,
    /// Shares equal call attributes between calls: set only by the
    /// editor's lowering (`IncrementalLowering`), since TVM's parser makes
    /// one attrs object per call and a printed metadata section shows it.
    interner: Option<Arc<Interner>>,
}

/// What lowering records about one `def` for incremental lowering.
#[derive(Debug, Clone)]
pub(crate) struct Piece {
    /// The file the definition's spans point into (relative to `base`).
    file: FileId,
    /// The range of the definition's node.
    range: TextRange,
    /// The first name definition the definition makes: graph bindings and
    /// names of lower ids are another definition's (or the module's).
    first_def: u32,
    /// Whether lowering read or wrote what definitions share (graph
    /// bindings of another one, `free_var`s, undeclared locals, opaque
    /// operators or constants, metadata, constructors with undefined field
    /// types): such a definition cannot be lowered on its own.
    shared: bool,
    /// The graph binding numbers it defines.
    graph_numbers: Vec<u64>,
}

impl Lowerer {
    fn new(file: FileId, module_mode: bool) -> Lowerer {
        Lowerer {
            file,
            diagnostics: Vec::new(),
            module_mode,
            locals: Scopes::new(),
            free_vars: FastHashMap::default(),
            undeclared: FastHashMap::default(),
            type_vars: Scopes::new(),
            graph: FastHashMap::default(),
            globals: FastHashMap::default(),
            adts: FastHashMap::default(),
            ctors: FastHashMap::default(),
            undefined_in_ctor: None,
            meta: MetaState::Absent,
            names: NameRecorder::default(),
            text_end: TextSize::from(u32::MAX),
            ops: FastHashMap::default(),
            dtypes: FastHashMap::default(),
            schemas: FastHashMap::default(),
            lenient: false,
            source_root: None,
            source_text: None,
            opaque_constants: FastHashMap::default(),
            opaque_ops_warned: HashSet::new(),
            piece: None,
            interner: None,
        }
    }

    /// Notes that the definition being lowered depends on, or changes, what
    /// other definitions see.
    fn touch_shared(&mut self) {
        if let Some(piece) = &mut self.piece {
            piece.shared = true;
        }
    }

    /// Applies `options` to a lowering of the tree `root`.
    fn set_options(&mut self, options: LowerOptions, root: &relay_syntax::SyntaxNode) {
        self.lenient = options.lenient;
        if options.lenient {
            self.source_root = Some(root.green().to_owned());
        }
    }

    /// The text of the tree, in a lenient reading (see `source_root`).
    fn source_text(&mut self) -> Option<&str> {
        if self.source_text.is_none() {
            self.source_text = self.source_root.as_ref().map(|root| root.to_string());
        }
        self.source_text.as_deref()
    }

    /// Reports a warning at `range`.
    fn warning(&mut self, code: Code, range: TextRange, message: impl Into<String>) {
        let diagnostic = Diagnostic::warning(code, message).with_span(self.span(range));
        self.push(diagnostic);
    }

    /// Makes the definitions of an initial module known.
    fn seed(&mut self, module: &IRModule) {
        for (name, _) in module.functions() {
            let def = self.names.define(NameKind::Global, name, None, None);
            self.globals.insert(name.to_string(), def);
        }
        for (name, data) in module.type_definitions() {
            let def = self.names.define(NameKind::TypeName, name, None, None);
            self.adts.insert(
                name.to_string(),
                AdtEntry {
                    header: data.header.clone(),
                    range: None,
                    def,
                },
            );
            for ctor in &data.constructors {
                let def = self
                    .names
                    .define(NameKind::Constructor, ctor.name(), None, None);
                self.ctors.insert(
                    ctor.name().to_string(),
                    CtorEntry {
                        ctor: ctor.clone(),
                        range: None,
                        undefined: Vec::new(),
                        def,
                    },
                );
            }
        }
    }

    /// [`relay_ir::op::lookup`], remembered: a model calls a few operators
    /// many times.
    fn lookup_op(&mut self, name: &str) -> Option<&'static OpDef> {
        if let Some(&found) = self.ops.get(name) {
            return found;
        }
        let found = relay_ir::op::lookup(name);
        self.ops.insert(name.into(), found);
        found
    }

    /// [`relay_ir::op::attrs_schema`] of an operator's attrs type, remembered
    /// by the address of the (static) key.
    fn op_schema(&mut self, type_key: &'static str) -> Option<&'static AttrsSchema> {
        let addr = type_key.as_ptr() as usize;
        if let Some(&found) = self.schemas.get(&addr) {
            return found;
        }
        let found = relay_ir::op::attrs_schema(type_key);
        self.schemas.insert(addr, found);
        found
    }

    /// The span of `range`: inside the definition being lowered
    /// incrementally, in that definition's file and relative to its start.
    fn span(&self, range: TextRange) -> Span {
        match &self.piece {
            Some(piece) if piece.range.contains_range(range) => {
                Span::new(piece.file, range - piece.range.start())
            }
            _ => Span::new(self.file, range),
        }
    }

    /// The range in the document of a span [`Lowerer::span`] made.
    fn document_range(&self, span: Span) -> TextRange {
        match &self.piece {
            Some(piece) if span.file == piece.file => span.range + piece.range.start(),
            _ => span.range,
        }
    }

    fn push(&mut self, diagnostic: Diagnostic) {
        self.diagnostics.push(diagnostic);
    }

    /// Reports an error at `range`.
    fn error(&mut self, code: Code, range: TextRange, message: impl Into<String>) {
        let diagnostic = Diagnostic::error(code, message).with_span(self.span(range));
        self.push(diagnostic);
    }

    /// Reports an error at `range` with a help line.
    fn error_with_help(
        &mut self,
        code: Code,
        range: TextRange,
        message: impl Into<String>,
        help: Option<String>,
    ) {
        let mut diagnostic = Diagnostic::error(code, message).with_span(self.span(range));
        if let Some(help) = help {
            diagnostic = diagnostic.with_help(help);
        }
        self.push(diagnostic);
    }

    /// A stand-in for an expression that could not be lowered (the reason
    /// has been reported, here or by the parser).
    fn missing(&self, range: TextRange) -> Expr {
        Var::new("missing", None, Some(self.span(range))).into_expr()
    }

    /// The diagnostics in text order, and the names resolved.
    fn finish(mut self) -> (Diagnostics, NameIndex) {
        self.diagnostics
            .sort_by_key(|d| d.span.map_or(u32::MAX, |s| u32::from(s.range.start())));
        (self.diagnostics.into_iter().collect(), self.names.finish())
    }
}

/// `did you mean `…`?` for the closest of `candidates`, decorated by `show`.
/// Names of one or two characters get no suggestion: any other short name
/// is "close" to them.
fn suggestion<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    show: impl Fn(&str) -> String,
) -> Option<String> {
    if name.chars().count() < 3 {
        return None;
    }
    // Sorted, so that ties are broken the same way in every run (the
    // candidates often come from hash maps).
    let mut candidates: Vec<&str> = candidates.into_iter().collect();
    candidates.sort_unstable();
    candidates.dedup();
    relay_ir::op::did_you_mean(name, candidates)
        .map(|best| format!("did you mean `{}`?", show(best)))
}

/// The range of a token or node wrapper.
fn token_range(token: &impl AstToken) -> TextRange {
    token.syntax().text_range()
}

#[cfg(test)]
mod tests;
