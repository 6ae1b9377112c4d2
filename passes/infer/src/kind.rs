//! TVM's kind checker (`src/relay/analysis/kind_check.cc`), run on the type
//! of every expression: tuples, functions and references hold ordinary
//! types, and an ADT is applied to as many arguments as it has parameters.

use super::display::show_type;
use relay_ir::{IRModule, Type, TypeKind, TypeVarKind};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Type,
    ShapeVar,
    Constraint,
    AdtHandle,
    TypeData,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Type => "Type",
            Kind::ShapeVar => "ShapeVar",
            Kind::Constraint => "Constraint",
            Kind::AdtHandle => "AdtHandle",
            Kind::TypeData => "TypeData",
        }
    }
}

/// Checks `t`; the first problem found, as TVM's message.
pub(crate) fn kind_check(t: &Type, module: Option<&IRModule>) -> Result<(), String> {
    KindChecker { module }.kind(t).map(|_| ())
}

struct KindChecker<'a> {
    module: Option<&'a IRModule>,
}

impl KindChecker<'_> {
    fn expect(&self, t: &Type, outer: &Type, description: &str) -> Result<(), String> {
        let k = self.kind(t)?;
        if k != Kind::Type {
            return Err(format!(
                "Incorrect kind for a {description}. Type `{}` inside `{}` is of kind {} but was expected to be {}",
                show_type(t),
                show_type(outer),
                k.name(),
                Kind::Type.name()
            ));
        }
        Ok(())
    }

    fn kind(&self, t: &Type) -> Result<Kind, String> {
        match t.kind() {
            TypeKind::Incomplete(_) | TypeKind::Tensor(_) => Ok(Kind::Type),
            TypeKind::Var(tv) => Ok(match tv.kind() {
                TypeVarKind::Type => Kind::Type,
                TypeVarKind::ShapeVar => Kind::ShapeVar,
                TypeVarKind::Constraint => Kind::Constraint,
                TypeVarKind::AdtHandle => Kind::AdtHandle,
                TypeVarKind::TypeData => Kind::TypeData,
            }),
            TypeKind::GlobalVar(_) => Ok(Kind::AdtHandle),
            TypeKind::Tuple(fields) => {
                for f in fields {
                    self.expect(f, t, "tuple member")?;
                }
                Ok(Kind::Type)
            }
            TypeKind::Func(f) => {
                for p in &f.params {
                    self.expect(p, t, "function type parameter")?;
                }
                self.expect(&f.ret, t, "function return type")?;
                Ok(Kind::Type)
            }
            TypeKind::Ref(inner) => {
                self.expect(inner, t, "ref contents")?;
                Ok(Kind::Type)
            }
            TypeKind::Call { func, args } => {
                let TypeKind::GlobalVar(gtv) = func.kind() else {
                    return Err(format!(
                        "The callee in `{}` is not a global type var, but is `{}`",
                        show_type(t),
                        show_type(func)
                    ));
                };
                for a in args {
                    self.expect(a, t, "type call argument")?;
                }
                let data = self.module.and_then(|m| m.type_definition(gtv.name()));
                match data {
                    None => Err(format!("the type variable : `{}` is undefined", gtv.name())),
                    Some(data) if data.type_vars.len() != args.len() => Err(format!(
                        "Expected {} arguments for `{}`; got {}",
                        data.type_vars.len(),
                        show_type(t),
                        args.len()
                    )),
                    Some(_) => Ok(Kind::Type),
                }
            }
        }
    }
}
