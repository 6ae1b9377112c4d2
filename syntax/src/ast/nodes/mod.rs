//! The node wrappers, one file per concept: files and definitions,
//! expressions, attributes, patterns and types. Everything is re-exported
//! flat from [`crate::ast`].

mod attrs;
mod exprs;
mod items;
mod patterns;
mod types;

pub use attrs::*;
pub use exprs::*;
pub use items::*;
pub use patterns::*;
pub use types::*;
