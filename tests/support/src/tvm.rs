//! The TVM v0.13 reference data: its location, the skip when it is absent,
//! and its pass records (`passes/<Pass>/NNNN.{json,before.relay,after.relay}`).
//!
//! The data is not part of the repository: it lives in `../shared/tvm`
//! beside the checkout (`RELAY_SHARED_TVM=dir` points elsewhere, e.g. from a
//! git worktree). Tests that need it and do not find it print a loud
//! `SKIPPED` banner on stderr and pass without checking anything, so that a
//! missing corpus never looks like a pass in the log.

use crate::files::sorted_files;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The environment variable that overrides where the data is.
pub const OVERRIDE: &str = "RELAY_SHARED_TVM";

/// The root of the workspace (the directory of the top `Cargo.toml`).
pub fn workspace_root() -> PathBuf {
    // This crate is `<root>/tests/support`.
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("tests/support sits two levels below the workspace root")
        .to_path_buf()
}

/// Where the data is expected: `$RELAY_SHARED_TVM`, else `../shared/tvm`
/// beside the workspace root. It may not exist.
pub fn expected_root() -> PathBuf {
    match std::env::var_os(OVERRIDE) {
        Some(dir) => PathBuf::from(dir),
        None => workspace_root().join("../shared/tvm"),
    }
}

/// The data's root if it is there, without a message (benchmarks and
/// examples that merely do less without it).
pub fn root_if_present() -> Option<PathBuf> {
    let root = expected_root();
    root.is_dir().then_some(root)
}

/// The data's root, or `None` after saying loudly on stderr that `what`
/// (the test's name) is skipped.
pub fn root_or_skip(what: &str) -> Option<PathBuf> {
    let root = root_if_present();
    if root.is_none() {
        eprintln!("{}", skip_banner(what, &expected_root()));
    }
    root
}

/// The banner of a skipped test.
pub fn skip_banner(what: &str, root: &Path) -> String {
    let bar = "!".repeat(76);
    format!(
        "\n{bar}\n!!! SKIPPED {what}: the TVM reference data was not found at {}\n\
         !!! (it lives in ../shared/tvm beside the repository; set {OVERRIDE}=dir \
         to point elsewhere)\n{bar}\n",
        root.display()
    )
}

/// One record of `passes/<dir>`: a pass application TVM made.
pub struct PassRecord {
    pub dir: String,
    pub stem: String,
    pub json: Value,
    /// The input text (`NNNN.before.relay`, or the model the json names).
    pub before: String,
    /// TVM's output; `None` when TVM raised (`"error"` in the json).
    pub expected: Option<String>,
}

impl PassRecord {
    pub fn name(&self) -> String {
        format!("{}/{}", self.dir, self.stem)
    }

    /// Only the structure is compared (TVM itself does not reproduce the
    /// types from the text).
    pub fn structure_only(&self) -> bool {
        self.json["types_from_text_differ"].as_bool() == Some(true)
    }

    /// The pipeline text of the record.
    pub fn pipeline(&self) -> &str {
        self.json["pipeline"].as_str().unwrap_or("")
    }
}

/// Every record of `passes/<dir>`, sorted; `RELAY_CORPUS_FILTER=substring`
/// keeps those whose name contains it. Unreadable records are returned as
/// errors, so that the test reports them rather than skipping them.
pub fn pass_records(root: &Path, dir: &str) -> Vec<Result<PassRecord, String>> {
    let filter = std::env::var("RELAY_CORPUS_FILTER").ok();
    let path = root.join("passes").join(dir);
    let mut out = Vec::new();
    for json_path in sorted_files(&path, ".json") {
        let stem = json_path
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_default();
        if filter.as_ref().is_some_and(|f| !stem.contains(f.as_str())) {
            continue;
        }
        out.push(read_record(root, dir, &path, &stem, &json_path));
    }
    out
}

fn read_record(
    root: &Path,
    dir: &str,
    path: &Path,
    stem: &str,
    json_path: &Path,
) -> Result<PassRecord, String> {
    let name = format!("{dir}/{stem}");
    let json: Value = std::fs::read_to_string(json_path)
        .map_err(|e| e.to_string())
        .and_then(|text| serde_json::from_str(&text).map_err(|e| e.to_string()))
        .map_err(|e| format!("{name}: {e}"))?;
    let before_path = match json["before"].as_str() {
        Some(rel) => root.join(rel),
        None => path.join(format!("{stem}.before.relay")),
    };
    let before = std::fs::read_to_string(&before_path)
        .map_err(|e| format!("{name}: {}: {e}", before_path.display()))?;
    let expected = if json.get("error").is_some() {
        None
    } else {
        let after = path.join(format!("{stem}.after.relay"));
        Some(
            std::fs::read_to_string(&after)
                .map_err(|e| format!("{name}: {}: {e}", after.display()))?,
        )
    };
    Ok(PassRecord {
        dir: dir.to_string(),
        stem: stem.to_string(),
        json,
        before,
        expected,
    })
}

