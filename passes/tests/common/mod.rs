//! Helpers shared by the corpus tests (`dce_cse_corpus`, `fold_constant_corpus`,
//! `infer_corpus`, `print_corpus`, `pass_infra`): finding TVM's recorded
//! results in `../shared/tvm`, reading a pass record (its json, input and
//! TVM's output), running a record's pipeline under its PassContext, and
//! comparing texts the way `shared/tools/conformance.py` does.
//!
//! Each test crate uses only part of this module, hence the `dead_code`
//! allowance.

#![allow(dead_code)]

use relay_passes::diagnostic::Diagnostics;
use relay_passes::ir::IRModule;
use relay_passes::lower::parse_and_lower;
use relay_passes::pass_manager::{
    pipeline_from_text, registry, run_pass, ConfigValue, PassContext, PassContextOptions,
    PassInstrument,
};
use relay_passes::printer::{print_module, PrintOptions};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where the TVM corpus is expected (it is not part of this repository).
pub fn corpus_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/tvm")
}

/// The corpus directory, or `None` after saying loudly that `test` is
/// skipped: a missing corpus must not look like a pass.
pub fn corpus(test: &str) -> Option<PathBuf> {
    let dir = corpus_root();
    if dir.is_dir() {
        return Some(dir);
    }
    eprintln!(
        "\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n\
         !!! SKIPPED {test}: TVM corpus not found at {}\n\
         !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n",
        dir.display()
    );
    None
}

