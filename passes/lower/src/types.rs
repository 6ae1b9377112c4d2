//! Types (TVM's `ParseType`, `ParseShape`, `ParseNonPrimitiveType`) and type
//! definitions (`ParseTypeDef`).

use super::{suggestion, CtorEntry, Lowerer, NameKind};
use relay_ir::diagnostic::Code;
use relay_ir::dtype::DataType;
use relay_ir::{Constructor, Dim, GlobalTypeVar, Type, TypeData, TypeKind, TypeVar, TypeVarKind};
use relay_syntax::ast;
use relay_syntax::green_view::{is_type, Element, Node, Token};
use relay_syntax::literal::NumberValue;
use relay_syntax::SyntaxKind::*;

/// Dtype names offered as "did you mean" for a misspelt one.
pub(super) const COMMON_DTYPES: &[&str] = &[
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
    "float32", "float64", "bfloat16",
];

impl Lowerer {
    /// Lowers a type.
    pub(super) fn ty(&mut self, ty: Node<'_>) -> Type {
        match ty.kind() {
            TENSOR_TYPE => {
                // `TensorType::dims`; `dtype` is the identifier after `Tensor`.
                let dims = ty
                    .child_of(SHAPE)
                    .into_iter()
                    .flat_map(|s| s.children_of(DIM));
                let shape = dims.map(|dim| self.dim(dim)).collect();
                let dtype = match ty.tokens().filter(|t| t.kind() == IDENT).nth(1) {
                    Some(name) => self.dtype(Some(name)),
                    // `Tensor[(3), ]`: how void prints (see the grammar).
                    None => DataType::void(),
                };
                Type::tensor(shape, dtype)
            }
            SCALAR_TYPE => Type::scalar(self.dtype(ty.token(IDENT))),
            // `(T)` is a 1-tuple, as in TVM.
            TUPLE_TYPE => Type::tuple(ty.children(is_type).map(|t| self.ty(t)).collect()),
            FN_TYPE => {
                // TVM cannot read type parameters here; we do (the printer
                // writes them), binding them for the parameter and result types.
                let list = ty.child_of(TYPE_PARAM_LIST);
                if list.is_some() {
                    self.type_vars.push();
                }
                let type_params = list
                    .into_iter()
                    .flat_map(|list| list.children_of(TYPE_PARAM))
                    .filter_map(|p| self.bind_type_param(p))
                    .collect();
                let (param_nodes, ret) = fn_type_parts(ty);
                let params = param_nodes.into_iter().map(|t| self.ty(t)).collect();
                let ret = match ret {
                    Some(ret) => self.ty(ret),
                    None => Type::incomplete(),
                };
                if list.is_some() {
                    self.type_vars.pop();
                }
                Type::func(params, ret, type_params)
            }
            NAMED_TYPE => self.named_type(ty),
            REF_TYPE => {
                let inner = match ty.child(is_type) {
                    Some(inner) => self.ty(inner),
                    None => Type::incomplete(),
                };
                Type::new(TypeKind::Ref(inner))
            }
            // `_`.
            _ => Type::incomplete(),
        }
    }

    /// Lowers an optional annotation.
    pub(super) fn opt_ty(&mut self, ty: Option<Node<'_>>) -> Option<Type> {
        ty.map(|ty| self.ty(ty))
    }

    /// A dtype name (`String2DLDataType`); an unknown one is reported and
    /// read as `float32`.
    fn dtype(&mut self, ident: Option<Token<'_>>) -> DataType {
        let Some(ident) = ident else {
            return DataType::FLOAT32;
        };
        let name = ident.text();
        match self.parse_dtype(name) {
            Ok(dtype) => dtype,
            Err(()) => {
                let help = suggestion(name, COMMON_DTYPES.iter().copied(), str::to_string);
                self.error_with_help(
                    Code::UnknownType,
                    ident.range(),
                    format!("unknown type `{name}`"),
                    help,
                );
                DataType::FLOAT32
            }
        }
    }

