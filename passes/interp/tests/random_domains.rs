//! Random arguments in the domains the uses of a parameter require: the
//! constrained parameters get values with the property, every other
//! parameter exactly the values drawn from its type alone (the values
//! recorded by earlier runs stay valid).

use relay_interp::input_domains::Domain;
use relay_interp::random::{random_tensor, SplitMix64};
use relay_interp::{bind_arguments, random_arguments, Limits, Value};
use relay_ir::dtype::DataType;

const MODULE: &str = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(1, 3, 2, 2), float32], %gamma: Tensor[(3), float32],
          %beta: Tensor[(3), float32], %mean: Tensor[(3), float32],
          %var: Tensor[(3), float32], %e: float32, %i: Tensor[(4), int32],
          %y: Tensor[(2, 2), float16]) {
  %0 = nn.batch_norm(%x, %gamma, %beta, %mean, %var);
  %1 = %0.0;
  %2 = mean(%1, axis=[1], keepdims=True);
  %3 = subtract(%1, %2);
  %4 = power(%3, %e);
  (sqrt(%4), %i, %y)
}
"#;

fn main_function() -> relay_ir::IRModule {
    let (module, diagnostics) = relay_lower::parse_and_lower("domains.relay", MODULE);
    assert!(!diagnostics.has_errors(), "{diagnostics:?}");
    let (module, diagnostics) = relay_infer::infer_module(&module);
    assert!(!diagnostics.has_errors(), "{diagnostics:?}");
    module
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_tensor().unwrap().to_f64_vec().unwrap()
}

#[test]
fn parameters_without_a_domain_get_the_values_of_their_type_alone() {
    let module = main_function();
    let function = module.function("main").unwrap();
    for seed in [0, 1, 17] {
        let args = random_arguments(function, seed, Limits::default()).unwrap();
        // The draw from types alone, parameter after parameter.
        let mut rng = SplitMix64::new(seed);
        let shapes: [(&str, &[i64]); 8] = [
            ("float32", &[1, 3, 2, 2]),
            ("float32", &[3]),
            ("float32", &[3]),
            ("float32", &[3]),
            ("float32", &[3]),
            ("float32", &[]),
            ("int32", &[4]),
            ("float16", &[2, 2]),
        ];
        let uniform: Vec<_> = shapes
            .iter()
            .map(|(dtype, shape)| {
                let dtype = DataType::parse(dtype).unwrap();
                random_tensor(&mut rng, dtype, shape, Domain::Any, 1 << 20).unwrap()
            })
            .collect();
        for (i, expected) in uniform.iter().enumerate() {
            let got = args[i].as_tensor().unwrap();
            match i {
                // %var: positive, the image of the same draw.
                4 => {
                    let u = expected.to_f64_vec().unwrap();
                    let v = got.to_f64_vec().unwrap();
                    for (u, v) in u.iter().zip(&v) {
                        assert!(*v > 0.0, "seed {seed}: {v}");
                        assert!((v - (1.0 + u / 2.0)).abs() < 1e-6, "seed {seed}: {u} {v}");
                    }
                }
                // %e: exactly 2.
                5 => {
                    let e = got.to_f64_vec().unwrap()[0];
                    assert_eq!(e, 2.0, "seed {seed}");
                }
                _ => assert_eq!(got.data, expected.data, "seed {seed}, parameter {i}"),
            }
        }
    }
}

#[test]
fn bind_arguments_draws_the_same_domains_around_given_inputs() {
    let module = main_function();
    let function = module.function("main").unwrap();
    let all = random_arguments(function, 3, Limits::default()).unwrap();
    let bound = bind_arguments(function, &[], Some(3), Limits::default()).unwrap();
    assert_eq!(floats(&all[4]), floats(&bound[4]));
    // A given %x (here a value of its own, not the one it would draw)
    // takes its place in the stream: every other parameter keeps its value.
    let other_x = bind_arguments(function, &[], Some(4), Limits::default()).unwrap();
    assert_ne!(floats(&other_x[0]), floats(&all[0]));
    let given = vec![("x".to_string(), other_x[0].clone())];
    let with_x = bind_arguments(function, &given, Some(3), Limits::default()).unwrap();
    assert_eq!(floats(&with_x[0]), floats(&other_x[0]));
    for i in 1..all.len() {
        assert_eq!(floats(&with_x[i]), floats(&all[i]), "parameter {i}");
    }
}

#[test]
fn the_result_is_finite_in_the_domains() {
    let module = main_function();
    let function = module.function("main").unwrap();
    for seed in 0..4 {
        let args = random_arguments(function, seed, Limits::default()).unwrap();
        let result = relay_interp::run(&module, "main", args, Limits::default()).unwrap();
        let Value::Tuple(fields) = result else {
            panic!("not a tuple")
        };
        assert!(
            floats(&fields[0]).iter().all(|v| v.is_finite()),
            "seed {seed}"
        );
    }
}
