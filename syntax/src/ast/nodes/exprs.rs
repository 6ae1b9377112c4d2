//! Expressions: sequences and their statements ([`SeqExpr`], [`Stmt`]),
//! blocks, atoms (literals, variables, operator paths, meta references),
//! `fn`, `if`, `match`, references, tuples, projections, calls and infix
//! operators; all gathered in the [`Expr`] enum.

use rowan::TextRange;

use crate::ast::{
    child, child_after, child_before, children, token, tokens, typed_token, AstChildren, AstToken,
    Attr, Bool, FloatNumber, Global, Graph, IntNumber, Local, MetaRef, Pattern, StringLit,
    TreeNode, TreeToken, Type,
};
use crate::SyntaxKind::{self, *};
use rowan::NodeOrToken;

ast_enum! {
    /// Any expression.
    Expr {
        SeqExpr(SeqExpr),
        BlockExpr(BlockExpr),
        Literal(Literal),
        LocalExpr(LocalExpr),
        GraphExpr(GraphExpr),
        GlobalExpr(GlobalExpr),
        MetaExpr(MetaExpr),
        PathExpr(PathExpr),
        FnExpr(FnExpr),
        IfExpr(IfExpr),
        MatchExpr(MatchExpr),
        RefCreateExpr(RefCreateExpr),
        RefReadExpr(RefReadExpr),
        RefWriteExpr(RefWriteExpr),
        ParenExpr(ParenExpr),
        TupleExpr(TupleExpr),
        TupleGetItemExpr(TupleGetItemExpr),
        CallExpr(CallExpr),
        BinExpr(BinExpr),
    }
}

impl<N: TreeNode> Expr<N> {
    /// Looks through parentheses: the expression inside any number of
    /// [`ParenExpr`]s (`None` if one is empty).
    pub fn strip_parens(self) -> Option<Expr<N>> {
        let mut expr = self;
        while let Expr::ParenExpr(paren) = expr {
            expr = paren.expr()?;
        }
        Some(expr)
    }
}

ast_enum! {
    /// A statement of a sequence, before its tail expression.
    Stmt {
        LetStmt(LetStmt),
        GraphBinding(GraphBinding),
        FreeVarStmt(FreeVarStmt),
        ExprStmt(ExprStmt),
    }
}

ast_node! {
    /// `let %x = a; %0 = b; c; d`: statements ending in a tail expression.
    /// A lone expression has no `SeqExpr` around it.
    SeqExpr: SEQ_EXPR
}

impl<N: TreeNode> SeqExpr<N> {
    /// The statements, in order.
    pub fn stmts(&self) -> AstChildren<Stmt<N>> {
        children(&self.syntax)
    }

    /// The final expression (the value of the sequence), which is not
    /// followed by a `;`.
    pub fn tail_expr(&self) -> Option<Expr<N>> {
        children(&self.syntax).last()
    }
}

ast_node! {
    /// `let %x: T = value;`.
    LetStmt: LET_STMT
}

impl<N: TreeNode> LetStmt<N> {
    /// The bound variable.
    pub fn name(&self) -> Option<Local<N::Token>> {
        typed_token(&self.syntax)
    }

    /// The type annotation after `:`.
    pub fn ty(&self) -> Option<Type<N>> {
        child(&self.syntax)
    }

    /// The value after `=`.
    pub fn value(&self) -> Option<Expr<N>> {
        child(&self.syntax)
    }
}

ast_node! {
    /// `%0 = value;`.
    GraphBinding: GRAPH_BINDING
}

impl<N: TreeNode> GraphBinding<N> {
    /// The bound number (`%0`).
    pub fn number(&self) -> Option<Graph<N::Token>> {
        typed_token(&self.syntax)
    }

    /// The value after `=`.
    pub fn value(&self) -> Option<Expr<N>> {
        child(&self.syntax)
    }
}

ast_node! {
    /// `free_var %x: T;`.
    FreeVarStmt: FREE_VAR_STMT
}

impl<N: TreeNode> FreeVarStmt<N> {
    /// The declared variable.
    pub fn name(&self) -> Option<Local<N::Token>> {
        typed_token(&self.syntax)
    }

    /// The type annotation after `:`.
    pub fn ty(&self) -> Option<Type<N>> {
        child(&self.syntax)
    }
}

ast_node! {
    /// `expr;`: an expression whose value is dropped.
    ExprStmt: EXPR_STMT
}

impl<N: TreeNode> ExprStmt<N> {
    /// The expression before the `;`.
    pub fn expr(&self) -> Option<Expr<N>> {
        child(&self.syntax)
    }
}

ast_node! {
    /// `{ … }`: a block with its own scope (function bodies, `if` branches).
    BlockExpr: BLOCK_EXPR
}

