//! The editor's lowering (`lower_incrementally`) shares equal call
//! attributes and equal tensor annotations between calls and definitions,
//! also after an edit lowers one definition again; every other lowering
//! makes one object per occurrence, as TVM's parser does.

use relay_ir::source::FileId;
use relay_ir::{Attrs, Expr, IRModule, Type};
use relay_lower::{lower_incrementally, lower_module_with, IncrementalLowering, LowerOptions};
use relay_syntax::{reparse_module_with, Parse, Reparsed, TextEdit};

/// `count` definitions, each with three equal convolutions and one other;
/// `filler` comment lines per definition make the text large enough for
/// the parallel lowering.
fn module(count: usize, filler: usize) -> String {
    let mut text = String::from("#[version = \"0.0.5\"]\n");
    for i in 0..count {
        text.push_str(&format!(
            "def @f{i}(%x: Tensor[(1, 8, 16, 16), float32], %w: Tensor[(8, 8, 3, 3), float32]) {{\n"
        ));
        for _ in 0..filler {
            text.push_str("  // a line of comment to make the definition larger than it is\n");
        }
        // Graph binding numbers belong to the whole file: each definition
        // has its own.
        let n = i * 10;
        let conv = "padding=[1, 1, 1, 1], channels=8, kernel_size=[3, 3]";
        text.push_str(&format!("  %{n} = nn.conv2d(%x, %w, {conv});\n"));
        text.push_str(&format!("  %{} = nn.conv2d(%{n}, %w, {conv});\n", n + 1));
        text.push_str(&format!(
            "  %{} = nn.conv2d(%{}, %w, padding=[1i64, 1, 1, 1], channels=8, kernel_size=[3, 3]);\n",
            n + 2,
            n + 1
        ));
        text.push_str(&format!("  nn.conv2d(%{}, %w, {conv})\n}}\n\n", n + 2));
    }
    text
}

fn parse(text: &str) -> Parse {
    relay_syntax::parse_with(
        text,
        relay_syntax::Entry::Module,
        LowerOptions::LENIENT.parse_options(),
    )
}

/// The attrs of the calls of `@f{i}`, from the first to the last.
fn call_attrs(module: &IRModule, i: usize) -> Vec<Attrs> {
    let function = module.function(&format!("f{i}")).expect("the function");
    let mut out = Vec::new();
    let mut next: Option<Expr> = Some(function.body().clone());
    while let Some(expr) = next.take() {
        if let Some(call) = expr.as_call() {
            out.push(call.attrs.clone().expect("conv2d attributes"));
            next = call.args.first().cloned();
        }
    }
    out.reverse();
    out
}

/// The annotations of the parameters of `@f{i}`.
fn annotations(module: &IRModule, i: usize) -> Vec<Type> {
    let function = module.function(&format!("f{i}")).expect("the function");
    function
        .params()
        .iter()
        .map(|p| p.type_annotation().expect("annotated").clone())
        .collect()
}

/// Checks what the editor's lowering shares in a module of `count`
/// definitions.
fn assert_shared(module: &IRModule, count: usize) {
    let first = call_attrs(module, 0);
    assert_eq!(first.len(), 4);
    assert!(first[0].ptr_eq(&first[1]) && first[0].ptr_eq(&first[3]));
    // `1i64` is another IntImm dtype: other content.
    assert!(!first[0].ptr_eq(&first[2]));
    let params = annotations(module, 0);
    for i in 1..count {
        let attrs = call_attrs(module, i);
        for (a, b) in attrs.iter().zip(&first) {
            assert!(a.ptr_eq(b), "the attrs of @f{i} are the ones of @f0");
        }
        for (a, b) in annotations(module, i).iter().zip(&params) {
            assert!(a.ptr_eq(b), "the annotations of @f{i} are the ones of @f0");
        }
    }
}

/// Checks that a module lowered as TVM's parser reads has one object per
/// occurrence.
fn assert_not_shared(module: &IRModule) {
    let first = call_attrs(module, 0);
    assert!(!first[0].ptr_eq(&first[1]));
    assert!(!call_attrs(module, 1)[0].ptr_eq(&first[0]));
    assert!(!annotations(module, 1)[0].ptr_eq(&annotations(module, 0)[0]));
}

fn shares_in_the_editor_only(count: usize, filler: usize) {
    let text = module(count, filler);
    let parsed = parse(&text);
    let root = parsed.source_file().expect("a module");
    let whole = lower_module_with(FileId(0), &root, LowerOptions::LENIENT);
    assert!(whole.diagnostics.is_empty(), "{:?}", whole.diagnostics);
    assert_not_shared(&whole.module);

    let mut kept = IncrementalLowering::new();
    let (lowered, _) = lower_incrementally(FileId(0), &parsed, LowerOptions::LENIENT, &mut kept)
        .expect("a lowering");
    assert!(lowered.diagnostics.is_empty(), "{:?}", lowered.diagnostics);
    assert_shared(&lowered.module, count);

    // A space inside `@f0`: only it is lowered again, and its new calls
    // and annotations are the objects the others hold.
    let at = text.find("  %0 = ").expect("a binding");
    let mut edited = text.clone();
    edited.insert(at, ' ');
    let edit = TextEdit::between(&text, &edited).expect("an edit");
    let (reparsed, how) = reparse_module_with(
        &parsed,
        edit,
        &edited,
        LowerOptions::LENIENT.parse_options(),
    );
    assert!(matches!(how, Reparsed::Item { .. }), "{how:?}");
    let (relowered, _) =
        lower_incrementally(FileId(0), &reparsed, LowerOptions::LENIENT, &mut kept)
            .expect("a lowering");
    assert_eq!(kept.last_relowered(), Some(1));
    assert_shared(&relowered.module, count);
}

#[test]
fn a_small_module_lowered_in_order() {
    shares_in_the_editor_only(3, 0);
}

#[test]
fn a_large_module_lowered_in_parallel() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("a pool of two threads");
    // 40 definitions of over 2 KB: more than the 64 KB that make the
    // lowering parallel.
    pool.install(|| shares_in_the_editor_only(40, 30));
}
