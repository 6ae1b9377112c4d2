//! Files and top-level definitions: [`SourceFile`], [`ExprFile`], the
//! version header and metadata section, `def` ([`Def`]), `type`
//! ([`TypeDef`]), `extern type` ([`ExternTypeDef`]) and their parts, and the
//! parameter list and return type shared by `def` and `fn`.

use crate::ast::TreeNode;
use crate::ast::{
    child, children, token, typed_token, AstChildren, Attr, Expr, Global, Ident, Local, Metadata,
    Type, VersionAttr,
};
use crate::SyntaxKind;

ast_node! {
    /// A module (`tvm.relay.parse`): version header, definitions, metadata.
    SourceFile: SOURCE_FILE
}

impl<N: TreeNode> SourceFile<N> {
    /// The `#[version = …]` header.
    pub fn version(&self) -> Option<Version<N>> {
        child(&self.syntax)
    }

    /// The definitions, in order.
    pub fn items(&self) -> AstChildren<Item<N>> {
        children(&self.syntax)
    }

    /// The `def`s, in order.
    pub fn defs(&self) -> AstChildren<Def<N>> {
        children(&self.syntax)
    }

    /// The `type` and `extern type` definitions, in order.
    pub fn type_defs(&self) -> impl Iterator<Item = Item<N>> {
        self.items().filter(|item| !matches!(item, Item::Def(_)))
    }

    /// The `#[metadata]` section.
    pub fn metadata(&self) -> Option<MetadataSection<N>> {
        child(&self.syntax)
    }
}

ast_node! {
    /// One expression (`tvm.relay.parse_expr`) with an optional version
    /// header and metadata section.
    ExprFile: EXPR_FILE
}

impl<N: TreeNode> ExprFile<N> {
    /// The `#[version = …]` header.
    pub fn version(&self) -> Option<Version<N>> {
        child(&self.syntax)
    }

    /// The expression (a [`SeqExpr`](crate::ast::SeqExpr) if it has bindings).
    pub fn expr(&self) -> Option<Expr<N>> {
        child(&self.syntax)
    }

    /// The `#[metadata]` section.
    pub fn metadata(&self) -> Option<MetadataSection<N>> {
        child(&self.syntax)
    }
}

ast_node! {
    /// The `#[version = "0.0.5"]` header.
    Version: VERSION
}

impl<N: TreeNode> Version<N> {
    /// The header token.
    pub fn attr(&self) -> Option<VersionAttr<N::Token>> {
        typed_token(&self.syntax)
    }

    /// The version as TVM reads it, quotes included (`"0.0.5"`).
    pub fn value(&self) -> Option<String> {
        self.attr().map(|attr| attr.value().to_string())
    }
}

ast_node! {
    /// The `#[metadata]` section at the end of a file.
    MetadataSection: METADATA_SECTION
}

impl<N: TreeNode> MetadataSection<N> {
    /// The section token (header and body).
    pub fn metadata(&self) -> Option<Metadata<N::Token>> {
        typed_token(&self.syntax)
    }

    /// The text after the `#[metadata]` header.
    pub fn body(&self) -> Option<String> {
        self.metadata().map(|m| m.body().to_string())
    }
}

ast_enum! {
    /// A top-level definition.
    Item {
        Def(Def),
        TypeDef(TypeDef),
        ExternTypeDef(ExternTypeDef),
    }
}

impl<N: TreeNode> Item<N> {
    /// The token naming the definition: the `@f` of a `def`, the identifier
    /// of a type.
    pub fn name_token(&self) -> Option<N::Token> {
        match self {
            Item::Def(it) => it.name().map(|name| name.syntax),
            Item::TypeDef(it) => it.name().map(|name| name.syntax),
            Item::ExternTypeDef(it) => it.name().map(|name| name.syntax),
        }
    }

    /// The defined name, without the `@` of a global.
    pub fn name_text(&self) -> Option<String> {
        match self {
            Item::Def(it) => it.name().map(|name| name.name().to_string()),
            Item::TypeDef(it) => it.name().map(|name| name.name().to_string()),
            Item::ExternTypeDef(it) => it.name().map(|name| name.name().to_string()),
        }
    }
}

ast_node! {
    /// `def @name[T](params) -> R { body }`.
    Def: DEF
}

impl<N: TreeNode> Def<N> {
    /// The `@name` being defined.
    pub fn name(&self) -> Option<Global<N::Token>> {
        typed_token(&self.syntax)
    }
}

fn_signature_accessors!(Def);

ast_node! {
    /// `type Name[A] { Ctor(T), … }`.
    TypeDef: TYPE_DEF
}

ast_node! {
    /// `extern type Name[A]` (constructors are an error, but are kept).
    ExternTypeDef: EXTERN_TYPE_DEF
}

