//! The semantic check of passes: the [`SemanticCheck`] instrument runs the
//! module before and after each pass (or only around the whole pipeline)
//! on seeded random inputs and stops the pipeline at the first pass whose
//! result differs, with a report, a reproducer directory and, if asked,
//! the first function whose rewrite changed the result.
//!
//! A difference where a result, or an operator result inside, leaves the
//! range of the narrowest float type the module computes in (float16,
//! bfloat16, float32 or float64) is checked again on the same input scaled
//! down ([`crate::range_effects`]): agreement there is the outcome "agree
//! within range" ([`CheckStats::within_range`]), not a difference; a
//! difference there is reported as one, with both.
//!
//! A difference in range is then measured against the module's own
//! sensitivity ([`crate::sensitivity`]): when the pass moved every float
//! output by at most twice what one rounding unit of the float inputs
//! moves it, the outcome is "agree within sensitivity"
//! ([`CheckStats::within_sensitivity`]); otherwise the difference is
//! reported with the sensitivity measured.
//!
//! A pass whose "before" module cannot run (an operator without a kernel,
//! a parameter without a static shape), or whose "after" module needs an
//! operator without a kernel, is not checked; the statistics say which and
//! why. A pass after which the module fails to run for another reason,
//! although it ran before, is a difference. Arguments bind to the
//! parameters of the module after the pass by name ([`crate::bind`]).
//!
//! The random inputs of every module are drawn in the domains of the
//! pipeline's input ([`crate::input_domains`]: a variance positive, an
//! exponent 2), carried to each module's parameters by name: a pass
//! may hide the use that gave a parameter its domain (SimplifyInference
//! spells out a batch norm, its variance then feeds `add` before `sqrt`),
//! and the inputs must not change with it. Scaling an input down leaves
//! those parameters as they are (an exponent of 2^-k is not even).

use crate::bind::{bind_by_name, bind_by_name_supplying, Binding, Slot};
use crate::compare::{compare_with, tolerance_text, Difference};
use crate::contract;
use crate::gradient_check::{self, GradientCheck, Outcome as GradientOutcome};
use crate::input_domains::{self, Domain};
use crate::output_cache::{Lookup, OutputCache, Outputs};
use crate::range_effects::{
    first_out_of_range, overflows, range_text, scaled_arguments, FloatRange, SCALE_SHIFTS,
};
use crate::sensitivity::{perturbed_arguments, Sensitivity};
use crate::value::Value;
use crate::{npy, npz, random_arguments_in, Limits, RuntimeError};
use relay_ir::printer::{print_module, PrintOptions};
use relay_ir::{Function, IRModule};
use relay_pass_manager::pass::{reproducer_arguments_for, running_pass_description};
use relay_pass_manager::{HookResult, LogSink, PassContext, PassInfo, PassInstrument};
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// How the result after the pass `description` differs from the result
/// before it, by what the pass promises ([`contract`]).
fn differs(description: &str, before: &Value, after: &Value) -> Option<Difference> {
    let (after, precision) = contract::comparable(description, before, after);
    compare_with(before, &after, precision)
}

/// Where the module is compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckMode {
    /// Before and after every pass, nested ones included (a `Sequential`
    /// and the passes in it; outputs are cached, so the `Sequential` costs
    /// no extra run). Hooks run innermost first, so the first difference
    /// is reported at the innermost pass that made it.
    EachPass,
    /// Only before and after the outermost pass (the whole pipeline).
    End,
}

/// What to check and how.
#[derive(Clone)]
pub struct CheckOptions {
    pub mode: CheckMode,
    /// How many inputs: seeds `first_seed .. first_seed + inputs`.
    pub inputs: u64,
    pub first_seed: u64,
    /// The global function to run.
    pub entry: String,
    /// Where to write the reproducer of a difference (none: not written).
    pub reproducer_dir: Option<PathBuf>,
    /// Narrow a difference down to the first function whose rewrite
    /// changed the result.
    pub bisect: bool,
    pub limits: Limits,
    /// Where progress and skipped checks are reported.
    pub log: Option<LogSink>,
    /// Where the outputs of each module run are kept across runs of the
    /// check (none: only in memory, for this run).
    pub output_cache: Option<OutputCache>,
}

impl Default for CheckOptions {
    fn default() -> CheckOptions {
        CheckOptions {
            mode: CheckMode::EachPass,
            inputs: 3,
            first_seed: 0,
            entry: "main".into(),
            reproducer_dir: None,
            bisect: false,
            limits: Limits::default(),
            log: None,
            output_cache: None,
        }
    }
}

/// What a difference was.
#[derive(Debug, Clone)]
pub enum Finding {
    /// Both ran; the results differ.
    Differs(Difference),
    /// The module ran before the pass and fails after it.
    FailsAfter(RuntimeError),
    /// The value agrees; the gradients a gradient pass returns do not
    /// ([`crate::gradient_check`]): what was compared.
    GradientDiffers(String),
}

/// The comparison of a difference on smaller inputs ([`SCALE_SHIFTS`]).
enum RangeOutcome {
    /// Both results within the range at 2^-shift, and they agree.
    Agrees(u32),
    /// Both within range at 2^-shift, and they differ.
    Differs(u32, Difference),
    /// No scale brought both results within range.
    NeverInRange,
}

/// The finding of a range check (on an input whose computation left
/// `range`, `unscaled` saying how; or on one whose result had no finite
/// element) that found both results within the range on the input of
/// `seed` scaled by 2^-`shift`, and `scaled` between them there.
fn differs_scaled(
    seed: u64,
    range: FloatRange,
    shift: u32,
    unscaled: String,
    scaled: Difference,
) -> (u64, Finding, Option<RangeFinding>) {
    let range = RangeFinding::StillDiffers {
        range,
        shift,
        unscaled,
    };
    (seed, Finding::Differs(scaled), Some(range))
}

