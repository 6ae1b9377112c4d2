//! Command-line parsing and dispatch to one module per subcommand.

mod check;
mod diff;
mod explain;
mod files;
mod fmt;
mod graph;
mod input;
mod lenient;
mod ops;
mod opt;
mod passes;
mod print;
mod run;
mod typed_input;

use clap::{Parser, Subcommand};
use std::ffi::OsString;

/// Exit status when every input is fine.
pub const EXIT_OK: i32 = 0;
/// Exit status when an input has errors.
pub const EXIT_ERRORS: i32 = 1;
/// Exit status for a bad command line or an unreadable file.
pub const EXIT_USAGE: i32 = 2;

/// `relay --version`: the crate version and the commit it was built from.
pub(crate) const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("RELAY_BUILD_COMMIT"),
    ")"
);

#[derive(Debug, Parser)]
#[command(
    name = "relay",
    version = VERSION,
    about = "Tools for the TVM Relay IR text format"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

// One command line is parsed per run: the size of the largest variant costs
// nothing worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
enum Command {
    /// Check Relay files for errors; exit 1 if any is found.
    Check(check::CheckArgs),
    /// Compare two files structurally (up to renaming bound variables);
    /// print `equal` or the first difference (exit 1).
    Diff(diff::DiffArgs),
    /// Explain a diagnostic code (`relay explain E0101`) with an example;
    /// without a code, list them all.
    Explain(explain::ExplainArgs),
    /// Run a pipeline of passes on a module and print the result.
    Opt(opt::OptArgs),
    /// Draw the dataflow graph of a function as SVG, DOT, JSON or HTML
    /// (`-p P --diff`: before and after a pipeline, changes marked).
    Graph(graph::GraphArgs),
    /// List the registered passes.
    Passes(passes::PassesArgs),
    /// List the operators: arguments, attributes with defaults, pattern,
    /// and whether a type relation, an evaluation kernel and layout rules
    /// are implemented.
    Ops(ops::OpsArgs),
    /// Print a file as TVM's `astext()` does (no type inference).
    Print(print::PrintArgs),
    /// Run a function of a module with the reference interpreter on inputs
    /// from .npy files or random values; print the result as TVM prints
    /// an NDArray.
    Run(run::RunArgs),
    /// Lay files out in TVM's printed style, keeping comments: rewrite
    /// FILEs and DIRs in place, `-` filters stdin to stdout (`--check`,
    /// `--diff`: only report).
    Fmt(fmt::FmtArgs),
    /// Start the language server (LSP over stdin/stdout).
    Lsp(LspArgs),
    /// Print a shell completion script: `relay completions bash >
    /// ~/.local/share/bash-completion/completions/relay`.
    Completions {
        /// bash, elvish, fish, powershell or zsh.
        shell: clap_complete::Shell,
    },
}

#[derive(Debug, clap::Args)]
struct LspArgs {
    /// Talk LSP over stdin/stdout. That is the only transport and the
    /// default; the flag is accepted because clients such as
    /// vscode-languageclient add it to the command line.
    #[arg(long)]
    stdio: bool,
}

/// Runs the command line `args` (program name first) and returns the exit
/// status.
pub fn run<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    // Passes registered before this call (an embedder's) keep their names.
    relay_passes::register_builtin_passes();
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return if error.use_stderr() {
                EXIT_USAGE
            } else {
                EXIT_OK
            };
        }
    };
    match cli.command {
        Command::Check(args) => check::run(&args),
        Command::Diff(args) => diff::run(&args),
        Command::Explain(args) => explain::run(&args),
        Command::Opt(args) => opt::run(&args),
        Command::Graph(args) => graph::run(&args),
        Command::Passes(args) => passes::run(&args),
        Command::Ops(args) => ops::run(&args),
        Command::Print(args) => print::run(&args),
        Command::Run(args) => run::run(&args),
        Command::Fmt(args) => fmt::run(&args),
        Command::Lsp(LspArgs { stdio: _ }) => {
            // A long-running process that replaces large analyses: freed
            // memory goes back to the system at once.
            relay_allocator::return_memory_eagerly();
            crate::lsp::run_stdio()
        }
        Command::Completions { shell } => {
            use clap::CommandFactory;
            clap_complete::generate(shell, &mut Cli::command(), "relay", &mut std::io::stdout());
            EXIT_OK
        }
    }
}