    /// `DataType::parse`, remembering the few names a text uses (every
    /// annotation repeats one).
    fn parse_dtype(&mut self, name: &str) -> Result<DataType, ()> {
        if let Some(&dtype) = self.dtypes.get(name) {
            return Ok(dtype);
        }
        let dtype = DataType::parse(name).map_err(|_| ())?;
        self.dtypes.insert(name.into(), dtype);
        Ok(dtype)
    }

    /// One dimension of a shape.
    fn dim(&mut self, dim: Node<'_>) -> Dim {
        // `Dim::kind`: its first integer, `?` or meta reference token.
        let token = dim
            .tokens()
            .find(|t| matches!(t.kind(), INT | QUESTION | META_REF));
        match token.map(|t| (t.kind(), t)) {
            Some((INT, int)) => match super::exprs::number(int.text()) {
                Ok(NumberValue::Int { value, bits }) => Dim::int(value, DataType::int(bits)),
                // The lexer reports malformed numbers.
                _ => Dim::int32(0),
            },
            Some((QUESTION, _)) => Dim::Any,
            Some((_, meta)) => match self.ast_token::<ast::MetaRef>(meta) {
                Some(meta) => self.meta_dim(&meta),
                None => Dim::int32(0),
            },
            None => Dim::int32(0),
        }
    }

    /// `A` (a type parameter in scope) or `List[A]` / `List` (an ADT).
    fn named_type(&mut self, named: Node<'_>) -> Type {
        let Some(ident) = named.token(IDENT) else {
            return Type::incomplete();
        };
        let name = ident.text();
        let name_range = ident.range();
        // `NamedType::args`.
        let args: Vec<Type> = named
            .child_of(TYPE_ARG_LIST)
            .into_iter()
            .flat_map(|list| list.children(is_type))
            .map(|t| self.ty(t))
            .collect();
        if let Some((var, def)) = self.type_vars.lookup(name).cloned() {
            self.names.use_at(def, name_range);
            let head = Type::var(var);
            return if args.is_empty() {
                head
            } else {
                Type::new(TypeKind::Call { func: head, args })
            };
        }
        let header = match self.adts.get(name) {
            Some(entry) => {
                let (header, def) = (entry.header.clone(), entry.def);
                self.names.use_at(def, name_range);
                header
            }
            None => {
                // TVM makes the name a global type on first use; in a module,
                // its well-formedness check then rejects one that no `type`
                // defines ("the type variable : `X` is undefined").
                if let Some(undefined) = &mut self.undefined_in_ctor {
                    undefined.push((name.to_string(), name_range));
                } else if self.module_mode {
                    let candidates: Vec<&str> = self
                        .adts
                        .keys()
                        .map(String::as_str)
                        .chain(self.type_vars.visible_names())
                        .chain(COMMON_DTYPES.iter().copied())
                        .collect();
                    let help = suggestion(name, candidates, str::to_string);
                    self.error_with_help(
                        Code::UnknownType,
                        name_range,
                        format!("the type `{name}` is not defined"),
                        help,
                    );
                }
                GlobalTypeVar::new(name)
            }
        };
        // A bare ADT name is a type call with no arguments, as in TVM.
        Type::new(TypeKind::Call {
            func: Type::new(TypeKind::GlobalVar(header)),
            args,
        })
    }

    /// Binds a type parameter in the innermost type scope.
    pub(super) fn bind_type_param(&mut self, param: Node<'_>) -> Option<TypeVar> {
        let ident = param.token(IDENT)?;
        let name = ident.text();
        let var = TypeVar::new(name, TypeVarKind::Type);
        let def = self
            .names
            .define(NameKind::TypeParam, name, Some(ident.range()), None);
        if self.type_vars.add(name, (var.clone(), def)).is_err() {
            let diagnostic = relay_ir::diagnostic::Diagnostic::warning(
                Code::Redefinition,
                format!(
                    "type parameter `{name}` is declared twice; TVM resolves `{name}` to the first \
                     one"
                ),
            )
            .with_span(self.span(ident.range()));
            self.push(diagnostic);
        }
        Some(var)
    }