/// The report of the first pass that changed the result.
#[derive(Debug, Clone)]
pub struct SemanticReport {
    /// The pass as pipeline text.
    pub pass: String,
    pub seed: u64,
    pub finding: Finding,
    /// Where the reproducer was written.
    pub reproducer: Option<PathBuf>,
    /// The function whose rewrite changed the result (with `bisect`), or
    /// why bisection could not say.
    pub bisect: Option<Result<String, String>>,
    /// The computation left its float type's range on the input: how the
    /// check tried to tell a range effect from a change.
    pub range: Option<RangeFinding>,
    /// How far the module before the pass moves its result when its float
    /// inputs move by one rounding unit, against how far the pass moved
    /// it, when that was measured (a difference in range).
    pub sensitivity: Option<Sensitivity>,
}

/// What re-running a difference on smaller inputs found.
#[derive(Debug, Clone)]
pub enum RangeFinding {
    /// On the input scaled by 2^-`shift` both results are within the
    /// range and still differ: the finding of the report is that input's.
    StillDiffers {
        /// The range the computation left.
        range: FloatRange,
        shift: u32,
        /// Both results on the unscaled input (`before: NaN at output[0]`…).
        unscaled: String,
    },
    /// No scale tried brought both results within the range: the
    /// finding is the unscaled input's, and may be a range effect.
    NeverInRange {
        /// The range the computation left.
        range: FloatRange,
        unscaled: String,
    },
}

impl std::fmt::Display for SemanticReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "pass {} changed the result on the input of seed {}",
            self.pass, self.seed
        )?;
        if let Some(RangeFinding::StillDiffers { shift, .. }) = &self.range {
            write!(f, " scaled by 2^-{shift}")?;
        }
        f.write_str(": ")?;
        match &self.finding {
            Finding::Differs(d) => write!(f, "{d}")?,
            Finding::FailsAfter(e) => write!(f, "the module now fails to run: {e}")?,
            Finding::GradientDiffers(what) => write!(f, "{what}")?,
        }
        match &self.range {
            Some(RangeFinding::StillDiffers {
                range,
                shift,
                unscaled,
            }) => write!(
                f,
                "; a real difference: unscaled, the {range} computation leaves {range}'s range \
                 ({unscaled}), scaled by 2^-{shift} both results are within it and differ"
            )?,
            Some(RangeFinding::NeverInRange { range, unscaled }) => write!(
                f,
                "; the {range} computation leaves {range}'s range ({unscaled}) and does on the \
                 input scaled by 2^-{} too: this may be a range effect, not a change by the pass",
                SCALE_SHIFTS[SCALE_SHIFTS.len() - 1]
            )?,
            None => {}
        }
        if let Some(moves) = self
            .sensitivity
            .as_ref()
            .filter(|s| !s.exact_difference)
            .and_then(Sensitivity::worst)
        {
            write!(
                f,
                "; beyond the module's sensitivity: {moves} (more than twice that, or it does \
                 not move)"
            )?;
        }
        match &self.bisect {
            Some(Ok(function)) => write!(
                f,
                "; the first function whose rewrite changes it is @{function}"
            )?,
            Some(Err(why)) => write!(f, "; bisection: {why}")?,
            None => {}
        }
        Ok(())
    }
}

/// Counts of a check.
#[derive(Debug, Clone, Default)]
pub struct CheckStats {
    /// Passes whose result was compared.
    pub checked: usize,
    /// Of those, the ones that agreed on every input.
    pub agreed: usize,
    /// Of those, the ones that agreed only within range: on an input
    /// where the computation leaves its float type's range they differ, on
    /// the same input scaled down they agree. The pass and what was seen
    /// (which names the float type).
    pub within_range: Vec<(String, String)>,
    /// Of those, the ones that agreed only within sensitivity: on an input
    /// where they differ beyond the tolerance, the pass moved every float
    /// output by at most twice what one rounding unit of the inputs moves
    /// it ([`crate::sensitivity`]). The pass and what was seen.
    pub within_sensitivity: Vec<(String, String)>,
    /// Passes that left the module structurally unchanged (nothing to run).
    pub unchanged: usize,
    /// Passes that could not be checked, and why (the module before them
    /// does not run).
    pub not_checked: Vec<(String, String)>,
    /// The dtypes of the compared tensors, for the tolerance.
    pub dtypes: BTreeSet<String>,
    /// The gradient passes whose gradients were checked against finite
    /// differences, with what was seen.
    pub gradients: Vec<GradientNote>,
    /// How many modules were run on the inputs (not in the summary: the
    /// same check with or without an [`OutputCache`] reports the same).
    pub modules_run: usize,
    /// How many modules' outputs were read from the [`OutputCache`]
    /// instead of being run.
    pub cache_hits: usize,
}

/// The gradient check of one gradient pass over the inputs.
#[derive(Debug, Clone, Default)]
pub struct GradientNote {
    /// The pass as pipeline text.
    pub pass: String,
    /// How many inputs the gradient check ran on.
    pub inputs: usize,
    /// Of those, the seeds where the gradients agree, with the comparison
    /// that agreed.
    pub agreed: Vec<(u64, gradient_check::Comparison)>,
    /// The seeds where the gradients could not be checked, and why.
    pub not_checked: Vec<(u64, String)>,
}

