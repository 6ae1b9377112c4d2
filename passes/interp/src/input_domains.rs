//! The domain a random input must come from, read off how the entry
//! function uses its parameters.
//!
//! A parameter's type alone says nothing of the values it may take: a
//! batch norm's `moving_var` drawn uniform in [-1, 1) is a negative
//! variance, and `sqrt` of it is NaN in every output element; a
//! spelled-out layer norm `power(%x - mean(%x), %e)` with a non-integer
//! random exponent `%e` is NaN wherever the base is negative. A semantic
//! check then has nothing to compare. So a float parameter that an
//! operator call takes *directly* as one of these arguments gets a
//! [`Domain`]:
//!
//! | use | domain |
//! |---|---|
//! | `nn.batch_norm`'s `moving_var` (argument 4) | [`Domain::Positive`] |
//! | the operand of `sqrt`, `rsqrt`, `log`, `log2`, `log10` | [`Domain::Positive`] |
//! | `power`'s exponent (argument 1) | [`Domain::EvenInteger`] (2) |
//!
//! The calls are found anywhere in the function (nested functions and
//! closures included, which capture the parameter). A `let` that only
//! renames a parameter (`let %v = %p;`) passes the uses of `%v` to `%p`,
//! and so does a call of a local function with `%p` as an argument (a
//! fused `Primitive` function called in place, or one bound by `let`):
//! the uses of its parameter are uses of `%p`. Calls of global functions
//! are not followed.
//!
//! An argument also reaches the parameter through operators that keep
//! the domain (`carried`): `cast`, `reshape`, `expand_dims`, `squeeze`,
//! `copy` and `layout_transform` keep every domain; adding a non-negative
//! constant or multiplying by a positive one keeps positivity. That is
//! the form a variance takes once `SimplifyInference` has spelled out the
//! batch norm (`sqrt(add(%var, 1e-05f))`, inside a fused function after
//! `FuseOps`), so a module printed mid-pipeline draws what its source did.
//! A parameter used in two ways whose domains differ (an exponent that is
//! also a `sqrt` operand) keeps the uniform draw: no single domain fits
//! both, and choosing one would hide the conflict. Integer and boolean
//! parameters keep theirs too (the domains are about float values).
//!
//! A domain reshapes the uniform value the parameter's element drew
//! ([`Domain::from_unit`]); it never draws more or fewer values, so the
//! random stream of every other parameter, and every value of a parameter
//! without a domain, is what it would be without domains.

use crate::param_type;
use relay_ir::dtype::TypeCode;
use relay_ir::fxhash::FxMap;
use relay_ir::{Expr, ExprKind, Function, TypeKind, VarId};

/// What the uses of a parameter require of its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Domain {
    /// No requirement: the type's uniform draw (see [`crate::random`]).
    #[default]
    Any,
    /// Positive, in [0.5, 1.5] (1.5 only by rounding): centred on 1, the value TVM's test models
    /// give a variance (`relay/testing/init.py` initialises `*_var` to
    /// ones), and far enough from 0 that `sqrt`, `rsqrt` and `log` stay
    /// small.
    Positive,
    /// 2, the smallest even integer: a non-integer power of a negative
    /// base is NaN, and an odd power of a centred value can make a
    /// "variance" negative (whose `sqrt` is NaN again). The spelled-out
    /// layer norms of real models square (gpt2: `power(%x - mean, 2f)`),
    /// and a larger power only grows the values further.
    EvenInteger,
}

impl Domain {
    /// The value in this domain for the uniform draw `u` in [-1, 1): `u`
    /// itself for [`Domain::Any`], `1 + u/2` for [`Domain::Positive`]
    /// (order-preserving, so the spread of the draw is kept), 2 for
    /// [`Domain::EvenInteger`].
    pub fn from_unit(self, u: f64) -> f64 {
        match self {
            Domain::Any => u,
            Domain::Positive => 1.0 + u / 2.0,
            Domain::EvenInteger => 2.0,
        }
    }
}

impl std::fmt::Display for Domain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Domain::Any => "any",
            Domain::Positive => "positive",
            Domain::EvenInteger => "even integer",
        })
    }
}

