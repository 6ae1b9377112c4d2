//! The text TVM v0.13 writes for a function type with `std::ostream <<`,
//! which `Defunctionalization` puts into the names it makes
//! (`@simple<type>`, `@apply<type>`, `Defunc<type>`).
//!
//! In v0.13 a `FuncType`'s repr goes through the TVMScript printer
//! (`TVM_SCRIPT_REPR(FuncTypeNode, ReprPrintIR)`): a Python-like call
//! `I.FuncType([type params], [argument types], result)`, tensors as
//! `I.TensorType([5, 5], "float32")`, tuples as `T.Tuple(a, b)` (`None` when
//! empty), type variables as `I.TypeVar("A", "Type")`. A type the TVMScript
//! printer has no rule for — an ADT application `List[A]` (`TypeCall`) —
//! becomes `metadata["TypeCall"][i]`, numbered per distinct object in the
//! order met, and the text then ends with the line
//! `# Metadata omitted. Use show_meta=True in script() method to show it.`
//! (`Docsify` in `src/script/printer/utils.h`).
//!
//! Symbolic dimensions (a `tir.Var` or an expression over sizes) are written
//! as metadata entries of their type key too; TVM's TIR printer would write
//! a `tir.Var` by its name and declare it — such names do not come up for the
//! function types defunctionalization names, which are instantiated.

use relay_ir::dtype::DataType;
use relay_ir::{Dim, Type, TypeKind, TypeVarKind};

/// The line TVMScript adds when it left objects to the metadata.
const METADATA_OMITTED: &str =
    "# Metadata omitted. Use show_meta=True in script() method to show it.";

/// `ty` as TVM v0.13's `operator<<` writes a function type.
pub fn type_to_string(ty: &Type) -> String {
    let mut writer = ScriptWriter::default();
    let mut out = String::new();
    writer.ty(ty, &mut out);
    if !writer.metadata.is_empty() {
        out.push('\n');
        out.push_str(METADATA_OMITTED);
    }
    out
}

/// The objects put into the metadata, per type key, by identity: the same
/// object twice is one entry, two equal objects are two (TVM's
/// `AddMetadata` compares references).
#[derive(Default)]
struct ScriptWriter {
    metadata: Vec<(&'static str, Vec<MetaEntry>)>,
}

/// What identifies a metadata object here.
#[derive(PartialEq)]
enum MetaEntry {
    Type(Type),
    Dim(String),
}

impl ScriptWriter {
    fn metadata_ref(&mut self, key: &'static str, entry: MetaEntry, out: &mut String) {
        let position = match self.metadata.iter().position(|(k, _)| *k == key) {
            Some(i) => i,
            None => {
                self.metadata.push((key, Vec::new()));
                self.metadata.len() - 1
            }
        };
        let entries = &mut self.metadata[position].1;
        let index = entries
            .iter()
            .position(|e| match (e, &entry) {
                (MetaEntry::Type(a), MetaEntry::Type(b)) => a.ptr_eq(b),
                (a, b) => a == b,
            })
            .unwrap_or_else(|| {
                entries.push(entry);
                entries.len() - 1
            });
        out.push_str(&format!("metadata[\"{key}\"][{index}]"));
    }

    fn list(&mut self, types: &[Type], out: &mut String) {
        out.push('[');
        for (i, t) in types.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            self.ty(t, out);
        }
        out.push(']');
    }

    fn ty(&mut self, ty: &Type, out: &mut String) {
        match ty.kind() {
            TypeKind::Tensor(tensor) => {
                out.push_str("I.TensorType([");
                for (i, dim) in tensor.shape.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    self.dim(dim, out);
                }
                out.push_str(&format!("], \"{}\")", tensor.dtype));
            }
            TypeKind::Tuple(fields) if fields.is_empty() => out.push_str("None"),
            TypeKind::Tuple(fields) => {
                out.push_str("T.Tuple(");
                for (i, t) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    self.ty(t, out);
                }
                out.push(')');
            }
            TypeKind::Func(func) => {
                out.push_str("I.FuncType([");
                for (i, tv) in func.type_params.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    type_var(tv.name(), tv.kind(), "TypeVar", out);
                }
                out.push_str("], ");
                self.list(&func.params, out);
                out.push_str(", ");
                self.ty(&func.ret, out);
                out.push(')');
            }
            TypeKind::Var(tv) => type_var(tv.name(), tv.kind(), "TypeVar", out),
            TypeKind::GlobalVar(g) => {
                type_var(g.name(), TypeVarKind::AdtHandle, "GlobalTypeVar", out)
            }
            TypeKind::Call { .. } => {
                self.metadata_ref("TypeCall", MetaEntry::Type(ty.clone()), out)
            }
            TypeKind::Ref(inner) => {
                out.push_str("I.RelayRef(");
                self.ty(inner, out);
                out.push(')');
            }
            TypeKind::Incomplete(_) => out.push_str("I.IncompleteType()"),
        }
    }

    fn dim(&mut self, dim: &Dim, out: &mut String) {
        match dim {
            Dim::Int { value, dtype, .. } if *dtype == DataType::INT32 => {
                out.push_str(&value.to_string())
            }
            Dim::Int { value, dtype, .. } if dtype.is_bool() => out.push_str(if *value != 0 {
                "T.bool(True)"
            } else {
                "T.bool(False)"
            }),
            Dim::Int { value, dtype, .. } => out.push_str(&format!("T.{dtype}({value})")),
            Dim::Any => out.push_str("T.Any()"),
            Dim::Meta(object) => {
                let key: &'static str = leak_key(object.type_key());
                self.metadata_ref(key, MetaEntry::Dim(format!("{}", object.index)), out)
            }
            Dim::Expr(expr) => {
                let key = expr.type_key();
                let identity = format!("{:p}", std::sync::Arc::as_ptr(expr));
                self.metadata_ref(key, MetaEntry::Dim(identity), out)
            }
        }
    }
}

