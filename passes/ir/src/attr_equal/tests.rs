//! Each option of attribute equality, with the float edge cases that tell
//! the variants apart.

use super::*;
use crate::dtype::DataType;
use crate::Var;

const TVM: AttrEquality = AttrEquality::TVM_PASSES;
const REPR: AttrEquality = AttrEquality::representation(false);

/// A quiet NaN with a payload other than the default one.
fn other_nan() -> f64 {
    let nan = f64::from_bits(f64::NAN.to_bits() | 1);
    assert!(nan.is_nan() && nan.to_bits() != f64::NAN.to_bits());
    nan
}

fn clip(a_min: f64) -> Attrs {
    Attrs::new(
        "relay.attrs.ClipAttrs",
        vec![
            ("a_min".into(), AttrValue::Double(a_min)),
            ("a_max".into(), AttrValue::Double(6.0)),
        ],
    )
}

#[test]
fn nan_equals_nan_only_under_the_representation_rule() {
    for (x, y) in [(f64::NAN, f64::NAN), (f64::NAN, other_nan())] {
        assert!(!floats_equal(x, y, NanRule::NeverEqual));
        assert!(floats_equal(x, y, NanRule::EqualsNaN));
    }
    for rule in [NanRule::NeverEqual, NanRule::EqualsNaN] {
        assert!(!floats_equal(f64::NAN, 1.0, rule));
        assert!(!floats_equal(0.0, f64::NAN, rule));
    }
}

#[test]
fn signed_zeros_and_infinities_compare_as_ieee_equality_says() {
    for rule in [NanRule::NeverEqual, NanRule::EqualsNaN] {
        assert!(floats_equal(-0.0, 0.0, rule));
        assert!(floats_equal(f64::INFINITY, f64::INFINITY, rule));
        assert!(!floats_equal(f64::INFINITY, f64::NEG_INFINITY, rule));
        assert!(!floats_equal(f64::INFINITY, f64::MAX, rule));
    }
}

#[test]
fn the_tolerance_is_absolute_and_one_billionth() {
    for rule in [NanRule::NeverEqual, NanRule::EqualsNaN] {
        assert!(floats_equal(1.0, 1.0 + 1e-12, rule));
        assert!(floats_equal(1e-10, 2e-10, rule));
        assert!(floats_equal(0.5, 0.5 + 0.9 * FLOAT_TOLERANCE, rule));
        assert!(!floats_equal(0.5, 0.5 + 2.0 * FLOAT_TOLERANCE, rule));
        assert!(!floats_equal(1.0, 1.0 + 1e-6, rule));
        // Large values differ by far more than the tolerance per step.
        let next = f64::from_bits(1e20_f64.to_bits() + 1);
        assert!(!floats_equal(1e20, next, rule));
    }
}

#[test]
fn float_immediates_follow_the_rule_and_compare_their_dtype() {
    let imm = |value: f64, dtype| AttrValue::FloatImm { value, dtype };
    let nan32 = imm(f64::NAN, DataType::FLOAT32);
    assert!(!values_equal(&nan32, &nan32.clone(), TVM));
    assert!(values_equal(&nan32, &nan32.clone(), REPR));
    assert!(values_equal(
        &imm(1.0, DataType::FLOAT32),
        &imm(1.0 + 1e-12, DataType::FLOAT32),
        TVM
    ));
    assert!(!values_equal(
        &imm(1.0, DataType::FLOAT32),
        &imm(1.0, DataType::float(64)),
        REPR
    ));
}

#[test]
fn one_object_holding_nan_differs_from_itself_under_tvm_v0_13() {
    let attrs = clip(f64::NAN);
    assert!(!attrs_equal(Some(&attrs), Some(&attrs), TVM));
    assert!(attrs_equal(Some(&attrs), Some(&attrs), REPR));
    let copy = clip(f64::NAN);
    assert!(!attrs_equal(Some(&attrs), Some(&copy), TVM));
    assert!(attrs_equal(Some(&attrs), Some(&copy), REPR));
    assert_eq!(
        attrs_difference(Some(&attrs), Some(&copy), TVM).as_deref(),
        Some("attribute a_min: NaNf vs NaNf")
    );
}

