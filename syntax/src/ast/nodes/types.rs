//! Types: tensors with shapes ([`TensorType`], [`Shape`], [`Dim`]), dtype
//! scalars, tuples, function types, named types (type variables and ADTs),
//! `_` and `ref(T)`; gathered in the [`Type`] enum.

use crate::ast::{
    child, children, token, typed_token, AstChildren, AstNode, AstToken, Ident, IntNumber, MetaRef,
    TypeParam, TypeParamList,
};
use crate::ast::{tokens, TreeNode, TreeToken};
use crate::SyntaxKind::*;
use rowan::NodeOrToken;

ast_enum! {
    /// Any type.
    Type {
        TensorType(TensorType),
        ScalarType(ScalarType),
        TupleType(TupleType),
        FnType(FnType),
        NamedType(NamedType),
        IncompleteType(IncompleteType),
        RefType(RefType),
    }
}

ast_node! {
    /// `Tensor[(1, ?, 3), float32]`.
    TensorType: TENSOR_TYPE
}

impl<N: TreeNode> TensorType<N> {
    /// `(1, ?, 3)`.
    pub fn shape(&self) -> Option<Shape<N>> {
        child(&self.syntax)
    }

    /// The dimensions (none without a shape).
    pub fn dims(&self) -> impl Iterator<Item = Dim<N>> {
        self.shape().into_iter().flat_map(|shape| shape.dims())
    }

    /// The dtype name after the shape: `float32`.
    pub fn dtype(&self) -> Option<Ident<N::Token>> {
        // The first identifier is `Tensor` itself.
        tokens(&self.syntax).filter_map(Ident::cast).nth(1)
    }
}

ast_node! {
    /// `(1, ?, 3)` of a tensor type.
    Shape: SHAPE
}

impl<N: TreeNode> Shape<N> {
    /// The dimensions, in order.
    pub fn dims(&self) -> AstChildren<Dim<N>> {
        children(&self.syntax)
    }
}

ast_node! {
    /// One dimension of a shape: an integer, `?` or a meta reference.
    Dim: DIM
}

/// What a [`Dim`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DimKind<T = crate::SyntaxToken> {
    /// A fixed size.
    Int(IntNumber<T>),
    /// `?`: any size.
    Any(T),
    /// `meta[…][i]`: a size from the metadata.
    Meta(MetaRef<T>),
}

impl<N: TreeNode> Dim<N> {
    /// The dimension's token, typed.
    pub fn kind(&self) -> Option<DimKind<N::Token>> {
        tokens(&self.syntax).find_map(|token| match token.kind() {
            INT => Some(DimKind::Int(IntNumber { syntax: token })),
            QUESTION => Some(DimKind::Any(token)),
            META_REF => Some(DimKind::Meta(MetaRef { syntax: token })),
            _ => None,
        })
    }

    /// The size, for an integer dimension with a valid value.
    pub fn value(&self) -> Option<i64> {
        match self.kind()? {
            DimKind::Int(int) => int.value(),
            _ => None,
        }
    }
}

ast_node! {
    /// A dtype name standing for a rank-0 tensor: `float32`, `bool`.
    ScalarType: SCALAR_TYPE
}

impl<N: TreeNode> ScalarType<N> {
    /// The dtype name.
    pub fn dtype(&self) -> Option<Ident<N::Token>> {
        typed_token(&self.syntax)
    }
}

ast_node! {
    /// `()`, `(T,)`, `(T)`, `(A, B)`: always a tuple type.
    TupleType: TUPLE_TYPE
}

impl<N: TreeNode> TupleType<N> {
    /// The field types, in order.
    pub fn fields(&self) -> AstChildren<Type<N>> {
        children(&self.syntax)
    }
}

ast_node! {
    /// `fn [A](A, B) -> R`.
    FnType: FN_TYPE
}

impl<N: TreeNode> FnType<N> {
    /// `[A]` after `fn`.
    pub fn type_param_list(&self) -> Option<TypeParamList<N>> {
        child(&self.syntax)
    }

    /// The type parameters (none without a list).
    pub fn type_params(&self) -> impl Iterator<Item = TypeParam<N>> {
        self.type_param_list()
            .into_iter()
            .flat_map(|list| list.type_params())
    }

    /// The parameter types, inside the parentheses.
    pub fn params(&self) -> impl Iterator<Item = Type<N>> {
        self.split().0.into_iter()
    }

    /// The return type, after the arrow.
    pub fn ret(&self) -> Option<Type<N>> {
        self.split().1
    }

    fn split(&self) -> (Vec<Type<N>>, Option<Type<N>>) {
        #[derive(PartialEq)]
        enum State {
            Before,
            Inside,
            After,
        }
        let mut state = State::Before;
        let mut params = Vec::new();
        let mut ret = None;
        for element in self.syntax.children_with_tokens() {
            match element {
                NodeOrToken::Token(token) => match token.kind() {
                    L_PAREN if state == State::Before => state = State::Inside,
                    R_PAREN | MINUS | R_ANGLE => state = State::After,
                    _ => {}
                },
                NodeOrToken::Node(node) => {
                    let Some(ty) = Type::cast(node) else { continue };
                    if state == State::Inside {
                        params.push(ty);
                    } else if ret.is_none() {
                        // Without a parameter list the grammar reads the
                        // return type right away.
                        ret = Some(ty);
                    }
                }
            }
        }
        (params, ret)
    }
}

ast_node! {
    /// A type variable or ADT, possibly applied: `A`, `List[A]`.
    NamedType: NAMED_TYPE
}

impl<N: TreeNode> NamedType<N> {
    /// The type's name.
    pub fn name(&self) -> Option<Ident<N::Token>> {
        typed_token(&self.syntax)
    }

    /// `[A, B]` after the name.
    pub fn type_arg_list(&self) -> Option<TypeArgList<N>> {
        child(&self.syntax)
    }

    /// The type arguments (none without a list).
    pub fn args(&self) -> impl Iterator<Item = Type<N>> {
        self.type_arg_list()
            .into_iter()
            .flat_map(|list| list.args())
    }
}

ast_node! {
    /// `[A, B]`: the arguments of a named type.
    TypeArgList: TYPE_ARG_LIST
}

impl<N: TreeNode> TypeArgList<N> {
    /// The arguments, in order.
    pub fn args(&self) -> AstChildren<Type<N>> {
        children(&self.syntax)
    }
}

ast_node! {
    /// `_`: a type left to inference.
    IncompleteType: INCOMPLETE_TYPE
}

impl<N: TreeNode> IncompleteType<N> {
    /// The `_` token.
    pub fn underscore_token(&self) -> Option<N::Token> {
        token(&self.syntax, UNDERSCORE)
    }
}

ast_node! {
    /// `ref(T)`.
    RefType: REF_TYPE
}

impl<N: TreeNode> RefType<N> {
    /// The referenced type.
    pub fn inner(&self) -> Option<Type<N>> {
        child(&self.syntax)
    }
}
