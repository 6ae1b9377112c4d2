//! Shared helpers for the conformance tests: locating `../shared/tvm` and
//! walking its case directories.
//!
//! The reference data is not in this repository. When it is absent the tests
//! say so loudly on stderr and pass without checking anything; CI always has
//! it beside the clone.

pub mod fuzz;

use std::path::{Path, PathBuf};

/// `../shared/tvm` relative to the repository root (or the directory named
/// by `RELAY_SHARED_TVM`, for a checkout that lives elsewhere, such as a git
/// worktree), if present.
pub fn shared_tvm() -> Option<PathBuf> {
    let root = match std::env::var_os("RELAY_SHARED_TVM") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/tvm"),
    };
    if root.is_dir() {
        Some(root)
    } else {
        eprintln!(
            "\n==========\nSKIPPED: the TVM reference data was not found at {}.\n\
             Conformance tests need ../shared/tvm beside the repository.\n==========\n",
            root.display()
        );
        None
    }
}

/// One `parser/{ok,err}` case.
#[derive(Debug, Clone)]
pub struct ParserCase {
    /// `ok` or `err`.
    pub category: &'static str,
    /// The path without extension, e.g. `.../parser/ok/0001`.
    pub base: PathBuf,
    /// The `.json` record.
    pub meta: serde_json::Value,
}

impl ParserCase {
    pub fn name(&self) -> String {
        format!(
            "{}/{}",
            self.category,
            self.base.file_name().unwrap().to_string_lossy()
        )
    }

    /// Whether TVM read this text with `parse_expr` rather than `parse`.
    pub fn is_expr(&self) -> bool {
        self.meta.get("entry").and_then(|v| v.as_str()) == Some("expr")
    }

    pub fn source(&self) -> String {
        read(&self.base.with_extension("relay"))
    }

    pub fn with_ext(&self, ext: &str) -> PathBuf {
        self.base.with_extension(ext)
    }
}

/// Reads a file as text (corpus files are UTF-8; invalid bytes are replaced).
pub fn read(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Every parser case, `ok` then `err`, in name order.
pub fn parser_cases(root: &Path) -> Vec<ParserCase> {
    let mut out = Vec::new();
    for category in ["ok", "err"] {
        let dir = root.join("parser").join(category);
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.path()).collect())
            .unwrap_or_default();
        names.sort();
        for path in names {
            if path.extension().is_some_and(|e| e == "json") {
                let meta = serde_json::from_str(&read(&path)).unwrap_or(serde_json::Value::Null);
                out.push(ParserCase {
                    category,
                    base: path.with_extension(""),
                    meta,
                });
            }
        }
    }
    out
}

/// Files in `dir` whose names end with `suffix`, sorted.
pub fn files_with_suffix(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    out.retain(|p| p.to_string_lossy().ends_with(suffix));
    out.sort();
    out
}

/// How TVM's message for a rejected text classifies it: a syntax error (ours
/// to report in the syntax layer) or a name/type error (for lowering and
/// type inference).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TvmErrorClass {
    Syntax,
    NameOrType,
}

/// Classifies TVM's rendered error text.
pub fn classify_tvm_error(message: &str) -> TvmErrorClass {
    const SYNTAX: &[&str] = &[
        "error: expected ",
        "invalid semantic version",
        "failed to parse type",
        "unsupported attribute",
        "denotes the start of an attribute",
        "invalid integer number",
        "invalid floating point number",
        "unrepresentable in width",
        "invalid numeric suffix",
        "carriage returns",
        "expected text format semantic version",
        "an external type may not have any constructors",
        "Check failed: (pos < this->source.size())",
        "String index out of bounds",
    ];
    if SYNTAX.iter().any(|s| message.contains(s)) {
        TvmErrorClass::Syntax
    } else {
        TvmErrorClass::NameOrType
    }
}
