//! A reference interpreter of Relay programs — TVM's `debug` executor
//! (`relay.create_executor("debug")`, `src/relay/backend/interpreter.cc`) —
//! and the semantic check of passes built on it.
//!
//! # Semantics
//!
//! * Operator calls run relay-eval's kernel of the operator on whole
//!   tensors ([`relay_eval::run_call`]: FoldConstant's kernels, and those of
//!   operators TVM's executors run after their `Legalize`/`SimplifyInference`
//!   prefix, `nn.dropout` and `nn.conv2d_backward_weight`, and `shape_of`/`ndarray_size` from the
//!   run-time tensor); an operator without a kernel, or
//!   a kernel that refuses its inputs, is a [`RuntimeError`] naming the
//!   operator. The shape of a result whose type has `?` dimensions is what
//!   the kernel computes (the kernels are the shape functions); a result
//!   that contradicts a known dimension of the call's type is an error.
//! * Global functions, closures (capturing their defining frame),
//!   recursion (global, and local through a `let`-bound function, TVM's
//!   `RecClosure`), `let`, `if` (on a boolean scalar), tuples, ADT
//!   constructors and `match` (first fitting clause; none is an error),
//!   references (`ref`, `ref_read`, `ref_write`, which returns `()`), and
//!   fused `Primitive` functions, which are called as any function.
//! * A graph binding used several times is evaluated once per activation.
//! * Deterministic: no threads, no hashing of addresses into the results.
//! * Deep programs: the native stack grows on the heap, and nesting deeper
//!   than [`Limits::max_depth`] is an error; a `let` chain costs no depth.
//!
//! [`check`] is the semantic check of a pipeline as a pass instrument.

pub mod bind;
pub mod check;
pub mod compare;
pub mod contract;
mod env;
mod error;
pub mod gradient_check;
pub mod input_domains;
mod interp;
pub mod npy;
pub mod npz;
pub mod output_cache;
mod pattern;
pub mod print;
pub mod random;
pub mod range_effects;
pub mod sensitivity;
pub mod summary;
#[cfg(test)]
mod test_util;
mod value;

pub use error::{RunResult, RuntimeError};
pub use interp::{Interpreter, Limits};
pub use value::{AdtValue, Closure, Leaf, Value};

use relay_ir::{Function, IRModule, Type};

/// The type of a parameter: its annotation, or what inference found.
pub fn param_type(function: &Function, index: usize) -> Option<Type> {
    let param = function.params().get(index)?;
    param
        .expr()
        .checked_type()
        .cloned()
        .or_else(|| param.type_annotation().cloned())
}

/// Seeded random arguments for every parameter of `function` (see
/// [`random`] for the ranges, [`input_domains`] for the parameters whose
/// uses narrow them): [`bind_arguments`] with no input given.
pub fn random_arguments(
    function: &Function,
    seed: u64,
    limits: Limits,
) -> Result<Vec<Value>, String> {
    bind_arguments(function, &[], Some(seed), limits)
}

/// [`random_arguments`] in the given domains, one per parameter: the
/// semantic check draws every module of a pipeline in the domains of its
/// input, which a pass may hide (SimplifyInference turns a batch norm's
/// variance into an operand of `add` before `sqrt`).
pub fn random_arguments_in(
    function: &Function,
    seed: u64,
    domains: &[input_domains::Domain],
    limits: Limits,
) -> Result<Vec<Value>, String> {
    draw_arguments(function, &[], Some(seed), domains, limits)
}

/// Runs the global function `entry` of `module` on `args`.
pub fn run(module: &IRModule, entry: &str, args: Vec<Value>, limits: Limits) -> RunResult<Value> {
    Interpreter::new(module, limits).call_global(entry, args)
}

/// [`run`], and where an operator result first overflowed (an infinity;
/// see [`range_effects`]), if one did: the semantic check's evidence that
/// the computation left its range inside the module even when its output
/// is back in range (e.g. a softmax after logits that overflowed).
pub fn run_watching_overflow(
    module: &IRModule,
    entry: &str,
    args: Vec<Value>,
    limits: Limits,
) -> (RunResult<Value>, Option<String>) {
    let mut interpreter = Interpreter::new(module, limits);
    interpreter.watch_overflow = true;
    let result = interpreter.call_global(entry, args);
    (result, interpreter.first_out_of_range)
}

