//! Random well-typed Relay modules: global functions whose bodies are
//! chains of `let`s binding operator calls (any operator of the table, see
//! [`super::calls`]), tuples and projections, `if`s, local functions and
//! calls of other globals.
//!
//! Each operator call is type-checked on its own before it is kept (its
//! free variables are annotated parameters, so its type is the type it has
//! in the program); rejected proposals are kept too, as inputs that must
//! produce diagnostics. Every other construct is well typed by
//! construction, and the finished module is checked as a whole.

use super::calls::{plan_call, random_tensor, ArgPlan, Limits};
use super::entropy::Entropy;
use super::typing::{check_module, standalone_module, Ty, TyKind};
use relay_passes::op;

/// A generated module.
pub struct Generated {
    pub text: String,
    /// Whether the whole module type-checks (InferType reports no error).
    pub well_typed: bool,
    /// Standalone modules whose one call InferType rejected.
    pub rejected: Vec<String>,
    /// Operator calls kept / proposed.
    pub calls_kept: usize,
    pub calls_proposed: usize,
    /// Rejected proposals InferType gave no error for (but no type either):
    /// must stay 0.
    pub silent_rejections: Vec<String>,
}

/// How many rejected standalone modules a [`Generated`] keeps.
const KEEP_REJECTED: usize = 4;

/// Generates a module from `e`.
pub fn generate(e: &mut Entropy, limits: Limits) -> Generated {
    let mut gen = ModuleGen {
        limits,
        counter: 0,
        globals: Vec::new(),
        rejected: Vec::new(),
        silent: Vec::new(),
        calls_kept: 0,
        calls_proposed: 0,
    };
    let mut text = String::from("#[version = \"0.0.5\"]\n");
    let helper_count = e.below(3);
    for k in 0..helper_count {
        let name = format!("g{k}");
        let (definition, signature) = gen.function(e, &name, 1);
        text.push_str(&definition);
        if signature.ret.is_writable() {
            gen.globals.push(signature);
        }
    }
    let (definition, _) = gen.function(e, "main", 0);
    text.push_str(&definition);
    let checked = check_module(&text);
    Generated {
        well_typed: !checked.diagnostics.has_errors(),
        text,
        rejected: gen.rejected,
        calls_kept: gen.calls_kept,
        calls_proposed: gen.calls_proposed,
        silent_rejections: gen.silent,
    }
}

struct GlobalSig {
    name: String,
    params: Vec<Ty>,
    ret: Ty,
}

struct ModuleGen {
    limits: Limits,
    counter: usize,
    globals: Vec<GlobalSig>,
    rejected: Vec<String>,
    silent: Vec<String>,
    calls_kept: usize,
    calls_proposed: usize,
}

/// The function being generated: its parameters (added as statements need
/// them) and the values visible at the current point, innermost last.
#[derive(Default)]
struct FnGen {
    params: Vec<(String, Ty)>,
    scopes: Vec<Vec<(String, Ty)>>,
}

impl FnGen {
    fn visible(&self) -> impl Iterator<Item = &(String, Ty)> {
        self.params.iter().chain(self.scopes.iter().flatten())
    }

    fn define(&mut self, name: String, ty: Ty) {
        self.scopes
            .last_mut()
            .expect("a scope is open")
            .push((name, ty));
    }
}

/// An expression for a value of some type, and the parameter it needs if
/// it is a new one.
struct Bound {
    text: String,
    new_param: Option<(String, Ty)>,
    /// The variable it refers to, with its type (for standalone checks).
    var: Option<(String, Ty)>,
}

/// A literal of a scalar type, where the text format has one.
fn scalar_literal(e: &mut Entropy, dtype: &str) -> Option<String> {
    let value = *e.pick(&[0, 1, 2, 3]);
    Some(match dtype {
        "float32" => {
            if e.chance(50) {
                format!("{value}f")
            } else {
                format!("{value}.5f")
            }
        }
        "float64" => format!("{value}f64"),
        "float16" => format!("{value}f16"),
        "int32" => format!("{value}"),
        "int64" => format!("{value}i64"),
        "bool" => if value % 2 == 0 { "False" } else { "True" }.to_string(),
        _ => return None,
    })
}

