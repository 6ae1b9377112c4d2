//! `relay lsp`: the language server, over stdio.
//!
//! It calls the same library code as the CLI (parser, lowering, InferType,
//! the printer, the pass registry and `relay.toml`), so what the editor shows
//! is what `relay check` and `relay opt` say.
//!
//! Embedding: a downstream crate registers its passes and starts the server
//! (or the whole CLI, whose `lsp` subcommand is this):
//!
//! ```no_run
//! use relay_server::lsp::Builder;
//! # fn my_pass_spec() -> relay_passes::pass_manager::PassSpec { unimplemented!() }
//! let status = Builder::new().register_pass(my_pass_spec()).run_stdio();
//! std::process::exit(status);
//! ```
//!
//! The layout, from the wire inwards:
//!
//! - `router.rs`: which handler answers which method (the one table).
//! - `handlers/`: one file per family of requests, each thin: parameters
//!   in ([`from_proto`]), a feature on the document's analysis, the answer
//!   out ([`to_proto`]).
//! - [`features`]: one file per editor feature, computing the project's own
//!   plain types (byte ranges, strings, small structs) from an
//!   [`analysis::Analysis`]; no LSP types; tested in process with annotated
//!   fixtures.
//! - [`to_proto`] / [`from_proto`]: the conversions to and from LSP types;
//!   positions in UTF-16 or UTF-8 are [`text::LineIndex`]'s alone.
//! - The server's state: `backend.rs` (state and shared plumbing),
//!   `documents.rs` (open documents), `scheduler.rs` (one analysis per
//!   version, debounce, publishing diagnostics), `settings.rs` (what the
//!   client said), [`pipeline`] (running pipelines as `relay opt` does),
//!   `project.rs` (`relay.toml`), [`ext`] (the protocol extensions),
//!   `errors.rs` (JSON-RPC errors), `worker.rs` (the thread analyses are
//!   built and dropped on), `transport.rs` (the framed messages on stdio).

pub mod analysis;
pub mod applicable;
mod backend;
mod documents;
mod errors;
pub mod ext;
pub mod features;
pub mod from_proto;
mod handlers;
pub mod pipeline;
mod project;
mod router;
mod scheduler;
mod settings;
pub mod text;
pub mod to_proto;
mod transport;
mod worker;

pub use backend::Backend;
pub use router::service;
pub use settings::DEFAULT_DEBOUNCE_MS;

use relay_passes::pass_manager::registry;
use relay_passes::pass_manager::PassSpec;

/// Starts a language server with extra passes registered.
#[derive(Default)]
pub struct Builder {
    passes: Vec<PassSpec>,
    setup: Vec<Box<dyn FnOnce()>>,
}

impl Builder {
    pub fn new() -> Builder {
        Builder::default()
    }

    /// Registers a pass (through `relay_passes::pass_manager::registry::register`)
    /// before the server starts: it is accepted in pipelines, listed by
    /// `relay.listPasses` and offered as a code action where it changes the
    /// code.
    pub fn register_pass(mut self, spec: PassSpec) -> Builder {
        self.passes.push(spec);
        self
    }

    /// Runs `f` before the server starts (for other registrations).
    pub fn setup(mut self, f: impl FnOnce() + 'static) -> Builder {
        self.setup.push(Box::new(f));
        self
    }

    /// Serves LSP on stdin/stdout until the client exits; returns the exit status.
    pub fn run_stdio(self) -> i32 {
        for spec in self.passes {
            registry::register(spec);
        }
        for f in self.setup {
            f();
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            // Lowering and printing recurse on the nesting of the text.
            .thread_stack_size(64 << 20)
            .build();
        let runtime = match runtime {
            Ok(runtime) => runtime,
            Err(error) => {
                eprintln!("error: cannot start the async runtime: {error}");
                return 2;
            }
        };
        runtime.block_on(async {
            let stdin = tokio::io::stdin();
            let stdout = tokio::io::stdout();
            let (service, socket) = service();
            transport::serve(service, socket, stdin, stdout).await;
        });
        0
    }
}

/// Serves LSP on stdin/stdout with the built-in passes (and any registered
/// before the call).
pub fn run_stdio() -> i32 {
    Builder::new().run_stdio()
}
