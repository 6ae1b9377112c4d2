//! The `relay` binary.

/// Parsing, lowering and printing allocate many small nodes; mimalloc makes
/// that markedly cheaper than the system allocator (see
/// `passes/benches/pipeline.rs`, which measures with it too).
#[global_allocator]
static ALLOCATOR: relay_allocator::Mimalloc = relay_allocator::Mimalloc;

/// Sets the allocator's arena to be committed lazily before anything is
/// allocated (before `main`: the runtime may allocate first), so memory it
/// purges leaves the resident set (see `relay_allocator::commit_lazily`).
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static COMMIT_LAZILY: extern "C" fn() = {
    extern "C" fn commit_lazily() {
        relay_allocator::commit_lazily();
    }
    commit_lazily
};

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
