//! Where every name of a file is defined and used: locals (parameters,
//! `let`, pattern variables, `free_var`), graph bindings, globals, type
//! parameters, ADT names and constructors. Go to definition, references,
//! rename, document highlights and completion of names in scope read it.
//!
//! Lowering resolves names too, but keeps no table of use sites (every use
//! of a variable *is* its binding's node, so the IR has no use spans); this
//! table follows the same scoping rules on the syntax tree: a `let` binds
//! before its value is read, `free_var`s and graph bindings are visible for
//! the rest of the file, globals, ADTs and constructors everywhere.

use relay_syntax::{SyntaxKind, SyntaxKind::*, SyntaxNode, SyntaxToken, TextRange, TextSize};
use std::collections::HashMap;

/// What a name stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SymbolKind {
    /// A parameter, `let` variable, pattern variable or `free_var`.
    Local,
    /// A parameter of a function.
    Param,
    /// A local used but never declared (all its uses are one symbol).
    Undeclared,
    /// `%0 = …;`.
    Graph,
    /// `@f`.
    Global,
    /// A type parameter `[A]`.
    TypeParam,
    /// The name of a `type` definition.
    TypeName,
    /// A constructor of a `type` definition.
    Constructor,
}

/// One name.
#[derive(Debug, Clone)]
pub struct Symbol {
    pub kind: SymbolKind,
    /// The name without its sigil.
    pub name: String,
    /// The defining token (sigil included), `None` for undeclared names.
    pub def: Option<TextRange>,
    /// The whole defining construct (the `def`, the `let` statement, …).
    pub def_full: Option<TextRange>,
    /// Uses (token ranges, sigil included), in text order.
    pub refs: Vec<TextRange>,
}

impl Symbol {
    /// The definition and every use.
    pub fn occurrences(&self) -> impl Iterator<Item = TextRange> + '_ {
        self.def.into_iter().chain(self.refs.iter().copied())
    }
}

/// The symbols of a file and the occurrence under any offset.
#[derive(Debug, Default)]
pub struct Symbols {
    pub symbols: Vec<Symbol>,
    /// (token range, symbol) sorted by start.
    occurrences: Vec<(TextRange, usize)>,
}

/// The range of a name without its `%` or `@` (what a rename replaces).
pub fn name_range(text: &str, range: TextRange) -> TextRange {
    let start = usize::from(range.start());
    match text.as_bytes().get(start) {
        Some(b'%' | b'@') if !range.is_empty() => {
            TextRange::new(range.start() + TextSize::from(1), range.end())
        }
        _ => range,
    }
}

fn strip_sigil(text: &str) -> &str {
    text.strip_prefix(['%', '@']).unwrap_or(text)
}

impl Symbols {
    pub fn build(root: &SyntaxNode) -> Symbols {
        let mut builder = Builder::default();
        builder.collect_items(root);
        builder.walk(root);
        let mut symbols = builder.symbols;
        for symbol in &mut symbols {
            symbol.refs.sort_by_key(|r| r.start());
        }
        let mut occurrences: Vec<(TextRange, usize)> = symbols
            .iter()
            .enumerate()
            .flat_map(|(i, s)| s.occurrences().map(move |r| (r, i)))
            .collect();
        occurrences.sort_by_key(|(r, _)| r.start());
        Symbols {
            symbols,
            occurrences,
        }
    }

    /// The symbol with an occurrence at `offset` (end inclusive, so a cursor
    /// just after a name still finds it), and that occurrence's range.
    pub fn at(&self, offset: TextSize) -> Option<(usize, TextRange)> {
        let i = self
            .occurrences
            .partition_point(|(r, _)| r.start() <= offset);
        // Candidates end at i; the last one starting at or before offset.
        self.occurrences[..i]
            .iter()
            .rev()
            .take(2)
            .find(|(r, _)| r.contains_inclusive(offset))
            .map(|(r, s)| (*s, *r))
    }

    pub fn get(&self, id: usize) -> &Symbol {
        &self.symbols[id]
    }