/// The type keys of metadata dimensions, as static strings (a handful of
/// TIR node kinds).
fn leak_key(key: &str) -> &'static str {
    const KNOWN: &[&str] = &[
        "tir.Var",
        "tir.SizeVar",
        "tir.Add",
        "tir.Sub",
        "tir.Mul",
        "tir.Div",
        "tir.FloorDiv",
        "tir.FloorMod",
        "tir.Max",
        "tir.Min",
        "tir.NE",
        "tir.Cast",
        "tir.Call",
    ];
    KNOWN
        .iter()
        .copied()
        .find(|k| *k == key)
        .unwrap_or("PrimExpr")
}

/// `I.TypeVar("A", "Type")` / `I.GlobalTypeVar("List", "AdtHandle")`.
fn type_var(name: &str, kind: TypeVarKind, constructor: &str, out: &mut String) {
    let kind = match kind {
        TypeVarKind::Type => "Type",
        TypeVarKind::ShapeVar => "ShapeVar",
        TypeVarKind::Constraint => "Constraint",
        TypeVarKind::AdtHandle => "AdtHandle",
        TypeVarKind::TypeData => "TypeData",
    };
    out.push_str(&format!(
        "I.{constructor}({}, \"{kind}\")",
        python_string(name)
    ));
}

/// A Python string literal, as TVMScript's `LiteralDoc::Str` prints one.
fn python_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_ir::{GlobalTypeVar, TypeVar};

    fn tensor(shape: &[i64]) -> Type {
        Type::tensor(
            shape
                .iter()
                .map(|&d| Dim::int(d, DataType::INT32))
                .collect(),
            DataType::float(32),
        )
    }

    #[test]
    fn function_types_print_as_tvmscript_calls() {
        let t = tensor(&[5, 5]);
        let f = Type::func(vec![t.clone()], t.clone(), Vec::new());
        let outer = Type::func(vec![f, t.clone()], t, Vec::new());
        assert_eq!(
            type_to_string(&outer),
            "I.FuncType([], [I.FuncType([], [I.TensorType([5, 5], \"float32\")], \
             I.TensorType([5, 5], \"float32\")), I.TensorType([5, 5], \"float32\")], \
             I.TensorType([5, 5], \"float32\"))"
        );
        let scalar = Type::scalar(DataType::INT32);
        let a = TypeVar::new("A", TypeVarKind::Type);
        let poly = Type::func(vec![Type::var(a.clone()), Type::unit()], scalar, vec![a]);
        assert_eq!(
            type_to_string(&poly),
            "I.FuncType([I.TypeVar(\"A\", \"Type\")], [I.TypeVar(\"A\", \"Type\"), None], \
             I.TensorType([], \"int32\"))"
        );
    }

    #[test]
    fn adt_applications_go_to_the_metadata_by_identity() {
        let list = Type::new(TypeKind::GlobalVar(GlobalTypeVar::new("List")));
        let call = || {
            Type::new(TypeKind::Call {
                func: list.clone(),
                args: vec![Type::scalar(DataType::float(32))],
            })
        };
        let shared = call();
        let f = Type::func(vec![shared.clone(), shared], call(), Vec::new());
        assert_eq!(
            type_to_string(&f),
            "I.FuncType([], [metadata[\"TypeCall\"][0], metadata[\"TypeCall\"][0]], \
             metadata[\"TypeCall\"][1])\n# Metadata omitted. Use show_meta=True in script() \
             method to show it."
        );
    }
}