#[test]
fn absent_attributes_equal_only_absent_ones() {
    let attrs = clip(0.0);
    assert!(attrs_equal(None, None, TVM));
    assert!(!attrs_equal(Some(&attrs), None, TVM));
    assert_eq!(
        attrs_difference(None, Some(&attrs), REPR).as_deref(),
        Some("attributes: none vs relay.attrs.ClipAttrs")
    );
}

#[test]
fn fields_that_do_not_line_up_are_matched_by_name() {
    let a = clip(0.0);
    let swapped = Attrs::new(
        "relay.attrs.ClipAttrs",
        vec![
            ("a_max".into(), AttrValue::Double(6.0)),
            ("a_min".into(), AttrValue::Double(-0.0)),
        ],
    );
    assert!(attrs_equal(Some(&a), Some(&swapped), TVM));
    let fewer = Attrs::new(
        "relay.attrs.ClipAttrs",
        vec![("a_max".into(), AttrValue::Double(6.0))],
    );
    assert_eq!(
        attrs_difference(Some(&fewer), Some(&a), TVM).as_deref(),
        Some("attribute a_min: missing vs 0f")
    );
    let other_type = Attrs::new("relay.attrs.LeakyReluAttrs", vec![]);
    assert_eq!(
        attrs_difference(Some(&a), Some(&other_type), TVM).as_deref(),
        Some("attributes type: relay.attrs.ClipAttrs vs relay.attrs.LeakyReluAttrs")
    );
}

#[test]
fn maps_compare_by_key_and_arrays_in_order() {
    let map = |entries: &[(&str, i64)]| {
        AttrValue::Map(
            entries
                .iter()
                .map(|(k, v)| (k.to_string(), AttrValue::Int(*v)))
                .collect(),
        )
    };
    assert!(values_equal(
        &map(&[("a", 1), ("b", 2)]),
        &map(&[("b", 2), ("a", 1)]),
        TVM
    ));
    assert!(!values_equal(
        &map(&[("a", 1), ("b", 2)]),
        &map(&[("b", 1), ("a", 2)]),
        TVM
    ));
    assert!(!values_equal(
        &map(&[("a", 1)]),
        &map(&[("a", 1), ("b", 2)]),
        TVM
    ));
    let array =
        |items: &[i64]| AttrValue::Array(items.iter().map(|i| AttrValue::Int(*i)).collect());
    assert!(values_equal(&array(&[1, 2]), &array(&[1, 2]), TVM));
    assert!(!values_equal(&array(&[1, 2]), &array(&[2, 1]), TVM));
}

#[test]
fn function_attributes_compare_by_key_under_the_rule() {
    let dict = |entries: Vec<(&str, AttrValue)>| {
        DictAttrs::new(
            entries
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        )
    };
    let a = dict(vec![
        ("Primitive", AttrValue::Int(1)),
        ("x", AttrValue::Double(f64::NAN)),
    ]);
    let b = dict(vec![
        ("x", AttrValue::Double(f64::NAN)),
        ("Primitive", AttrValue::Int(1)),
    ]);
    assert!(dict_attrs_equal(&a, &b, REPR));
    assert!(!dict_attrs_equal(&a, &b, TVM));
    let c = dict(vec![("Primitive", AttrValue::Int(1))]);
    assert_eq!(
        dict_attrs_difference(&c, &a, REPR).as_deref(),
        Some("function attribute x: missing vs NaNf")
    );
}

#[test]
fn free_variables_in_expression_attributes_map_by_name_only_when_asked() {
    let x1 = AttrValue::Expr(Var::new("x", None, None).expr().clone());
    let x2 = AttrValue::Expr(Var::new("x", None, None).expr().clone());
    assert!(values_equal(&x1, &x1.clone(), TVM));
    assert!(!values_equal(&x1, &x2, TVM));
    assert!(!values_equal(&x1, &x2, AttrEquality::representation(false)));
    assert!(values_equal(&x1, &x2, AttrEquality::representation(true)));
    let mapped_but_nan_unequal = AttrEquality {
        nan: NanRule::NeverEqual,
        map_free_vars: true,
    };
    assert!(values_equal(&x1, &x2, mapped_but_nan_unequal));
}