    /// The locals and graph bindings visible at `offset`, innermost first,
    /// for completion: locals whose definition comes before the offset and
    /// whose scope (approximated by the uses and enclosing construct)
    /// contains it.
    pub fn visible_at(&self, offset: TextSize) -> Vec<&Symbol> {
        let mut out: Vec<&Symbol> = self
            .symbols
            .iter()
            .filter(|s| match s.kind {
                SymbolKind::Local | SymbolKind::Param | SymbolKind::Graph => {
                    s.def.is_some_and(|d| d.start() <= offset)
                        && s.def_full.is_none_or_contains(offset, s.kind)
                }
                _ => false,
            })
            .collect();
        out.sort_by_key(|s| std::cmp::Reverse(s.def.map(|d| d.start())));
        out
    }
}

trait ScopeCheck {
    fn is_none_or_contains(&self, offset: TextSize, kind: SymbolKind) -> bool;
}

impl ScopeCheck for Option<TextRange> {
    fn is_none_or_contains(&self, offset: TextSize, kind: SymbolKind) -> bool {
        match (self, kind) {
            (Some(scope), SymbolKind::Param | SymbolKind::Local) => {
                scope.contains_inclusive(offset)
            }
            _ => true,
        }
    }
}

#[derive(Default)]
struct Builder {
    symbols: Vec<Symbol>,
    /// Scopes of locals: name → symbol.
    scopes: Vec<HashMap<String, usize>>,
    type_scopes: Vec<HashMap<String, usize>>,
    free_vars: HashMap<String, usize>,
    undeclared: HashMap<String, usize>,
    graph: HashMap<String, usize>,
    globals: HashMap<String, usize>,
    types: HashMap<String, usize>,
    ctors: HashMap<String, usize>,
}

fn first_token(node: &SyntaxNode, kind: SyntaxKind) -> Option<SyntaxToken> {
    node.children_with_tokens()
        .filter_map(|e| e.into_token())
        .find(|t| t.kind() == kind)
}

impl Builder {
    fn add(&mut self, kind: SymbolKind, token: &SyntaxToken, full: TextRange) -> usize {
        self.symbols.push(Symbol {
            kind,
            name: strip_sigil(token.text()).to_string(),
            def: Some(token.text_range()),
            def_full: Some(full),
            refs: Vec::new(),
        });
        self.symbols.len() - 1
    }

    fn reference(&mut self, id: usize, token: &SyntaxToken) {
        self.symbols[id].refs.push(token.text_range());
    }

    /// Globals, ADT names and constructors, visible everywhere.
    fn collect_items(&mut self, root: &SyntaxNode) {
        for item in root.children() {
            match item.kind() {
                DEF => {
                    if let Some(token) = first_token(&item, GLOBAL) {
                        let name = strip_sigil(token.text()).to_string();
                        if !self.globals.contains_key(&name) {
                            let id = self.add(SymbolKind::Global, &token, item.text_range());
                            self.globals.insert(name, id);
                        }
                    }
                }
                TYPE_DEF | EXTERN_TYPE_DEF => {
                    if let Some(token) = first_token(&item, IDENT) {
                        let id = self.add(SymbolKind::TypeName, &token, item.text_range());
                        self.types.entry(token.text().to_string()).or_insert(id);
                    }
                    for ctor in item.descendants().filter(|n| n.kind() == CTOR_DEF) {
                        if let Some(token) = first_token(&ctor, IDENT) {
                            let id = self.add(SymbolKind::Constructor, &token, ctor.text_range());
                            self.ctors.entry(token.text().to_string()).or_insert(id);
                        }
                    }
                }
                _ => {}
            }
        }
    }

    fn lookup_local(&self, name: &str) -> Option<usize> {
        self.scopes
            .iter()
            .rev()
            .find_map(|s| s.get(name).copied())
            .or_else(|| self.free_vars.get(name).copied())
    }

    fn define_local(&mut self, kind: SymbolKind, token: &SyntaxToken, scope: TextRange) {
        let id = self.add(kind, token, scope);
        let name = self.symbols[id].name.clone();
        match self.scopes.last_mut() {
            Some(scope) => {
                scope.insert(name, id);
            }
            None => {
                self.free_vars.insert(name, id);
            }
        }
    }