impl ModuleGen {
    fn fresh(&mut self, prefix: &str) -> String {
        self.counter += 1;
        format!("{prefix}{}", self.counter)
    }

    /// `def @name(...) { ... }` and its signature.
    fn function(&mut self, e: &mut Entropy, name: &str, depth: usize) -> (String, GlobalSig) {
        let mut f = FnGen::default();
        let statements = e.range(1, 6) as usize;
        let (body, (result, ret)) = self.block(e, &mut f, depth, statements, None);
        let params: Vec<String> = f
            .params
            .iter()
            .map(|(n, t)| format!("%{n}: {}", t.text))
            .collect();
        // A global is typed from its annotations when another calls it (as
        // in TVM), so its result type is written whenever it can be.
        let annotation = if ret.is_writable() {
            format!(" -> {}", ret.text)
        } else {
            String::new()
        };
        let definition = format!(
            "def @{name}({}){annotation} {{\n{body}  {result}\n}}\n",
            params.join(", ")
        );
        let signature = GlobalSig {
            name: name.to_string(),
            params: f.params.iter().map(|(_, t)| t.clone()).collect(),
            ret,
        };
        (definition, signature)
    }

    /// A block of `count` `let`s and its result. With `want`, the result
    /// has that value's type (it is the fallback result).
    fn block(
        &mut self,
        e: &mut Entropy,
        f: &mut FnGen,
        depth: usize,
        count: usize,
        want: Option<&(String, Ty)>,
    ) -> (String, (String, Ty)) {
        f.scopes.push(Vec::new());
        let mut lines = String::new();
        for _ in 0..count {
            if e.is_exhausted() && !lines.is_empty() {
                break;
            }
            if let Some((expr, ty)) = self.statement(e, f, depth) {
                let name = self.fresh("v");
                lines.push_str(&format!("  let %{name} = {expr};\n"));
                f.define(name, ty);
            }
        }
        let own = f.scopes.last().cloned().unwrap_or_default();
        let result = match want {
            Some((name, ty)) => {
                let same: Vec<&(String, Ty)> =
                    own.iter().filter(|(_, t)| t.text == ty.text).collect();
                if same.is_empty() {
                    (format!("%{name}"), ty.clone())
                } else {
                    let (n, t) = same[e.below(same.len())];
                    (format!("%{n}"), t.clone())
                }
            }
            None => match own.last() {
                Some((n, t)) if e.chance(80) => (format!("%{n}"), t.clone()),
                _ => {
                    let bound = self.value_of_any(e, f);
                    (bound.0, bound.1)
                }
            },
        };
        f.scopes.pop();
        (lines, result)
    }

    /// A visible value of any type, or a new tensor parameter.
    fn value_of_any(&mut self, e: &mut Entropy, f: &mut FnGen) -> (String, Ty) {
        let visible: Vec<(String, Ty)> = f.visible().cloned().collect();
        if !visible.is_empty() && e.chance(85) {
            let (n, t) = &visible[e.below(visible.len())];
            return (format!("%{n}"), t.clone());
        }
        let ty = random_tensor(e);
        let name = self.fresh("p");
        f.params.push((name.clone(), ty.clone()));
        (format!("%{name}"), ty)
    }

    /// An expression for a value of type `ty`: a visible value of that type,
    /// a literal, or a new parameter (committed only if the caller keeps it).
    fn bind(&mut self, e: &mut Entropy, f: &FnGen, ty: &Ty) -> Bound {
        let same: Vec<&(String, Ty)> = f.visible().filter(|(_, t)| t.text == ty.text).collect();
        if !same.is_empty() && e.chance(70) {
            let (n, t) = same[e.below(same.len())];
            return Bound {
                text: format!("%{n}"),
                new_param: None,
                var: Some((n.clone(), t.clone())),
            };
        }
        if !same.is_empty() && !ty.is_writable() {
            let (n, t) = same[e.below(same.len())];
            return Bound {
                text: format!("%{n}"),
                new_param: None,
                var: Some((n.clone(), t.clone())),
            };
        }
        if let TyKind::Tensor { shape, dtype } = &ty.kind {
            if shape.is_empty() && e.chance(50) {
                if let Some(text) = scalar_literal(e, dtype) {
                    return Bound {
                        text,
                        new_param: None,
                        var: None,
                    };
                }
            }
        }
        let name = self.fresh("p");
        Bound {
            text: format!("%{name}"),
            new_param: Some((name.clone(), ty.clone())),
            var: Some((name, ty.clone())),
        }
    }

