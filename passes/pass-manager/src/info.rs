//! `PassInfo`: what every pass says about itself.

use std::fmt;

/// A pass's name, optimisation level and the passes it requires, as TVM's
/// `PassInfo`. The name is what `required_pass`, `disabled_pass` and
/// instruments see; it can differ from the constructor's name (TVM's
/// `CombineParallelConv2D` is named `CombineParallelConv2d`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PassInfo {
    pub name: String,
    pub opt_level: u32,
    pub required: Vec<String>,
}

impl PassInfo {
    pub fn new(name: impl Into<String>, opt_level: u32, required: &[&str]) -> PassInfo {
        PassInfo {
            name: name.into(),
            opt_level,
            required: required.iter().map(|s| s.to_string()).collect(),
        }
    }
}

impl fmt::Display for PassInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "The meta data of the pass - pass name: {}, opt_level: {}, required passes: [{}]",
            self.name,
            self.opt_level,
            self.required.join(", ")
        )
    }
}
