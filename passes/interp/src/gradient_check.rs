//! The gradients `Gradient` and `FirstOrderGradient` return, checked
//! against central finite differences of the module before the pass.
//!
//! Both passes turn `@main(x₁, …, xₙ) -> R` into `@main(x₁, …, xₙ) ->
//! (R, (g₁, …, gₙ))`, where gᵢ is the gradient with respect to xᵢ of S, the
//! sum of the elements of the tensors of R the pass seeds with `ones_like`
//! ([`Seeding`]). Nothing else computes it, so the check makes a reference:
//! along a direction v over the float inputs, the derivative the gradients
//! claim, Σᵢ⟨gᵢ, vᵢ⟩, must match the central difference (S(x + h·v) −
//! S(x − h·v)) / 2h, where S is computed by running the module *before* the
//! pass on the perturbed inputs.
//!
//! The direction is the claimed gradient scaled to at most 1 per element
//! plus a seeded random part uniform in [-1, 1): with a random direction
//! alone, Σᵢ⟨gᵢ, vᵢ⟩ is a sum of terms of both signs that mostly cancel,
//! and the finite difference's errors (which scale with the terms, not
//! with their sum) swamp it. Along the claimed gradient the claim is
//! |g|²/max|g| and a wrong gradient shows: scaled by 2, the true
//! derivative is half the claim; swapped between parameters, or missing a
//! term, the true gradient is no longer parallel to the claim.
//!
//! What makes this sound in float32:
//! * The perturbed inputs are rounded to their dtype, so the claim is taken
//!   along the perturbation actually made (x⁺ − x⁻, exact in f64), not
//!   along 2h·v: rounding the inputs is no error.
//! * The network's own rounding makes S noisy; that noise in the difference
//!   grows as 1/h, the truncation error (curvature) as h², and a kink of
//!   `nn.relu` or `max_pool` crossed inside ±h (piecewise linear networks)
//!   moves the difference by a fraction of one unit's slope, more often the
//!   larger h is. So the difference is taken at a ladder of steps
//!   ([`steps`], largest first) and the claim agrees when it is within
//!   [`RELATIVE_TOLERANCE`] of the difference at one of them, plus an
//!   allowance for the rounding of S ([`ROUNDING_UNITS`] units in the last
//!   place of the sum of |elements| of the seeded result, divided by 2h).
//!   The allowance matters where S hardly changes along v: the sum of a
//!   `nn.softmax` result is 1 whatever the input, so its gradient is zero
//!   up to rounding, which is all the check can confirm there.
//! * A wrong gradient is reported only when the reference is stable: the
//!   differences at two consecutive steps agree with each other within the
//!   tolerance and both are farther than it from the claim (a gradient
//!   scaled by 2 is 50% off; one swapped with another parameter's is
//!   unrelated). When the steps never settle, the gradient is "not
//!   checked", with the values seen: there is no sound reference for that
//!   module and input.

use crate::contract::Seeding;
use crate::random::SplitMix64;
use crate::value::Value;
use crate::RuntimeError;
use relay_ir::dtype::{DataType, TypeCode};
use std::fmt;

/// How far the claimed derivative may be from the finite difference,
/// relative to the larger of the two: float32's rounding noise at the
/// steps used is far below it on the models (see the README's numbers),
/// a wrong gradient (scaled, swapped, missing a term) far above it.
pub const RELATIVE_TOLERANCE: f64 = 1e-2;

/// The rounding allowance of S, in units in the last place (of the
/// result's dtype) of Σ|seeded elements|: a few roundings of each element
/// and of the softmax-like normalisations before it.
pub const ROUNDING_UNITS: f64 = 16.0;

/// The unit in the last place of 1 in `dtype` (its machine epsilon).
fn epsilon(dtype: DataType) -> f64 {
    match (dtype.code, dtype.bits) {
        (TypeCode::Float, 64) => f64::EPSILON,
        (TypeCode::Float, 32) => f64::from(f32::EPSILON),
        (TypeCode::BFloat, 16) => 2f64.powi(-7),
        _ => 2f64.powi(-10),
    }
}

/// The steps h tried, largest first, for the coarsest float type of the
/// inputs (they are uniform in [-1, 1)): large enough that the rounding
/// noise of S divided by h stays small, small enough that curvature and
/// kinks rarely matter.
pub fn steps(dtype: DataType) -> &'static [f64] {
    match (dtype.code, dtype.bits) {
        (TypeCode::Float, 64) => &[1e-4, 1e-5, 1e-6],
        (TypeCode::Float, 32) => &[1e-2, 1e-3, 1e-4],
        _ => &[1e-1, 3e-2, 1e-2],
    }
}