    fn statement(&mut self, e: &mut Entropy, f: &mut FnGen, depth: usize) -> Option<(String, Ty)> {
        let has_tuple = f
            .visible()
            .any(|(_, t)| matches!(&t.kind, TyKind::Tuple(fields) if !fields.is_empty()));
        match e.below(100) {
            0..=64 => self.call(e, f),
            65..=71 => {
                let count = e.range(1, 3) as usize;
                let fields: Vec<(String, Ty)> =
                    (0..count).map(|_| self.value_of_any(e, f)).collect();
                let texts: Vec<&str> = fields.iter().map(|(t, _)| t.as_str()).collect();
                let text = if count == 1 {
                    format!("({},)", texts[0])
                } else {
                    format!("({})", texts.join(", "))
                };
                Some((
                    text,
                    Ty::tuple(fields.into_iter().map(|(_, t)| t).collect()),
                ))
            }
            72..=77 if has_tuple => {
                let tuples: Vec<(String, Vec<Ty>)> = f
                    .visible()
                    .filter_map(|(n, t)| match &t.kind {
                        TyKind::Tuple(fields) if !fields.is_empty() => {
                            Some((n.clone(), fields.clone()))
                        }
                        _ => None,
                    })
                    .collect();
                let (name, fields) = &tuples[e.below(tuples.len())];
                let index = e.below(fields.len());
                Some((format!("%{name}.{index}"), fields[index].clone()))
            }
            78..=85 if depth < 3 => self.if_expr(e, f, depth),
            86..=92 if depth < 3 => self.local_function(e, f, depth),
            93..=99 if !self.globals.is_empty() => {
                let k = e.below(self.globals.len());
                let (name, params, ret) = {
                    let g = &self.globals[k];
                    (g.name.clone(), g.params.clone(), g.ret.clone())
                };
                let args = self.bind_all(e, f, &params);
                Some((format!("@{name}({})", args.join(", ")), ret))
            }
            _ => self.call(e, f),
        }
    }

    /// Binds values of `types`, committing new parameters.
    fn bind_all(&mut self, e: &mut Entropy, f: &mut FnGen, types: &[Ty]) -> Vec<String> {
        let mut out = Vec::new();
        for ty in types {
            let bound = self.bind(e, f, ty);
            if let Some(param) = bound.new_param {
                f.params.push(param);
            }
            out.push(bound.text);
        }
        out
    }

    fn if_expr(&mut self, e: &mut Entropy, f: &mut FnGen, depth: usize) -> Option<(String, Ty)> {
        let visible: Vec<(String, Ty)> = f
            .visible()
            .filter(|(_, t)| t.is_tensor())
            .cloned()
            .collect();
        if visible.is_empty() {
            return None;
        }
        let target = visible[e.below(visible.len())].clone();
        let condition = if self.limits.literal_if_conditions {
            self.bind_all(e, f, &[Ty::tensor(&[], "bool")]).remove(0)
        } else {
            let name = self.fresh("p");
            f.params.push((name.clone(), Ty::tensor(&[], "bool")));
            format!("%{name}")
        };
        let then_count = e.range(0, 2) as usize;
        let (then_lines, (then_result, _)) = self.block(e, f, depth + 1, then_count, Some(&target));
        let else_count = e.range(0, 2) as usize;
        let (else_lines, (else_result, _)) = self.block(e, f, depth + 1, else_count, Some(&target));
        let text = format!(
            "if ({condition}) {{\n{then_lines}  {then_result}\n  }} else {{\n{else_lines}  {else_result}\n  }}"
        );
        Some((text, target.1))
    }