impl GradientNote {
    /// The summary's lines for this pass.
    fn render(&self, out: &mut String) {
        if let Some((seed, worst)) = self
            .agreed
            .iter()
            .max_by(|a, b| a.1.ratio().total_cmp(&b.1.ratio()).then(b.0.cmp(&a.0)))
        {
            let _ = writeln!(
                out,
                "  gradient ({}): agrees with central finite differences on {} of {} inputs; \
                 closest to the allowance on seed {seed}: {worst}",
                self.pass,
                self.agreed.len(),
                self.inputs,
            );
        }
        for (seed, why) in &self.not_checked {
            let _ = writeln!(
                out,
                "  gradient not checked ({}) on the input of seed {seed}: {why}",
                self.pass
            );
        }
    }
}

impl CheckStats {
    /// A summary of a few lines.
    pub fn render(&self) -> String {
        let within = if self.within_range.is_empty() {
            String::new()
        } else {
            format!(", {} agree within range", self.within_range.len())
        };
        let sensitive = if self.within_sensitivity.is_empty() {
            String::new()
        } else {
            format!(
                ", {} agree within sensitivity",
                self.within_sensitivity.len()
            )
        };
        let mut out = format!(
            "semantic check: {} pass{} compared, {} agree{within}{sensitive}; {} left the module unchanged; {} not checked\n",
            self.checked,
            if self.checked == 1 { "" } else { "es" },
            self.agreed,
            self.unchanged,
            self.not_checked.len()
        );
        for (pass, note) in &self.within_range {
            let _ = writeln!(out, "  agree within range ({pass}): {note}");
        }
        for (pass, note) in &self.within_sensitivity {
            let _ = writeln!(out, "  agree within sensitivity ({pass}): {note}");
        }
        for note in &self.gradients {
            note.render(&mut out);
        }
        for dtype in &self.dtypes {
            if let Ok(d) = relay_ir::dtype::DataType::parse(dtype) {
                let _ = writeln!(out, "  tolerance {}", tolerance_text(d));
            }
        }
        let mut reasons: Vec<&str> = self
            .not_checked
            .iter()
            .map(|(_, why)| why.as_str())
            .collect();
        reasons.dedup();
        for why in reasons {
            let passes: Vec<&str> = self
                .not_checked
                .iter()
                .filter(|(_, w)| w == why)
                .map(|(p, _)| p.as_str())
                .collect();
            let _ = writeln!(out, "  not checked ({}): {why}", passes.join(", "));
        }
        out
    }
}

/// Whether no output that ran has a finite element (and at least one ran).
fn nothing_finite(outputs: &[Result<Value, RuntimeError>]) -> bool {
    let mut ran = outputs.iter().flatten().peekable();
    ran.peek().is_some() && ran.all(|value| !has_finite_element(value))
}

/// Whether a value has a finite element: an integer or boolean one, or a
/// float that is neither NaN nor infinite.
fn has_finite_element(value: &Value) -> bool {
    value.leaves().iter().any(|leaf| {
        let t = &leaf.tensor;
        !t.dtype.is_float() && !t.is_empty()
            || (0..t.len()).any(|i| t.get_f64(i).is_ok_and(f64::is_finite))
    })
}

struct Entry {
    before: IRModule,
    description: String,
}

/// How many modules' outputs are kept: the modules before the passes that
/// are running (nested) and the last result.
const CACHED_MODULES: usize = 6;

/// Whether two modules are the same program: the same functions (the same
/// nodes, or structurally equal) and the same type definitions.
fn same_module(a: &IRModule, b: &IRModule) -> bool {
    a.function_count() == b.function_count()
        && a.functions().all(|(name, f)| {
            b.function(name).is_some_and(|g| {
                f.expr().ptr_eq(g.expr())
                    || relay_ir::equal::structural_equal(f.expr(), g.expr(), false)
            })
        })
        && a.type_definitions()
            .map(|(n, _)| n)
            .eq(b.type_definitions().map(|(n, _)| n))
}

#[derive(Default)]
struct State {
    stack: Vec<Entry>,
    /// The outputs of the last modules run.
    cache: Vec<(IRModule, Outputs)>,
    stats: CheckStats,
    report: Option<SemanticReport>,
    /// Why the check stopped before the end (time limit, cancellation).
    stopped: Option<String>,
    /// The entry function of the first module the check saw (the
    /// pipeline's input) and its parameters' domains.
    input: Option<(Function, Vec<Domain>)>,
}

/// The instrument. Add it to a `PassContext`'s instruments; after the run
/// ask [`SemanticCheck::report`] and [`SemanticCheck::stats`].
pub struct SemanticCheck {
    options: CheckOptions,
    state: Mutex<State>,
}

