//! Types as the generator sees them, and the oracle that decides whether a
//! piece of generated Relay is well typed: our own InferType, run on a tiny
//! module that declares the free variables of the piece as parameters.
//!
//! The generator only composes pieces whose types are fully known (every
//! parameter annotated), so a call that type-checks alone with its
//! arguments' types type-checks the same way inside the larger program.

use relay_passes::diagnostic::Diagnostics;
use relay_passes::infer::infer_module;
use relay_passes::ir::{Dim, Type, TypeKind};
use relay_passes::lower::parse_and_lower;
use relay_passes::printer::print_type;

/// The data types generated tensors use, the common ones first.
pub const DTYPES: &[&str] = &[
    "float32", "float32", "float32", "float32", "float16", "float64", "int32", "int32", "int64",
    "int8", "uint8", "bool",
];

/// A type: its Relay text, and the structure the generator looks at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ty {
    pub text: String,
    pub kind: TyKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TyKind {
    /// A tensor; `None` is a dimension unknown until run time (`?`) or
    /// symbolic.
    Tensor {
        shape: Vec<Option<i64>>,
        dtype: String,
    },
    Tuple(Vec<Ty>),
    /// Anything else (function types, references, ADTs).
    Other,
}

impl Ty {
    /// A tensor type with known dimensions.
    pub fn tensor(shape: &[i64], dtype: &str) -> Ty {
        let dims: Vec<String> = shape.iter().map(i64::to_string).collect();
        let text = if shape.len() == 1 {
            format!("Tensor[({},), {dtype}]", dims[0])
        } else {
            format!("Tensor[({}), {dtype}]", dims.join(", "))
        };
        Ty {
            text,
            kind: TyKind::Tensor {
                shape: shape.iter().map(|&d| Some(d)).collect(),
                dtype: dtype.to_string(),
            },
        }
    }

    /// A tuple type.
    pub fn tuple(fields: Vec<Ty>) -> Ty {
        let texts: Vec<&str> = fields.iter().map(|f| f.text.as_str()).collect();
        let text = if fields.len() == 1 {
            format!("({},)", texts[0])
        } else {
            format!("({})", texts.join(", "))
        };
        Ty {
            text,
            kind: TyKind::Tuple(fields),
        }
    }

    /// The generator's view of an inferred type.
    pub fn from_ir(t: &Type) -> Ty {
        let text = print_type(t);
        let kind = match t.kind() {
            TypeKind::Tensor(tensor) => TyKind::Tensor {
                shape: tensor.shape.iter().map(Dim::as_int).collect(),
                dtype: tensor.dtype.to_string(),
            },
            TypeKind::Tuple(fields) => TyKind::Tuple(fields.iter().map(Ty::from_ir).collect()),
            _ => TyKind::Other,
        };
        Ty { text, kind }
    }

    /// The shape and dtype of a tensor type with only known dimensions.
    pub fn static_tensor(&self) -> Option<(Vec<i64>, &str)> {
        match &self.kind {
            TyKind::Tensor { shape, dtype } => {
                let dims: Option<Vec<i64>> = shape.iter().copied().collect();
                Some((dims?, dtype.as_str()))
            }
            _ => None,
        }
    }

    pub fn is_tensor(&self) -> bool {
        matches!(self.kind, TyKind::Tensor { .. })
    }

    /// Whether a parameter can be annotated with this type's text: types
    /// with symbolic sizes print names no text can declare. (The void dtype
    /// of `zeros` without a `dtype` prints as nothing, `Tensor[(3), ]`,
    /// which reads back as void.)
    pub fn is_writable(&self) -> bool {
        if self.text.is_empty() || self.text.contains("meta") || self.text.contains('_') {
            return false;
        }
        let probe = format!("#[version = \"0.0.5\"]\ndef @f(%x: {}) {{ %x }}", self.text);
        relay_syntax::parse_module(&probe).errors().is_empty()
    }
}

/// The result of type-checking a module text.
pub struct Checked {
    pub diagnostics: Diagnostics,
    /// The type of `@main`'s body, when everything type-checked.
    pub main_type: Option<Ty>,
}

impl Checked {
    pub fn is_well_typed(&self) -> bool {
        self.main_type.is_some()
    }
}

/// Parses, lowers and type-checks `text`; the type of `@main`'s body when
/// there is no error.
pub fn check_module(text: &str) -> Checked {
    let (module, mut diagnostics) = parse_and_lower("generated.relay", text);
    if diagnostics.has_errors() {
        return Checked {
            diagnostics,
            main_type: None,
        };
    }
    let (typed, inferred) = infer_module(&module);
    diagnostics.extend(inferred);
    let main_type = if diagnostics.has_errors() {
        None
    } else {
        typed
            .function("main")
            .and_then(|f| f.data().body.checked_type().map(Ty::from_ir))
    };
    Checked {
        diagnostics,
        main_type,
    }
}

/// The module text that checks one expression: `params` (name, type) are
/// its free variables.
pub fn standalone_module(params: &[(String, Ty)], expr: &str) -> String {
    let params: Vec<String> = params
        .iter()
        .map(|(name, ty)| format!("%{name}: {}", ty.text))
        .collect();
    format!(
        "#[version = \"0.0.5\"]\ndef @main({}) {{\n  {expr}\n}}\n",
        params.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::{Ty, TyKind};

    #[test]
    fn written_types_and_void_dtypes_are_writable() {
        assert!(Ty::tensor(&[2, 3], "float32").is_writable());
        assert!(Ty::tuple(vec![Ty::tensor(&[], "bool")]).is_writable());
        let void = Ty {
            text: "Tensor[(3), ]".into(),
            kind: TyKind::Other,
        };
        assert!(void.is_writable());
        let symbolic = Ty {
            text: "Tensor[(meta[tir.Var][0]), float32]".into(),
            kind: TyKind::Other,
        };
        assert!(!symbolic.is_writable());
    }
}
