//! The `relay` binary.

fn main() {
    std::process::exit(relay_server::cli::run(std::env::args_os()));
}
