//! The `relay` command-line tool and the language server (`relay lsp`).
//!
//! Everything here is a thin shell over `relay-passes` and `relay-syntax`: it
//! reads files, calls the library and renders what the library reports. Only
//! this crate knows about LSP, terminals and the file system.
//! Downstream crates can embed it: [`cli::run`] takes the arguments (after
//! registering their own passes, see `examples/embed`), and
//! [`lsp::Builder`] starts the language server.
//!
//! ```
//! // `relay passes --json`, in process; the exit status is returned.
//! let status = relay_server::cli::run(["relay", "passes", "--json"]);
//! assert_eq!(status, 0);
//! ```

pub mod cli;
mod external_pass;
pub mod lsp;
pub mod project;
pub mod render;
