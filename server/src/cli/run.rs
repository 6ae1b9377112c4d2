//! `relay run FILE [--entry NAME] [--input NAME=FILE.npy]… [--random SEED]
//! [-o OUT.npz]`: type-checks the module as `relay opt` does, runs one of
//! its functions with the reference interpreter and prints the result as
//! TVM prints an `NDArray` (or writes it as `.npy`/`.npz`).

use super::input::read_text;
use super::typed_input::typed_module;
use super::{EXIT_ERRORS, EXIT_OK, EXIT_USAGE};
use crate::render::render;
use relay_passes::diagnostic::{Code, Diagnostic};
use relay_passes::interp::{self, print, Limits, Value};
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The module (`-` reads standard input).
    file: PathBuf,
    #[command(flatten)]
    lenient: super::lenient::LenientArg,
    /// The global function to run.
    #[arg(long, default_value = "main")]
    entry: String,
    /// A parameter's value from a file: `x=x.npy` (a tuple parameter from
    /// an `.npz` of its fields in order). Repeatable.
    #[arg(long = "input", value_name = "NAME=FILE")]
    inputs: Vec<String>,
    /// Random values from this seed for the parameters without --input
    /// (floats in [-1, 1), signed integers in [-8, 8], unsigned in [0, 16);
    /// every `?` dimension of size 4). A float parameter whose use needs a
    /// domain gets one: a batch norm's variance or a sqrt/rsqrt/log
    /// operand in [0.5, 1.5], an exponent of power 2. A parameter given by
    /// --input keeps its place in the stream: the others get the values
    /// this seed alone gives them.
    #[arg(long, value_name = "SEED")]
    random: Option<u64>,
    /// Write the result to a file instead of printing it: `.npy` for a
    /// tensor, `.npz` for any value (its tensors as output_0, output_1, …).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
}

/// Reads `--input NAME=FILE`.
fn read_input(spec: &str) -> Result<(String, Value), String> {
    let (name, file) = spec
        .split_once('=')
        .ok_or_else(|| format!("--input expects NAME=FILE, found `{spec}`"))?;
    let bytes = std::fs::read(file).map_err(|e| format!("cannot read {file}: {e}"))?;
    let value = if file.ends_with(".npz") {
        let arrays = interp::npz::read_npz(&bytes).map_err(|e| format!("{file}: {e}"))?;
        Value::tuple(arrays.into_iter().map(|(_, t)| Value::tensor(t)).collect())
    } else {
        Value::tensor(interp::npy::read_npy(&bytes).map_err(|e| format!("{file}: {e}"))?)
    };
    Ok((name.to_string(), value))
}

fn write_output(path: &Path, value: &Value) -> Result<(), String> {
    let bytes = match value {
        Value::Tensor(t) if path.extension().is_some_and(|e| e == "npy") => {
            interp::npy::write_npy(t)?
        }
        _ if path.extension().is_some_and(|e| e == "npy") => {
            return Err(format!(
                "the result is {}; write it to an .npz file",
                value.kind_name()
            ))
        }
        _ => {
            let leaves = value.leaves();
            let arrays: Vec<(String, &relay_passes::metadata::TensorData)> = leaves
                .iter()
                .enumerate()
                .map(|(i, l)| (format!("output_{i}"), &*l.tensor))
                .collect();
            interp::npz::write_npz(&arrays)?
        }
    };
    std::fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

pub fn run(args: &RunArgs) -> i32 {
    let text = match read_text(&args.file) {
        Ok(text) => text,
        Err(message) => {
            eprintln!("error: {message}");
            return EXIT_USAGE;
        }
    };
    let inputs = match args
        .inputs
        .iter()
        .map(|s| read_input(s))
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(inputs) => inputs,
        Err(message) => {
            eprintln!("error: {message}");
            return EXIT_USAGE;
        }
    };
    let module = match typed_module(&args.file, &text, args.lenient) {
        Ok(module) => module,
        Err(status) => return status,
    };
    let sources = module.sources.clone();
    let Some(function) = module.function(&args.entry) else {
        let names: Vec<String> = module.functions().map(|(n, _)| format!("@{n}")).collect();
        eprintln!(
            "error: the module has no function @{}; it has {}",
            args.entry,
            names.join(", ")
        );
        return EXIT_USAGE;
    };
    let limits = Limits::default();
    let arguments = match interp::bind_arguments(function, &inputs, args.random, limits.clone()) {
        Ok(arguments) => arguments,
        Err(message) => {
            eprintln!("error: {message}");
            return EXIT_USAGE;
        }
    };
    let value = match interp::run(&module, &args.entry, arguments, limits) {
        Ok(value) => value,
        Err(error) => {
            let mut diagnostic = Diagnostic::error(Code::RuntimeError, error.to_string());
            if let Some(span) = error.span {
                diagnostic = diagnostic.with_span(span);
            }
            eprint!("{}", render(&[diagnostic], &sources));
            return EXIT_ERRORS;
        }
    };
    match &args.output {
        Some(path) => {
            if let Err(message) = write_output(path, &value) {
                eprintln!("error: {message}");
                return EXIT_USAGE;
            }
        }
        None => print!("{}", print::value_text(&value)),
    }
    EXIT_OK
}
