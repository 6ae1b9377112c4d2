//! Helpers of the conformance tests: walking the parser cases of
//! `../shared/tvm` and classifying TVM's error messages. Locating the data
//! (and the loud skip when it is absent), reading and listing files are
//! `relay-test-support`'s (re-exported here).

pub mod fuzz;

use std::path::{Path, PathBuf};

pub use relay_test_support::files::{read_lossy as read, sorted_files as files_with_suffix};
pub use relay_test_support::tvm::root_or_skip;

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
        relay_test_support::tvm::is_expr_entry(&self.meta)
    }

    pub fn source(&self) -> String {
        read(&self.base.with_extension("relay"))
    }

    pub fn with_ext(&self, ext: &str) -> PathBuf {
        self.base.with_extension(ext)
    }
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
                let meta = relay_test_support::tvm::read_json(&path);
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
