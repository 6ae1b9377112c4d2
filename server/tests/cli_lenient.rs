//! `--lenient` end to end, through the built binary: every file of
//! `test_data/lenient/` is one leniency (input). Without `--lenient`,
//! `relay check` rejects it (TVM's verdict); with it, `relay check` reports
//! the leniency's warnings and no error, and `relay print --lenient`
//! writes the module as TVM v0.13 prints it. One snapshot per file holds
//! the warnings and the printed result; `relay fmt --upgrade` writes text
//! that strict `relay check` accepts.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn relay() -> Command {
    Command::new(env!("CARGO_BIN_EXE_relay"))
}

fn text_of(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The codes of `relay check --format json FILE` (strict reading).
fn strict_check_codes(path: &Path) -> Vec<String> {
    let check = relay()
        .args(["check", "--format", "json"])
        .arg(path)
        .output()
        .unwrap();
    String::from_utf8_lossy(&check.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter_map(|d| d["code"].as_str().map(str::to_string))
        .collect()
}

/// Whether `codes` hold only what no upgrade can invent: a constant whose
/// value the text never had (E0112), an operator nobody declared (E0103)
/// and the unknown types after them (E0205).
fn only_what_no_upgrade_invents(codes: &[String]) -> bool {
    codes
        .iter()
        .all(|c| ["E0103", "E0112", "E0205"].contains(&c.as_str()))
}

fn cases() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/lenient");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "relay"))
        .collect();
    files.sort();
    files
}

/// The same text, with the directory of the case file left out of paths.
fn relative(text: &str, path: &Path) -> String {
    let dir = path.parent().unwrap().display().to_string();
    text.replace(&format!("{dir}/"), "")
}

#[test]
fn each_leniency_is_a_warning_and_prints_as_tvm() {
    let files = cases();
    assert!(files.len() >= 10, "{} cases", files.len());
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/lenient/snapshots"),
    );
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        for path in &files {
            let name = path.file_stem().unwrap().to_str().unwrap();
            // Strict: TVM's verdict (the span comments are TVM's own text
            // and only lack a header).
            let strict = relay()
                .args(["check", "--color", "never"])
                .arg(path)
                .output()
                .unwrap();
            assert_eq!(
                strict.status.code(),
                Some(1),
                "{name}: strict check accepts it"
            );

            let check = relay()
                .args(["check", "--lenient", "--color", "never"])
                .arg(path)
                .output()
                .unwrap();
            let warnings = relative(&text_of(&check), path);
            assert_eq!(check.status.code(), Some(0), "{name}: {warnings}");
            assert!(warnings.contains("warning["), "{name}: no warning");

            let print = relay()
                .args(["print", "--lenient"])
                .arg(path)
                .output()
                .unwrap();
            assert_eq!(print.status.code(), Some(0), "{name}: {}", text_of(&print));
            let printed = String::from_utf8_lossy(&print.stdout).to_string();

            // The printed text reads back leniently without error.
            let dir = std::env::temp_dir().join(format!("relay-lenient-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let again = dir.join(format!("{name}.relay"));
            std::fs::write(&again, &printed).unwrap();
            let reread = relay()
                .args(["check", "--lenient"])
                .arg(&again)
                .output()
                .unwrap();
            assert_eq!(
                reread.status.code(),
                Some(0),
                "{name}: {}",
                text_of(&reread)
            );

            insta::assert_snapshot!(
                name,
                format!(
                    "== relay check --lenient\n{warnings}\n== relay print --lenient\n{printed}"
                )
            );
        }
    });
}