/// One comparison: the derivative the gradients claim along the
/// perturbation and the central difference at step `step`.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub step: f64,
    /// Σᵢ⟨gᵢ, x⁺ᵢ − x⁻ᵢ⟩ / 2h.
    pub claimed: f64,
    /// (S(x⁺) − S(x⁻)) / 2h.
    pub difference: f64,
    /// What the rounding of S can move the difference by.
    pub rounding: f64,
}

impl Comparison {
    /// How far apart the claim and the difference may be.
    pub fn allowed(&self) -> f64 {
        allowed(self.claimed, self.difference, self.rounding)
    }

    /// |claimed − difference| / allowed: at most 1 when they agree.
    pub fn ratio(&self) -> f64 {
        ratio(self.claimed, self.difference, self.rounding)
    }

    fn agrees(&self) -> bool {
        self.ratio() <= 1.0
    }

    /// Both within the rounding allowance of zero: S is flat along v.
    fn flat(&self) -> bool {
        self.claimed.abs().max(self.difference.abs()) <= self.rounding
    }
}

fn allowed(a: f64, b: f64, rounding: f64) -> f64 {
    RELATIVE_TOLERANCE * a.abs().max(b.abs()) + rounding
}

fn ratio(a: f64, b: f64, rounding: f64) -> f64 {
    let gap = (a - b).abs();
    if gap == 0.0 {
        0.0
    } else {
        gap / allowed(a, b, rounding)
    }
}

impl fmt::Display for Comparison {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "sum of <gradient, v> = {:.6e}, (S(x+hv) - S(x-hv))/2h = {:.6e} at h = {:e}: \
             apart by {:.1e}, allowed {:.1e} ({:e} relative + {:.1e} for the rounding of S)",
            self.claimed,
            self.difference,
            self.step,
            (self.claimed - self.difference).abs(),
            self.allowed(),
            RELATIVE_TOLERANCE,
            self.rounding,
        )?;
        if self.flat() {
            f.write_str("; both within rounding of zero: S does not change along v")?;
        }
        Ok(())
    }
}

/// What the check found on one input.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// The claim matches the finite difference at this step.
    Agrees(Comparison),
    /// The finite differences at two consecutive steps agree with each
    /// other and not with the claim (all the steps tried, in order).
    Differs(Vec<Comparison>),
    /// The gradients do not have the parameters' structure.
    Malformed(String),
    /// No sound reference on this input, and why.
    NotChecked(String),
}

/// What the check needs: the module before the pass is run through
/// `run_before`; `args` are its arguments, `gradients` the second field of
/// the result after the pass, and `argument_of(i)` the position in `args`
/// of what the pass's parameter `i` took.
pub struct GradientCheck<'a> {
    pub args: &'a [Value],
    /// The names of the arguments' parameters, for messages (`%x`).
    pub names: &'a [String],
    pub gradients: &'a Value,
    pub argument_of: &'a dyn Fn(usize) -> Option<usize>,
    pub seeding: Seeding,
    /// Seeds the direction.
    pub seed: u64,
}

