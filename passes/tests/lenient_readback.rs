//! Acceptance test of the lenient reading (issue 18): the repository's
//! example networks (`examples/*.relay`, and the TVM corpus models under
//! `../shared/tvm/models` when present), printed the way older TVM versions
//! and `astext(show_meta_data=False)` print them, read back with
//! `--lenient` to the module they came from.
//!
//! The generator takes a module, type-checks it and prints it as TVM does
//! (`/* ty=… */` on every node), then makes the print old-fashioned: the
//! metadata section is left out (each `meta[relay.Constant][i]` keeps its
//! `/* ty=… */`), parameter names become frontend names
//! (`%conv_weight` → `%conv.weight`, a leading digit for one of them),
//! attributes newer versions added with the value older versions meant are
//! left out (`axes=None`, `units=None`), and the header is dropped or says
//! `0.0.4`. The lenient reading must give no error, and a module
//! structurally equal to the original (bound variables up to renaming),
//! constants aside: each constant of the original stands as the opaque
//! constant of its reference, with the constant's type.

use relay_passes::infer::infer_module;
use relay_passes::ir::equal::module_first_difference;
use relay_passes::ir::rewrite::rewrite_function;
use relay_passes::ir::{opaque, Expr, ExprKind, IRModule, Type};
use relay_passes::lower::{parse_and_lower, parse_and_lower_with, LowerOptions};
use relay_passes::printer::{print_module, PrintOptions};
use relay_test_support::tvm::root_if_present;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// TVM's `astext()` exactly: no parentheses added, names as they are.
fn exact(show_meta_data: bool) -> PrintOptions {
    PrintOptions {
        show_meta_data,
        show_types: true,
        reparseable: false,
    }
}

/// The names of the parameters of every function of the print, as written
/// (`%conv_weight: …` after `(` or `, `).
fn parameter_names(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    for (i, _) in text.match_indices('%') {
        let rest = &text[i + 1..];
        let len = rest
            .find(|c: char| !(c == '_' || c.is_ascii_alphanumeric()))
            .unwrap_or(rest.len());
        let name = &rest[..len];
        let declared = rest[len..].starts_with(": ");
        let starts_alpha = name.starts_with(|c: char| c.is_ascii_alphabetic());
        if declared && starts_alpha && !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    }
    names
}

/// Replaces every whole-word `%old` by `new` (which carries its `%`).
fn rename(text: &str, old: &str, new: &str) -> String {
    let pattern = format!("%{old}");
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(&pattern) {
        let after = &rest[i + pattern.len()..];
        let whole = !after.starts_with(|c: char| c == '_' || c.is_ascii_alphanumeric());
        out.push_str(&rest[..i]);
        out.push_str(if whole { new } else { &pattern });
        rest = after;
    }
    out.push_str(rest);
    out
}

/// The print of `typed` as an older TVM, without metadata, writes it; the
/// variant number chooses the header (none, or `0.0.4`).
fn old_fashioned(typed: &IRModule, variant: usize) -> String {
    let mut text = print_module(typed, &exact(false));
    // Frontend names: `a_b` → `a.b`, `x` → `x:0`, and one leading digit.
    for (i, name) in parameter_names(&text).iter().enumerate() {
        // `_` before a letter becomes `.` (`_0` would read as a tuple
        // projection), else a `:0` suffix as TensorFlow writes.
        let dot = name
            .char_indices()
            .find(|&(i, c)| {
                c == '_' && name[i + 1..].starts_with(|n: char| n.is_ascii_alphabetic())
            })
            .map(|(i, _)| i);
        let new = match dot {
            Some(i) => format!("{}.{}", &name[..i], &name[i + 1..]),
            None => format!("{name}:0"),
        };
        let new = if i == 1 { format!("1_{new}") } else { new };
        text = rename(&text, name, &format!("%{new}"));
    }
    // Attributes that older versions did not write.
    for field in ["axes=None", "units=None"] {
        text = text.replace(&format!(", {field}"), "");
    }
    let header = "#[version = \"0.0.5\"]\n";
    assert!(text.starts_with(header));
    if variant.is_multiple_of(2) {
        text[header.len()..].to_string()
    } else {
        format!("#[version = \"0.0.4\"]\n{}", &text[header.len()..])
    }
}

/// The type written `text`, read as the lenient reading reads a
/// `/* ty=… */` comment.
fn type_of_text(text: &str) -> Type {
    let (module, diagnostics) = parse_and_lower(
        "type",
        &format!("#[version = \"0.0.5\"]\ndef @f(%x: {text}) {{ %x }}\n"),
    );
    assert!(!diagnostics.has_errors(), "{text}");
    let f = module.function("f").expect("@f");
    f.params()[0].type_annotation().expect("annotated").clone()
}

