//! Files and top-level definitions: [`SourceFile`], [`ExprFile`], the
//! version header and metadata section, `def` ([`Def`]), `type`
//! ([`TypeDef`]), `extern type` ([`ExternTypeDef`]) and their parts, and the
//! parameter list and return type shared by `def` and `fn`.

use crate::ast::{
    child, children, token, typed_token, AstChildren, Attr, Expr, Global, Ident, Local, Metadata,
    Type, VersionAttr,
};
use crate::{SyntaxKind, SyntaxToken};

ast_node! {
    /// A module (`tvm.relay.parse`): version header, definitions, metadata.
    SourceFile: SOURCE_FILE
}

impl SourceFile {
    /// The `#[version = …]` header.
    pub fn version(&self) -> Option<Version> {
        child(&self.syntax)
    }

    /// The definitions, in order.
    pub fn items(&self) -> AstChildren<Item> {
        children(&self.syntax)
    }

    /// The `def`s, in order.
    pub fn defs(&self) -> AstChildren<Def> {
        children(&self.syntax)
    }

    /// The `type` and `extern type` definitions, in order.
    pub fn type_defs(&self) -> impl Iterator<Item = Item> {
        self.items().filter(|item| !matches!(item, Item::Def(_)))
    }

    /// The `#[metadata]` section.
    pub fn metadata(&self) -> Option<MetadataSection> {
        child(&self.syntax)
    }
}

ast_node! {
    /// One expression (`tvm.relay.parse_expr`) with an optional version
    /// header and metadata section.
    ExprFile: EXPR_FILE
}

impl ExprFile {
    /// The `#[version = …]` header.
    pub fn version(&self) -> Option<Version> {
        child(&self.syntax)
    }

    /// The expression (a [`SeqExpr`](crate::ast::SeqExpr) if it has bindings).
    pub fn expr(&self) -> Option<Expr> {
        child(&self.syntax)
    }

    /// The `#[metadata]` section.
    pub fn metadata(&self) -> Option<MetadataSection> {
        child(&self.syntax)
    }
}

ast_node! {
    /// The `#[version = "0.0.5"]` header.
    Version: VERSION
}

impl Version {
    /// The header token.
    pub fn attr(&self) -> Option<VersionAttr> {
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

impl MetadataSection {
    /// The section token (header and body).
    pub fn metadata(&self) -> Option<Metadata> {
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

impl Item {
    /// The token naming the definition: the `@f` of a `def`, the identifier
    /// of a type.
    pub fn name_token(&self) -> Option<SyntaxToken> {
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

impl Def {
    /// The `@name` being defined.
    pub fn name(&self) -> Option<Global> {
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
        impl $name {
            /// The name of the type.
            pub fn name(&self) -> Option<Ident> {
                typed_token(&self.syntax)
            }

            /// `[A, B]` after the name.
            pub fn type_param_list(&self) -> Option<TypeParamList> {
                child(&self.syntax)
            }

            /// The type parameters (none without a list).
            pub fn type_params(&self) -> impl Iterator<Item = TypeParam> {
                self.type_param_list()
                    .into_iter()
                    .flat_map(|list| list.type_params())
            }

            /// `{ Ctor, … }`.
            pub fn ctor_list(&self) -> Option<CtorList> {
                child(&self.syntax)
            }

            /// The constructors (none without a list).
            pub fn ctors(&self) -> impl Iterator<Item = CtorDef> {
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

impl TypeParamList {
    /// The parameters, in order.
    pub fn type_params(&self) -> AstChildren<TypeParam> {
        children(&self.syntax)
    }
}

ast_node! {
    /// One type parameter: `A`.
    TypeParam: TYPE_PARAM
}

impl TypeParam {
    /// The parameter's name.
    pub fn name(&self) -> Option<Ident> {
        typed_token(&self.syntax)
    }
}

ast_node! {
    /// `{ Ctor, Ctor(T, U) }`: the constructors of a type definition.
    CtorList: CTOR_LIST
}

impl CtorList {
    /// The constructors, in order.
    pub fn ctors(&self) -> AstChildren<CtorDef> {
        children(&self.syntax)
    }
}

ast_node! {
    /// One constructor of a type definition: `Cons(A, List[A])`.
    CtorDef: CTOR_DEF
}

impl CtorDef {
    /// The constructor's name.
    pub fn name(&self) -> Option<Ident> {
        typed_token(&self.syntax)
    }

    /// `(T, U)` after the name.
    pub fn field_list(&self) -> Option<CtorFieldList> {
        child(&self.syntax)
    }

    /// The field types (none without a list).
    pub fn fields(&self) -> impl Iterator<Item = Type> {
        self.field_list().into_iter().flat_map(|list| list.fields())
    }
}

ast_node! {
    /// `(T, U)`: the field types of a constructor.
    CtorFieldList: CTOR_FIELD_LIST
}

impl CtorFieldList {
    /// The field types, in order.
    pub fn fields(&self) -> AstChildren<Type> {
        children(&self.syntax)
    }
}

ast_node! {
    /// `(%x: T, …, attr=v, …)`: the parameters and attributes of a `def` or `fn`.
    ParamList: PARAM_LIST
}

impl ParamList {
    /// The parameters, in order.
    pub fn params(&self) -> AstChildren<Param> {
        children(&self.syntax)
    }

    /// The function attributes after the parameters.
    pub fn attrs(&self) -> AstChildren<Attr> {
        children(&self.syntax)
    }
}

ast_node! {
    /// `%x {virtual_device=…}: T`.
    Param: PARAM
}

impl Param {
    /// The parameter's name.
    pub fn name(&self) -> Option<Local> {
        typed_token(&self.syntax)
    }

    /// `{…}` after the name.
    pub fn attrs(&self) -> Option<ParamAttrs> {
        child(&self.syntax)
    }

    /// The type annotation after `:`.
    pub fn ty(&self) -> Option<Type> {
        child(&self.syntax)
    }

    /// The `:` before the type.
    pub fn colon_token(&self) -> Option<SyntaxToken> {
        token(&self.syntax, SyntaxKind::COLON)
    }
}

ast_node! {
    /// `{virtual_device=…}`: attributes of one parameter.
    ParamAttrs: PARAM_ATTRS
}

impl ParamAttrs {
    /// The attributes, in order.
    pub fn attrs(&self) -> AstChildren<Attr> {
        children(&self.syntax)
    }
}

ast_node! {
    /// `-> T`: the return type of a function.
    RetType: RET_TYPE
}

impl RetType {
    /// The type after the arrow.
    pub fn ty(&self) -> Option<Type> {
        child(&self.syntax)
    }
}