impl<N: TreeNode> BlockExpr<N> {
    /// The contents: a [`SeqExpr`] or a single expression.
    pub fn expr(&self) -> Option<Expr<N>> {
        child(&self.syntax)
    }

    /// The statements of the contents (none unless they are a [`SeqExpr`]).
    pub fn stmts(&self) -> impl Iterator<Item = Stmt<N>> {
        let seq = match self.expr() {
            Some(Expr::SeqExpr(seq)) => Some(seq),
            _ => None,
        };
        seq.into_iter().flat_map(|seq| seq.stmts())
    }

    /// The value of the block: the tail of a [`SeqExpr`], or the single
    /// expression.
    pub fn tail_expr(&self) -> Option<Expr<N>> {
        match self.expr()? {
            Expr::SeqExpr(seq) => seq.tail_expr(),
            expr => Some(expr),
        }
    }
}

ast_node! {
    /// An integer, float or boolean literal (or a string, as an attribute value).
    Literal: LITERAL
}

/// The token of a [`Literal`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LiteralKind<T = crate::SyntaxToken> {
    Int(IntNumber<T>),
    Float(FloatNumber<T>),
    Bool(Bool<T>),
    String(StringLit<T>),
}

impl<N: TreeNode> Literal<N> {
    /// The literal's token.
    pub fn token(&self) -> Option<N::Token> {
        tokens(&self.syntax).find(|it| matches!(it.kind(), INT | FLOAT | BOOL | STRING))
    }

    /// The literal's token, typed.
    pub fn kind(&self) -> Option<LiteralKind<N::Token>> {
        let token = self.token()?;
        Some(match token.kind() {
            INT => LiteralKind::Int(IntNumber { syntax: token }),
            FLOAT => LiteralKind::Float(FloatNumber { syntax: token }),
            BOOL => LiteralKind::Bool(Bool { syntax: token }),
            _ => LiteralKind::String(StringLit { syntax: token }),
        })
    }
}

ast_node! {
    /// A use of a local variable: `%x`.
    LocalExpr: LOCAL_EXPR
}

impl<N: TreeNode> LocalExpr<N> {
    /// The variable.
    pub fn name(&self) -> Option<Local<N::Token>> {
        typed_token(&self.syntax)
    }
}

ast_node! {
    /// A use of a graph binding: `%0`.
    GraphExpr: GRAPH_EXPR
}

impl<N: TreeNode> GraphExpr<N> {
    /// The binding number.
    pub fn number(&self) -> Option<Graph<N::Token>> {
        typed_token(&self.syntax)
    }
}

ast_node! {
    /// A use of a global function: `@f`.
    GlobalExpr: GLOBAL_EXPR
}

impl<N: TreeNode> GlobalExpr<N> {
    /// The global.
    pub fn name(&self) -> Option<Global<N::Token>> {
        typed_token(&self.syntax)
    }
}

ast_node! {
    /// `meta[relay.Constant][0]`, as an expression or an attribute value.
    MetaExpr: META_EXPR
}

impl<N: TreeNode> MetaExpr<N> {
    /// The reference.
    pub fn meta_ref(&self) -> Option<MetaRef<N::Token>> {
        typed_token(&self.syntax)
    }
}

ast_node! {
    /// An operator or constructor name: `nn.conv2d`, `add`, `Cons`.
    PathExpr: PATH_EXPR
}

dotted_name_accessors!(PathExpr);

ast_node! {
    /// `fn [T](params) -> R { body }`.
    FnExpr: FN_EXPR
}

fn_signature_accessors!(FnExpr);

ast_node! {
    /// `if (cond) { … } else { … }`.
    IfExpr: IF_EXPR
}

impl<N: TreeNode> IfExpr<N> {
    /// The `(cond)` node.
    pub fn condition_node(&self) -> Option<Condition<N>> {
        child(&self.syntax)
    }

    /// The condition expression.
    pub fn condition(&self) -> Option<Expr<N>> {
        self.condition_node()?.expr()
    }

    /// The block before `else`.
    pub fn then_branch(&self) -> Option<BlockExpr<N>> {
        child_before(&self.syntax, &[ELSE_KW])
    }

    /// The block after `else`.
    pub fn else_branch(&self) -> Option<BlockExpr<N>> {
        child_after(&self.syntax, &[ELSE_KW])
    }

    /// The `else` keyword.
    pub fn else_token(&self) -> Option<N::Token> {
        token(&self.syntax, ELSE_KW)
    }
}

ast_node! {
    /// `(cond)` of an `if`.
    Condition: CONDITION
}

impl<N: TreeNode> Condition<N> {
    /// The expression inside the parentheses.
    pub fn expr(&self) -> Option<Expr<N>> {
        child(&self.syntax)
    }
}