impl GradientCheck<'_> {
    /// Compares the claimed directional derivative with central finite
    /// differences. A run of the module stopped from outside (deadline,
    /// cancellation) is the error; any other failure to run is
    /// [`Outcome::NotChecked`].
    pub fn run(
        &self,
        run_before: &dyn Fn(Vec<Value>) -> Result<Value, RuntimeError>,
    ) -> Result<Outcome, RuntimeError> {
        let per_argument = match self.gradients_per_argument() {
            Ok(g) => g,
            Err(outcome) => return Ok(outcome),
        };
        let Some(coarsest) = coarsest_float(self.args) else {
            return Ok(Outcome::NotChecked(
                "no float input to differentiate with respect to".into(),
            ));
        };
        let mut comparisons: Vec<Comparison> = Vec::new();
        for &step in steps(coarsest) {
            let (plus, minus) = self.perturbed(step, &per_argument);
            let claimed = claimed_derivative(&per_argument, &plus, &minus) / (2.0 * step);
            let sum = |args: Vec<Value>| -> Result<Result<SeededSum, String>, RuntimeError> {
                match run_before(args) {
                    Ok(value) => Ok(seeded_sum(&value, self.seeding)),
                    Err(e) if e.stopped => Err(e),
                    Err(e) => Ok(Err(format!(
                        "the module before the pass fails on the perturbed input: {e}"
                    ))),
                }
            };
            let (s_plus, s_minus) = match (sum(plus)?, sum(minus)?) {
                (Ok(a), Ok(b)) => (a, b),
                (Err(why), _) | (_, Err(why)) => return Ok(Outcome::NotChecked(why)),
            };
            if !s_plus.sum.is_finite() || !s_minus.sum.is_finite() || !claimed.is_finite() {
                let what = if claimed.is_finite() {
                    "the result is not finite"
                } else {
                    "the gradients are not finite"
                };
                return Ok(Outcome::NotChecked(format!(
                    "{what} on this input (at h = {step:e}: S(x+hv) = {:e}, S(x-hv) = {:e}, \
                     claimed derivative {claimed:e})",
                    s_plus.sum, s_minus.sum
                )));
            }
            let magnitude = s_plus.magnitude.max(s_minus.magnitude);
            let comparison = Comparison {
                step,
                claimed,
                difference: (s_plus.sum - s_minus.sum) / (2.0 * step),
                rounding: ROUNDING_UNITS * epsilon(s_plus.dtype) * magnitude / (2.0 * step),
            };
            if comparison.agrees() {
                return Ok(Outcome::Agrees(comparison));
            }
            // The reference is stable when the differences at two steps
            // agree with each other (within the larger step's allowance).
            let settled = comparisons.last().is_some_and(|previous| {
                ratio(
                    previous.difference,
                    comparison.difference,
                    previous.rounding,
                ) <= 1.0
            });
            comparisons.push(comparison);
            if settled {
                return Ok(Outcome::Differs(comparisons));
            }
        }
        let seen: Vec<String> = comparisons.iter().map(Comparison::to_string).collect();
        Ok(Outcome::NotChecked(format!(
            "the finite differences do not settle (float32 rounding noise, or kinks of \
             relu/max_pool crossed within the step): {}",
            seen.join("; ")
        )))
    }

    /// The gradient of each argument (none for an argument the pass's
    /// parameters do not take), checked against the argument's structure.
    fn gradients_per_argument(&self) -> Result<Vec<Option<Value>>, Outcome> {
        let Value::Tuple(gradients) = self.gradients else {
            return Err(Outcome::Malformed(format!(
                "the gradients are {}, not a tuple",
                self.gradients.skeleton()
            )));
        };
        let mut per_argument = vec![None; self.args.len()];
        for (i, gradient) in gradients.iter().enumerate() {
            let Some(j) = (self.argument_of)(i) else {
                continue;
            };
            let Some(arg) = self.args.get(j) else {
                continue;
            };
            // The gradient has the parameter's type (a tuple parameter a
            // tuple of gradients).
            if gradient.skeleton() != arg.skeleton() {
                return Err(Outcome::Malformed(format!(
                    "the gradient of {} is {}, the parameter is {}",
                    self.names.get(j).map_or("?", String::as_str),
                    gradient.skeleton(),
                    arg.skeleton()
                )));
            }
            per_argument[j] = Some(gradient.clone());
        }
        Ok(per_argument)
    }

    /// x + h·v and x − h·v, rounded to the inputs' dtypes: v is the claimed
    /// gradient divided by its largest |element|, plus a random part
    /// uniform in [-1, 1) from the seed (the same v for every step).
    fn perturbed(&self, step: f64, gradients: &[Option<Value>]) -> (Vec<Value>, Vec<Value>) {
        // Not the stream the inputs were drawn from.
        let mut rng = SplitMix64::new(self.seed ^ 0x6772_6164_6965_6e74);
        let largest = gradients
            .iter()
            .flatten()
            .flat_map(Value::leaves)
            .filter(|leaf| leaf.tensor.dtype.is_float())
            .flat_map(|leaf| {
                (0..leaf.tensor.len()).map(move |i| leaf.tensor.get_f64(i).unwrap_or(0.0).abs())
            })
            .filter(|g| g.is_finite())
            .fold(0.0f64, f64::max);
        let mut plus = Vec::with_capacity(self.args.len());
        let mut minus = Vec::with_capacity(self.args.len());
        for (arg, gradient) in self.args.iter().zip(gradients) {
            let along = Along {
                gradient: gradient.as_ref(),
                largest,
            };
            let (p, m) = perturb(arg, along, step, &mut rng);
            plus.push(p);
            minus.push(m);
        }
        (plus, minus)
    }
}

/// The claimed gradient of one argument and the largest |element| of all
/// the gradients, which scales it into the direction.
#[derive(Clone, Copy)]
struct Along<'a> {
    gradient: Option<&'a Value>,
    largest: f64,
}