impl SemanticCheck {
    pub fn new(options: CheckOptions) -> SemanticCheck {
        SemanticCheck {
            options,
            state: Mutex::default(),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The first difference found, if any.
    pub fn report(&self) -> Option<SemanticReport> {
        self.state().report.clone()
    }

    /// Why the check was stopped from outside (its limits' deadline or
    /// cancel flag), if it was: the pipeline then fails with that message.
    pub fn stopped(&self) -> Option<String> {
        self.state().stopped.clone()
    }

    pub fn stats(&self) -> CheckStats {
        self.state().stats.clone()
    }

    fn seeds(&self) -> impl Iterator<Item = u64> {
        let first = self.options.first_seed;
        (0..self.options.inputs.max(1)).map(move |i| first.wrapping_add(i))
    }

    /// The arguments of every seed, from the entry's parameter types in
    /// `module`.
    fn arguments(&self, module: &IRModule) -> Result<Vec<Vec<Value>>, String> {
        let entry = &self.options.entry;
        let function = module
            .function(entry)
            .ok_or_else(|| format!("the module has no @{entry} to run"))?;
        let domains = self.domains(function);
        self.seeds()
            .map(|seed| random_arguments_in(function, seed, &domains, self.options.limits.clone()))
            .collect()
    }

    /// The domains of the parameters of `function` (an entry function):
    /// those of the pipeline's input carried to them by name; a parameter
    /// the input did not have, or when the names cannot tell, none.
    fn domains(&self, function: &Function) -> Vec<Domain> {
        let state = self.state();
        let Some((input, domains)) = &state.input else {
            return input_domains::input_domains(function);
        };
        let params = function.params().len();
        match bind_by_name(input, function) {
            Ok(Binding::Same) if domains.len() == params => domains.clone(),
            Ok(Binding::Reordered { slots, .. }) => slots
                .iter()
                .map(|slot| match slot {
                    Slot::Argument(j) => domains.get(*j).copied().unwrap_or_default(),
                    Slot::Supplied(_) => Domain::Any,
                })
                .collect(),
            _ => vec![Domain::Any; params],
        }
    }

    /// `args` (of `module`'s entry) scaled by 2^-`shift`, but for the
    /// parameters drawn in a domain, which scaling would take out of it.
    fn scaled(&self, module: &IRModule, args: &[Value], shift: u32) -> Vec<Value> {
        scaled_arguments(args, shift, &self.kept(module))
    }

    /// Which of `module`'s parameters keep their values when the check
    /// moves its inputs (scaled down, perturbed): those drawn in a domain.
    fn kept(&self, module: &IRModule) -> Vec<bool> {
        match module.function(&self.options.entry) {
            Some(function) => self
                .domains(function)
                .iter()
                .map(|d| *d != Domain::Any)
                .collect(),
            None => Vec::new(),
        }
    }

    /// Runs `before` on `args` with every float input moved by one
    /// rounding unit and measures how far that moves its result `b`,
    /// against how far the pass `description` moved it (`a`).
    fn sensitivity(
        &self,
        before: &IRModule,
        description: &str,
        args: &[Value],
        b: &Value,
        a: &Value,
    ) -> Result<Option<Sensitivity>, String> {
        let perturbed = perturbed_arguments(args, &self.kept(before));
        let moved = crate::run(
            before,
            &self.options.entry,
            perturbed,
            self.options.limits.clone(),
        );
        self.fail_if_stopped(std::slice::from_ref(&moved))?;
        let (a, _) = contract::comparable(description, b, a);
        // A module that fails on the moved input says nothing of S.
        Ok(moved.ok().map(|p| Sensitivity::measure(b, &a, &p)))
    }

    fn run_all(&self, module: &IRModule, args: &[Vec<Value>]) -> Outputs {
        args.iter()
            .map(|a| {
                crate::run(
                    module,
                    &self.options.entry,
                    a.clone(),
                    self.options.limits.clone(),
                )
            })
            .collect()
    }

    /// How the arguments of `before`'s entry bind to `after`'s (a
    /// parameter the pass `description` added gets what its contract
    /// supplies).
    fn binding(
        &self,
        before: &IRModule,
        after: &IRModule,
        description: &str,
    ) -> Result<Binding, String> {
        let entry = &self.options.entry;
        match (before.function(entry), after.function(entry)) {
            (Some(old), Some(new)) => bind_by_name_supplying(old, new, &|i| {
                contract::continuation_argument(description, new, i)
            }),
            // No entry after the pass: running it says so.
            _ => Ok(Binding::Same),
        }
    }

    fn log(&self, text: &str) {
        if let Some(log) = &self.options.log {
            log(text);
        }
    }

    /// The outputs of `module`, from the cache or run now (and cached).
    fn outputs(&self, module: &IRModule, args: &[Vec<Value>]) -> Outputs {
        let cached = self
            .state()
            .cache
            .iter()
            .find(|(m, _)| same_module(m, module))
            .map(|(_, o)| o.clone());
        if let Some(outputs) = cached {
            return outputs;
        }
        let stored = self.options.output_cache.as_ref().map(|cache| {
            let seeds: Vec<u64> = self.seeds().collect();
            let domains = match module.function(&self.options.entry) {
                Some(function) => input_domains::describe(function, &self.domains(function)),
                None => String::new(),
            };
            let key = cache.key(
                module,
                &self.options.entry,
                &seeds,
                &domains,
                &self.options.limits,
            );
            (cache, key)
        });
        let mut outputs = None;
        if let Some((cache, key)) = &stored {
            match cache.load(key) {
                Lookup::Hit(hit) if hit.len() == args.len() => outputs = Some(hit),
                Lookup::Hit(_) => self.log(&format!(
                    "note: the semantic-check cache in {} holds another number of outputs; \
                     computed again",
                    cache.dir().display()
                )),
                Lookup::Miss => {}
                Lookup::Unusable(why) => self.log(&format!(
                    "note: semantic-check cache entry not used ({why}); computed again"
                )),
            }
        }
        let outputs = match outputs {
            Some(hit) => {
                self.state().stats.cache_hits += 1;
                hit
            }
            None => {
                let outputs = self.run_all(module, args);
                self.state().stats.modules_run += 1;
                if stop_message(&outputs).is_some() {
                    return outputs;
                }
                if let Some((cache, key)) = &stored {
                    if let Err(why) = cache.store(key, &outputs) {
                        self.log(&format!("note: semantic-check cache: {why}"));
                    }
                }
                outputs
            }
        };
        let mut state = self.state();
        if state.cache.len() >= CACHED_MODULES {
            state.cache.remove(0);
        }
        state.cache.push((module.clone(), outputs.clone()));
        outputs
    }

    /// Ends the check when a run was stopped from outside: a stopped run
    /// says nothing about the pass.
    fn fail_if_stopped(&self, outputs: &[Result<Value, RuntimeError>]) -> HookResult {
        match stop_message(outputs) {
            Some(message) => {
                let message = format!("semantic check stopped: {message}");
                self.state().stopped = Some(message.clone());
                Err(message)
            }
            None => Ok(()),
        }
    }

    /// Compares `before` with `after` for the pass `description`.
    fn check(&self, before: &IRModule, after: &IRModule, description: &str) -> HookResult {
        if same_module(before, after) {
            self.state().stats.unchanged += 1;
            return Ok(());
        }
        let args = match self.arguments(before) {
            Ok(args) => args,
            Err(why) => {
                self.state()
                    .stats
                    .not_checked
                    .push((description.to_string(), why));
                return Ok(());
            }
        };
        let outputs_before = self.outputs(before, &args);
        self.fail_if_stopped(&outputs_before)?;
        if let Some(Err(e)) = outputs_before.iter().find(|o| o.is_err()) {
            if outputs_before.iter().all(Result::is_err) {
                let why = format!("the module before it does not run: {}", e.message);
                self.state()
                    .stats
                    .not_checked
                    .push((description.to_string(), why));
                return Ok(());
            }
        }
        let binding = match self.binding(before, after, description) {
            Ok(binding) => binding,
            Err(why) => {
                self.state()
                    .stats
                    .not_checked
                    .push((description.to_string(), why));
                return Ok(());
            }
        };
        if !binding.dropped().is_empty() {
            self.log(&format!(
                "note: {description} removed @{}'s parameter{} {}; compared without {}",
                self.options.entry,
                if binding.dropped().len() == 1 {
                    ""
                } else {
                    "s"
                },
                binding.dropped().join(", "),
                if binding.dropped().len() == 1 {
                    "it"
                } else {
                    "them"
                },
            ));
        }
        for supplied in binding.supplied() {
            self.log(&format!(
                "note: {description} added @{}'s parameter {}; compared with {} = {}",
                self.options.entry, supplied.parameter, supplied.parameter, supplied.text
            ));
        }
        let outputs_after = if binding.is_same() {
            self.outputs(after, &args)
        } else {
            // Not cached: these are not the arguments the module's own
            // parameter order would draw, which a later pass compares with.
            let rebound: Vec<Vec<Value>> = args.iter().map(|a| binding.apply(a)).collect();
            self.run_all(after, &rebound)
        };
        self.fail_if_stopped(&outputs_after)?;
        // An operator the evaluator cannot run after the pass (FastMath's
        // `fast_exp`) says nothing about the pass.
        if let Some(Err(e)) = outputs_after
            .iter()
            .zip(&outputs_before)
            .find(|(a, b)| b.is_ok() && a.as_ref().is_err_and(|e| e.missing_kernel.is_some()))
            .map(|(a, _)| a)
        {
            let why = format!("the module after it does not run: {}", e.message);
            self.state()
                .stats
                .not_checked
                .push((description.to_string(), why));
            return Ok(());
        }
        let mut finding = None;
        // The inputs on which the results agree only within range, with
        // what was seen.
        let mut within_range = None;
        // The inputs on which the results agree only within sensitivity,
        // and the sensitivity measured at the difference.
        let mut within_sensitivity = None;
        let mut sensitivity = None;
        // The range of the computation, found at the first difference.
        let mut float_range = None;
        let mut dtypes = BTreeSet::new();
        let mut gradient_note = GradientNote {
            pass: description.to_string(),
            ..GradientNote::default()
        };
        for (index, (seed, b)) in self.seeds().zip(&outputs_before).enumerate() {
            let Ok(b) = b else { continue };
            // Compared as the pass's contract says (once per input); the
            // tolerance shown is the one compared with: a pass whose
            // contract compares floats at a lower precision (ToMixedPrecision)
            // names that precision, not the dtype before it.
            let (found, precision) = match &outputs_after[index] {
                Ok(a) => {
                    let (comparable, precision) = contract::comparable(description, b, a);
                    let found = compare_with(b, &comparable, precision).map(Finding::Differs);
                    (found, precision)
                }
                Err(e) => (Some(Finding::FailsAfter(e.clone())), None),
            };
            for leaf in b.leaves() {
                let dtype = match precision {
                    Some(low) if leaf.tensor.dtype.is_float() => low,
                    _ => leaf.tensor.dtype,
                };
                dtypes.insert(dtype.to_string());
            }
            let Some(found) = found else {
                // Agreement on a result with no finite element compares
                // nothing. On smaller inputs the computation may stay in
                // range (resnet50's float32 activations overflow, and
                // `inf - inf` is NaN): the results are compared there.
                if !has_finite_element(b) {
                    let range =
                        *float_range.get_or_insert_with(|| FloatRange::of(&[before, after]));
                    if let Some(range) = range {
                        let unscaled = format!(
                            "no element of the result before the pass is finite ({})",
                            range_text(b)
                        );
                        let args = &args[index];
                        match self.within_range(before, after, description, &binding, args)? {
                            RangeOutcome::Agrees(shift) => {
                                within_range.get_or_insert(format!(
                                    "on the input of seed {seed} {unscaled}; scaled by \
                                     2^-{shift}, both results are within {range}'s range and agree"
                                ));
                                continue;
                            }
                            RangeOutcome::Differs(shift, scaled) => {
                                finding =
                                    Some(differs_scaled(seed, range, shift, unscaled, scaled));
                                break;
                            }
                            // Not in range at any scale: nothing compared
                            // (said once the inputs are done).
                            RangeOutcome::NeverInRange => {}
                        }
                    }
                }
                if let Some(gradient_finding) = self.check_gradients(
                    before,
                    description,
                    &binding,
                    (seed, &args[index]),
                    &outputs_after[index],
                    &mut gradient_note,
                )? {
                    finding = Some((seed, gradient_finding, None));
                    break;
                }
                continue;
            };
            let Ok(a) = &outputs_after[index] else {
                finding = Some((seed, found, None));
                break;
            };
            // A module without floats has no range to leave.
            let Some(range) = *float_range.get_or_insert_with(|| FloatRange::of(&[before, after]))
            else {
                finding = Some((seed, found, None));
                break;
            };
            let outputs_out = first_out_of_range(b).is_some() || first_out_of_range(a).is_some();
            // Outputs in range say nothing of what is inside: a softmax
            // maps logits that overflowed back into [0, 1]. Nor do NaN
            // outputs say where the computation left the range (resnet152's
            // float32 activations reach infinity, the softmax after
            // SimplifyInference's arithmetic gives NaN), so the operator
            // results are read then too. The watch runs only here, on a
            // difference: it reads every operator result.
            let mut inside = None;
            if !(overflows(b) || overflows(a)) {
                inside = self.operator_out_of_range(before, after, &binding, &args[index])?;
            }
            if !outputs_out && inside.is_none() {
                let measured = self.sensitivity(before, description, &args[index], b, a)?;
                if let Some(measured) = measured.as_ref().filter(|m| m.explains()) {
                    within_sensitivity.get_or_insert(format!(
                        "on the input of seed {seed} {}; {measured}",
                        found_text(&found)
                    ));
                    continue;
                }
                sensitivity = measured;
                finding = Some((seed, found, None));
                break;
            }
            let outputs = format!("before: {}, after: {}", range_text(b), range_text(a));
            let unscaled = match (&inside, outputs_out) {
                (Some(at), false) => format!("{at}; the outputs are in range, {outputs}"),
                (Some(at), true) => format!("{at}; {outputs}"),
                (None, _) => outputs,
            };
            match self.within_range(before, after, description, &binding, &args[index])? {
                RangeOutcome::Agrees(shift) => {
                    within_range.get_or_insert(format!(
                        "on the input of seed {seed} the {range} computation goes out of range \
                         ({unscaled}); scaled by 2^-{shift}, both results are within {range}'s \
                         range and agree"
                    ));
                }
                RangeOutcome::Differs(shift, scaled) => {
                    finding = Some(differs_scaled(seed, range, shift, unscaled, scaled));
                    break;
                }
                RangeOutcome::NeverInRange => {
                    let range = RangeFinding::NeverInRange { range, unscaled };
                    finding = Some((seed, found, Some(range)));
                    break;
                }
            }
        }
        {
            let mut state = self.state();
            // A result with no finite element before the pass, on every
            // input and at every scale tried (gpt2's layer norm raises a
            // negative base to a random exponent), agrees with any rewrite
            // that keeps it so; nothing was compared.
            if finding.is_none() && within_range.is_none() && nothing_finite(&outputs_before) {
                let why = format!(
                    "before the pass, no element of the result is finite on the random input{} \
                     (every one is NaN or infinite), nor on the input scaled down: nothing to \
                     compare",
                    if outputs_before.len() == 1 { "" } else { "s" }
                );
                state.stats.not_checked.push((description.to_string(), why));
                return Ok(());
            }
            state.stats.dtypes.extend(dtypes);
            if gradient_note.inputs > 0 {
                state.stats.gradients.push(gradient_note);
            }
            state.stats.checked += 1;
            match (&finding, within_range, within_sensitivity) {
                (Some(_), _, _) => {}
                (None, Some(note), _) => state
                    .stats
                    .within_range
                    .push((description.to_string(), note)),
                (None, None, Some(note)) => state
                    .stats
                    .within_sensitivity
                    .push((description.to_string(), note)),
                (None, None, None) => state.stats.agreed += 1,
            }
        }
        let Some((seed, finding, range)) = finding else {
            return Ok(());
        };
        let index = (seed - self.options.first_seed) as usize;
        let mut report = SemanticReport {
            pass: description.to_string(),
            seed,
            finding,
            reproducer: None,
            bisect: None,
            range,
            sensitivity,
        };
        if let Finding::GradientDiffers(_) = &report.finding {
            report.bisect = self.options.bisect.then(|| {
                Err("the value agrees; bisection compares values, not gradients".to_string())
            });
        } else if self.options.bisect {
            // A difference found on a scaled input is bisected on it.
            let (bisect_args, reference) = match &report.range {
                Some(RangeFinding::StillDiffers { shift, .. }) => {
                    let scaled = self.scaled(before, &args[index], *shift);
                    let entry = &self.options.entry;
                    let reference =
                        crate::run(before, entry, scaled.clone(), self.options.limits.clone());
                    (scaled, reference)
                }
                _ => (args[index].clone(), outputs_before[index].clone()),
            };
            report.bisect = Some(self.bisect(before, after, description, &bisect_args, &reference));
        }
        if let Some(dir) = &self.options.reproducer_dir {
            let before_out = outputs_before[index].as_ref().ok();
            let after_out = outputs_after[index].as_ref().ok();
            let case = Case {
                module: before,
                entry: &self.options.entry,
                description,
                seed,
                args: &args[index],
            };
            match write_reproducer(dir, &case, before_out, after_out) {
                Ok(()) => report.reproducer = Some(dir.clone()),
                Err(e) => self.log(&format!("warning: could not write the reproducer: {e}")),
            }
        }
        let message = report.to_string();
        self.state().report = Some(report);
        Err(message)
    }

    /// For a gradient pass ([`contract::gradient_seeding`]) whose value
    /// agreed on the input of `seed`: checks the gradients it returned
    /// against finite differences of `before` ([`crate::gradient_check`]),
    /// noting the outcome; the finding when they differ.
    fn check_gradients(
        &self,
        before: &IRModule,
        description: &str,
        binding: &Binding,
        (seed, args): (u64, &[Value]),
        after: &Result<Value, RuntimeError>,
        note: &mut GradientNote,
    ) -> Result<Option<Finding>, String> {
        let Some(seeding) = contract::gradient_seeding(description) else {
            return Ok(None);
        };
        // Checked at the gradient pass inside: the pipeline around it
        // would only run the finite differences again.
        if self.options.mode == CheckMode::EachPass && description.starts_with("Sequential(") {
            return Ok(None);
        }
        let Ok(Value::Tuple(fields)) = after else {
            return Ok(None);
        };
        let [_, gradients] = &fields[..] else {
            return Ok(None);
        };
        let names: Vec<String> = before
            .function(&self.options.entry)
            .map(|f| {
                f.params()
                    .iter()
                    .map(|p| format!("%{}", p.name()))
                    .collect()
            })
            .unwrap_or_default();
        let check = GradientCheck {
            args,
            names: &names,
            gradients,
            argument_of: &|i| binding.argument_of(i),
            seeding,
            seed,
        };
        let run =
            |a: Vec<Value>| crate::run(before, &self.options.entry, a, self.options.limits.clone());
        let outcome = match check.run(&run) {
            Ok(outcome) => outcome,
            Err(stopped) => {
                self.fail_if_stopped(&[Err(stopped)])?;
                return Ok(None);
            }
        };
        note.inputs += 1;
        Ok(match outcome {
            GradientOutcome::Agrees(comparison) => {
                note.agreed.push((seed, comparison));
                None
            }
            GradientOutcome::NotChecked(why) => {
                note.not_checked.push((seed, why));
                None
            }
            GradientOutcome::Malformed(why) => Some(Finding::GradientDiffers(format!(
                "the value agrees, the gradients do not fit the parameters: {why}"
            ))),
            GradientOutcome::Differs(comparisons) => {
                let seen: Vec<String> = comparisons.iter().map(|c| c.to_string()).collect();
                Some(Finding::GradientDiffers(format!(
                    "the value agrees, the gradient does not: along a random direction v, the \
                     derivative of S ({}) the gradients claim differs from central finite \
                     differences of the module before the pass by more than {:e} (relative): {}",
                    seeding.describe(),
                    gradient_check::RELATIVE_TOLERANCE,
                    seen.join("; ")
                )))
            }
        })
    }

    /// Runs `module` on `args` with the interpreter's overflow watch: the
    /// result, and where an operator result first overflowed.
    fn run_watching(
        &self,
        module: &IRModule,
        args: Vec<Value>,
    ) -> Result<(Result<Value, RuntimeError>, Option<String>), String> {
        let (result, left_range) = crate::run_watching_overflow(
            module,
            &self.options.entry,
            args,
            self.options.limits.clone(),
        );
        self.fail_if_stopped(std::slice::from_ref(&result))?;
        Ok((result, left_range))
    }

    /// Where an operator result of `before` or `after` on `args` first
    /// overflowed, when their outputs did not.
    fn operator_out_of_range(
        &self,
        before: &IRModule,
        after: &IRModule,
        binding: &Binding,
        args: &[Value],
    ) -> Result<Option<String>, String> {
        if let (_, Some(at)) = self.run_watching(before, args.to_vec())? {
            return Ok(Some(format!("before the pass, {at}")));
        }
        let (_, at) = self.run_watching(after, binding.apply(args))?;
        Ok(at.map(|at| format!("after the pass, {at}")))
    }

    /// Runs `before` and `after` on `args` scaled down by each of
    /// [`SCALE_SHIFTS`] in turn and compares at the first scale where both
    /// runs stay in range (every element of their results finite, no
    /// operator result inside overflowed).
    fn within_range(
        &self,
        before: &IRModule,
        after: &IRModule,
        description: &str,
        binding: &Binding,
        args: &[Value],
    ) -> Result<RangeOutcome, String> {
        for shift in SCALE_SHIFTS {
            let scaled = self.scaled(before, args, shift);
            let after_args = binding.apply(&scaled);
            let (b, inside_before) = self.run_watching(before, scaled)?;
            let (a, inside_after) = self.run_watching(after, after_args)?;
            let (Ok(b), Ok(a)) = (b, a) else {
                continue;
            };
            if first_out_of_range(&b).is_some()
                || first_out_of_range(&a).is_some()
                || inside_before.is_some()
                || inside_after.is_some()
            {
                continue;
            }
            return Ok(match differs(description, &b, &a) {
                None => RangeOutcome::Agrees(shift),
                Some(d) => RangeOutcome::Differs(shift, d),
            });
        }
        Ok(RangeOutcome::NeverInRange)
    }

    /// The first global function (in name order) whose rewritten version,
    /// put into the module before the pass together with the rewrites of
    /// the functions before it, changes the result.
    fn bisect(
        &self,
        before: &IRModule,
        after: &IRModule,
        description: &str,
        args: &[Value],
        reference: &Result<Value, RuntimeError>,
    ) -> Result<String, String> {
        let Ok(reference) = reference else {
            return Err("the module before the pass does not run".into());
        };
        let changed: Vec<&str> = after
            .functions()
            .filter(|(name, f)| {
                before.function(name).is_none_or(|old| {
                    !relay_ir::equal::structural_equal(old.expr(), f.expr(), false)
                })
            })
            .map(|(name, _)| name)
            .collect();
        if changed.is_empty() {
            return Err("no function changed (the pass changed type definitions)".into());
        }
        for k in 0..changed.len() {
            // After's module (its type definitions, new functions) with the
            // functions after position k as they were before the pass.
            let mut hybrid = after.clone();
            for name in &changed[k + 1..] {
                if let Some(old) = before.function(name) {
                    hybrid.add_function(name, old.clone());
                }
            }
            for (name, old) in before.functions() {
                if hybrid.function(name).is_none() {
                    hybrid.add_function(name, old.clone());
                }
            }
            let hybrid_args = self.binding(before, &hybrid, description)?.apply(args);
            let differs = match crate::run(
                &hybrid,
                &self.options.entry,
                hybrid_args,
                self.options.limits.clone(),
            ) {
                Ok(v) => differs(description, reference, &v).is_some(),
                Err(e) if e.stopped => return Err(format!("stopped: {}", e.message)),
                Err(_) => true,
            };
            if differs {
                return Ok(changed[k].to_string());
            }
        }
        Err(format!(
            "no single rewrite changes the result alone ({} functions changed)",
            changed.len()
        ))
    }
}

/// A finding as the notes of the summary say it.
fn found_text(found: &Finding) -> String {
    match found {
        Finding::Differs(d) => format!("the results differ: {d}"),
        Finding::FailsAfter(e) => format!("the module fails after the pass: {e}"),
        Finding::GradientDiffers(what) => what.clone(),
    }
}

/// The message of the first run that was stopped from outside.
fn stop_message(outputs: &[Result<Value, RuntimeError>]) -> Option<String> {
    outputs.iter().find_map(|o| match o {
        Err(e) if e.stopped => Some(e.message.clone()),
        _ => None,
    })
}

/// A parameter's name for files: its name, or `p<i>` when it has none or
/// shares it with another parameter.
pub fn parameter_file_names(module: &IRModule, entry: &str) -> Vec<String> {
    let Some(function) = module.function(entry) else {
        return Vec::new();
    };
    let names: Vec<&str> = function.params().iter().map(|p| p.name()).collect();
    names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let plain = !n.is_empty()
                && n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
                && names.iter().filter(|m| *m == n).count() == 1;
            if plain {
                n.to_string()
            } else {
                format!("p{i}")
            }
        })
        .collect()
}