/// `module` (read from `text`) with each non-scalar constant replaced by
/// the opaque constant of its reference in `text`.
fn constants_as_opaque(module: &IRModule, text: &str) -> (IRModule, usize) {
    let mut out = module.clone();
    let mut count = 0;
    let mut made: BTreeMap<String, Expr> = BTreeMap::new();
    for (name, function) in module.functions() {
        let rewritten = rewrite_function(function, |old, new| {
            let ExprKind::Constant(data) = old.kind() else {
                return new;
            };
            let Some(span) = old.span() else { return new };
            let reference = &text[span.range];
            if !reference.starts_with("meta[") {
                return new;
            }
            count += 1;
            made.entry(reference.to_string())
                .or_insert_with(|| {
                    let shape: Vec<String> = data.shape.iter().map(i64::to_string).collect();
                    let shape = format!("({})", shape.join(", "));
                    let ty = if data.shape.is_empty() {
                        type_of_text(&data.dtype.to_string())
                    } else {
                        type_of_text(&format!("Tensor[{shape}, {}]", data.dtype))
                    };
                    opaque::opaque_constant(reference, Some(ty), None)
                        .expr()
                        .clone()
                })
                .clone()
        });
        out.add_function(name, rewritten);
    }
    (out, count)
}

/// Checks one network; returns the number of constants compared and the
/// warning codes the lenient reading gave.
fn check(path: &Path, variant: usize) -> Result<(usize, BTreeMap<String, usize>), String> {
    let source = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let (module, diagnostics) = parse_and_lower(&path.display().to_string(), &source);
    if diagnostics.has_errors() {
        return Err("the original does not read".to_string());
    }
    let (typed, type_errors) = infer_module(&module);
    if type_errors.has_errors() {
        return Err("the original does not type-check".to_string());
    }
    let full = print_module(&typed, &exact(true));
    let old = old_fashioned(&typed, variant);

    let (lenient, warnings) = parse_and_lower_with("old.relay", &old, LowerOptions::LENIENT);
    if warnings.has_errors() {
        let errors: Vec<String> = warnings
            .iter()
            .filter(|d| d.is_error())
            .map(|d| d.message.clone())
            .collect();
        return Err(format!("the lenient reading failed: {errors:#?}\n{old}"));
    }
    let (strict, strict_diagnostics) = parse_and_lower("full.relay", &full);
    if strict_diagnostics.has_errors() {
        return Err("TVM's full print does not read".to_string());
    }
    let (expected, constants) = constants_as_opaque(&strict, &full);
    if let Some(difference) = module_first_difference(&expected, &lenient, true) {
        return Err(format!(
            "read back differently: {} (in {:?})\n{old}",
            difference.reason, difference.global
        ));
    }
    let mut codes = BTreeMap::new();
    for d in warnings.iter() {
        *codes.entry(d.code.id().to_string()).or_insert(0) += 1;
    }
    Ok((constants, codes))
}

fn networks() -> Vec<PathBuf> {
    let root = relay_test_support::tvm::workspace_root();
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("examples"))
        .expect("examples/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "relay"))
        .collect();
    if let Some(tvm) = root_if_present() {
        let models = tvm.join("models");
        let mut more: Vec<PathBuf> = std::fs::read_dir(models)
            .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        // The models as TVM's frontends gave them (not their pipelines'
        // results, which hold fused primitive functions).
        more.retain(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.ends_with(".relay") && !name.contains(".pipeline.") && !name.contains(".typed.")
        });
        files.extend(more);
    } else {
        eprintln!("lenient_readback: ../shared/tvm not found; only examples/ are checked");
    }
    files.sort();
    files
}

#[test]
fn old_prints_of_the_example_networks_read_back_leniently() {
    let files = networks();
    assert!(!files.is_empty());
    let mut failures = Vec::new();
    let mut total_constants = 0;
    let mut codes: BTreeMap<String, usize> = BTreeMap::new();
    let mut read = 0;
    for (i, path) in files.iter().enumerate() {
        match check(path, i) {
            Ok((constants, found)) => {
                read += 1;
                total_constants += constants;
                for (code, n) in found {
                    *codes.entry(code).or_insert(0) += n;
                }
            }
            Err(message) => failures.push(format!("{}: {message}", path.display())),
        }
    }
    eprintln!(
        "lenient_readback: {read}/{} networks read back equal, {total_constants} constants \
         opaque; warnings {codes:?}",
        files.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // Every kind of old text the generator writes was met and warned about.
    for code in ["W0001", "W0004"] {
        assert!(codes.contains_key(code), "no {code}: {codes:?}");
    }
}