    fn define_type_params(&mut self, node: &SyntaxNode, scope: TextRange) {
        let mut map = HashMap::new();
        if let Some(list) = node.children().find(|n| n.kind() == TYPE_PARAM_LIST) {
            for param in list.children().filter(|n| n.kind() == TYPE_PARAM) {
                if let Some(token) = first_token(&param, IDENT) {
                    let id = self.add(SymbolKind::TypeParam, &token, scope);
                    map.insert(token.text().to_string(), id);
                }
            }
        }
        self.type_scopes.push(map);
    }

    fn walk_children(&mut self, node: &SyntaxNode) {
        for child in node.children() {
            self.walk(&child);
        }
    }

    fn walk(&mut self, node: &SyntaxNode) {
        match node.kind() {
            DEF | FN_EXPR | TYPE_DEF | EXTERN_TYPE_DEF | FN_TYPE => {
                let scope = node.text_range();
                self.define_type_params(node, scope);
                self.scopes.push(HashMap::new());
                for child in node.children() {
                    match child.kind() {
                        TYPE_PARAM_LIST => {}
                        PARAM_LIST => {
                            for param in child.children() {
                                if param.kind() != PARAM {
                                    self.walk(&param);
                                    continue;
                                }
                                self.walk_children(&param);
                                if let Some(token) = first_token(&param, LOCAL) {
                                    self.define_local(SymbolKind::Param, &token, scope);
                                }
                            }
                        }
                        // Constructor names were collected with the items.
                        CTOR_LIST => {
                            for ctor in child.children() {
                                self.walk_children(&ctor);
                            }
                        }
                        _ => self.walk(&child),
                    }
                }
                self.scopes.pop();
                self.type_scopes.pop();
            }
            SEQ_EXPR | BLOCK_EXPR | MATCH_ARM => {
                // A scope for what is bound inside; its extent is the
                // enclosing block (for completion's visibility test).
                let scope = node
                    .ancestors()
                    .find(|n| matches!(n.kind(), BLOCK_EXPR | MATCH_ARM | FN_EXPR | DEF))
                    .map_or(node.text_range(), |n| n.text_range());
                self.scopes.push(HashMap::new());
                for child in node.children() {
                    match child.kind() {
                        LET_STMT => {
                            // The variable is bound before its value is read.
                            if let Some(token) = first_token(&child, LOCAL) {
                                self.define_local(SymbolKind::Local, &token, scope);
                            }
                            self.walk_children(&child);
                        }
                        GRAPH_BINDING => {
                            self.walk_children(&child);
                            if let Some(token) = first_token(&child, GRAPH) {
                                let name = strip_sigil(token.text()).to_string();
                                if !self.graph.contains_key(&name) {
                                    let id =
                                        self.add(SymbolKind::Graph, &token, child.text_range());
                                    self.graph.insert(name, id);
                                }
                            }
                        }
                        FREE_VAR_STMT => {
                            self.walk_children(&child);
                            if let Some(token) = first_token(&child, LOCAL) {
                                let id = self.add(SymbolKind::Local, &token, child.text_range());
                                let name = self.symbols[id].name.clone();
                                self.free_vars.insert(name, id);
                            }
                        }
                        _ => self.walk(&child),
                    }
                }
                self.scopes.pop();
            }
            VAR_PAT => {
                self.walk_children(node);
                if let Some(token) = first_token(node, LOCAL) {
                    let scope = node
                        .ancestors()
                        .find(|n| n.kind() == MATCH_ARM)
                        .map_or(node.text_range(), |n| n.text_range());
                    self.define_local(SymbolKind::Local, &token, scope);
                }
            }
            LOCAL_EXPR => {
                if let Some(token) = first_token(node, LOCAL) {
                    let name = strip_sigil(token.text()).to_string();
                    match self.lookup_local(&name) {
                        Some(id) => self.reference(id, &token),
                        None => {
                            let id = match self.undeclared.get(&name) {
                                Some(&id) => id,
                                None => {
                                    self.symbols.push(Symbol {
                                        kind: SymbolKind::Undeclared,
                                        name: name.clone(),
                                        def: None,
                                        def_full: None,
                                        refs: Vec::new(),
                                    });
                                    let id = self.symbols.len() - 1;
                                    self.undeclared.insert(name, id);
                                    id
                                }
                            };
                            self.reference(id, &token);
                        }
                    }
                }
            }
            GRAPH_EXPR => {
                if let Some(token) = first_token(node, GRAPH) {
                    if let Some(&id) = self.graph.get(strip_sigil(token.text())) {
                        self.reference(id, &token);
                    }
                }
            }
            GLOBAL_EXPR => {
                if let Some(token) = first_token(node, GLOBAL) {
                    if let Some(&id) = self.globals.get(strip_sigil(token.text())) {
                        self.reference(id, &token);
                    }
                }
            }
            PATH_EXPR | CTOR_PAT => {
                let idents: Vec<SyntaxToken> = node
                    .children_with_tokens()
                    .filter_map(|e| e.into_token())
                    .filter(|t| t.kind() == IDENT)
                    .collect();
                if let [token] = idents.as_slice() {
                    if let Some(&id) = self.ctors.get(token.text()) {
                        self.reference(id, token);
                    }
                }
                self.walk_children(node);
            }
            NAMED_TYPE => {
                if let Some(token) = first_token(node, IDENT) {
                    let name = token.text();
                    let id = self
                        .type_scopes
                        .iter()
                        .rev()
                        .find_map(|s| s.get(name).copied())
                        .or_else(|| self.types.get(name).copied());
                    if let Some(id) = id {
                        self.reference(id, &token);
                    }
                }
                self.walk_children(node);
            }
            _ => self.walk_children(node),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn symbols(text: &str) -> Symbols {
        Symbols::build(&relay_syntax::parse_module(text).syntax_node())
    }

    fn refs_of(text: &str, needle: &str, nth: usize) -> Vec<&'static str> {
        let s = symbols(text);
        let offset = text.match_indices(needle).nth(nth).unwrap().0 as u32;
        let (id, _) = s.at(offset.into()).expect("a symbol");
        let text: &'static str = Box::leak(text.to_string().into_boxed_str());
        s.get(id)
            .occurrences()
            .map(|r| &text[usize::from(r.start())..])
            .map(|rest| {
                &rest[..rest
                    .find([',', '(', ')', ';', ' ', '\n', ':'])
                    .unwrap_or(rest.len())]
            })
            .collect()
    }

    #[test]
    fn locals_follow_scopes() {
        let text = "#[version = \"0.0.5\"]\ndef @f(%x, %y) {\n  let %x = add(%x, %y);\n  %x\n}\ndef @g(%x) { @f(%x, %x) }\n";
        // The parameter %x of @f is shadowed at once: a `let` binds its
        // variable before its value is read (as in TVM).
        let s = symbols(text);
        let param = text.find("%x").unwrap() as u32;
        let (id, _) = s.at(param.into()).unwrap();
        assert_eq!(s.get(id).kind, SymbolKind::Param);
        assert_eq!(s.get(id).refs.len(), 0);
        // The let-bound %x: its uses in its value and in the body.
        let let_x = text.find("let %x").unwrap() as u32 + 4;
        let (id, _) = s.at(let_x.into()).unwrap();
        assert_eq!(s.get(id).refs.len(), 2);
        assert_eq!(refs_of(text, "@f", 0), vec!["@f", "@f"]);
        assert_eq!(refs_of(text, "%x", 5), vec!["%x", "%x", "%x"]);
    }

    #[test]
    fn graph_types_and_constructors() {
        let text = "#[version = \"0.0.5\"]\ntype L[A] { C(A, L[A]), N }\ndef @f[B](%a: B) -> L[B] {\n  %0 = C(%a, N);\n  match (%0) { C(%h, _) => C(%h, N), N => %0 }\n}\n";
        assert_eq!(refs_of(text, "%0", 0).len(), 3);
        assert_eq!(refs_of(text, "B", 1).len(), 3);
        assert_eq!(refs_of(text, "L", 1).len(), 3);
        assert_eq!(refs_of(text, "N", 0).len(), 4);
        assert_eq!(refs_of(text, "%h", 0).len(), 2);
    }
}
