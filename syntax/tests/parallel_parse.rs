//! The parallel parse of a module's definitions gives exactly what the
//! sequential parse gives — the same green tree, errors and leniencies — on
//! the shared TVM models, the repository's examples, the generated 10 MB
//! module, and garbled modules (random insertions of braces, quotes,
//! comment openers, `def`, `#[metadata]`, `extern type`, and random
//! deletions). The threshold is lowered to 0 so that every text is tried
//! in parallel; `usize::MAX` forces the sequential parse.

use relay_syntax::{parse_with_parallel_threshold, Entry, Parse, ParseOptions};
use relay_test_support::edits::{floor_char_boundary, random_offset};
use relay_test_support::fixtures::HANDWRITTEN_MODULE as HANDWRITTEN;
use relay_test_support::generate::resnet_module_of_size;
use relay_test_support::rng::Rng;
use relay_test_support::{files, tvm};

fn parse(text: &str, options: ParseOptions, threshold: usize) -> Parse {
    parse_with_parallel_threshold(text, Entry::Module, options, threshold)
}

fn assert_same(text: &str, what: &str) {
    for options in [ParseOptions::STRICT, ParseOptions::LENIENT] {
        let sequential = parse(text, options, usize::MAX);
        let parallel = parse(text, options, 0);
        assert_eq!(
            parallel.debug_dump(),
            sequential.debug_dump(),
            "{what} ({options:?}): tree or errors differ"
        );
        assert_eq!(
            parallel.leniencies(),
            sequential.leniencies(),
            "{what} ({options:?}): leniencies differ"
        );
        assert_eq!(parallel, sequential, "{what} ({options:?})");
    }
}

const METADATA: &str = r#"
#[metadata]
{
  "root": 1,
  "nodes": [{"type_key": ""}],
  "b64ndarrays": [],
  "attrs": {"tvm_version": "0.13.0"}
}
"#;

#[test]
fn the_shared_models_parse_the_same_in_parallel() {
    let Some(root) = tvm::root_or_skip("the_shared_models_parse_the_same_in_parallel") else {
        return;
    };
    let models = files::sorted_files(&root.join("models"), ".relay");
    assert!(!models.is_empty(), "no models in {}", root.display());
    for path in models {
        let text = files::read_lossy(&path);
        assert_same(&text, &path.display().to_string());
    }
}

#[test]
fn the_examples_parse_the_same_in_parallel() {
    let examples = tvm::workspace_root().join("examples");
    let mut seen = 0;
    for dir in files::sorted_entries(&examples) {
        for path in files::sorted_files(&dir, ".relay") {
            assert_same(&files::read_lossy(&path), &path.display().to_string());
            seen += 1;
        }
    }
    for path in files::sorted_files(&examples, ".relay") {
        assert_same(&files::read_lossy(&path), &path.display().to_string());
        seen += 1;
    }
    assert!(seen > 0, "no examples in {}", examples.display());
}

#[test]
fn the_generated_10_mb_module_parses_the_same_in_parallel() {
    let text = resnet_module_of_size(10 << 20);
    let sequential = parse(&text, ParseOptions::STRICT, usize::MAX);
    // The default threshold: a 10 MB module is parsed in parallel.
    let parallel = relay_syntax::parse_module(&text);
    assert_eq!(parallel, sequential);
    assert!(parallel.errors().is_empty());
}

#[test]
fn handwritten_modules_with_metadata_parse_the_same_in_parallel() {
    assert_same(HANDWRITTEN, "handwritten");
    assert_same(&format!("{HANDWRITTEN}{METADATA}"), "with metadata");
    assert_same(
        &format!("{HANDWRITTEN}{METADATA}\ndef @after() {{ 1 }}\n"),
        "a definition after the metadata",
    );
    assert_same(
        &format!("{HANDWRITTEN}extern type Storage\n{HANDWRITTEN}"),
        "extern type between definitions",
    );
    assert_same(
        &HANDWRITTEN.replace("#[version = \"0.0.5\"]", ""),
        "no header",
    );
    assert_same(
        &HANDWRITTEN.replace("#[version = \"0.0.5\"]", "#[version = \"0.0.4\"]"),
        "another version",
    );
}

/// Pieces of text that move definition boundaries or break tokens. Not
/// `tests/reparse.rs`'s snippets: these aim at where the text is cut (line
/// starts, `def`, `#[metadata]`, `extern type`).
const INSERTIONS: &[&str] = &[
    "{",
    "}",
    "(",
    ")",
    "\"",
    "/*",
    "*/",
    "//",
    "\n",
    "def",
    "\ndef",
    "\ndef ",
    "\ndef @x() { 1 }\n",
    "\ndef @x() {\n",
    "#[metadata]",
    "\n#[metadata]\n",
    "#[",
    "\nextern type T\n",
    "\ntype U { C }\n",
    "%x",
    "garbage ",
];

#[test]
fn garbled_modules_parse_the_same_in_parallel() {
    let bases = [
        format!("{HANDWRITTEN}{HANDWRITTEN}{METADATA}"),
        resnet_module_of_size(24 << 10),
    ];
    for (b, base) in bases.iter().enumerate() {
        for seed in 0..150u64 {
            let mut rng = Rng(seed * 7919 + b as u64);
            let mut text = base.clone();
            for step in 0..1 + rng.below(3) {
                let at = random_offset(&mut rng, &text);
                if rng.below(3) == 0 {
                    let end = floor_char_boundary(&text, at + 1 + rng.below(20));
                    text.replace_range(at..end, "");
                } else {
                    text.insert_str(at, INSERTIONS[rng.below(INSERTIONS.len())]);
                }
                assert_same(&text, &format!("base {b}, seed {seed}, step {step}"));
            }
        }
    }
}
