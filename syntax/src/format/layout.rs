//! The layout rules: one per kind of node (an arm of [`node_doc`], or a
//! helper for the shapes several kinds share), in TVM's printed style
//! (`astext()`): two-space blocks, `%0 = …;` lines, `def`s separated by an
//! empty line, `, ` between list elements, `: ` before a type, `=` unspaced
//! in attributes. Where TVM writes one long line the rules group the list
//! so that it breaks, one element per line, when it does not fit.
//!
//! Every rule reads its node's children as [`Item`]s through a [`Cursor`]
//! that expects them in the order the grammar produces; a child in an order
//! the rules do not know stops the formatting with an error at that child
//! (nothing is ever skipped, so nothing can be dropped).

use super::comments::{items, Comment, Item};
use super::doc::Doc;
use super::FormatError;
use crate::SyntaxKind::{self, *};
use crate::{SyntaxElement, SyntaxNode};

/// The layout of a whole file (a `SOURCE_FILE` or an `EXPR_FILE`): the
/// header, then the definitions (or the expression) and the metadata
/// section, separated by an empty line as TVM prints them. TVM writes no
/// empty line after the header; one the author left there is kept.
pub(crate) fn file(root: &SyntaxNode) -> Result<Doc, FormatError> {
    let (items, dangling, dangling_blank) = items(root);
    let mut cursor = Cursor::new(root, items);
    let mut parts = Vec::new();
    let mut previous: Option<SyntaxKind> = None;
    while let Some(item) = cursor.next() {
        match item.kind() {
            VERSION | DEF | TYPE_DEF | EXTERN_TYPE_DEF | METADATA_SECTION => {}
            _ if root.kind() == EXPR_FILE => {}
            _ => return Err(unsupported(&item.element, "at the top level of a module")),
        }
        match previous {
            None => {}
            Some(VERSION) if !item.blank_before => parts.push(Doc::HardLine),
            Some(_) => parts.push(Doc::BlankLine),
        }
        parts.push(emit(&item)?);
        previous = Some(item.kind());
    }
    if !dangling.is_empty() {
        if previous.is_some() {
            parts.push(if dangling_blank {
                Doc::BlankLine
            } else {
                Doc::HardLine
            });
        }
        parts.extend(dangling.iter().map(Comment::doc));
    }
    let ends_with_metadata = root
        .last_token()
        .is_some_and(|token| token.kind() == METADATA);
    if !ends_with_metadata {
        parts.push(Doc::HardLine);
    }
    Ok(Doc::concat(parts))
}

/// The error for a child the rules do not lay out.
fn unsupported(element: &SyntaxElement, context: &str) -> FormatError {
    FormatError::unsupported(
        format!(
            "`relay fmt` does not lay out {} {context} yet; the file was left unchanged",
            describe(element.kind())
        ),
        element.text_range(),
    )
}

fn describe(kind: SyntaxKind) -> String {
    if kind.is_token() {
        kind.describe().to_string()
    } else {
        format!("a {kind:?} node")
    }
}

/// The children of one node, consumed in order.
struct Cursor<'n> {
    node: &'n SyntaxNode,
    items: std::vec::IntoIter<Item>,
    peeked: Option<Item>,
}

