//! The hash against values TVM v0.13 and libstdc++ computed: type-key
//! hashes from `std::hash<std::string>` (g++ 64-bit), and the names TVM's
//! `LambdaLift` gave functions in the recorded conformance results.

use super::*;
use crate::build::op_call;
use crate::dtype::DataType;
use crate::{Expr, Function, FunctionData, Type, Var};

#[test]
fn std_string_hash_is_libstdcxx_hash_bytes() {
    // Printed by `std::hash<std::string>()(s)` compiled with g++ on x86-64.
    for (text, expected) in [
        ("relay.Var", 2952392025650599533u64),
        ("relay.Function", 16925305257434020351),
        ("Array", 1827759997084292481),
        ("", 6142509188972423790),
        ("a", 4993892634952068459),
        ("abcdefghi", 13036955925923793583),
    ] {
        assert_eq!(std_string_hash(text.as_bytes()), expected, "{text:?}");
    }
}

#[test]
fn stable_hash_bytes_folds_little_endian_words_modulo_2_31_minus_1() {
    assert_eq!(stable_hash_bytes(b""), 0);
    assert_eq!(stable_hash_bytes(b"a"), 97);
    // Two words: (0x6867666564636261 mod p) * m + 0x69, wrapping, mod p.
    let first = 0x6867_6665_6463_6261u64 % 2_147_483_647;
    let expected = first.wrapping_mul(1_099_511_628_211).wrapping_add(0x69) % 2_147_483_647;
    assert_eq!(stable_hash_bytes(b"abcdefghi"), expected);
}

fn tensor(shape: &[i64]) -> Type {
    Type::tensor(
        shape.iter().map(|&d| crate::Dim::int32(d)).collect(),
        DataType::FLOAT32,
    )
}

fn function(params: Vec<Var>, body: Expr, ret_type: Option<Type>) -> Expr {
    Function::new(
        FunctionData {
            params,
            body,
            ret_type,
            type_params: Vec::new(),
            attrs: Default::default(),
            virtual_device: None,
        },
        None,
    )
    .into_expr()
}

/// `test_pass_lambda_lift.py::test_basic`: TVM named the lifted
/// `fn (%x2: Tensor[(10, 5), float32], %y2: Tensor[(1, 5), float32])
/// -> Tensor[(10, 5), float32] { add(%x2, %y2) }` `@lifted_name11876598347756635241`.
#[test]
fn lifted_add_function_hashes_as_tvm_named_it() {
    let x = Var::new("x2", Some(tensor(&[10, 5])), None);
    let y = Var::new("y2", Some(tensor(&[1, 5])), None);
    let body = op_call("add", vec![x.expr().clone(), y.expr().clone()]);
    let func = function(vec![x, y], body, Some(tensor(&[10, 5])));
    assert_eq!(structural_hash(&func, false), Ok(11876598347756635241));
}

#[test]
fn names_of_bound_variables_do_not_matter_but_sharing_does() {
    let build = |name: &str, shared: bool| {
        let x = Var::new(name, Some(tensor(&[2])), None);
        let negative = op_call("negative", vec![x.expr().clone()]);
        let second = if shared {
            negative.clone()
        } else {
            op_call("negative", vec![x.expr().clone()])
        };
        function(vec![x], op_call("add", vec![negative, second]), None)
    };
    let hash = |e: &Expr| structural_hash(e, false).unwrap();
    assert_eq!(hash(&build("a", true)), hash(&build("b", true)));
    assert_ne!(hash(&build("a", true)), hash(&build("a", false)));
}
