//! The interpreter against independent values: NumPy's results and NumPy's
//! `repr`, written by `tests/numpy/make_reference.py` into
//! `tests/numpy/data` (NumPy is not needed to run this test).
//!
//! Each case runs its `case.relay` on the `.npy` inputs through the same
//! path as `relay run` and compares the result with `expected.npy`:
//! integers exactly, floats within 2 ulp-ish (`1e-6 + 1e-5·|expected|`:
//! NumPy's vectorised `exp`/`log`/`tanh` may round differently from libm in
//! the last place).

use relay_interp::npy::read_npy;
use relay_interp::{bind_arguments, print, run, Limits, Value};
use relay_ir::metadata::TensorData;
use std::path::{Path, PathBuf};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/numpy/data")
}

fn sorted_dir(dir: &Path) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    entries
}

fn load(path: &Path) -> TensorData {
    read_npy(&std::fs::read(path).unwrap()).unwrap_or_else(|e| panic!("{path:?}: {e}"))
}

/// Why `actual` is not `expected`, if it is not.
fn mismatch(actual: &TensorData, expected: &TensorData) -> Option<String> {
    if actual.dtype != expected.dtype || actual.shape != expected.shape {
        return Some(format!(
            "{} {:?}, expected {} {:?}",
            actual.dtype, actual.shape, expected.dtype, expected.shape
        ));
    }
    let exact = !(expected.dtype.is_float() || expected.dtype.is_bfloat16());
    for i in 0..expected.len() {
        let (a, e) = (actual.get_f64(i).unwrap(), expected.get_f64(i).unwrap());
        let ok = if exact {
            a == e
        } else {
            (a - e).abs() <= 1e-6 + 1e-5 * e.abs() || (a.is_nan() && e.is_nan())
        };
        if !ok {
            return Some(format!("element {i}: {a}, NumPy {e}"));
        }
    }
    None
}

#[test]
fn kernels_agree_with_numpy() {
    let mut failures = Vec::new();
    let cases = sorted_dir(&data().join("cases"));
    assert!(cases.len() >= 30, "the reference data is missing");
    for dir in &cases {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(dir.join("case.relay")).unwrap();
        let (module, diagnostics) = relay_lower::parse_and_lower("case.relay", &text);
        assert!(!diagnostics.has_errors(), "{name}: {diagnostics:?}");
        let (module, diagnostics) = relay_infer::infer_module(&module);
        assert!(!diagnostics.has_errors(), "{name}: {diagnostics:?}");
        let inputs: Vec<(String, Value)> = sorted_dir(dir)
            .into_iter()
            .filter_map(|p| {
                let file = p.file_name()?.to_str()?.to_string();
                let param = file.strip_prefix("in_")?.strip_suffix(".npy")?.to_string();
                Some((param, Value::tensor(load(&p))))
            })
            .collect();
        let main = module.function("main").unwrap();
        let args = bind_arguments(main, &inputs, None, Limits::default()).unwrap();
        let expected = load(&dir.join("expected.npy"));
        match run(&module, "main", args, Limits::default()) {
            Ok(Value::Tensor(actual)) => {
                if let Some(why) = mismatch(&actual, &expected) {
                    failures.push(format!("{name}: {why}"));
                }
            }
            Ok(other) => failures.push(format!("{name}: {}", other.kind_name())),
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from NumPy:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn arrays_print_as_numpy_repr() {
    let mut failures = Vec::new();
    let files: Vec<PathBuf> = sorted_dir(&data().join("repr"))
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "npy"))
        .collect();
    assert!(files.len() >= 15, "the reference data is missing");
    for path in &files {
        let expected = std::fs::read_to_string(path.with_extension("txt")).unwrap();
        let actual = print::numpy_repr(&load(path));
        if actual != expected {
            failures.push(format!(
                "{}:\n  ours:  {actual}\n  NumPy: {expected}",
                path.display()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} reprs differ:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}
