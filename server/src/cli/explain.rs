//! `relay explain CODE`: the explanation and an example of a diagnostic
//! code, from the one table of codes (`relay_passes::diagnostic::codes`),
//! as `rustc --explain` does. Without a code: the list of codes.

use super::{EXIT_OK, EXIT_USAGE};
use relay_passes::diagnostic::codes::{Code, Run};

#[derive(Debug, clap::Args)]
pub struct ExplainArgs {
    /// A diagnostic code, e.g. `E0101` (omit it to list every code).
    code: Option<String>,
}

pub fn run(args: &ExplainArgs) -> i32 {
    let Some(id) = &args.code else {
        for code in Code::ALL {
            let info = code.info();
            println!("{}  {:<7} {}", info.id, info.layer.short_name(), info.title);
        }
        return EXIT_OK;
    };
    match Code::parse(id) {
        Some(code) => {
            print!("{}", explanation(code));
            EXIT_OK
        }
        None => {
            eprintln!(
                "error: `{id}` is not a diagnostic code of relay (`relay explain` lists them)"
            );
            EXIT_USAGE
        }
    }
}

/// The text `relay explain` prints for `code`.
pub fn explanation(code: Code) -> String {
    let info = code.info();
    let mut out = format!("{}: {}\n\n", info.id, info.title);
    out.push_str(&wrap(info.explanation, 79));
    let example = info.example;
    let command = match example.run {
        Run::Check => "relay check example.relay".to_string(),
        Run::Pipeline(pipeline) => format!("relay check --pipeline '{pipeline}' example.relay"),
        Run::Project { pipeline, .. } => {
            format!("relay check --pipeline '{pipeline}' example.relay")
        }
        Run::Opt(args) => {
            let args: Vec<String> = args
                .iter()
                .map(|a| {
                    if a.contains(' ') {
                        format!("'{a}'")
                    } else {
                        a.to_string()
                    }
                })
                .collect();
            format!("relay opt example.relay {}", args.join(" "))
        }
        Run::DiffWith(_) => "relay diff example.relay other.relay".to_string(),
        Run::Run(args) => format!("relay run example.relay {}", args.join(" "))
            .trim_end()
            .to_string(),
        Run::Lenient => "relay check --lenient example.relay".to_string(),
        Run::Upgrade => "relay fmt --upgrade example.relay".to_string(),
        Run::NotReproducible => return out,
    };
    out.push_str(&format!("\nExample (`{command}` reports {}):\n\n", info.id));
    out.push_str(&indent("example.relay", example.text));
    match example.run {
        Run::Project { relay_toml, .. } => {
            out.push('\n');
            out.push_str(&indent("relay.toml (next to it)", relay_toml));
        }
        Run::DiffWith(other) => {
            out.push('\n');
            out.push_str(&indent("other.relay", other));
        }
        _ => {}
    }
    out
}

fn indent(title: &str, text: &str) -> String {
    let mut out = format!("    // {title}\n");
    for line in text.lines() {
        out.push_str("    ");
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// `text` broken into lines of at most `width` characters, at spaces.
fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push_str(&line);
        out.push('\n');
    }
    out
}