/// The parameters of `function` with a domain other than
/// [`Domain::Any`] in `domains` (by position): `%v positive, %e even
/// integer`, empty when there are none.
pub fn describe(function: &Function, domains: &[Domain]) -> String {
    function
        .params()
        .iter()
        .zip(domains)
        .filter(|(_, d)| **d != Domain::Any)
        .map(|(p, d)| format!("%{} {d}", p.name()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The domain of each parameter of `function`, in parameter order.
pub fn input_domains(function: &Function) -> Vec<Domain> {
    let params = function.params();
    let index_of: FxMap<VarId, usize> = params
        .iter()
        .enumerate()
        .map(|(i, p)| (p.id(), i))
        .collect();
    // The walk sees a `let`'s body before the `let` itself (children
    // first), so aliases, calls and uses are collected, then resolved.
    let mut aliases = Aliases::default();
    let mut let_functions: FxMap<VarId, Vec<VarId>> = FxMap::default();
    let mut calls_of_let_functions: Vec<(VarId, Vec<Option<Source>>)> = Vec::new();
    let mut uses: Vec<(VarId, Domain)> = Vec::new();
    relay_ir::rewrite::post_order_each(function.body(), |expr| match expr.kind() {
        ExprKind::Let { var, value, .. } => {
            if let Some(f) = value.as_function() {
                let_functions.insert(var.id(), f.params().iter().map(|p| p.id()).collect());
            } else if let Some(source) = Source::of(value) {
                aliases.add(var.id(), source);
            }
        }
        ExprKind::Call(call) => {
            if let Some(op) = call.callee.as_op() {
                for (position, arg) in call.args.iter().enumerate() {
                    if let Some(domain) = required(&op.name, position) {
                        if let Some(var) = carried(arg, domain) {
                            uses.push((var, domain));
                        }
                    }
                }
                return;
            }
            let args: Vec<Option<Source>> = call.args.iter().map(Source::of).collect();
            if let Some(f) = call.callee.as_function() {
                // A function literal called in place (a fused `Primitive`
                // function): its parameters are the arguments.
                for (param, arg) in f.params().iter().zip(&args) {
                    if let Some(arg) = arg {
                        aliases.add(param.id(), *arg);
                    }
                }
            } else if let Some(callee) = call.callee.as_var() {
                calls_of_let_functions.push((callee.id(), args));
            }
        }
        _ => {}
    });
    for (callee, args) in calls_of_let_functions {
        let Some(callee_params) = let_functions.get(&callee) else {
            continue;
        };
        for (param, arg) in callee_params.iter().zip(&args) {
            if let Some(arg) = arg {
                aliases.add(*param, *arg);
            }
        }
    }
    let mut found: Vec<Option<Result<Domain, ()>>> = vec![None; params.len()];
    for (var, domain) in uses {
        for source in aliases.sources(var, domain) {
            let Some(&index) = index_of.get(&source) else {
                continue;
            };
            let slot = &mut found[index];
            *slot = match *slot {
                None => Some(Ok(domain)),
                Some(Ok(d)) if d == domain => Some(Ok(d)),
                // Two different requirements: neither is kept.
                Some(_) => Some(Err(())),
            };
        }
    }
    found
        .into_iter()
        .enumerate()
        .map(|(index, found)| match found {
            Some(Ok(domain)) if holds_floats(function, index) => domain,
            _ => Domain::Any,
        })
        .collect()
}

/// What a variable stands for: the variable an expression carries, and
/// whether it carries every domain or only positivity (see [`carried`]).
#[derive(Debug, Clone, Copy)]
struct Source {
    var: VarId,
    every_domain: bool,
}

impl Source {
    fn of(expr: &Expr) -> Option<Source> {
        if let Some(var) = carried(expr, Domain::EvenInteger) {
            return Some(Source {
                var,
                every_domain: true,
            });
        }
        carried(expr, Domain::Positive).map(|var| Source {
            var,
            every_domain: false,
        })
    }
}

/// The variables that stand for others: a `let` binding one (renamed or
/// carried through operators that keep a domain), the parameters of a
/// local function called with such arguments (one parameter may stand for
/// several, a function called twice).
#[derive(Default)]
struct Aliases(FxMap<VarId, Vec<Source>>);

impl Aliases {
    fn add(&mut self, alias: VarId, source: Source) {
        self.0.entry(alias).or_default().push(source);
    }

    /// The variables `var` stands for where `domain` is concerned,
    /// following aliases to the end (`var` itself when it is none's
    /// alias), each once.
    fn sources(&self, var: VarId, domain: Domain) -> Vec<VarId> {
        let mut seen = FxMap::default();
        let mut stack = vec![var];
        let mut out = Vec::new();
        while let Some(v) = stack.pop() {
            if seen.insert(v, ()).is_some() {
                continue;
            }
            match self.0.get(&v) {
                Some(sources) => stack.extend(
                    sources
                        .iter()
                        .filter(|s| s.every_domain || domain == Domain::Positive)
                        .map(|s| s.var),
                ),
                None => out.push(v),
            }
        }
        out
    }
}

/// The variable whose values reach `expr` with `domain` kept, if one
/// does: the variable itself, or one under operators that keep the
/// domain. Layout and dtype changes keep every domain; adding a
/// non-negative constant or multiplying by a positive one keeps
/// positivity (`sqrt(add(%var, 1e-05f))`, a spelled-out batch norm).
fn carried(expr: &Expr, domain: Domain) -> Option<VarId> {
    let mut expr = expr.clone();
    loop {
        if let Some(var) = expr.as_var() {
            return Some(var.id());
        }
        let ExprKind::Call(call) = expr.kind() else {
            return None;
        };
        let op = call.callee.as_op()?;
        let next = match (op.name.as_str(), call.args.as_slice()) {
            (
                "cast" | "reshape" | "expand_dims" | "squeeze" | "copy" | "layout_transform",
                [x, ..],
            ) => x.clone(),
            ("add", [a, b]) if domain == Domain::Positive => {
                other_than_constant(a, b, |v| v >= 0.0)?
            }
            ("multiply", [a, b]) if domain == Domain::Positive => {
                other_than_constant(a, b, |v| v > 0.0)?
            }
            _ => return None,
        };
        expr = next;
    }
}

/// Of two operands, the one that is not a constant whose every element
/// satisfies `holds`, when the other is such a constant.
fn other_than_constant(a: &Expr, b: &Expr, holds: impl Fn(f64) -> bool) -> Option<Expr> {
    let all_hold = |e: &Expr| {
        e.as_constant().is_some_and(|data| {
            !data.is_empty() && (0..data.len()).all(|i| data.get_f64(i).is_ok_and(&holds))
        })
    };
    match (all_hold(a), all_hold(b)) {
        (true, false) => Some(b.clone()),
        (false, true) => Some(a.clone()),
        _ => None,
    }
}

/// The domain an operator requires of its argument at `position`, if any.
fn required(op: &str, position: usize) -> Option<Domain> {
    match (op, position) {
        ("nn.batch_norm", 4) | ("sqrt" | "rsqrt" | "log" | "log2" | "log10", 0) => {
            Some(Domain::Positive)
        }
        ("power", 1) => Some(Domain::EvenInteger),
        _ => None,
    }
}

/// Whether parameter `index` is a tensor of a float type (IEEE or bfloat).
fn holds_floats(function: &Function, index: usize) -> bool {
    param_type(function, index).is_some_and(|ty| match ty.kind() {
        TypeKind::Tensor(t) => matches!(t.dtype.code, TypeCode::Float | TypeCode::BFloat),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::module;

    fn domains(text: &str) -> Vec<Domain> {
        input_domains(module(text).function("main").unwrap())
    }

    #[test]
    fn a_batch_norm_variance_is_positive() {
        let text = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(1, 2, 3, 3), float32], %g: Tensor[(2), float32], %b: Tensor[(2), float32],
          %m: Tensor[(2), float32], %v: Tensor[(2), float32]) {
  %0 = nn.batch_norm(%x, %g, %b, %m, %v);
  %0.0
}"#;
        use Domain::*;
        assert_eq!(domains(text), vec![Any, Any, Any, Any, Positive]);
    }

    #[test]
    fn operands_of_sqrt_rsqrt_and_logarithms_are_positive() {
        for op in ["sqrt", "rsqrt", "log", "log2", "log10"] {
            let text = format!(
                "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(3), float32], %y: Tensor[(3), float32]) {{\n  add({op}(%x), %y)\n}}"
            );
            assert_eq!(domains(&text), vec![Domain::Positive, Domain::Any], "{op}");
        }
    }

    #[test]
    fn an_exponent_is_an_even_integer_and_the_base_is_free() {
        let text = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(3), float32], %e: float32) {
  %0 = mean(%x, axis=[-1], keepdims=True);
  %1 = subtract(%x, %0);
  power(%1, %e)
}"#;
        assert_eq!(domains(text), vec![Domain::Any, Domain::EvenInteger]);
    }

    #[test]
    fn conflicting_uses_keep_the_uniform_draw_and_agreeing_ones_keep_the_domain() {
        let text = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(3), float32], %e: float32) {
  %0 = power(%x, %e);
  %1 = sqrt(%e);
  %2 = sqrt(%x);
  %3 = log(%x);
  (%0, %1, %2, %3)
}"#;
        // %x: base of power (no requirement), sqrt and log (both positive).
        assert_eq!(domains(text), vec![Domain::Positive, Domain::Any]);
    }

    #[test]
    fn uses_through_let_renames_and_closures_count() {
        let text = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(3), float32], %v: Tensor[(3), float32], %e: float32) {
  let %w = %v;
  let %u = %w;
  let %f = fn (%y: Tensor[(3), float32]) { power(%y, %e) };
  add(%f(%x), sqrt(%u))
}"#;
        use Domain::*;
        assert_eq!(domains(text), vec![Any, Positive, EvenInteger]);
    }

    #[test]
    fn uses_inside_fused_functions_and_let_bound_functions_count() {
        let text = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(3), float32], %e: float32, %v: Tensor[(3), float32], %w: Tensor[(3), float32]) {
  %0 = fn (%p0: Tensor[(3), float32], %p1: float32, Primitive=1) { power(%p0, %p1) };
  %1 = %0(%x, %e);
  let %g = fn (%q: Tensor[(3), float32]) { rsqrt(%q) };
  (%1, %g(%v), %g(%w))
}"#;
        use Domain::*;
        assert_eq!(domains(text), vec![Any, EvenInteger, Positive, Positive]);
    }

    #[test]
    fn a_sum_of_parameters_and_integer_parameters_get_no_domain() {
        let text = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(3), float32], %i: Tensor[(3), int32]) {
  %0 = sqrt(add(%x, %x));
  (%0, sqrt(%i))
}"#;
        assert_eq!(domains(text), vec![Domain::Any, Domain::Any]);
    }

    #[test]
    fn a_variance_spelled_out_by_simplify_inference_and_fused_is_positive() {
        // synthetic.pipeline's form: the variance reaches `sqrt` through
        // `add` of epsilon inside a fused function.
        let text = r#"#[version = "0.0.5"]
def @main(%v: Tensor[(3), float32], %g: Tensor[(3), float32]) {
  %0 = fn (%p0: Tensor[(3), float32], %p1: Tensor[(3), float32], Primitive=1) {
    %1 = add(%p0, 1e-05f);
    %2 = sqrt(%1);
    %3 = divide(1f, %2);
    multiply(%3, %p1)
  };
  %0(%v, %g)
}"#;
        assert_eq!(domains(text), vec![Domain::Positive, Domain::Any]);
    }

    #[test]
    fn operators_that_keep_a_domain_are_followed_and_others_are_not() {
        use Domain::*;
        let cases = [
            ("sqrt(multiply(2f, %x))", Positive),
            (
                "sqrt(expand_dims(cast(%x, dtype=\"float16\"), axis=0))",
                Positive,
            ),
            ("power(%y, reshape(%x, newshape=[3]))", EvenInteger),
            // Adding a constant changes an exponent; a negative constant
            // or factor can break positivity; a non-constant operand too.
            ("power(%y, add(%x, 2f))", Any),
            ("sqrt(add(%x, -1f))", Any),
            ("sqrt(multiply(%x, 0f))", Any),
            ("sqrt(add(%x, %y))", Any),
        ];
        for (body, expected) in cases {
            let text = format!(
                "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(3), float32], %y: Tensor[(3), float32]) {{\n  {body}\n}}"
            );
            assert_eq!(domains(&text)[0], expected, "{body}");
        }
    }

    #[test]
    fn a_let_bound_positive_shift_carries_positivity_only() {
        let text = r#"#[version = "0.0.5"]
def @main(%v: Tensor[(3), float32], %e: Tensor[(3), float32]) {
  let %s = add(%v, 1e-05f);
  let %t = add(%e, 1f);
  (rsqrt(%s), power(%s, %t))
}"#;
        // %v: positive via rsqrt, and the exponent use of %t does not reach
        // %e through the `add`.
        assert_eq!(domains(text), vec![Domain::Positive, Domain::Any]);
    }

    #[test]
    fn values_in_a_domain_have_its_property() {
        let mut rng = crate::random::SplitMix64::new(5);
        let draws: Vec<f64> = (0..10_000).map(|_| rng.next_f64() * 2.0 - 1.0).collect();
        for u in draws.iter().copied().chain([-1.0, 0.0, 1.0 - f64::EPSILON]) {
            assert_eq!(Domain::Any.from_unit(u), u);
            let p = Domain::Positive.from_unit(u);
            assert!((0.5..=1.5).contains(&p), "{u} -> {p}");
            assert_eq!(Domain::EvenInteger.from_unit(u), 2.0, "{u}");
        }
    }
}