macro_rules! type_def_accessors {
    ($name:ident) => {
        impl<N: TreeNode> $name<N> {
            /// The name of the type.
            pub fn name(&self) -> Option<Ident<N::Token>> {
                typed_token(&self.syntax)
            }

            /// `[A, B]` after the name.
            pub fn type_param_list(&self) -> Option<TypeParamList<N>> {
                child(&self.syntax)
            }

            /// The type parameters (none without a list).
            pub fn type_params(&self) -> impl Iterator<Item = TypeParam<N>> {
                self.type_param_list()
                    .into_iter()
                    .flat_map(|list| list.type_params())
            }

            /// `{ Ctor, … }`.
            pub fn ctor_list(&self) -> Option<CtorList<N>> {
                child(&self.syntax)
            }

            /// The constructors (none without a list).
            pub fn ctors(&self) -> impl Iterator<Item = CtorDef<N>> {
                self.ctor_list().into_iter().flat_map(|list| list.ctors())
            }
        }
    };
}

type_def_accessors!(TypeDef);
type_def_accessors!(ExternTypeDef);

ast_node! {
    /// `[A, B]`: the type parameters of a `def`, `fn`, `type` or function type.
    TypeParamList: TYPE_PARAM_LIST
}

impl<N: TreeNode> TypeParamList<N> {
    /// The parameters, in order.
    pub fn type_params(&self) -> AstChildren<TypeParam<N>> {
        children(&self.syntax)
    }
}

ast_node! {
    /// One type parameter: `A`.
    TypeParam: TYPE_PARAM
}

impl<N: TreeNode> TypeParam<N> {
    /// The parameter's name.
    pub fn name(&self) -> Option<Ident<N::Token>> {
        typed_token(&self.syntax)
    }
}

ast_node! {
    /// `{ Ctor, Ctor(T, U) }`: the constructors of a type definition.
    CtorList: CTOR_LIST
}

impl<N: TreeNode> CtorList<N> {
    /// The constructors, in order.
    pub fn ctors(&self) -> AstChildren<CtorDef<N>> {
        children(&self.syntax)
    }
}

ast_node! {
    /// One constructor of a type definition: `Cons(A, List[A])`.
    CtorDef: CTOR_DEF
}

impl<N: TreeNode> CtorDef<N> {
    /// The constructor's name.
    pub fn name(&self) -> Option<Ident<N::Token>> {
        typed_token(&self.syntax)
    }

    /// `(T, U)` after the name.
    pub fn field_list(&self) -> Option<CtorFieldList<N>> {
        child(&self.syntax)
    }

    /// The field types (none without a list).
    pub fn fields(&self) -> impl Iterator<Item = Type<N>> {
        self.field_list().into_iter().flat_map(|list| list.fields())
    }
}

ast_node! {
    /// `(T, U)`: the field types of a constructor.
    CtorFieldList: CTOR_FIELD_LIST
}

impl<N: TreeNode> CtorFieldList<N> {
    /// The field types, in order.
    pub fn fields(&self) -> AstChildren<Type<N>> {
        children(&self.syntax)
    }
}

ast_node! {
    /// `(%x: T, …, attr=v, …)`: the parameters and attributes of a `def` or `fn`.
    ParamList: PARAM_LIST
}

impl<N: TreeNode> ParamList<N> {
    /// The parameters, in order.
    pub fn params(&self) -> AstChildren<Param<N>> {
        children(&self.syntax)
    }

    /// The function attributes after the parameters.
    pub fn attrs(&self) -> AstChildren<Attr<N>> {
        children(&self.syntax)
    }
}

ast_node! {
    /// `%x {virtual_device=…}: T`.
    Param: PARAM
}

impl<N: TreeNode> Param<N> {
    /// The parameter's name.
    pub fn name(&self) -> Option<Local<N::Token>> {
        typed_token(&self.syntax)
    }

    /// `{…}` after the name.
    pub fn attrs(&self) -> Option<ParamAttrs<N>> {
        child(&self.syntax)
    }

    /// The type annotation after `:`.
    pub fn ty(&self) -> Option<Type<N>> {
        child(&self.syntax)
    }

    /// The `:` before the type.
    pub fn colon_token(&self) -> Option<N::Token> {
        token(&self.syntax, SyntaxKind::COLON)
    }
}

ast_node! {
    /// `{virtual_device=…}`: attributes of one parameter.
    ParamAttrs: PARAM_ATTRS
}

impl<N: TreeNode> ParamAttrs<N> {
    /// The attributes, in order.
    pub fn attrs(&self) -> AstChildren<Attr<N>> {
        children(&self.syntax)
    }
}

ast_node! {
    /// `-> T`: the return type of a function.
    RetType: RET_TYPE
}

impl<N: TreeNode> RetType<N> {
    /// The type after the arrow.
    pub fn ty(&self) -> Option<Type<N>> {
        child(&self.syntax)
    }
}