ast_node! {
    /// `match (e) { … }` or `match? (e) { … }`.
    MatchExpr: MATCH_EXPR
}

impl<N: TreeNode> MatchExpr<N> {
    /// `match?`: a partial match (no completeness check).
    pub fn is_partial(&self) -> bool {
        token(&self.syntax, MATCH_Q_KW).is_some()
    }

    /// The `match` or `match?` keyword.
    pub fn match_token(&self) -> Option<N::Token> {
        tokens(&self.syntax).find(|it| matches!(it.kind(), MATCH_KW | MATCH_Q_KW))
    }

    /// The matched value.
    pub fn scrutinee(&self) -> Option<Expr<N>> {
        child(&self.syntax)
    }

    /// `{ arm, … }`.
    pub fn arm_list(&self) -> Option<MatchArmList<N>> {
        child(&self.syntax)
    }

    /// The arms (none without a list).
    pub fn arms(&self) -> impl Iterator<Item = MatchArm<N>> {
        self.arm_list().into_iter().flat_map(|list| list.arms())
    }
}

ast_node! {
    /// `{ arm, … }` of a match.
    MatchArmList: MATCH_ARM_LIST
}

impl<N: TreeNode> MatchArmList<N> {
    /// The arms, in order.
    pub fn arms(&self) -> AstChildren<MatchArm<N>> {
        children(&self.syntax)
    }
}

ast_node! {
    /// `pattern => expr`.
    MatchArm: MATCH_ARM
}

impl<N: TreeNode> MatchArm<N> {
    /// The pattern before `=>`.
    pub fn pattern(&self) -> Option<Pattern<N>> {
        child(&self.syntax)
    }

    /// The expression after `=>`.
    pub fn body(&self) -> Option<Expr<N>> {
        child(&self.syntax)
    }
}

ast_node! {
    /// `ref(value)`: TVM's `RefCreate`.
    RefCreateExpr: REF_CREATE_EXPR
}

impl<N: TreeNode> RefCreateExpr<N> {
    /// The initial value.
    pub fn value(&self) -> Option<Expr<N>> {
        child(&self.syntax)
    }
}

ast_node! {
    /// `ref_read(r)`: TVM's `RefRead`.
    RefReadExpr: REF_READ_EXPR
}

impl<N: TreeNode> RefReadExpr<N> {
    /// The reference read.
    pub fn ref_expr(&self) -> Option<Expr<N>> {
        child(&self.syntax)
    }
}

ast_node! {
    /// `ref_write(r, value)`: TVM's `RefWrite`.
    RefWriteExpr: REF_WRITE_EXPR
}

impl<N: TreeNode> RefWriteExpr<N> {
    /// The reference written (before the `,`).
    pub fn ref_expr(&self) -> Option<Expr<N>> {
        child_before(&self.syntax, &[COMMA])
    }

    /// The value written (after the `,`).
    pub fn value(&self) -> Option<Expr<N>> {
        child_after(&self.syntax, &[COMMA])
    }
}

ast_node! {
    /// `(e)`.
    ParenExpr: PAREN_EXPR
}

impl<N: TreeNode> ParenExpr<N> {
    /// The expression inside.
    pub fn expr(&self) -> Option<Expr<N>> {
        child(&self.syntax)
    }
}

ast_node! {
    /// `()`, `(e,)`, `(a, b)`.
    TupleExpr: TUPLE_EXPR
}

impl<N: TreeNode> TupleExpr<N> {
    /// The fields, in order.
    pub fn fields(&self) -> AstChildren<Expr<N>> {
        children(&self.syntax)
    }
}

ast_node! {
    /// `e.0`.
    TupleGetItemExpr: TUPLE_GET_ITEM_EXPR
}

impl<N: TreeNode> TupleGetItemExpr<N> {
    /// The projected tuple.
    pub fn tuple(&self) -> Option<Expr<N>> {
        child(&self.syntax)
    }

    /// The index token after the `.`.
    pub fn index_token(&self) -> Option<IntNumber<N::Token>> {
        typed_token(&self.syntax)
    }

    /// The index, if it is a valid non-negative integer.
    pub fn index(&self) -> Option<u64> {
        let token = self.index_token()?;
        if let Ok(index) = token.text().parse::<u64>() {
            return Some(index);
        }
        token.value().and_then(|value| u64::try_from(value).ok())
    }
}

ast_node! {
    /// `callee(args…, attrs…)`.
    CallExpr: CALL_EXPR
}

impl<N: TreeNode> CallExpr<N> {
    /// The called expression (an operator path, a global, a variable, …).
    pub fn callee(&self) -> Option<Expr<N>> {
        child(&self.syntax)
    }