    /// `type T[A] { C1(A, T[A]), C2 }` or `extern type T[A]`.
    pub(super) fn type_def(
        &mut self,
        name: Option<Token<'_>>,
        params: &[Node<'_>],
        ctors: &[Node<'_>],
    ) -> Option<TypeData> {
        let name = name?;
        let header = match self.adts.get(name.text()) {
            // A duplicate definition gets a header of its own.
            Some(entry) if entry.range == Some(name.range()) => entry.header.clone(),
            _ => GlobalTypeVar::new(name.text()),
        };
        self.type_vars.push();
        let type_vars: Vec<TypeVar> = params
            .iter()
            .filter_map(|p| self.bind_type_param(*p))
            .collect();
        let mut constructors = Vec::new();
        for ctor in ctors {
            // `CtorDef::name` and `fields`.
            let Some(ctor_name) = ctor.token(IDENT) else {
                continue;
            };
            self.undefined_in_ctor = Some(Vec::new());
            let inputs = ctor
                .child_of(CTOR_FIELD_LIST)
                .into_iter()
                .flat_map(|list| list.children(is_type))
                .map(|t| self.ty(t))
                .collect();
            let undefined = self.undefined_in_ctor.take().unwrap_or_default();
            if self.module_mode {
                for (type_name, range) in &undefined {
                    let diagnostic = relay_ir::diagnostic::Diagnostic::warning(
                        Code::UndefinedFieldType,
                        format!("the type `{type_name}` is not defined"),
                    )
                    .with_span(self.span(*range))
                    .with_note(format!(
                        "TVM reports this only where the constructor `{}` is used",
                        ctor_name.text()
                    ));
                    self.push(diagnostic);
                }
            }
            let constructor =
                Constructor::new(ctor_name.text(), inputs, header.clone(), constructors.len());
            let range = ctor_name.range();
            let def = self
                .names
                .define(NameKind::Constructor, ctor_name.text(), Some(range), None);
            match self.ctors.get(ctor_name.text()) {
                Some(previous) => {
                    let mut diagnostic = relay_ir::diagnostic::Diagnostic::error(
                        Code::DuplicateDefinition,
                        format!(
                            "a constructor with the name `{}` was previously defined",
                            ctor_name.text()
                        ),
                    )
                    .with_span(self.span(range));
                    if let Some(previous) = previous.range {
                        diagnostic =
                            diagnostic.with_label(self.span(previous), "first defined here");
                    }
                    self.push(diagnostic);
                }
                None => {
                    self.ctors.insert(
                        ctor_name.text().to_string(),
                        CtorEntry {
                            ctor: constructor.clone(),
                            range: Some(range),
                            undefined: if self.module_mode {
                                undefined
                            } else {
                                Vec::new()
                            },
                            def,
                        },
                    );
                }
            }
            constructors.push(constructor);
        }
        self.type_vars.pop();
        Some(TypeData {
            header,
            type_vars,
            constructors,
        })
    }
}

/// `FnType::params` and `ret`: the types inside the parentheses, and the
/// first one after them (or, without parentheses, the first one at all).
fn fn_type_parts(func: Node<'_>) -> (Vec<Node<'_>>, Option<Node<'_>>) {
    #[derive(PartialEq)]
    enum State {
        Before,
        Inside,
        After,
    }
    let mut state = State::Before;
    let mut params = Vec::new();
    let mut ret = None;
    for element in func.elements() {
        match element {
            Element::Token(token) => match token.kind() {
                L_PAREN if state == State::Before => state = State::Inside,
                R_PAREN | MINUS | R_ANGLE => state = State::After,
                _ => {}
            },
            Element::Node(node) => {
                if !is_type(node.kind()) {
                    continue;
                }
                if state == State::Inside {
                    params.push(node);
                } else if ret.is_none() {
                    // Without a parameter list the grammar reads the
                    // return type right away.
                    ret = Some(node);
                }
            }
        }
    }
    (params, ret)
}
