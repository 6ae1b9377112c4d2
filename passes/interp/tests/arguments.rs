//! `check_argument` on values a run gave back, as an embedder (the Python
//! executor) passes them in again: an ADT value fits a parameter of its
//! type and not one of another type.

use relay_interp::{check_argument, param_type, run, Limits};

const MODULE: &str = r#"#[version = "0.0.5"]
type List[A] { Cons(A, List[A]), Nil }
type Box { MkBox(float32) }
def @main(%x: float32) -> List[float32] { Cons(%x, Nil) }
def @takes_list(%l: List[float32]) -> List[float32] { %l }
def @takes_box(%b: Box) -> Box { %b }
"#;

#[test]
fn an_adt_value_fits_a_parameter_of_its_type_only() {
    let (module, diagnostics) = relay_lower::parse_and_lower("adt.relay", MODULE);
    assert!(!diagnostics.has_errors(), "{diagnostics:?}");
    let (module, diagnostics) = relay_infer::infer_module(&module);
    assert!(!diagnostics.has_errors(), "{diagnostics:?}");
    let x = relay_interp::random_arguments(module.function("main").unwrap(), 0, Limits::default())
        .unwrap();
    let list = run(&module, "main", x, Limits::default()).unwrap();
    let list_type = param_type(module.function("takes_list").unwrap(), 0).unwrap();
    let box_type = param_type(module.function("takes_box").unwrap(), 0).unwrap();
    assert_eq!(check_argument(&list_type, &list), Ok(()));
    let error = check_argument(&box_type, &list).unwrap_err();
    assert_eq!(error, "an ADT value does not fit Box[]");
    // And back in: the list runs through @takes_list.
    let again = run(&module, "takes_list", vec![list], Limits::default()).unwrap();
    assert_eq!(again.skeleton(), "Cons(float32, Nil)");
}