/// A record's json, `Null` when it cannot be read or parsed (the test then
/// treats the record with the defaults and its comparison names the file).
pub fn read_json(path: &Path) -> Value {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Null)
}

/// Whether `parser/{ok,err}/NNNN.json` (or any record json) says the text
/// was read with `parse_expr` rather than `parse`.
pub fn is_expr_entry(json: &Value) -> bool {
    json.get("entry").and_then(Value::as_str) == Some("expr")
}

/// The record directories of passes not implemented yet (issue 22): none
/// today; a directory of records of a new pass goes here until the pass
/// lands.
const NOT_YET: &[&str] = &[];

/// The operator a record of TVM's InferType on one operator is about:
/// `passes/InferType/2NNN.*`, whose json says `"test":
/// "ops-wave2::<op>::<case>"`. `path` is any file of the record.
pub fn record_operator(path: &Path) -> Option<String> {
    let file = path.file_name()?.to_string_lossy();
    let stem = file.split('.').next()?;
    let json = read_json(&path.with_file_name(format!("{stem}.json")));
    let test = json.get("test")?.as_str()?;
    let mut parts = test.split("::");
    (parts.next()? == "ops-wave2").then_some(())?;
    parts.next().map(str::to_string)
}

/// Records of the data this project does not cover yet, with the issue that
/// covers them: TVM's InferType on an operator still without a relation
/// here (`passes/InferType/2NNN`; `has_relation(op)` answers for the
/// operator the record names, see [`record_operator`]), and the results of
/// passes not implemented yet (issue 22). Corpus tests that assert every
/// record count these apart and say how many; the conformance scorer still
/// scores them. The metadata unit test in `passes/ir/src/metadata/mod.rs`
/// calls this function (no copy of the list).
pub fn awaiting_coverage(path: &Path, has_relation: &dyn Fn(&str) -> bool) -> Option<&'static str> {
    let mut parts = path
        .components()
        .rev()
        .map(|c| c.as_os_str().to_string_lossy());
    let file = parts.next()?;
    let pass = parts.next()?;
    let is_record_of = |name: &str| pass == name;
    if is_record_of("InferType") && file.starts_with('2') && file.as_bytes().get(4) == Some(&b'.') {
        let covered = record_operator(path).is_some_and(|op| has_relation(&op));
        return (!covered).then_some("issue 17 (operators without a relation)");
    }
    NOT_YET
        .iter()
        .any(|name| is_record_of(name))
        .then_some("issue 22 (passes not implemented yet)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_override_wins_and_the_default_is_beside_the_workspace() {
        let root = workspace_root();
        assert!(root.join("Cargo.toml").is_file(), "{}", root.display());
        assert!(root.join("tests/support/Cargo.toml").is_file());
        if std::env::var_os(OVERRIDE).is_none() {
            assert_eq!(expected_root(), root.join("../shared/tvm"));
        }
    }

    #[test]
    fn the_skip_banner_names_the_test_the_place_and_the_override() {
        let banner = skip_banner("print_corpus", Path::new("/nowhere/tvm"));
        assert!(banner.contains("SKIPPED print_corpus"), "{banner}");
        assert!(banner.contains("/nowhere/tvm"), "{banner}");
        assert!(banner.contains(OVERRIDE), "{banner}");
    }

    #[test]
    fn an_operator_record_is_awaiting_until_its_relation_exists() {
        let dir = std::env::temp_dir().join(format!("relay-awaiting-{}", std::process::id()));
        let records = dir.join("passes/InferType");
        std::fs::create_dir_all(&records).unwrap();
        std::fs::write(
            records.join("2042.json"),
            r#"{"test": "ops-wave2::nn.prelu::basic", "pipeline": "InferType"}"#,
        )
        .unwrap();
        let after = records.join("2042.after.relay");
        assert_eq!(record_operator(&after).as_deref(), Some("nn.prelu"));
        assert!(awaiting_coverage(&after, &|op| op == "nn.prelu").is_none());
        assert!(awaiting_coverage(&after, &|op| op == "gather").is_some());
        // No json beside it: still awaiting.
        assert!(awaiting_coverage(&records.join("2043.json"), &|_| true).is_some());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn awaiting_coverage_knows_the_pending_records() {
        let none = |_: &str| false;
        assert!(awaiting_coverage(Path::new("x/passes/InferType/2001.json"), &none).is_some());
        assert!(awaiting_coverage(Path::new("x/passes/InferType/0001.json"), &none).is_none());
        assert!(awaiting_coverage(Path::new("x/passes/PartitionGraph/0001.json"), &none).is_none());
        assert!(awaiting_coverage(Path::new("x/passes/FoldConstant/0001.json"), &none).is_none());
        for pending in NOT_YET {
            let record = format!("x/passes/{pending}/0001.json");
            assert!(
                awaiting_coverage(Path::new(&record), &none).is_some(),
                "{pending}"
            );
        }
    }
}