impl Along<'_> {
    fn field(&self, i: usize) -> Along<'_> {
        Along {
            gradient: match self.gradient {
                Some(Value::Tuple(fields)) => fields.get(i),
                _ => None,
            },
            largest: self.largest,
        }
    }

    /// The claimed gradient's element `i`, scaled to at most 1.
    fn element(&self, i: usize) -> f64 {
        match self.gradient {
            Some(Value::Tensor(g)) if self.largest > 0.0 => {
                let g = g.get_f64(i).unwrap_or(0.0) / self.largest;
                if g.is_finite() {
                    g
                } else {
                    0.0
                }
            }
            _ => 0.0,
        }
    }
}

fn perturb(value: &Value, along: Along<'_>, step: f64, rng: &mut SplitMix64) -> (Value, Value) {
    match value {
        Value::Tensor(t) if t.dtype.is_float() => {
            let (mut plus, mut minus) = ((**t).clone(), (**t).clone());
            for i in 0..t.len() {
                let x = t.get_f64(i).unwrap_or(0.0);
                let v = along.element(i) + rng.next_f64() * 2.0 - 1.0;
                // A float set into its own dtype cannot fail.
                let _ = plus.set_f64(i, x + step * v);
                let _ = minus.set_f64(i, x - step * v);
            }
            (Value::tensor(plus), Value::tensor(minus))
        }
        Value::Tuple(fields) => {
            let (plus, minus) = fields
                .iter()
                .enumerate()
                .map(|(i, f)| perturb(f, along.field(i), step, rng))
                .unzip();
            (Value::tuple(plus), Value::tuple(minus))
        }
        other => (other.clone(), other.clone()),
    }
}

/// Σ over the float elements of ⟨gradient, x⁺ − x⁻⟩.
fn claimed_derivative(gradients: &[Option<Value>], plus: &[Value], minus: &[Value]) -> f64 {
    let mut total = 0.0;
    for ((gradient, plus), minus) in gradients.iter().zip(plus).zip(minus) {
        let Some(gradient) = gradient else { continue };
        for ((g, p), m) in gradient
            .leaves()
            .iter()
            .zip(plus.leaves())
            .zip(minus.leaves())
        {
            if !p.tensor.dtype.is_float() || !g.tensor.dtype.is_float() {
                continue;
            }
            for i in 0..g.tensor.len() {
                let delta = p.tensor.get_f64(i).unwrap_or(0.0) - m.tensor.get_f64(i).unwrap_or(0.0);
                if delta != 0.0 {
                    total += g.tensor.get_f64(i).unwrap_or(f64::NAN) * delta;
                }
            }
        }
    }
    total
}

/// S and what its rounding scales with.
struct SeededSum {
    sum: f64,
    /// Σ|elements|.
    magnitude: f64,
    /// The coarsest dtype of the seeded tensors.
    dtype: DataType,
}

/// S: the sum, in f64, of the elements of the tensors the pass seeds.
fn seeded_sum(value: &Value, seeding: Seeding) -> Result<SeededSum, String> {
    let leaves = value.leaves();
    let seeded = match seeding {
        Seeding::EveryTensor => &leaves[..],
        Seeding::FirstTensor => &leaves[..leaves.len().min(1)],
    };
    if seeded.is_empty() {
        return Err("the result has no tensor to differentiate".into());
    }
    let mut total = SeededSum {
        sum: 0.0,
        magnitude: 0.0,
        dtype: seeded[0].tensor.dtype,
    };
    for leaf in seeded {
        if !leaf.tensor.dtype.is_float() {
            return Err(format!(
                "the result{} is {}, not a float tensor",
                leaf.path, leaf.tensor.dtype
            ));
        }
        if epsilon(leaf.tensor.dtype) > epsilon(total.dtype) {
            total.dtype = leaf.tensor.dtype;
        }
        for i in 0..leaf.tensor.len() {
            let v = leaf.tensor.get_f64(i).unwrap_or(f64::NAN);
            total.sum += v;
            total.magnitude += v.abs();
        }
    }
    Ok(total)
}

/// The float dtype of the inputs with the fewest bits (its steps apply).
fn coarsest_float(args: &[Value]) -> Option<DataType> {
    args.iter()
        .flat_map(Value::leaves)
        .map(|leaf| leaf.tensor.dtype)
        .filter(|d| d.is_float())
        .min_by_key(|d| d.bits)
}

#[cfg(test)]
mod tests {
    use crate::check::{CheckMode, CheckOptions, Finding, SemanticCheck};
    use crate::test_util::module;
    use relay_pass_manager::{PassInfo, PassInstrument};