    /// `(args…, attrs…)`.
    pub fn arg_list(&self) -> Option<ArgList<N>> {
        child(&self.syntax)
    }

    /// The positional arguments (none without a list).
    pub fn args(&self) -> impl Iterator<Item = Expr<N>> {
        self.arg_list().into_iter().flat_map(|list| list.args())
    }

    /// The `key=value` attributes (none without a list).
    pub fn attrs(&self) -> impl Iterator<Item = Attr<N>> {
        self.arg_list().into_iter().flat_map(|list| list.attrs())
    }
}

ast_node! {
    /// `(args…, attrs…)` of a call.
    ArgList: ARG_LIST
}

impl<N: TreeNode> ArgList<N> {
    /// The positional arguments, in order.
    pub fn args(&self) -> AstChildren<Expr<N>> {
        children(&self.syntax)
    }

    /// The `key=value` attributes, in order.
    pub fn attrs(&self) -> AstChildren<Attr<N>> {
        children(&self.syntax)
    }
}

ast_node! {
    /// `lhs op rhs`.
    BinExpr: BIN_EXPR
}

/// An infix operator of Relay, with TVM's precedences.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinOp {
    Mul,
    Div,
    Add,
    Sub,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

impl BinOp {
    /// Every operator.
    pub const ALL: [BinOp; 10] = [
        BinOp::Mul,
        BinOp::Div,
        BinOp::Add,
        BinOp::Sub,
        BinOp::Lt,
        BinOp::Le,
        BinOp::Gt,
        BinOp::Ge,
        BinOp::Eq,
        BinOp::Ne,
    ];

    /// The TVM operator the infix form calls (`add` for `+`).
    pub fn op_name(self) -> &'static str {
        match self {
            BinOp::Mul => "multiply",
            BinOp::Div => "divide",
            BinOp::Add => "add",
            BinOp::Sub => "subtract",
            BinOp::Lt => "less",
            BinOp::Le => "less_equal",
            BinOp::Gt => "greater",
            BinOp::Ge => "greater_equal",
            BinOp::Eq => "equal",
            BinOp::Ne => "not_equal",
        }
    }

    /// The operator as written (`+`, `<=`).
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
        }
    }

    /// The binding power in TVM's parser (higher binds tighter).
    pub fn precedence(self) -> u8 {
        match self {
            BinOp::Mul | BinOp::Div => 12,
            BinOp::Add | BinOp::Sub => 10,
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => 8,
            BinOp::Eq | BinOp::Ne => 7,
        }
    }
}

const OP_START: &[SyntaxKind] = &[STAR, SLASH, PLUS, MINUS, L_ANGLE, R_ANGLE, EQ, BANG];

impl<N: TreeNode> BinExpr<N> {
    /// The left operand.
    pub fn lhs(&self) -> Option<Expr<N>> {
        child_before(&self.syntax, OP_START)
    }

    /// The right operand.
    pub fn rhs(&self) -> Option<Expr<N>> {
        child_after(&self.syntax, OP_START)
    }

    /// The operator.
    pub fn op(&self) -> Option<BinOp> {
        self.op_details().map(|(op, _)| op)
    }

    /// The range of the operator's tokens (both tokens of `<=`).
    pub fn op_range(&self) -> Option<TextRange> {
        self.op_details().map(|(_, range)| range)
    }

    /// The operator and the range of its tokens.
    pub fn op_details(&self) -> Option<(BinOp, TextRange)> {
        let mut elements = self.syntax.children_with_tokens();
        let first = elements.find_map(|it| match it {
            NodeOrToken::Token(t) if OP_START.contains(&t.kind()) => Some(t),
            _ => None,
        })?;
        // Two-token operators are written without a space between them.
        let second = elements
            .next()
            .and_then(NodeOrToken::into_token)
            .filter(|it| it.kind() == EQ);
        let op = match (first.kind(), second.is_some()) {
            (STAR, _) => BinOp::Mul,
            (SLASH, _) => BinOp::Div,
            (PLUS, _) => BinOp::Add,
            (MINUS, _) => BinOp::Sub,
            (L_ANGLE, false) => BinOp::Lt,
            (L_ANGLE, true) => BinOp::Le,
            (R_ANGLE, false) => BinOp::Gt,
            (R_ANGLE, true) => BinOp::Ge,
            (EQ, true) => BinOp::Eq,
            (BANG, true) => BinOp::Ne,
            _ => return None,
        };
        let end = match (&second, op) {
            (Some(second), BinOp::Le | BinOp::Ge | BinOp::Eq | BinOp::Ne) => {
                second.text_range().end()
            }
            _ => first.text_range().end(),
        };
        Some((op, TextRange::new(first.text_range().start(), end)))
    }
}
