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

pub mod actions;
pub mod analysis;
pub mod applicable;
pub mod features;
mod server;
pub mod text;

pub use server::{Backend, DEFAULT_DEBOUNCE_MS};

use relay_passes::pass_manager::registry;
use relay_passes::pass_manager::PassSpec;
use tower_lsp_server::{ClientSocket, LspService, Server};

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
            Server::new(stdin, stdout, socket)
                .concurrency_level(32)
                .serve(service)
                .await;
        });
        0
    }
}

/// The language server as a service, without a transport: `run_stdio`
/// serves it on stdin/stdout; tests and fuzz targets call it in-process.
pub fn service() -> (LspService<Backend>, ClientSocket) {
    // Passes registered before this call (an embedder's) keep their names.
    relay_passes::register_builtin_passes();
    LspService::build(Backend::new)
        .custom_method("relay/passOutput", Backend::pass_output)
        .finish()
}

/// Serves LSP on stdin/stdout with the built-in passes (and any registered
/// before the call).
pub fn run_stdio() -> i32 {
    Builder::new().run_stdio()
}