/// Removes every ` /* ty=… */` comment, as the conformance script's regex
/// ` ?/\* ty=(?:[^*]|\*(?!/))* \*/` does: the comment runs to the first
/// `*/` and must end with ` */`; one space before it goes too.
pub fn strip_types(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("/* ty=") {
        let Some(len) = rest[at..].find("*/") else {
            break;
        };
        let end = at + len + 2;
        if !rest[..end].ends_with(" */") {
            out.push_str(&rest[..end]);
            rest = &rest[end..];
            continue;
        }
        let start = if rest[..at].ends_with(' ') {
            at - 1
        } else {
            at
        };
        out.push_str(&rest[..start]);
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// White space at line ends and at the end of the text does not count.
pub fn normalize(text: &str) -> String {
    let text = text.replace("\r\n", "\n");
    let lines: Vec<&str> = text.split('\n').map(str::trim_end).collect();
    lines.join("\n").trim_end().to_string()
}

/// The text up to the `#[metadata]` section.
pub fn before_metadata(text: &str) -> &str {
    text.find("#[metadata]").map_or(text, |i| &text[..i])
}

/// The first differing line of two texts (clipped), for failure reports.
pub fn first_difference(got: &str, want: &str) -> String {
    let (g, w): (Vec<&str>, Vec<&str>) = (got.lines().collect(), want.lines().collect());
    let clip = |s: Option<&str>| s.map_or("<none>".to_string(), |s| s.chars().take(300).collect());
    for i in 0..g.len().max(w.len()) {
        let (a, b) = (g.get(i).copied(), w.get(i).copied());
        if a != b {
            return format!(
                "line {}:\n      ours: {}\n      tvm:  {}",
                i + 1,
                clip(a),
                clip(b)
            );
        }
    }
    String::new()
}

/// The files of `dir` whose names end with `suffix`, sorted.
pub fn sorted_files(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.to_string_lossy().ends_with(suffix))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// A file's text, or empty when it cannot be read (the comparison then
/// fails and names the file).
pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// The first error of a diagnostics list.
pub fn first_error(diagnostics: &Diagnostics) -> String {
    diagnostics
        .iter()
        .find(|d| d.is_error())
        .map_or(String::new(), |d| d.to_string())
}

/// One record of `passes/<dir>`: the pass application TVM made.
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

fn config_value(key: &str, value: &Value) -> Option<ConfigValue> {
    let ty = relay_passes::pass_manager::config::config_type(key)?;
    let text = match value {
        Value::String(s) => serde_json::to_string(s).ok()?,
        other => other.to_string(),
    };
    ConfigValue::parse_for(&text, ty).ok()
}

/// The PassContext options a record's json gives (`ctx` and `target`).
pub fn context_options(json: &Value) -> Result<PassContextOptions, String> {
    let ctx = &json["ctx"];
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut config = BTreeMap::new();
    if let Some(map) = ctx["config"].as_object() {
        for (key, value) in map {
            let value = config_value(key, value).ok_or_else(|| format!("config {key}"))?;
            config.insert(key.clone(), value);
        }
    }
    Ok(PassContextOptions {
        opt_level: ctx["opt_level"].as_u64().unwrap_or(2) as u32,
        required_pass: strings(&ctx["required_pass"]),
        disabled_pass: strings(&ctx["disabled_pass"]),
        config,
        target: json["target"].as_str().map(String::from),
        ..Default::default()
    })
}

/// Parses, lowers and type-checks a text, as TVM's parser does (`relay opt`
/// does the same before the pipeline).
pub fn parse_typed(name: &str, text: &str) -> Result<IRModule, String> {
    relay_passes::register_builtin_passes();
    let (module, diagnostics) = parse_and_lower(name, text);
    if diagnostics.has_errors() {
        return Err(format!("parse: {}", first_error(&diagnostics)));
    }
    let parse_ctx = PassContext::new(PassContextOptions::default()).map_err(|e| e.to_string())?;
    let infer = registry::create_by_name("InferType")?;
    run_pass(&*infer, module, &parse_ctx).map_err(|e| {
        let details: Vec<String> = e.diagnostics.iter().map(|d| d.to_string()).collect();
        format!("infer: {e} {}", details.join("; "))
    })
}

/// Runs `pipeline` on `module` inside a context made from `options` (with
/// `instruments` added); the resulting module.
pub fn run_pipeline(
    module: IRModule,
    pipeline: &str,
    mut options: PassContextOptions,
    instruments: Vec<Arc<dyn PassInstrument>>,
) -> Result<IRModule, String> {
    relay_passes::register_builtin_passes();
    let pipeline = pipeline_from_text(pipeline).map_err(|e| format!("pipeline: {e}"))?;
    options.instruments.extend(instruments);
    let ctx = PassContext::new(options)?;
    let guard = ctx.enter().map_err(|e| e.to_string())?;
    let result = run_pass(&*pipeline, module, &ctx);
    guard.exit().map_err(|e| e.to_string())?;
    result.map_err(|e| {
        let details: Vec<String> = e.diagnostics.iter().map(|d| d.to_string()).collect();
        format!("pass: {} {}", e.message, details.join("; "))
    })
}

/// `relay opt` on a record: parse and type-check its input, run its
/// pipeline under its context, print with types.
pub fn run_record(record: &PassRecord) -> Result<String, String> {
    let module = parse_typed("before.relay", &record.before)?;
    let options = context_options(&record.json)?;
    let module = run_pipeline(module, record.pipeline(), options, Vec::new())?;
    Ok(print_module(&module, &PrintOptions::default()))
}

/// How one output compares with TVM's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Comparison {
    /// Equal with and without types.
    Equal,
    /// Equal without `/* ty=… */` comments; the types differ (or were not
    /// compared when the record says they cannot be).
    StructureOnly {
        types_compared: bool,
        detail: String,
    },
    /// Different even without types; `metadata_only` when the text before
    /// the `#[metadata]` section is equal.
    Different { metadata_only: bool, detail: String },
}

/// Compares `ours` with TVM's `expected` as the conformance script does.
pub fn compare(ours: &str, expected: &str, compare_types: bool) -> Comparison {
    let (ours_s, tvm_s) = (
        normalize(&strip_types(ours)),
        normalize(&strip_types(expected)),
    );
    if ours_s != tvm_s {
        return Comparison::Different {
            metadata_only: before_metadata(&ours_s) == before_metadata(&tvm_s),
            detail: first_difference(&ours_s, &tvm_s),
        };
    }
    if !compare_types {
        return Comparison::StructureOnly {
            types_compared: false,
            detail: String::new(),
        };
    }
    let (ours_t, tvm_t) = (normalize(ours), normalize(expected));
    if ours_t == tvm_t {
        Comparison::Equal
    } else {
        Comparison::StructureOnly {
            types_compared: true,
            detail: first_difference(&ours_t, &tvm_t),
        }
    }
}

/// The tally of one record directory.
#[derive(Default, Debug)]
pub struct Tally {
    pub records: usize,
    pub structure: usize,
    /// Structure misses whose only difference is in the `#[metadata]`
    /// section.
    pub metadata_only: usize,
    pub typed: usize,
    pub typed_checked: usize,
    pub errors_expected: usize,
    pub errors_ok: usize,
    pub misses: Vec<String>,
}

impl Tally {
    /// Counts one record's result. `RELAY_CORPUS_VERBOSE=1` adds the first
    /// differing line to each miss; `RELAY_CORPUS_DUMP=dir` writes our
    /// print of each miss there.
    pub fn add(&mut self, record: &PassRecord, result: Result<String, String>) {
        let name = record.name();
        self.records += 1;
        let Some(expected) = &record.expected else {
            self.errors_expected += 1;
            match result {
                Err(_) => self.errors_ok += 1,
                Ok(_) => self.misses.push(format!("{name}: TVM failed, we did not")),
            }
            return;
        };
        let ours = match result {
            Ok(text) => text,
            Err(message) => {
                self.misses.push(format!("{name}: {message}"));
                return;
            }
        };
        let verbose = std::env::var("RELAY_CORPUS_VERBOSE").is_ok();
        let shown = |detail: String| if verbose { detail } else { String::new() };
        let miss = match compare(&ours, expected, !record.structure_only()) {
            Comparison::Equal => {
                self.structure += 1;
                self.typed_checked += 1;
                self.typed += 1;
                None
            }
            Comparison::StructureOnly {
                types_compared,
                detail,
            } => {
                self.structure += 1;
                if types_compared {
                    self.typed_checked += 1;
                    Some(format!("{name}: types differ {}", shown(detail)))
                } else {
                    None
                }
            }
            Comparison::Different {
                metadata_only,
                detail,
            } => {
                if metadata_only {
                    self.metadata_only += 1;
                }
                let what = if metadata_only {
                    "only the metadata section differs"
                } else {
                    "structure differs"
                };
                Some(format!("{name}: {what} {}", shown(detail)))
            }
        };
        if let Some(miss) = miss {
            if let Ok(dir) = std::env::var("RELAY_CORPUS_DUMP") {
                let dir = PathBuf::from(dir);
                let _ = std::fs::create_dir_all(&dir);
                let file = format!("{}-{}.ours.relay", record.dir, record.stem);
                let _ = std::fs::write(dir.join(file), &ours);
            }
            self.misses.push(miss);
        }
    }

    /// A record that could not be read counts as a miss.
    pub fn add_unreadable(&mut self, message: String) {
        self.records += 1;
        self.misses.push(message);
    }

    /// No record was found although none was filtered out: the directory is
    /// missing or empty, which must not pass silently.
    pub fn found_nothing(&self) -> bool {
        self.records == 0 && std::env::var("RELAY_CORPUS_FILTER").is_err()
    }

    /// Records TVM gave a result for.
    pub fn expected_ok(&self) -> usize {
        self.records - self.errors_expected
    }

    /// Prints the counts and the misses.
    pub fn report(&self, dir: &str) {
        eprintln!(
            "{dir}: {} records; structure {}/{} ({} more differing only in the metadata \
             section); typed {}/{}; errors {}/{}",
            self.records,
            self.structure,
            self.expected_ok(),
            self.metadata_only,
            self.typed,
            self.typed_checked,
            self.errors_ok,
            self.errors_expected
        );
        for miss in &self.misses {
            eprintln!("  miss: {miss}");
        }
    }

    /// Every record matched TVM: structure, types where compared, errors.
    pub fn all_match(&self) -> bool {
        self.structure == self.expected_ok()
            && self.typed == self.typed_checked
            && self.errors_ok == self.errors_expected
    }
}

/// Records of the corpus this project does not cover yet, with the issue that
/// covers them: TVM's InferType on the operators still without a relation
/// here (`passes/InferType/2NNN`, whose metadata uses attrs types and TIR
/// nodes our tables do not describe yet: issue 17), and the results of passes
/// not implemented yet (issue 22). Corpus tests that assert every record
/// count these apart and say how many; the conformance scorer still scores
/// them. The metadata unit test in `src/meta/mod.rs` keeps the same list.
pub fn awaiting_coverage(path: &Path) -> Option<&'static str> {
    let mut parts = path
        .components()
        .rev()
        .map(|c| c.as_os_str().to_string_lossy());
    let file = parts.next()?;
    let pass = parts.next()?;
    let is_record_of = |name: &str| pass == name;
    if is_record_of("InferType") && file.starts_with('2') && file.as_bytes().get(4) == Some(&b'.') {
        return Some("issue 17 (operators without a relation)");
    }
    const NOT_YET: &[&str] = &[
        "BatchingOps",
        "DivToMul",
        "FakeQuantizationToInteger",
        "FirstOrderGradient",
        "LazyGradientInit",
        "MergeCompilerRegions",
        "PartialEvaluate",
        "PartitionGraph",
        "Pipeline-MergeCompilerRegions+PartitionGraph",
        "ToMixedPrecision",
    ];
    NOT_YET
        .iter()
        .any(|name| is_record_of(name))
        .then_some("issue 22 (passes not implemented yet)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strip_types_follows_the_regex() {
        assert_eq!(strip_types("%x /* ty=int32 */;"), "%x;");
        assert_eq!(strip_types("f(%x /* ty=fn (int32) -> int32 */)"), "f(%x)");
        assert_eq!(strip_types("/* ty=int32*/"), "/* ty=int32*/");
        assert_eq!(strip_types("a /* ty=A */ b /* ty=B */"), "a b");
        assert_eq!(strip_types("open /* ty=A"), "open /* ty=A");
    }

    #[test]
    fn normalize_ignores_trailing_white_space_only() {
        assert_eq!(normalize("a  \r\nb\t\n\n"), "a\nb");
        assert_ne!(normalize(" a"), normalize("a"));
    }

    #[test]
    fn compare_tells_structure_from_types_and_metadata() {
        assert_eq!(
            compare("f(%x /* ty=A */)", "f(%x /* ty=A */)", true),
            Comparison::Equal
        );
        assert!(matches!(
            compare("f(%x /* ty=A */)", "f(%x /* ty=B */)", true),
            Comparison::StructureOnly {
                types_compared: true,
                ..
            }
        ));
        assert!(matches!(
            compare("f\n#[metadata]\n1", "f\n#[metadata]\n2", true),
            Comparison::Different {
                metadata_only: true,
                ..
            }
        ));
        assert!(matches!(
            compare("f", "g", true),
            Comparison::Different {
                metadata_only: false,
                ..
            }
        ));
    }
}
