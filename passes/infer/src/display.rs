//! Types and patterns in messages, in Relay syntax (never `meta[…]`).

use relay_ir::{Dim, Pattern, Type};

/// A type as diagnostics write it: Relay syntax, `_` for an unknown type.
pub(crate) fn show_type(t: &Type) -> String {
    relay_ir::printer::print_type(t)
}

/// One dimension of a shape, as in a tensor type.
pub(crate) fn show_dim(d: &Dim) -> String {
    let t = Type::tensor(vec![d.clone()], relay_ir::dtype::DataType::INT32);
    let text = show_type(&t);
    // `Tensor[(D), int32]` → `D`.
    text.strip_prefix("Tensor[(")
        .and_then(|rest| rest.strip_suffix("), int32]"))
        .map_or(text.clone(), str::to_string)
}

/// A pattern as TVM's printer writes it (`Cons(_, Nil)`, `(_, _)`).
pub(crate) fn show_pattern(p: &Pattern) -> String {
    let mut out = String::new();
    write_pattern(p, &mut out);
    out
}

fn write_pattern(p: &Pattern, out: &mut String) {
    match p {
        Pattern::Wildcard => out.push('_'),
        Pattern::Var(v) => {
            out.push('%');
            out.push_str(v.name());
        }
        Pattern::Constructor(c, fields) => {
            out.push_str(c.name());
            if !fields.is_empty() {
                out.push('(');
                write_list(fields, out);
                out.push(')');
            }
        }
        Pattern::Tuple(fields) => {
            out.push('(');
            write_list(fields, out);
            out.push(')');
        }
    }
}

fn write_list(fields: &[Pattern], out: &mut String) {
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_pattern(f, out);
    }
}