/// Whether `value` fits the parameter type `ty` (dtype and the known
/// dimensions of every tensor, the arity of tuples).
pub fn check_argument(ty: &Type, value: &Value) -> Result<(), String> {
    use relay_ir::TypeKind;
    let text = || relay_ir::printer::readable::ty(ty);
    match (ty.kind(), value) {
        (TypeKind::Tensor(t), Value::Tensor(data)) => {
            let fits = t.dtype == data.dtype
                && t.shape.len() == data.shape.len()
                && t.shape
                    .iter()
                    .zip(&data.shape)
                    .all(|(d, n)| d.as_int().is_none_or(|m| m == *n));
            if fits {
                Ok(())
            } else {
                Err(format!(
                    "a {} tensor of shape {} does not fit {}",
                    data.dtype,
                    print::python_shape(&data.shape),
                    text()
                ))
            }
        }
        (TypeKind::Tuple(types), Value::Tuple(fields)) if types.len() == fields.len() => types
            .iter()
            .zip(fields.iter())
            .try_for_each(|(t, v)| check_argument(t, v)),
        // Values a run gave back (an embedder passes them in again): an ADT
        // value of the named type, a function, a reference.
        (TypeKind::Call { .. } | TypeKind::GlobalVar(_), Value::Adt(adt))
            if adt_of(ty) == Some(adt.constructor.data().belong_to.name()) =>
        {
            Ok(())
        }
        (TypeKind::Func(_), Value::Closure(_) | Value::Constructor(_))
        | (TypeKind::Ref(_), Value::Ref(_))
        | (TypeKind::Var(_) | TypeKind::Incomplete(_), _) => Ok(()),
        _ => Err(format!("{} does not fit {}", value.kind_name(), text())),
    }
}

/// The ADT a type names: `List` of `List[A]`, or of `List`.
fn adt_of(ty: &Type) -> Option<&str> {
    match ty.kind() {
        relay_ir::TypeKind::GlobalVar(g) => Some(g.name()),
        relay_ir::TypeKind::Call { func, .. } => adt_of(func),
        _ => None,
    }
}

/// The arguments of `function`: the given inputs by parameter name (a
/// `%` is optional), the others random from `seed` (or an error naming
/// them when there is no seed), each in the domain its uses require
/// ([`input_domains`]). Every random input of a run (`relay run`, the
/// semantic check, the editor's run) is drawn here. A given input takes
/// its place in the random stream as if it had been drawn, so every other
/// parameter gets the value `--random SEED` alone gives it (replacing one
/// weight by a file changes nothing else).
pub fn bind_arguments(
    function: &Function,
    given: &[(String, Value)],
    seed: Option<u64>,
    limits: Limits,
) -> Result<Vec<Value>, String> {
    let domains = match seed {
        Some(_) => input_domains::input_domains(function),
        None => Vec::new(),
    };
    draw_arguments(function, given, seed, &domains, limits)
}

/// [`bind_arguments`] with the random inputs in `domains` (by parameter
/// position; a missing one is [`input_domains::Domain::Any`]).
fn draw_arguments(
    function: &Function,
    given: &[(String, Value)],
    seed: Option<u64>,
    domains: &[input_domains::Domain],
    limits: Limits,
) -> Result<Vec<Value>, String> {
    let params = function.params();
    for (name, _) in given {
        let name = name.trim_start_matches('%');
        if !params.iter().any(|p| p.name() == name) {
            let names: Vec<String> = params.iter().map(|p| format!("%{}", p.name())).collect();
            return Err(format!(
                "no parameter %{name}; the parameters are {}",
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            ));
        }
    }
    let mut rng = random::SplitMix64::new(seed.unwrap_or(0));
    let domain = |i: usize| domains.get(i).copied().unwrap_or_default();
    let mut missing = Vec::new();
    let mut args = Vec::with_capacity(params.len());
    for (i, param) in params.iter().enumerate() {
        let ty = param_type(function, i);
        let value = given
            .iter()
            .find(|(n, _)| n.trim_start_matches('%') == param.name())
            .map(|(_, v)| v.clone());
        let value = match (value, &ty, seed) {
            (Some(v), Some(ty), _) => {
                check_argument(ty, &v).map_err(|e| format!("input %{}: {e}", param.name()))?;
                rng.skip(random::draws_of(ty).unwrap_or(0));
                v
            }
            (Some(v), None, _) => v,
            (None, Some(ty), Some(_)) => {
                random::random_value(&mut rng, ty, domain(i), limits.max_elements)
                    .map_err(|e| format!("parameter %{}: {e}", param.name()))?
            }
            (None, None, Some(_)) => {
                return Err(format!(
                    "parameter %{} has no type to make a random value of",
                    param.name()
                ))
            }
            (None, _, None) => {
                missing.push(format!("%{}", param.name()));
                continue;
            }
        };
        args.push(value);
    }
    if !missing.is_empty() {
        return Err(format!(
            "no input for {}: give --input NAME=FILE.npy, or --random SEED for random values",
            missing.join(", ")
        ));
    }
    Ok(args)
}
