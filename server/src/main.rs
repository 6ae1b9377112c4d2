//! The `relay` binary.

/// Parsing, lowering and printing allocate many small nodes; mimalloc makes
/// that markedly cheaper than the system allocator (see
/// `passes/benches/pipeline.rs`, which measures with it too).
#[global_allocator]
static ALLOCATOR: relay_allocator::Mimalloc = relay_allocator::Mimalloc;

// The allocator's arena is committed lazily, set before anything is
// allocated, so memory it purges leaves the resident set (see
// `relay_allocator::commit_lazily`).
relay_allocator::commit_lazily_before_main!();

fn main() {
    restore_default_sigpipe();
    std::process::exit(relay_server::cli::run(std::env::args_os()));
}

/// Rust ignores SIGPIPE, so writing to a closed pipe (`relay print x |
/// head`) makes `print!` panic. A command-line tool should instead stop
/// quietly, as `cat` does: restore the default action.
#[cfg(unix)]
fn restore_default_sigpipe() {
    // SAFETY: called first thing in `main`, before any other thread exists;
    // setting a signal's disposition to its default has no other effect.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[cfg(not(unix))]
fn restore_default_sigpipe() {}
