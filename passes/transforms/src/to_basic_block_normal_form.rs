//! `ToBasicBlockNormalForm`: binds to fresh `let` variables only the values
//! used from more than one scope (so each is computed once, in the
//! innermost scope containing every use) and keeps existing `let`s, as TVM
//! v0.13's `ToBasicBlockNormalForm` module pass (opt_level 1) does. Fresh
//! names are drawn for every compound value, bound or not, so the numbers
//! match TVM's. The algorithm is shared with `ToANormalForm`; see
//! `normal_form`.

use super::normal_form::{module_to_normal_form, NormalForm};
use relay_pass_manager::registry::PassSpec;

pub(crate) fn spec() -> PassSpec {
    PassSpec::module("ToBasicBlockNormalForm", 1)
        .doc("Let-bind values shared across scopes (basic block normal form)")
        .transform(|module, _ctx| module_to_normal_form(module, NormalForm::BasicBlock))
}