#[test]
fn upgrade_writes_text_strict_mode_reads() {
    let dir = std::env::temp_dir().join(format!("relay-upgrade-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut upgraded = 0;
    for path in cases() {
        let name = path.file_name().unwrap();
        let copy = dir.join(name);
        std::fs::copy(&path, &copy).unwrap();
        let out = relay()
            .args(["fmt", "--upgrade"])
            .arg(&copy)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{name:?}: {}", text_of(&out));
        let text = std::fs::read_to_string(&copy).unwrap();
        assert!(text.starts_with("#[version = \"0.0.5\"]\n"), "{text}");
        // What no upgrade can invent stays as it was read: a constant whose
        // value the text never had (a reference without a section, E0112)
        // and an operator nobody declared (E0103); the unknown types after
        // them (E0205). Anything else must be clean 0.0.5 text.
        let codes = strict_check_codes(&copy);
        assert!(
            only_what_no_upgrade_invents(&codes),
            "{name:?}:\n{text}\n{codes:?}"
        );
        if codes.is_empty() {
            upgraded += 1;
        }
    }
    assert!(upgraded >= 8, "{upgraded}");
}

#[test]
fn relay_toml_lenient_reads_every_file_leniently() {
    let dir = std::env::temp_dir().join(format!("relay-lenient-toml-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("m.relay");
    std::fs::write(&file, "def @main(%a.b: float32) { %a.b }\n").unwrap();
    assert_eq!(
        relay()
            .arg("check")
            .arg(&file)
            .output()
            .unwrap()
            .status
            .code(),
        Some(1)
    );
    std::fs::write(dir.join("relay.toml"), "lenient = true\n").unwrap();
    let out = relay().arg("check").arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text_of(&out));
    assert!(
        text_of(&out).contains("warning[W0004]"),
        "{}",
        text_of(&out)
    );
}

/// `[ops.NAME]` in relay.toml: the declared operators are checked with
/// their attributes and type rules (no `--lenient` needed), and listed by
/// `relay ops`.
#[test]
fn declared_operators_are_checked_by_their_rules() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/lenient/declared");
    let model = dir.join("model.relay");
    let check = relay()
        .args(["check", "--color", "never"])
        .arg(&model)
        .output()
        .unwrap();
    assert_eq!(check.status.code(), Some(0), "{}", text_of(&check));
    let typed = relay()
        .args(["opt", "-p", "InferType"])
        .arg(&model)
        .output()
        .unwrap();
    assert_eq!(typed.status.code(), Some(0), "{}", text_of(&typed));
    let wrong = relay()
        .args(["check", "--color", "never"])
        .arg(dir.join("wrong.relay"))
        .output()
        .unwrap();
    assert_eq!(wrong.status.code(), Some(1));
    let ops = relay()
        .args(["ops", "vendor.gemm", "vendor.scale"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(ops.status.code(), Some(0), "{}", text_of(&ops));
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(dir.join("snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        insta::assert_snapshot!(
            "declared_operators",
            format!(
                "== relay opt -p InferType model.relay\n{}\n== relay check wrong.relay\n{}\n== relay ops vendor.gemm vendor.scale\n{}",
                String::from_utf8_lossy(&typed.stdout),
                relative(&text_of(&wrong), &dir.join("wrong.relay")),
                String::from_utf8_lossy(&ops.stdout)
            )
        );
    });
}

/// Every command that reads Relay text takes `--lenient`: a header-less file
/// with a frontend-style name is refused without it and read with it, with
/// the leniency's warning on standard error.
#[test]
fn every_command_that_reads_relay_text_takes_lenient() {
    let dir = std::env::temp_dir().join(format!("relay-lenient-commands-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("frontend.relay");
    std::fs::write(
        &file,
        "def @main(%input_tensor:0: Tensor[(2), float32]) {\n  add(%input_tensor:0, 1f)\n}\n",
    )
    .unwrap();
    let file = file.to_str().unwrap();
    let commands: &[&[&str]] = &[
        &["check", file],
        &["print", file],
        &["opt", file, "-p", "FoldConstant"],
        &["diff", file, file],
        &["run", file, "--random", "1"],
        &["graph", file, "--format", "dot"],
    ];
    for args in commands {
        let strict = relay().args(*args).output().unwrap();
        assert!(
            !strict.status.success(),
            "strict `relay {}` read a file TVM rejects:\n{}",
            args.join(" "),
            text_of(&strict)
        );
        let lenient = relay().args(*args).arg("--lenient").output().unwrap();
        let text = text_of(&lenient);
        assert!(
            lenient.status.success(),
            "`relay {} --lenient` failed:\n{text}",
            args.join(" ")
        );
        assert!(
            text.contains("warning[W0001]") && text.contains("warning[W0004]"),
            "`relay {} --lenient` did not report what it accepted:\n{text}",
            args.join(" ")
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The files of `test_data/upgrade/`: leniencies with comments everywhere
/// (before definitions, in bodies, trailing, in parameter and attribute
/// lists, around the metadata section). `refused_*` files cannot be
/// upgraded without losing or merging something.
fn upgrade_cases() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/upgrade");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "relay"))
        .collect();
    files.sort();
    files
}

/// The comments of a text, in order.
fn comments(text: &str) -> Vec<String> {
    relay_syntax::tokenize(text)
        .0
        .into_iter()
        .scan(0usize, |at, token| {
            let start = *at;
            *at += usize::from(token.len);
            Some((token.kind, &text[start..*at]))
        })
        .filter(|(kind, _)| {
            matches!(
                kind,
                relay_syntax::SyntaxKind::LINE_COMMENT | relay_syntax::SyntaxKind::BLOCK_COMMENT
            )
        })
        .map(|(_, text)| text.to_string())
        .collect()
}

/// `relay fmt --upgrade` keeps every comment where it was: only what the
/// lenient reading accepted is rewritten. The result reads strictly (what
/// no upgrade can write aside: a constant without its value, an
/// undeclared operator), means the module the lenient reading saw
/// (`relay diff --lenient` finds no difference), and is a fixed point. A
/// text the upgrade cannot rewrite is left unchanged, with the reason.
#[test]
fn upgrade_keeps_every_comment_in_place() {
    let files = upgrade_cases();
    assert!(files.len() >= 8, "{} cases", files.len());
    let dir = std::env::temp_dir().join(format!("relay-upgrade-comments-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/upgrade/snapshots"),
    );
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        for path in &files {
            let name = path.file_stem().unwrap().to_str().unwrap();
            let original = std::fs::read_to_string(path).unwrap();
            let copy = dir.join(path.file_name().unwrap());
            std::fs::write(&copy, &original).unwrap();
            let out = relay()
                .args(["fmt", "--upgrade"])
                .arg(&copy)
                .output()
                .unwrap();
            let report = relative(&text_of(&out), &copy);
            let upgraded = std::fs::read_to_string(&copy).unwrap();
            if name.starts_with("refused") {
                assert_eq!(out.status.code(), Some(1), "{name}: {report}");
                assert_eq!(upgraded, original, "{name}: changed");
                assert!(report.contains("error[E0114]"), "{name}: {report}");
                insta::assert_snapshot!(name, format!("== relay fmt --upgrade\n{report}"));
                continue;
            }
            assert_eq!(out.status.code(), Some(0), "{name}: {report}");
            assert_eq!(
                comments(&upgraded),
                comments(&original),
                "{name}:\n{upgraded}"
            );

            // Strict reading: clean 0.0.5 text, but for what the text never had.
            let codes = strict_check_codes(&copy);
            assert!(
                only_what_no_upgrade_invents(&codes),
                "{name}:\n{upgraded}\n{codes:?}"
            );

            // The module the lenient reading of the original means.
            let before = dir.join(format!("{name}.before.relay"));
            std::fs::write(&before, &original).unwrap();
            let diff = relay()
                // A constant without its value reads as a free variable
                // named after its reference: matched by that name.
                .args(["diff", "--lenient", "--free-vars-by-name"])
                .arg(&before)
                .arg(&copy)
                .output()
                .unwrap();
            assert_eq!(diff.status.code(), Some(0), "{name}: {}", text_of(&diff));

            // Upgrading again changes nothing.
            let again = relay()
                .args(["fmt", "--upgrade", "--check"])
                .arg(&copy)
                .output()
                .unwrap();
            assert_eq!(again.status.code(), Some(0), "{name}: {}", text_of(&again));

            insta::assert_snapshot!(
                name,
                format!("== relay fmt --upgrade\n{report}\n== upgraded\n{upgraded}")
            );
        }
    });
    std::fs::remove_dir_all(&dir).ok();
}

/// FuseOps groups a declared operator by its `pattern`: `vendor.gemm`
/// (OutEWiseFusable) takes the broadcast `vendor.scale` and the elementwise
/// `vendor.quantize` after it into one primitive function, while
/// `vendor.barrier` (Opaque) stays alone, so the `exp` and `negative` after
/// it form a group of their own.
#[test]
fn declared_operators_fuse_by_their_pattern() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/lenient/declared");
    let fused = relay()
        .args(["opt", "-p", "FuseOps", "--opt-level", "2"])
        .arg(dir.join("fusion.relay"))
        .output()
        .unwrap();
    assert_eq!(fused.status.code(), Some(0), "{}", text_of(&fused));
    let printed = String::from_utf8_lossy(&fused.stdout).to_string();
    // Where each declared operator ended up: the function that calls it.
    let functions: Vec<&str> = printed.split("fn (").skip(1).collect();
    let function_of = |op: &str| {
        functions
            .iter()
            .position(|f| f.contains(&format!("{op}(")))
            .unwrap_or_else(|| panic!("{op} not fused into a function:\n{printed}"))
    };
    let gemm = function_of("vendor.gemm");
    assert_eq!(function_of("vendor.scale"), gemm, "{printed}");
    assert_eq!(function_of("vendor.quantize"), gemm, "{printed}");
    let barrier = function_of("vendor.barrier");
    assert_ne!(barrier, gemm, "{printed}");
    assert!(!functions[barrier].contains("exp("), "{printed}");
    assert_eq!(function_of("exp"), function_of("negative"), "{printed}");
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(dir.join("snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        insta::assert_snapshot!(
            "declared_operators_fused",
            format!("== relay opt -p FuseOps fusion.relay\n{printed}")
        );
    });
}
