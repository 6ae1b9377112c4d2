//! The `relay` command-line tool (and, later, the language server).
//!
//! Everything here is a thin shell over `relay-passes` and `relay-syntax`: it
//! reads files, calls the library and renders what the library reports.
//! Downstream crates can embed it: [`cli::run`] takes the arguments.

pub mod cli;
pub mod lsp;
pub mod render;
