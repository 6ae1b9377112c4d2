//! `ToANormalForm`: binds every compound value to a fresh `let` variable
//! (`x_0`, `x_1`, … from a process-wide counter), placing each binding in
//! the innermost scope (function body, `if` branch, `let` body, match
//! clause) that contains all its uses, as TVM v0.13's `ToANormalForm`
//! module pass (opt_level 1) does. Existing `let`s are kept and flattened.
//! The algorithm is shared with `ToBasicBlockNormalForm`; see
//! `normal_form`. The result is not re-typed: rebuilt nodes print without
//! types, as TVM's do.

use super::normal_form::{module_to_normal_form, NormalForm};
use relay_pass_manager::registry::PassSpec;

pub(crate) fn spec() -> PassSpec {
    PassSpec::module("ToANormalForm", 1)
        .doc("Bind every compound value to a let variable (A-normal form)")
        .transform(|module, _ctx| module_to_normal_form(module, NormalForm::ANormal))
}
