//! Types (TVM's `ParseType`, `ParseShape`, `ParseNonPrimitiveType`) and type
//! definitions (`ParseTypeDef`).

use super::{suggestion, token_range, CtorEntry, Lowerer, NameKind};
use crate::dtype::DataType;
use crate::ir::{Constructor, Dim, GlobalTypeVar, Type, TypeData, TypeKind, TypeVar, TypeVarKind};
use relay_syntax::ast::{self, DimKind};
use relay_syntax::literal::NumberValue;

/// Dtype names offered as "did you mean" for a misspelt one.
pub(super) const COMMON_DTYPES: &[&str] = &[
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
    "float32", "float64", "bfloat16",
];

impl Lowerer {
    /// Lowers a type.
    pub(super) fn ty(&mut self, ty: &ast::Type) -> Type {
        match ty {
            ast::Type::TensorType(tensor) => {
                let shape = tensor.dims().map(|dim| self.dim(&dim)).collect();
                let dtype = self.dtype(tensor.dtype());
                Type::tensor(shape, dtype)
            }
            ast::Type::ScalarType(scalar) => Type::scalar(self.dtype(scalar.dtype())),
            // `(T)` is a 1-tuple, as in TVM.
            ast::Type::TupleType(tuple) => {
                Type::tuple(tuple.fields().map(|t| self.ty(&t)).collect())
            }
            ast::Type::FnType(func) => {
                // TVM cannot read type parameters here; we do (the printer
                // writes them), binding them for the parameter and result types.
                let has_params = func.type_param_list().is_some();
                if has_params {
                    self.type_vars.push();
                }
                let type_params = func
                    .type_params()
                    .filter_map(|p| self.bind_type_param(&p))
                    .collect();
                let params = func.params().map(|t| self.ty(&t)).collect();
                let ret = match func.ret() {
                    Some(ret) => self.ty(&ret),
                    None => Type::incomplete(),
                };
                if has_params {
                    self.type_vars.pop();
                }
                Type::func(params, ret, type_params)
            }
            ast::Type::NamedType(named) => self.named_type(named),
            ast::Type::IncompleteType(_) => Type::incomplete(),
            ast::Type::RefType(reference) => {
                let inner = match reference.inner() {
                    Some(inner) => self.ty(&inner),
                    None => Type::incomplete(),
                };
                Type::new(TypeKind::Ref(inner))
            }
        }
    }

    /// Lowers an optional annotation.
    pub(super) fn opt_ty(&mut self, ty: Option<ast::Type>) -> Option<Type> {
        ty.map(|ty| self.ty(&ty))
    }

    /// A dtype name (`String2DLDataType`); an unknown one is reported and
    /// read as `float32`.
    fn dtype(&mut self, ident: Option<ast::Ident>) -> DataType {
        let Some(ident) = ident else {
            return DataType::FLOAT32;
        };
        match DataType::parse(ident.name()) {
            Ok(dtype) => dtype,
            Err(_) => {
                let help = suggestion(ident.name(), COMMON_DTYPES.iter().copied(), str::to_string);
                self.error_with_help(
                    token_range(&ident),
                    format!("unknown type `{}`", ident.name()),
                    help,
                );
                DataType::FLOAT32
            }
        }
    }

    /// One dimension of a shape.
    fn dim(&mut self, dim: &ast::Dim) -> Dim {
        match dim.kind() {
            Some(DimKind::Int(int)) => match int.number() {
                Ok(NumberValue::Int { value, bits }) => Dim::Int {
                    value,
                    dtype: DataType::int(bits),
                },
                // The lexer reports malformed numbers.
                _ => Dim::int32(0),
            },
            Some(DimKind::Any(_)) => Dim::Any,
            Some(DimKind::Meta(meta)) => self.meta_dim(&meta),
            None => Dim::int32(0),
        }
    }

    /// `A` (a type parameter in scope) or `List[A]` / `List` (an ADT).
    fn named_type(&mut self, named: &ast::NamedType) -> Type {
        let Some(ident) = named.name() else {
            return Type::incomplete();
        };
        let name = ident.name();
        let name_range = token_range(&ident);
        let args: Vec<Type> = named.args().map(|t| self.ty(&t)).collect();
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
                    undefined.push((name.to_string(), token_range(&ident)));
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
                        token_range(&ident),
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
    pub(super) fn bind_type_param(&mut self, param: &ast::TypeParam) -> Option<TypeVar> {
        let ident = param.name()?;
        let var = TypeVar::new(ident.name(), TypeVarKind::Type);
        let def = self.names.define(
            NameKind::TypeParam,
            ident.name(),
            Some(token_range(&ident)),
            None,
        );
        if self
            .type_vars
            .add(ident.name(), (var.clone(), def))
            .is_err()
        {
            let diagnostic = crate::diagnostic::Diagnostic::warning(
                crate::diagnostic::Layer::Name,
                format!(
                    "type parameter `{}` is declared twice; TVM resolves `{}` to the first one",
                    ident.name(),
                    ident.name()
                ),
            )
            .with_span(self.span(token_range(&ident)));
            self.push(diagnostic);
        }
        Some(var)
    }

    /// `type T[A] { C1(A, T[A]), C2 }` or `extern type T[A]`.
    pub(super) fn type_def(
        &mut self,
        name: Option<ast::Ident>,
        params: &[ast::TypeParam],
        ctors: &[ast::CtorDef],
    ) -> Option<TypeData> {
        let name = name?;
        let header = match self.adts.get(name.name()) {
            // A duplicate definition gets a header of its own.
            Some(entry) if entry.range == Some(token_range(&name)) => entry.header.clone(),
            _ => GlobalTypeVar::new(name.name()),
        };
        self.type_vars.push();
        let type_vars: Vec<TypeVar> = params
            .iter()
            .filter_map(|p| self.bind_type_param(p))
            .collect();
        let mut constructors = Vec::new();
        for ctor in ctors {
            let Some(ctor_name) = ctor.name() else {
                continue;
            };
            self.undefined_in_ctor = Some(Vec::new());
            let inputs = ctor.fields().map(|t| self.ty(&t)).collect();
            let undefined = self.undefined_in_ctor.take().unwrap_or_default();
            if self.module_mode {
                for (type_name, range) in &undefined {
                    let diagnostic = crate::diagnostic::Diagnostic::warning(
                        crate::diagnostic::Layer::Name,
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
            let range = token_range(&ctor_name);
            let def = self
                .names
                .define(NameKind::Constructor, ctor_name.name(), Some(range), None);
            match self.ctors.get(ctor_name.name()) {
                Some(previous) => {
                    let mut diagnostic = crate::diagnostic::Diagnostic::error(
                        crate::diagnostic::Layer::Name,
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