impl<'n> Cursor<'n> {
    fn new(node: &'n SyntaxNode, items: Vec<Item>) -> Cursor<'n> {
        let mut items = items.into_iter();
        let peeked = items.next();
        Cursor {
            node,
            items,
            peeked,
        }
    }

    fn of(node: &'n SyntaxNode) -> Cursor<'n> {
        let (items, dangling, _) = items(node);
        debug_assert!(dangling.is_empty(), "only the root ends with trivia");
        Cursor::new(node, items)
    }

    fn peek(&self) -> Option<SyntaxKind> {
        self.peeked.as_ref().map(Item::kind)
    }

    fn at(&self, kind: SyntaxKind) -> bool {
        self.peek() == Some(kind)
    }

    fn next(&mut self) -> Option<Item> {
        let item = self.peeked.take();
        self.peeked = self.items.next();
        item
    }

    fn eat(&mut self, kind: SyntaxKind) -> Option<Item> {
        if self.at(kind) {
            self.next()
        } else {
            None
        }
    }

    /// The next child, which must be of `kind`.
    fn expect(&mut self, kind: SyntaxKind) -> Result<Item, FormatError> {
        match self.peek() {
            Some(found) if found == kind => Ok(self.next().expect("peeked")),
            _ => Err(self.unexpected(&format!("where {} was expected", describe(kind)))),
        }
    }

    /// The next child, whatever it is (an operand, a type, a pattern).
    fn any(&mut self) -> Result<Item, FormatError> {
        match self.next() {
            Some(item) => Ok(item),
            None => Err(FormatError::unsupported(
                format!(
                    "`relay fmt` expected more in this {:?} node; the file was left unchanged",
                    self.node.kind()
                ),
                self.node.text_range(),
            )),
        }
    }

    fn unexpected(&self, context: &str) -> FormatError {
        match &self.peeked {
            Some(item) => unsupported(
                &item.element,
                &format!("{context} in a {:?} node", self.node.kind()),
            ),
            None => FormatError::unsupported(
                format!(
                    "`relay fmt` found this {:?} node incomplete {context}; the file was left unchanged",
                    self.node.kind()
                ),
                self.node.text_range(),
            ),
        }
    }

    /// Every child was laid out.
    fn done(&self) -> Result<(), FormatError> {
        match &self.peeked {
            None => Ok(()),
            Some(item) => Err(unsupported(
                &item.element,
                &format!("at this place in a {:?} node", self.node.kind()),
            )),
        }
    }
}

/// An item with its comments, its element laid out by its own rule.
fn emit(item: &Item) -> Result<Doc, FormatError> {
    let element = match &item.element {
        SyntaxElement::Token(token) => Doc::Token(token.clone()),
        SyntaxElement::Node(node) => node_doc(node)?,
    };
    Ok(with_comments(item, element))
}

fn with_comments(item: &Item, element: Doc) -> Doc {
    if item.leading.is_empty() && item.trailing.is_empty() {
        return element;
    }
    let mut parts: Vec<Doc> = item.leading.iter().map(Comment::doc).collect();
    parts.push(element);
    parts.extend(item.trailing.iter().map(Comment::doc));
    Doc::concat(parts)
}

/// The layout of one node.
fn node_doc(node: &SyntaxNode) -> Result<Doc, FormatError> {
    let mut c = Cursor::of(node);
    let doc = match node.kind() {
        // ---- nodes of one token ----
        VERSION | METADATA_SECTION | LITERAL | LOCAL_EXPR | GLOBAL_EXPR | GRAPH_EXPR
        | META_EXPR | WILDCARD_PAT | DIM | SCALAR_TYPE | INCOMPLETE_TYPE | TYPE_PARAM
        | ATTR_NULL_VALUE => {
            let item = c.any()?;
            if !item.element.kind().is_token() {
                return Err(unsupported(&item.element, "inside a single-token node"));
            }
            emit(&item)?
        }
        DEF => {
            let mut parts = vec![
                emit(&c.expect(DEF_KW)?)?,
                Doc::Space,
                emit(&c.expect(GLOBAL)?)?,
            ];
            fn_rest(&mut c, &mut parts)?;
            Doc::concat(parts)
        }
        FN_EXPR => {
            let mut parts = vec![emit(&c.expect(FN_KW)?)?, Doc::Space];
            fn_rest(&mut c, &mut parts)?;
            Doc::concat(parts)
        }
        TYPE_DEF | EXTERN_TYPE_DEF => {
            let mut parts = Vec::new();
            if node.kind() == EXTERN_TYPE_DEF {
                parts.push(emit(&c.expect(EXTERN_KW)?)?);
                parts.push(Doc::Space);
            }
            parts.push(emit(&c.expect(TYPE_KW)?)?);
            parts.push(Doc::Space);
            parts.push(emit(&c.expect(IDENT)?)?);
            if let Some(params) = c.eat(TYPE_PARAM_LIST) {
                parts.push(emit(&params)?);
            }
            if let Some(ctors) = c.eat(CTOR_LIST) {
                parts.push(Doc::Space);
                parts.push(emit(&ctors)?);
            }
            Doc::concat(parts)
        }
        CTOR_LIST | MATCH_ARM_LIST => vertical_list(&mut c)?,
        CTOR_DEF => {
            let mut parts = vec![emit(&c.expect(IDENT)?)?];
            if let Some(fields) = c.eat(CTOR_FIELD_LIST) {
                parts.push(emit(&fields)?);
            }
            Doc::concat(parts)
        }
        TYPE_PARAM_LIST | CTOR_FIELD_LIST | PARAM_LIST | ARG_LIST | TUPLE_EXPR | PAT_LIST
        | TUPLE_TYPE | TYPE_ARG_LIST | SHAPE | ATTR_LIST_VALUE | PARAM_ATTRS => {
            let open = c.peek().unwrap_or(L_PAREN);
            delimited(&mut c, open, closer(open))?
        }
        PARAM => {
            let mut parts = vec![emit(&c.expect(LOCAL)?)?];
            if let Some(attrs) = c.eat(PARAM_ATTRS) {
                parts.push(Doc::Space);
                parts.push(emit(&attrs)?);
            }
            type_annotation(&mut c, &mut parts)?;
            Doc::concat(parts)
        }
        RET_TYPE => Doc::concat(vec![
            emit(&c.expect(MINUS)?)?,
            emit(&c.expect(R_ANGLE)?)?,
            Doc::Space,
            emit(&c.any()?)?,
        ]),

        // ---- sequences and blocks ----
        BLOCK_EXPR => braced_block(&mut c)?,
        SEQ_EXPR => {
            let mut parts = Vec::new();
            while let Some(item) = c.next() {
                if !parts.is_empty() {
                    parts.push(if item.blank_before {
                        Doc::BlankLine
                    } else {
                        Doc::HardLine
                    });
                }
                parts.push(emit(&item)?);
            }
            Doc::concat(parts)
        }
        LET_STMT => {
            let mut parts = vec![
                emit(&c.expect(LET_KW)?)?,
                Doc::Space,
                emit(&c.expect(LOCAL)?)?,
            ];
            type_annotation(&mut c, &mut parts)?;
            parts.extend([Doc::Space, emit(&c.expect(EQ)?)?]);
            parts.push(bound_value(&mut c)?);
            Doc::concat(parts)
        }
        GRAPH_BINDING => Doc::concat(vec![
            emit(&c.expect(GRAPH)?)?,
            Doc::Space,
            emit(&c.expect(EQ)?)?,
            bound_value(&mut c)?,
        ]),
        FREE_VAR_STMT => {
            let mut parts = vec![
                emit(&c.expect(FREE_VAR_KW)?)?,
                Doc::Space,
                emit(&c.expect(LOCAL)?)?,
            ];
            type_annotation(&mut c, &mut parts)?;
            if let Some(semicolon) = c.eat(SEMICOLON) {
                parts.push(emit(&semicolon)?);
            }
            Doc::concat(parts)
        }
        EXPR_STMT => Doc::concat(vec![emit(&c.any()?)?, emit(&c.expect(SEMICOLON)?)?]),

        // ---- expressions ----
        CALL_EXPR => Doc::concat(vec![emit(&c.any()?)?, emit(&c.expect(ARG_LIST)?)?]),
        BIN_EXPR => {
            let mut parts = vec![emit(&c.any()?)?, Doc::Space];
            // One operator of one or two tokens (`<=` is `<` and `=`).
            while matches!(
                c.peek(),
                Some(STAR | SLASH | PLUS | MINUS | L_ANGLE | R_ANGLE | EQ | BANG)
            ) {
                parts.push(emit(&c.next().expect("peeked"))?);
            }
            parts.push(Doc::Space);
            parts.push(emit(&c.any()?)?);
            Doc::concat(parts)
        }
        PATH_EXPR | ATTR_KEY => {
            let mut parts = Vec::new();
            while let Some(item) = c.next() {
                if !matches!(item.kind(), IDENT | DOT) {
                    return Err(unsupported(&item.element, "inside a dotted name"));
                }
                parts.push(emit(&item)?);
            }
            Doc::concat(parts)
        }
        TUPLE_GET_ITEM_EXPR => Doc::concat(vec![
            emit(&c.any()?)?,
            emit(&c.expect(DOT)?)?,
            emit(&c.expect(INT)?)?,
        ]),
        PAREN_EXPR | CONDITION | ATTR_PAREN_VALUE => parenthesised(&mut c)?,
        IF_EXPR => Doc::concat(vec![
            emit(&c.expect(IF_KW)?)?,
            Doc::Space,
            emit(&c.expect(CONDITION)?)?,
            Doc::Space,
            emit(&c.expect(BLOCK_EXPR)?)?,
            Doc::Space,
            emit(&c.expect(ELSE_KW)?)?,
            Doc::Space,
            emit(&c.expect(BLOCK_EXPR)?)?,
        ]),
        MATCH_EXPR => {
            let keyword = match c.peek() {
                Some(MATCH_Q_KW) => c.expect(MATCH_Q_KW)?,
                _ => c.expect(MATCH_KW)?,
            };
            Doc::concat(vec![
                emit(&keyword)?,
                Doc::Space,
                emit(&c.any()?)?,
                Doc::Space,
                emit(&c.expect(MATCH_ARM_LIST)?)?,
            ])
        }
        MATCH_ARM => Doc::concat(vec![
            emit(&c.any()?)?,
            Doc::Space,
            emit(&c.expect(EQ)?)?,
            emit(&c.expect(R_ANGLE)?)?,
            Doc::Space,
            emit(&c.any()?)?,
        ]),
        REF_CREATE_EXPR | REF_READ_EXPR | REF_WRITE_EXPR | REF_TYPE => {
            let keyword = c.any()?;
            if !matches!(keyword.kind(), REF_KW | REF_READ_KW | REF_WRITE_KW) {
                return Err(unsupported(&keyword.element, "where `ref` was expected"));
            }
            Doc::concat(vec![emit(&keyword)?, delimited(&mut c, L_PAREN, R_PAREN)?])
        }
        ATTR => Doc::concat(vec![
            emit(&c.expect(ATTR_KEY)?)?,
            emit(&c.expect(EQ)?)?,
            emit(&c.any()?)?,
        ]),

        // ---- patterns ----
        VAR_PAT => {
            let mut parts = vec![emit(&c.expect(LOCAL)?)?];
            type_annotation(&mut c, &mut parts)?;
            Doc::concat(parts)
        }
        CTOR_PAT => {
            let mut parts = vec![emit(&c.expect(IDENT)?)?];
            if let Some(fields) = c.eat(PAT_LIST) {
                parts.push(emit(&fields)?);
            }
            Doc::concat(parts)
        }
        TUPLE_PAT => emit(&c.expect(PAT_LIST)?)?,

        // ---- types ----
        TENSOR_TYPE => {
            let mut parts = vec![
                emit(&c.expect(IDENT)?)?,
                emit(&c.expect(L_BRACK)?)?,
                emit(&c.expect(SHAPE)?)?,
                emit(&c.expect(COMMA)?)?,
                Doc::Space,
            ];
            // No dtype is void, printed so by TVM: `Tensor[(3), ]`.
            if let Some(dtype) = c.eat(IDENT) {
                parts.push(emit(&dtype)?);
            }
            parts.push(emit(&c.expect(R_BRACK)?)?);
            Doc::concat(parts)
        }
        FN_TYPE => {
            let mut parts = vec![emit(&c.expect(FN_KW)?)?, Doc::Space];
            if let Some(params) = c.eat(TYPE_PARAM_LIST) {
                parts.push(emit(&params)?);
            }
            parts.push(delimited(&mut c, L_PAREN, R_PAREN)?);
            parts.extend([
                Doc::Space,
                emit(&c.expect(MINUS)?)?,
                emit(&c.expect(R_ANGLE)?)?,
                Doc::Space,
                emit(&c.any()?)?,
            ]);
            Doc::concat(parts)
        }
        NAMED_TYPE => {
            let mut parts = vec![emit(&c.expect(IDENT)?)?];
            if let Some(args) = c.eat(TYPE_ARG_LIST) {
                parts.push(emit(&args)?);
            }
            Doc::concat(parts)
        }

        _ => {
            return Err(unsupported(
                &SyntaxElement::Node(node.clone()),
                "(unknown construct)",
            ))
        }
    };
    c.done()?;
    Ok(doc)
}

fn closer(open: SyntaxKind) -> SyntaxKind {
    match open {
        L_BRACK => R_BRACK,
        L_CURLY => R_CURLY,
        _ => R_PAREN,
    }
}

/// `[T, U]`, `(params) -> R { body }` after `def @f` or `fn`.
fn fn_rest(c: &mut Cursor<'_>, parts: &mut Vec<Doc>) -> Result<(), FormatError> {
    if let Some(params) = c.eat(TYPE_PARAM_LIST) {
        parts.push(emit(&params)?);
    }
    parts.push(emit(&c.expect(PARAM_LIST)?)?);
    if let Some(ret) = c.eat(RET_TYPE) {
        parts.push(Doc::Space);
        parts.push(emit(&ret)?);
    }
    parts.push(Doc::Space);
    parts.push(emit(&c.expect(BLOCK_EXPR)?)?);
    Ok(())
}

/// `: T` after a variable, if there is one. A tuple or function type that
/// does not fit breaks inside its brackets; any other type (a tensor type,
/// with its `/* ty=… */` comment) goes on the next line instead.
fn type_annotation(c: &mut Cursor<'_>, parts: &mut Vec<Doc>) -> Result<(), FormatError> {
    if let Some(colon) = c.eat(COLON) {
        parts.push(emit(&colon)?);
        let ty = c.any()?;
        let breaks_inside = matches!(ty.kind(), TUPLE_TYPE | FN_TYPE);
        let ty = Doc::concat(vec![Doc::Line, emit(&ty)?]);
        parts.push(if breaks_inside {
            Doc::shallow_group(ty)
        } else {
            Doc::group(Doc::indent(ty))
        });
    }
    Ok(())
}

/// The value of `%0 = value;` or `let %x = value;` and the `;`: after the
/// `=` when its first line fits there (`%0 = nn.conv2d(` with the arguments
/// broken below), else on the next line, indented.
fn bound_value(c: &mut Cursor<'_>) -> Result<Doc, FormatError> {
    let value = emit(&c.any()?)?;
    let semicolon = emit(&c.expect(SEMICOLON)?)?;
    Ok(Doc::shallow_group(Doc::concat(vec![
        Doc::Line,
        value,
        semicolon,
    ])))
}

/// The comments leading a closing bracket belong to the inside of the list
/// or block it closes: they are laid out there, before the line break.
fn split_closer(close: Item) -> (Vec<Doc>, Doc) {
    let inner: Vec<Doc> = close.leading.iter().map(Comment::doc).collect();
    let bare = Item {
        leading: Vec::new(),
        ..close
    };
    let element = Doc::Token(bare.element.as_token().expect("a closing token").clone());
    (inner, with_comments(&bare, element))
}

/// `open elem, elem, … close` on one line, or when it does not fit, one
/// element per line indented; separators and a trailing comma as written.
fn delimited(c: &mut Cursor<'_>, open: SyntaxKind, close: SyntaxKind) -> Result<Doc, FormatError> {
    let open = emit(&c.expect(open)?)?;
    let mut inner = Vec::new();
    let mut elements = 0;
    while !c.at(close) {
        let item = c.any()?;
        if matches!(item.kind(), COMMA | R_PAREN | R_BRACK | R_CURLY) {
            return Err(unsupported(
                &item.element,
                "where a list element was expected",
            ));
        }
        inner.push(if elements == 0 {
            Doc::SoftLine
        } else {
            Doc::Line
        });
        inner.push(emit(&item)?);
        elements += 1;
        if let Some(comma) = c.eat(COMMA) {
            inner.push(emit(&comma)?);
        }
    }
    let (close_comments, close) = split_closer(c.expect(close)?);
    if elements == 0 {
        let mut parts = vec![open];
        parts.extend(close_comments);
        parts.push(close);
        return Ok(Doc::group(Doc::concat(parts)));
    }
    if !close_comments.is_empty() {
        inner.push(Doc::SoftLine);
        inner.extend(close_comments);
    }
    Ok(Doc::group(Doc::concat(vec![
        open,
        Doc::indent(Doc::concat(inner)),
        Doc::SoftLine,
        close,
    ])))
}

/// `{ elem, elem, }`, one element per line, each followed by a comma
/// (match arms and constructors, as TVM prints them).
fn vertical_list(c: &mut Cursor<'_>) -> Result<Doc, FormatError> {
    let open = emit(&c.expect(L_CURLY)?)?;
    let mut inner = Vec::new();
    while !c.at(R_CURLY) {
        let item = c.any()?;
        if matches!(item.kind(), COMMA | R_CURLY) {
            return Err(unsupported(
                &item.element,
                "where a list element was expected",
            ));
        }
        inner.push(if !inner.is_empty() && item.blank_before {
            Doc::BlankLine
        } else {
            Doc::HardLine
        });
        inner.push(emit(&item)?);
        match c.eat(COMMA) {
            Some(comma) => inner.push(emit(&comma)?),
            None => inner.push(Doc::Static(",")),
        }
    }
    let (close_comments, close) = split_closer(c.expect(R_CURLY)?);
    if !close_comments.is_empty() {
        inner.push(Doc::HardLine);
        inner.extend(close_comments);
    }
    if inner.is_empty() {
        return Ok(Doc::concat(vec![open, close]));
    }
    Ok(Doc::concat(vec![
        open,
        Doc::indent(Doc::concat(inner)),
        Doc::HardLine,
        close,
    ]))
}

/// `{`, the body indented on its own lines, `}`.
fn braced_block(c: &mut Cursor<'_>) -> Result<Doc, FormatError> {
    let open = emit(&c.expect(L_CURLY)?)?;
    let body = emit(&c.any()?)?;
    let (close_comments, close) = split_closer(c.expect(R_CURLY)?);
    let mut inner = vec![Doc::HardLine, body];
    if !close_comments.is_empty() {
        inner.push(Doc::HardLine);
        inner.extend(close_comments);
    }
    Ok(Doc::concat(vec![
        open,
        Doc::indent(Doc::concat(inner)),
        Doc::HardLine,
        close,
    ]))
}

/// `(e)`; a sequence inside is laid out as a block (TVM prints a `let`
/// chain in an operand position that way).
fn parenthesised(c: &mut Cursor<'_>) -> Result<Doc, FormatError> {
    let open = emit(&c.expect(L_PAREN)?)?;
    let inner = c.any()?;
    let is_sequence = inner.kind() == SEQ_EXPR;
    let inner = emit(&inner)?;
    let (close_comments, close) = split_closer(c.expect(R_PAREN)?);
    if is_sequence {
        let mut body = vec![Doc::HardLine, inner];
        if !close_comments.is_empty() {
            body.push(Doc::HardLine);
            body.extend(close_comments);
        }
        return Ok(Doc::concat(vec![
            open,
            Doc::indent(Doc::concat(body)),
            Doc::HardLine,
            close,
        ]));
    }
    let mut parts = vec![open, inner];
    parts.extend(close_comments);
    parts.push(close);
    Ok(Doc::concat(parts))
}
