//! Printed text that lowering reads back: tests that need the parser, so
//! they live outside `relay-ir` (which does not depend on `relay-lower`).

use relay_ir::printer::{print_module, PrintOptions};

/// A `match` or `let` bound by a `let` or to `%N` is printed in parentheses
/// (TVM prints it bare, which neither its parser nor ours reads back); the
/// printed text reads back to an equal module.
#[test]
fn match_and_let_values_of_bindings_read_back() {
    let src = "#[version = \"0.0.5\"]
type Opt[A] {
  Some(A),
  None,
}

def @main(%o: Opt[int32]) {
  let %a = (match (%o) {
    Some(%y) => %y,
    None => 0,
  });
  %0 = (match? (%o) {
    _ => 1,
  });
  let %b = (let %c = 2; %c);
  (%a, %0, %0, %b)
}
";
    let (module, diagnostics) = relay_lower::parse_and_lower("in", src);
    assert!(!diagnostics.has_errors(), "{:?}", diagnostics.iter().next());
    let printed = print_module(&module, &PrintOptions::default());
    assert!(printed.contains("let %a = (match (%o) {"), "{printed}");
    assert!(printed.contains("%0 = (match? (%o) {"), "{printed}");
    assert!(printed.contains("let %b = (\n"), "{printed}");
    let (reread, diagnostics) = relay_lower::parse_and_lower("printed", &printed);
    assert!(
        !diagnostics.has_errors(),
        "{printed}\n{:?}",
        diagnostics.iter().next()
    );
    assert_eq!(
        relay_ir::equal::module_first_difference(&module, &reread, false),
        None
    );
}
