//! Prints the syntax tree and errors of a file: `cargo run --example dump -- FILE [--expr]`.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let text = std::fs::read_to_string(&args[1]).expect("readable file");
    let entry = if args.iter().any(|a| a == "--expr") {
        relay_syntax::Entry::Expr
    } else {
        relay_syntax::Entry::Module
    };
    let parse = relay_syntax::parse(&text, entry);
    if args.iter().any(|a| a == "--errors") {
        for e in parse.errors() {
            println!("{:?} {}", e.range(), e.message());
        }
    } else {
        print!("{}", parse.debug_dump());
    }
}
