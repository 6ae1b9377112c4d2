//! Types (TVM's `ParseType`, `ParseShape`, `ParseNonPrimitiveType`) and type
//! definitions (`ParseTypeDef`).

use super::{suggestion, CtorEntry, Lowerer, NameKind};
use relay_ir::diagnostic::Code;
use relay_ir::dtype::DataType;
use relay_ir::{Constructor, Dim, GlobalTypeVar, Type, TypeData, TypeKind, TypeVar, TypeVarKind};
use relay_syntax::ast::{self, AstToken};
use relay_syntax::green_view::{Node, Token};
use relay_syntax::literal::NumberValue;

/// Dtype names offered as "did you mean" for a misspelt one.
pub(super) const COMMON_DTYPES: &[&str] = &[
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
    "float32", "float64", "bfloat16",
];

impl Lowerer {
    /// Lowers a type.
    pub(super) fn ty(&mut self, ty: ast::Type<Node<'_>>) -> Type {
        match ty {
            ast::Type::TensorType(tensor) => {
                let shape = tensor.dims().map(|dim| self.dim(dim)).collect();
                let dtype = match tensor.dtype() {
                    Some(name) => self.dtype(Some(name)),
                    // `Tensor[(3), ]`: how void prints (see the grammar).
                    None => DataType::void(),
                };
                self.shared_tensor_type(Type::tensor(shape, dtype))
            }
            ast::Type::ScalarType(scalar) => {
                let dtype = self.dtype(scalar.dtype());
                self.shared_tensor_type(Type::scalar(dtype))
            }
            // `(T)` is a 1-tuple, as in TVM.
            ast::Type::TupleType(tuple) => {
                Type::tuple(tuple.fields().map(|t| self.ty(t)).collect())
            }
            ast::Type::FnType(func) => {
                // TVM cannot read type parameters here; we do (the printer
                // writes them), binding them for the parameter and result types.
                let list = func.type_param_list();
                if list.is_some() {
                    self.type_vars.push();
                }
                let type_params = list
                    .into_iter()
                    .flat_map(|list| list.type_params())
                    .filter_map(|p| self.bind_type_param(p))
                    .collect();
                let params = func.params().map(|t| self.ty(t)).collect();
                let ret = match func.ret() {
                    Some(ret) => self.ty(ret),
                    None => Type::incomplete(),
                };
                if list.is_some() {
                    self.type_vars.pop();
                }
                Type::func(params, ret, type_params)
            }
            ast::Type::NamedType(named) => self.named_type(named),
            ast::Type::RefType(reference) => {
                let inner = match reference.inner() {
                    Some(inner) => self.ty(inner),
                    None => Type::incomplete(),
                };
                Type::new(TypeKind::Ref(inner))
            }
            ast::Type::IncompleteType(_) => Type::incomplete(),
        }
    }

    /// An equal tensor type made before, when the lowering interns (the
    /// editor's: an annotation repeats a few shapes thousands of times).
    fn shared_tensor_type(&self, ty: Type) -> Type {
        match &self.interner {
            Some(interner) => interner.tensor_type(ty),
            None => ty,
        }
    }

    /// Lowers an optional annotation.
    pub(super) fn opt_ty(&mut self, ty: Option<ast::Type<Node<'_>>>) -> Option<Type> {
        ty.map(|ty| self.ty(ty))
    }

    /// A dtype name (`String2DLDataType`); an unknown one is reported and
    /// read as `float32`.
    fn dtype(&mut self, ident: Option<ast::Ident<Token<'_>>>) -> DataType {
        let Some(ident) = ident else {
            return DataType::FLOAT32;
        };
        let name = ident.name();
        match self.parse_dtype(name) {
            Ok(dtype) => dtype,
            Err(()) => {
                let help = suggestion(name, COMMON_DTYPES.iter().copied(), str::to_string);
                self.error_with_help(
                    Code::UnknownType,
                    ident.syntax().range(),
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
    fn dim(&mut self, dim: ast::Dim<Node<'_>>) -> Dim {
        match dim.kind() {
            Some(ast::DimKind::Int(int)) => match super::exprs::number(int.text()) {
                Ok(NumberValue::Int { value, bits }) => Dim::int(value, DataType::int(bits)),
                // The lexer reports malformed numbers.
                _ => Dim::int32(0),
            },
            Some(ast::DimKind::Any(_)) => Dim::Any,
            Some(ast::DimKind::Meta(meta)) => self.meta_dim(&meta),
            None => Dim::int32(0),
        }
    }

    /// `A` (a type parameter in scope) or `List[A]` / `List` (an ADT).
    fn named_type(&mut self, named: ast::NamedType<Node<'_>>) -> Type {
        let Some(ident) = named.name() else {
            return Type::incomplete();
        };
        let name = ident.name();
        let name_range = ident.syntax().range();
        let args: Vec<Type> = named.args().map(|t| self.ty(t)).collect();
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
    pub(super) fn bind_type_param(&mut self, param: ast::TypeParam<Node<'_>>) -> Option<TypeVar> {
        let ident = param.name()?;
        let name = ident.name();
        let var = TypeVar::new(name, TypeVarKind::Type);
        let def = self.names.define(
            NameKind::TypeParam,
            name,
            Some(ident.syntax().range()),
            None,
        );
        if self.type_vars.add(name, (var.clone(), def)).is_err() {
            let diagnostic = relay_ir::diagnostic::Diagnostic::warning(
                Code::Redefinition,
                format!(
                    "type parameter `{name}` is declared twice; TVM resolves `{name}` to the first \
                     one"
                ),
            )
            .with_span(self.span(ident.syntax().range()));
            self.push(diagnostic);
        }
        Some(var)
    }

    /// `type T[A] { C1(A, T[A]), C2 }` or `extern type T[A]`.
    pub(super) fn type_def<'a>(
        &mut self,
        name: Option<ast::Ident<Token<'_>>>,
        params: impl Iterator<Item = ast::TypeParam<Node<'a>>>,
        ctors: impl Iterator<Item = ast::CtorDef<Node<'a>>>,
    ) -> Option<TypeData> {
        let name = name?;
        let header = match self.adts.get(name.name()) {
            // A duplicate definition gets a header of its own.
            Some(entry) if entry.range == Some(name.syntax().range()) => entry.header.clone(),
            _ => GlobalTypeVar::new(name.name()),
        };
        self.type_vars.push();
        let type_vars: Vec<TypeVar> = params.filter_map(|p| self.bind_type_param(p)).collect();
        let mut constructors = Vec::new();
        for ctor in ctors {
            let Some(ctor_name) = ctor.name() else {
                continue;
            };
            self.undefined_in_ctor = Some(Vec::new());
            let inputs = ctor.fields().map(|t| self.ty(t)).collect();
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
                        ctor_name.name()
                    ));
                    self.push(diagnostic);
                }
            }
            let constructor =
                Constructor::new(ctor_name.name(), inputs, header.clone(), constructors.len());
            let range = ctor_name.syntax().range();
            let def = self
                .names
                .define(NameKind::Constructor, ctor_name.name(), Some(range), None);
            match self.ctors.get(ctor_name.name()) {
                Some(previous) => {
                    let mut diagnostic = relay_ir::diagnostic::Diagnostic::error(
                        Code::DuplicateDefinition,
                        format!(
                            "a constructor with the name `{}` was previously defined",
                            ctor_name.name()
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
                        ctor_name.name().to_string(),
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