    /// Runs the check of `pass` on `before` → `after` without the pass:
    /// the report's text (none when they agree) and the summary.
    fn check(pass: &str, before: &str, after: &str) -> (Option<String>, String) {
        let check = SemanticCheck::new(CheckOptions {
            mode: CheckMode::End,
            inputs: 3,
            ..CheckOptions::default()
        });
        let info = PassInfo::new(pass, 0, &[]);
        check.run_before_pass(&module(before), &info).unwrap();
        let result = check.run_after_pass(&module(after), &info);
        let report = check.report();
        assert_eq!(result.is_err(), report.is_some());
        if let Some(report) = &report {
            assert!(
                matches!(report.finding, Finding::GradientDiffers(_)),
                "{report}"
            );
        }
        (report.map(|r| r.to_string()), check.stats().render())
    }

    /// S = Σ a·exp(b): dS/da = exp(b), dS/db = a·exp(b).
    const BEFORE: &str = "#[version = \"0.0.5\"]\ndef @main(%a: Tensor[(3, 4), float32], %b: Tensor[(3, 4), float32]) {\n  multiply(%a, exp(%b))\n}\n";

    fn after(gradients: &str) -> String {
        format!(
            "#[version = \"0.0.5\"]\ndef @main(%a: Tensor[(3, 4), float32], %b: Tensor[(3, 4), float32]) {{\n  %0 = exp(%b);\n  %1 = multiply(%a, %0);\n  (%1, ({gradients}))\n}}\n"
        )
    }

    #[test]
    fn correct_gradients_agree_with_finite_differences() {
        for pass in ["FirstOrderGradient", "Gradient"] {
            let (report, summary) = check(pass, BEFORE, &after("%0, %1"));
            assert_eq!(report, None, "{pass}: {summary}");
            assert!(
                summary.contains(&format!(
                    "gradient ({pass}): agrees with central finite differences on 3 of 3 inputs"
                )),
                "{summary}"
            );
        }
    }

    #[test]
    fn scaled_swapped_or_partial_gradients_are_caught() {
        for wrong in [
            "multiply(%0, 2f), %1",
            "%0, multiply(%1, 0.5f)",
            "%1, %0",
            "%0, zeros_like(%1)",
        ] {
            let (report, summary) = check("FirstOrderGradient", BEFORE, &after(wrong));
            let report = report.unwrap_or_else(|| panic!("{wrong}: not caught: {summary}"));
            assert!(
                report.contains("the value agrees, the gradient does not"),
                "{report}"
            );
        }
    }

    #[test]
    fn gradients_of_the_wrong_shape_are_a_difference() {
        let (report, _) = check(
            "FirstOrderGradient",
            BEFORE,
            &after("%0, sum(%1, axis=[0])"),
        );
        assert!(report.unwrap().contains(
            "the gradients do not fit the parameters: the gradient of %b is Tensor[(4), float32]"
        ));
    }

    #[test]
    fn gradient_seeds_only_the_first_tensor_of_a_tuple_result() {
        // Gradient differentiates the first field only, FirstOrderGradient
        // the sum of both: the same gradients are right for one, wrong for
        // the other.
        let before = "#[version = \"0.0.5\"]\ndef @main(%a: Tensor[(3), float32]) {\n  (multiply(%a, 3f), multiply(%a, 5f))\n}\n";
        let after = |g: &str| {
            format!("#[version = \"0.0.5\"]\ndef @main(%a: Tensor[(3), float32]) {{\n  ((multiply(%a, 3f), multiply(%a, 5f)), (full({g}, shape=[3], dtype=\"float32\"),))\n}}\n")
        };
        assert_eq!(check("Gradient", before, &after("3f")).0, None);
        assert!(check("FirstOrderGradient", before, &after("3f"))
            .0
            .is_some());
        assert_eq!(check("FirstOrderGradient", before, &after("8f")).0, None);
    }

    #[test]
    fn a_sum_that_does_not_change_is_checked_to_be_flat() {
        // Σ softmax = 1: the gradient is zero up to rounding.
        let before = "#[version = \"0.0.5\"]\ndef @main(%a: Tensor[(1, 5), float32]) {\n  nn.softmax(%a)\n}\n";
        let after = |g: &str| {
            format!("#[version = \"0.0.5\"]\ndef @main(%a: Tensor[(1, 5), float32]) {{\n  (nn.softmax(%a), ({g},))\n}}\n")
        };
        let (report, summary) = check("FirstOrderGradient", before, &after("zeros_like(%a)"));
        assert_eq!(report, None, "{summary}");
        assert!(summary.contains("S does not change along v"), "{summary}");
        assert!(check("FirstOrderGradient", before, &after("ones_like(%a)"))
            .0
            .is_some());
    }
}
