//! Hand-written Relay text shared by the tests that parse, re-parse and
//! analyse a module after random edits (`syntax/tests/parallel_parse.rs`,
//! `syntax/tests/reparse.rs`, `server/tests/incremental_analysis.rs`).

/// A small module with every kind of item and the traps around definition
/// boundaries. Each part is there for some test:
///
/// * an ADT and a recursive function matching on it, type parameters, a
///   convolution with attributes, `let`, a closure, `if`, a tuple
///   projection, a cast with a string attribute: most of the grammar, for
///   the edits to break;
/// * braces and `def` at the start of a line inside comments, and a `}` in a
///   line comment inside a body: text that looks like a definition's
///   boundary and is not (the parallel parse cuts before a `def` that
///   starts a line, the re-parse needs the `}` that ends a body);
/// * `@wrong`, whose body does not type-check, and a call of `@conv` with
///   arguments of the wrong type: diagnostics for the editor's analysis to
///   keep or drop.
pub const HANDWRITTEN_MODULE: &str = r#"#[version = "0.0.5"]
type List[A] {
  Cons(A, List[A]),
  Nil,
}

/* a comment { with braces }
def @not_a_definition() { 0 }
*/
def @id[T](%x: T) -> T {
  %x
}
// def @commented() {
def @length[A](%l: List[A]) -> int32 {
  match (%l) {
    Cons(_, %rest) => add(1, @length(%rest)),
    Nil => 0,
  }
}

def @conv(%data: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32]) {
  %0 = nn.conv2d(%data, %w, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]);
  %1 = nn.relu(%0); // trailing comment }
  let %f = fn (%y) { multiply(%y, 2f) };
  if (True) { %f(%1) } else { %1 }
}

def @wrong(%a: Tensor[(2, 3), float32], %b: Tensor[(4, 3), float32]) {
  %2 = add(%a, %b);
  %3 = @id(%2);
  %3
}

def @main(%a: float32, %b: float32) {
  let %t = (%a, %b);
  %4 = cast(%t.0, dtype="float16");
  %5 = @conv(%a, %a);
  @id(%4)
}
"#;
