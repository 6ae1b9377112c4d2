//! Match patterns against values, binding the pattern's variables in the
//! frame (TVM's `VisitPattern_`).

use crate::env::Frame;
use crate::value::Value;
use relay_ir::Pattern;

/// Whether `value` fits `pattern`; the variables of a fitting pattern are
/// bound in `frame` (a pattern that fails halfway may have bound some,
/// which no clause can see: the next clause binds its own).
pub fn match_pattern(pattern: &Pattern, value: &Value, frame: &Frame) -> bool {
    match pattern {
        Pattern::Wildcard => true,
        Pattern::Var(var) => {
            frame.bind(var.id(), value.clone());
            true
        }
        Pattern::Constructor(constructor, fields) => match value {
            Value::Adt(adt) => {
                adt.constructor == *constructor
                    && adt.fields.len() == fields.len()
                    && fields
                        .iter()
                        .zip(&adt.fields)
                        .all(|(p, v)| match_pattern(p, v, frame))
            }
            _ => false,
        },
        Pattern::Tuple(fields) => match value {
            Value::Tuple(values) => {
                values.len() == fields.len()
                    && fields
                        .iter()
                        .zip(values.iter())
                        .all(|(p, v)| match_pattern(p, v, frame))
            }
            _ => false,
        },
    }
}