    fn local_function(
        &mut self,
        e: &mut Entropy,
        f: &mut FnGen,
        depth: usize,
    ) -> Option<(String, Ty)> {
        let count = e.range(1, 2) as usize;
        let mut params = Vec::new();
        for _ in 0..count {
            let (_, ty) = self.value_of_any(e, f);
            if ty.is_writable() {
                params.push((self.fresh("q"), ty));
            }
        }
        f.scopes.push(params.clone());
        let statements = e.range(1, 3) as usize;
        let (body, (result, ret)) = self.block(e, f, depth + 1, statements, None);
        f.scopes.pop();
        let declared: Vec<String> = params
            .iter()
            .map(|(n, t)| format!("%{n}: {}", t.text))
            .collect();
        let function = format!("fn ({}) {{\n{body}  {result}\n  }}", declared.join(", "));
        if e.chance(30) {
            // The closure itself is the value.
            let params_text: Vec<&str> = params.iter().map(|(_, t)| t.text.as_str()).collect();
            let ty = Ty {
                text: format!("fn ({}) -> {}", params_text.join(", "), ret.text),
                kind: TyKind::Other,
            };
            return Some((function, ty));
        }
        let types: Vec<Ty> = params.iter().map(|(_, t)| t.clone()).collect();
        let args = self.bind_all(e, f, &types);
        Some((format!("{function}({})", args.join(", ")), ret))
    }

    /// An operator call that InferType accepts, trying a few proposals.
    fn call(&mut self, e: &mut Entropy, f: &mut FnGen) -> Option<(String, Ty)> {
        let ops = op::all_ops();
        for _ in 0..3 {
            let op = &ops[e.below(ops.len())];
            if self.limits.skip_ops.contains(&op.name.as_str()) {
                continue;
            }
            for _ in 0..3 {
                let tensors: Vec<Ty> = f
                    .visible()
                    .filter(|(_, t)| t.static_tensor().is_some())
                    .map(|(_, t)| t.clone())
                    .collect();
                let base = if !tensors.is_empty() && e.chance(75) {
                    Some(tensors[e.below(tensors.len())].clone())
                } else {
                    None
                };
                let plan = plan_call(op, base.as_ref(), e, self.limits);
                let mut new_params = Vec::new();
                let mut free: Vec<(String, Ty)> = Vec::new();
                let mut args = Vec::new();
                let mut bind = |gen: &mut ModuleGen, e: &mut Entropy, ty: &Ty| -> String {
                    let bound = gen.bind(e, f, ty);
                    if let Some(param) = bound.new_param {
                        new_params.push(param);
                    }
                    if let Some(var) = bound.var {
                        if !free.iter().any(|(n, _)| *n == var.0) {
                            free.push(var);
                        }
                    }
                    bound.text
                };
                for arg in &plan.args {
                    match arg {
                        ArgPlan::Value(ty) => args.push(bind(self, e, ty)),
                        ArgPlan::Tuple(fields) => {
                            let items: Vec<String> =
                                fields.iter().map(|t| bind(self, e, t)).collect();
                            args.push(if items.len() == 1 {
                                format!("({},)", items[0])
                            } else {
                                format!("({})", items.join(", "))
                            });
                        }
                    }
                }
                args.extend(plan.attrs.iter().map(|(k, v)| format!("{k}={v}")));
                let text = format!("{}({})", plan.op.name, args.join(", "));
                self.calls_proposed += 1;
                let standalone = standalone_module(&free, &text);
                let checked = check_module(&standalone);
                match checked.main_type {
                    // A result whose type cannot be written (the void dtype of
                    // `topk` or `zeros` without `dtype`) is dropped: passes that
                    // annotate `let`s would print text no parser reads back.
                    // So is a call that type-checks only while its result is
                    // unknown: TVM's `broadcast_to` assigns its shape and
                    // checks the broadcast only when its output is already
                    // typed, as it is once a pass annotates the `let`.
                    Some(ty) if ty.is_writable() && checks_annotated(&free, &text, &ty) => {
                        self.calls_kept += 1;
                        f.params.extend(new_params);
                        return Some((text, ty));
                    }
                    Some(_) => {}
                    None if !checked.diagnostics.has_errors() => self.silent.push(standalone),
                    None => {
                        if self.rejected.len() < KEEP_REJECTED {
                            self.rejected.push(standalone);
                        }
                    }
                }
            }
        }
        None
    }
}

/// Whether `call` still type-checks with its result annotated as `ty`.
fn checks_annotated(free: &[(String, Ty)], call: &str, ty: &Ty) -> bool {
    let annotated = format!("let %result: {} = {call};\n  %result", ty.text);
    check_module(&standalone_module(free, &annotated)).is_well_typed()
}