/// Writes a value as `.npy` (a tensor) or `.npz` (anything else: its
/// tensors in order); returns the file name used.
pub fn write_value(dir: &Path, stem: &str, value: &Value) -> Result<String, String> {
    match value {
        Value::Tensor(t) => {
            let name = format!("{stem}.npy");
            std::fs::write(dir.join(&name), npy::write_npy(t)?).map_err(|e| e.to_string())?;
            Ok(name)
        }
        other => {
            let leaves = other.leaves();
            let arrays: Vec<(String, &relay_ir::metadata::TensorData)> = leaves
                .iter()
                .enumerate()
                .map(|(i, l)| (format!("output_{i}"), &*l.tensor))
                .collect();
            let name = format!("{stem}.npz");
            std::fs::write(dir.join(&name), npz::write_npz(&arrays)?).map_err(|e| e.to_string())?;
            Ok(name)
        }
    }
}

/// The failing pass and input.
struct Case<'a> {
    module: &'a IRModule,
    entry: &'a str,
    description: &'a str,
    seed: u64,
    args: &'a [Value],
}

/// The reproducer: `before.relay` and `pipeline.txt` as `--reproducer`
/// writes them (the pipeline checks the one pass on the one input), the
/// inputs under `inputs/`, and the outputs before and after the pass.
fn write_reproducer(
    dir: &Path,
    case: &Case<'_>,
    output_before: Option<&Value>,
    output_after: Option<&Value>,
) -> Result<(), String> {
    let Case {
        module,
        entry,
        description,
        seed,
        args,
    } = *case;
    let io = |e: std::io::Error| e.to_string();
    std::fs::create_dir_all(dir.join("inputs")).map_err(io)?;
    let text = print_module(module, &PrintOptions::default());
    std::fs::write(dir.join("before.relay"), &text).map_err(io)?;
    // The printer makes names unique across the module (`%x` may print as
    // `%x2`): the input files take the names `relay run` will see.
    let (printed, _) = relay_lower::parse_and_lower("before.relay", &text);
    let ctx = PassContext::current();
    std::fs::write(
        dir.join("pipeline.txt"),
        format!(
            "{} --check-semantics=end:1 --check-seed {seed}\n",
            reproducer_arguments_for(description, &ctx)
        ),
    )
    .map_err(io)?;
    for (name, value) in parameter_file_names(&printed, entry).iter().zip(args) {
        write_value(&dir.join("inputs"), name, value)?;
    }
    if let Some(v) = output_before {
        write_value(dir, "output_before", v)?;
    }
    if let Some(v) = output_after {
        write_value(dir, "output_after", v)?;
    }
    Ok(())
}

impl PassInstrument for SemanticCheck {
    fn name(&self) -> &str {
        "SemanticCheck"
    }

    fn run_before_pass(&self, module: &IRModule, info: &PassInfo) -> HookResult {
        let description = running_pass_description().unwrap_or_else(|| info.name.clone());
        let mut state = self.state();
        if state.input.is_none() {
            if let Some(function) = module.function(&self.options.entry) {
                let domains = input_domains::input_domains(function);
                state.input = Some((function.clone(), domains));
            }
        }
        state.stack.push(Entry {
            before: module.clone(),
            description,
        });
        Ok(())
    }

    fn run_after_pass(&self, module: &IRModule, _info: &PassInfo) -> HookResult {
        let entry = {
            let mut state = self.state();
            let Some(entry) = state.stack.pop() else {
                return Ok(());
            };
            if self.options.mode == CheckMode::End && !state.stack.is_empty() {
                return Ok(());
            }
            entry
        };
        self.check(&entry.before, module, &entry.description)
    }
}
