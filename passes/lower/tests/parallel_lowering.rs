//! A whole lowering of a large module lowers its definitions on several
//! threads when they share nothing (`lower_incrementally`); the result
//! must be the one lowering them in order gives (`lower_module_with`): the
//! same module, diagnostics and name index, also when a definition does
//! share something (a graph binding of another, a number defined twice, an
//! undeclared local) and the lowering falls back to the order of the text.

use relay_ir::printer::{print_module, PrintOptions};
use relay_ir::source::FileId;
use relay_lower::{lower_incrementally, lower_module_with, IncrementalLowering, LowerOptions};

/// `count` definitions, each with graph bindings numbered from `first(i)`,
/// lets and calls; the text is over the size that makes lowering parallel.
fn module(
    count: usize,
    first: impl Fn(usize) -> usize,
    body_extra: impl Fn(usize) -> String,
) -> String {
    let mut text = String::from("#[version = \"0.0.5\"]\ntype Pair[A] {\n  MkPair(A, A),\n}\n\n");
    for i in 0..count {
        let n = first(i);
        text.push_str(&format!(
            "def @f{i}(%x: Tensor[(1, 8), float32], %w: Tensor[(8, 8), float32]) -> Tensor[(1, 8), float32] {{\n"
        ));
        text.push_str(&format!("  %{n} = nn.dense(%x, %w, units=8);\n"));
        for k in 1..30 {
            text.push_str(&format!("  %{} = nn.relu(%{});\n", n + k, n + k - 1));
        }
        text.push_str(&format!("  let %y = add(%{}, %x);\n", n + 29));
        text.push_str(&body_extra(i));
        text.push_str("  %y\n}\n\n");
    }
    text
}

/// The module, diagnostics and names of a lowering, in comparable form.
fn describe(lowered: &relay_lower::Lowered) -> (String, Vec<String>, Vec<String>) {
    let names = &lowered.names;
    (
        print_module(&lowered.module, &PrintOptions::default()),
        lowered
            .diagnostics
            .iter()
            .map(|d| format!("{d:?}"))
            .collect(),
        names
            .definitions()
            .map(|(id, d)| format!("{d:?} {:?}", names.references(id)))
            .collect(),
    )
}

fn assert_parallel_equals_in_order(text: &str) {
    assert!(
        text.len() > 64 * 1024,
        "{} bytes: too small to go parallel",
        text.len()
    );
    let parse = relay_syntax::parse_with(
        text,
        relay_syntax::Entry::Module,
        LowerOptions::LENIENT.parse_options(),
    );
    let root = parse.source_file().expect("a module");
    let in_order = lower_module_with(FileId(0), &root, LowerOptions::LENIENT);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("a pool of two threads");
    let (parallel, _spans) = pool
        .install(|| {
            lower_incrementally(
                FileId(0),
                &parse,
                LowerOptions::LENIENT,
                &mut IncrementalLowering::new(),
            )
        })
        .expect("a lowering");
    let (module, diagnostics, names) = describe(&parallel);
    let (module_in_order, diagnostics_in_order, names_in_order) = describe(&in_order);
    assert_eq!(diagnostics, diagnostics_in_order);
    assert_eq!(names, names_in_order);
    assert_eq!(module, module_in_order);
}

#[test]
fn definitions_that_share_nothing() {
    assert_parallel_equals_in_order(&module(100, |i| i * 100, |_| String::new()));
}

#[test]
fn a_definition_that_reads_another_ones_graph_binding() {
    assert_parallel_equals_in_order(&module(
        100,
        |i| i * 100,
        |i| {
            if i == 40 {
                // %7 is the first definition's.
                "  let %z = add(%7, %x);\n".to_string()
            } else {
                String::new()
            }
        },
    ));
}

#[test]
fn definitions_that_number_their_bindings_alike() {
    // Every definition defines %0…%29: in one parse they are one set of
    // numbers (TVM keeps the first definition).
    assert_parallel_equals_in_order(&module(100, |_| 0, |_| String::new()));
}

#[test]
fn a_definition_with_an_undeclared_local() {
    assert_parallel_equals_in_order(&module(
        100,
        |i| i * 100,
        |i| {
            if i == 7 {
                "  let %z = add(%nowhere, %x);\n".to_string()
            } else {
                String::new()
            }
        },
    ));
}

#[test]
fn definitions_with_errors_of_their_own() {
    assert_parallel_equals_in_order(&module(
        100,
        |i| i * 100,
        |i| {
            if i % 9 == 0 {
                "  let %z = nn.relu(%x, bad_attr=1);\n  let %q = add(%x);\n".to_string()
            } else {
                String::new()
            }
        },
    ));
}
