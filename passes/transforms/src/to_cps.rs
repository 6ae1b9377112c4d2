//! `ToCPS` and `UnCPS`: TVM v0.13's `to_cps.cc`, the conversion of a
//! function to continuation-passing style and the wrapper that calls a CPS
//! function with the identity continuation.
//!
//! `ToCPS` turns a function `fn (a) -> b` into `fn [answer](a', %k: fn (b')
//! -> answer) -> answer`, where `answer` is a fresh type parameter, primes
//! mark types whose function types are converted too (`CPSType`), and every
//! intermediate value is passed on, as TVM's higher-order transform does:
//! - a variable, constant, `ref(v)`, `t.i` or tuple goes to the continuation
//!   directly (their operands converted first, left to right);
//! - an operator or constructor call, `ref_read` and `ref_write` are bound to
//!   a fresh `let %x = …;` whose variable goes to the continuation;
//! - any other call (of a function value or a global) gets the continuation
//!   reified as a last argument `fn (%arg) { … }`;
//! - `if` and `match` bind the continuation once (`let %x = fn (%arg) { … }`)
//!   and call it at the end of each branch, so it is not duplicated;
//! - a function literal is converted with the same `answer` and passed on;
//!   a `Primitive` one fails (TVM: "primitive func not supported yet.");
//! - a global function `@g` used inside is converted into a new global
//!   `@g_cps` (its own `answer`), which replaces the reference; `@g` itself
//!   stays (TVM converts `@g` again for every function that reaches it; the
//!   pass here converts it once, with the same result);
//! - every variable is replaced by one of the same name whose annotation is
//!   the converted type of the original's checked type, so the input must be
//!   type-checked (as in TVM, whose `checked_type()` fails otherwise);
//! - an operator or constructor used as a value, not as a callee, fails as
//!   TVM's functor does ("Do not have a default for …").
//!   Input in graph form (a non-atomic node reached twice) is refused with
//!   TVM's feature check, over the whole module.
//!
//! TVM registers `ToCPS` as a function pass (opt_level 1) that adds the
//! `@g_cps` globals to the module it is given; here it is a module pass that
//! runs the same conversion on every function that is not external
//! (`Compiler`, `Extern`, `SkipOptimization`) and type-checks the result, as a
//! function pass does. Globals are looked up in the input module; TVM looks
//! them up in the module being rewritten, so which ones are already
//! converted depends on its hash order (and a converted one, untyped, fails).
//!
//! `UnCPS` (function pass, opt_level 1) wraps a CPS function `f` as
//! `fn (%p…) -> b { f(%p…, fn (%x: b) -> b { %x }) }`: its last parameter must
//! be a continuation `fn (b) -> answer` and its last type parameter the
//! answer type; the parameters are new variables of the same names and
//! checked types, the function literal is `f` itself. Higher-order
//! parameters and results stay in CPS form, as TVM says.

use crate::feature::{check_features, check_module_features, Feature, FeatureSet};
use relay_ir::diagnostic::Diagnostic;
use relay_ir::{
    Clause, Expr, ExprKind, Function, FunctionData, IRModule, Pattern, Type, TypeKind, TypeVar,
    TypeVarKind, Var, VarId,
};
use relay_pass_manager::registry::PassSpec;
use relay_pass_manager::PassContext;
use std::cell::RefCell;
use std::collections::HashMap;

pub(crate) fn spec() -> PassSpec {
    PassSpec::module("ToCPS", 1)
        .doc(
            "Convert every function to continuation-passing style (a fresh type parameter \
             `answer` and a continuation parameter %k); globals used inside get `<name>_cps` \
             copies; needs typed input, refuses graph form (a function pass in TVM)",
        )
        .transform(to_cps_module)
}

pub(crate) fn un_cps_spec() -> PassSpec {
    PassSpec::function("UnCPS", 1)
        .doc(
            "Wrap each CPS function (last parameter a continuation, last type parameter the \
             answer type) into one that calls it with the identity continuation",
        )
        .transform(|function, _module, _ctx| un_cps(&function))
}

fn checked_type(expr: &Expr) -> Result<Type, Diagnostic> {
    expr.checked_type().cloned().ok_or_else(|| {
        Diagnostic::pass_failed_at(
            expr,
            "The type checker has not populated the checked_type for this node (run InferType \
             before ToCPS)",
        )
    })
}

/// `fn (from) -> to`.
fn arrow(from: Type, to: Type) -> Type {
    Type::func(vec![from], to, Vec::new())
}

/// TVM's `CPSType`: every function type `fn (a…) -> r` inside `ty` becomes
/// `fn (a'…, fn (r') -> answer) -> answer`.
fn cps_type(ty: &Type, answer: &Type) -> Type {
    crate::partial_eval::with_stack(|| match ty.kind() {
        TypeKind::Func(func) => {
            let mut params: Vec<Type> = func.params.iter().map(|p| cps_type(p, answer)).collect();
            params.push(arrow(cps_type(&func.ret, answer), answer.clone()));
            Type::func(params, answer.clone(), func.type_params.clone())
        }
        TypeKind::Tuple(fields) => {
            Type::tuple(fields.iter().map(|f| cps_type(f, answer)).collect())
        }
        TypeKind::Ref(inner) => Type::new(TypeKind::Ref(cps_type(inner, answer))),
        TypeKind::Call { func, args } => Type::new(TypeKind::Call {
            func: cps_type(func, answer),
            args: args.iter().map(|a| cps_type(a, answer)).collect(),
        }),
        _ => ty.clone(),
    })
}

/// Runs ToCPS on every optimizable function, then InferType.
fn to_cps_module(module: IRModule, ctx: &PassContext) -> Result<IRModule, Diagnostic> {
    let mut updated = module.clone();
    let names: Vec<String> = module
        .functions()
        .filter(|(_, f)| f.is_optimizable())
        .map(|(name, _)| name.to_string())
        .collect();
    // TVM checks the whole module again for every function; the module is
    // the same each time, so once is the same answer (and keeps the pass
    // linear in the number of functions).
    let no_graph = FeatureSet::all().without(Feature::Graph);
    // TVM gives each function its own map of converted globals, so every
    // global a function reaches is converted again for each function that
    // reaches it (quadratic on a chain of calls). A global's conversion
    // depends only on its definition in the input module (its references
    // become `<name>_cps` whether converted yet or not; the fresh `answer`
    // and variables print alike), so one map for the whole module gives the
    // same `@g_cps` and converts each global once.
    let globals = RefCell::new(Globals::new(&module));
    for (i, name) in names.into_iter().enumerate() {
        let function = module.function(&name).expect("listed above").clone();
        // In TVM's order: the function, then the module.
        check_features("ToCPS", function.expr(), no_graph)?;
        if i == 0 {
            check_module_features("ToCPS", &module, no_graph)?;
        }
        let converted = convert_global(&function, &globals)?;
        updated.add_function(&name, converted);
        for (global, function) in std::mem::take(&mut globals.borrow_mut().added) {
            updated.add_function(&global, function);
        }
    }
    crate::infer_type::infer_types(updated, ctx)
}

/// The globals converted so far (TVM's `CPSMap`) and the `@g_cps`
/// functions made since `added` was last emptied, in the order they were
/// made.
struct Globals<'m> {
    input: &'m IRModule,
    converted: HashMap<String, String>,
    added: Vec<(String, Function)>,
}

impl<'m> Globals<'m> {
    fn new(input: &'m IRModule) -> Self {
        Globals {
            input,
            converted: HashMap::new(),
            added: Vec::new(),
        }
    }
}

/// TVM's `ToCPS(f, m)`: the feature check, then the conversion.
/// Returns the converted function and the `@g_cps` globals it uses, in the
/// order they were made.
pub fn to_cps(
    function: &Function,
    module: &IRModule,
) -> Result<(Function, Vec<(String, Function)>), Diagnostic> {
    let no_graph = FeatureSet::all().without(Feature::Graph);
    check_features("ToCPS", function.expr(), no_graph)?;
    check_module_features("ToCPS", module, no_graph)?;
    convert_with_globals(function, module)
}

/// The conversion of `function` after the feature checks, with its own map
/// of converted globals (TVM's `CPSMap`).
fn convert_with_globals(
    function: &Function,
    module: &IRModule,
) -> Result<(Function, Vec<(String, Function)>), Diagnostic> {
    let globals = RefCell::new(Globals::new(module));
    let converted = convert_global(function, &globals)?;
    Ok((converted, globals.into_inner().added))
}

/// TVM's `ToCPS(f, m, cm)`: a fresh `answer` and variable map.
fn convert_global(
    function: &Function,
    globals: &RefCell<Globals<'_>>,
) -> Result<Function, Diagnostic> {
    let answer_var = TypeVar::new("answer", TypeVarKind::Type);
    let answer = Type::var(answer_var.clone());
    let vars = remap_variables(function, &answer)?;
    let converter = Converter {
        answer,
        vars,
        globals,
    };
    let converted = converter.function(function)?;
    let data = converted.data();
    let mut type_params = data.type_params.clone();
    type_params.push(answer_var);
    Ok(Function::new(
        FunctionData {
            type_params,
            ..data.clone()
        },
        None,
    ))
}

/// TVM's `Remapper`: a new variable, typed by the converted checked type,
/// for every variable of `function` (parameters, `let`s, pattern variables,
/// those of nested functions).
fn remap_variables(function: &Function, answer: &Type) -> Result<HashMap<VarId, Var>, Diagnostic> {
    let mut vars: HashMap<VarId, Var> = HashMap::new();
    let mut error = None;
    let mut add = |var: &Var| {
        if error.is_some() || vars.contains_key(&var.id()) {
            return;
        }
        match checked_type(var.expr()) {
            Ok(ty) => {
                vars.insert(
                    var.id(),
                    Var::new(var.name(), Some(cps_type(&ty, answer)), None),
                );
            }
            Err(e) => error = Some(e),
        }
    };
    relay_ir::rewrite::post_order_each(function.expr(), |expr| match expr.kind() {
        ExprKind::Var(_) => add(&expr.as_var().expect("a variable")),
        ExprKind::Match { clauses, .. } => {
            for clause in clauses {
                pattern_vars(&clause.pattern, &mut add);
            }
        }
        _ => {}
    });
    match error {
        Some(e) => Err(e),
        None => Ok(vars),
    }
}

fn pattern_vars(pattern: &Pattern, add: &mut impl FnMut(&Var)) {
    match pattern {
        Pattern::Wildcard => {}
        Pattern::Var(var) => add(var),
        Pattern::Constructor(_, fields) | Pattern::Tuple(fields) => {
            fields.iter().for_each(|p| pattern_vars(p, add))
        }
    }
}

/// The meta-continuation: what to build around a converted value. Each is
/// called at most once with code, as TVM's rules for `MCont` require.
type MCont<'a> = &'a dyn Fn(Expr) -> Result<Expr, Diagnostic>;

struct Converter<'g, 'm> {
    answer: Type,
    vars: HashMap<VarId, Var>,
    globals: &'g RefCell<Globals<'m>>,
}

/// A fresh `let` variable as TVM's `LetList` makes them (`x`, untyped).
fn let_bind(value: Expr, k: MCont<'_>) -> Result<Expr, Diagnostic> {
    let var = Var::new("x", None, None);
    let body = k(var.expr().clone())?;
    Ok(Expr::let_(var, value, body, None))
}

/// `fn (%arg) { k(%arg) }`.
fn reify(k: MCont<'_>) -> Result<Expr, Diagnostic> {
    let arg = Var::new("arg", None, None);
    let body = k(arg.expr().clone())?;
    Ok(lambda(vec![arg], body, None))
}

fn lambda(params: Vec<Var>, body: Expr, ret_type: Option<Type>) -> Expr {
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

impl Converter<'_, '_> {
    fn remap(&self, var: &Var) -> Var {
        self.vars
            .get(&var.id())
            .cloned()
            .unwrap_or_else(|| var.clone())
    }

    /// TVM's inner `ToCPS(f, m, cm, vm, answer)`: the function with its
    /// parameters remapped and a continuation `%k` added.
    fn function(&self, function: &Function) -> Result<Function, Diagnostic> {
        let function_type = checked_type(function.expr())?;
        let TypeKind::Func(func_type) = function_type.kind() else {
            return Err(Diagnostic::pass_failed_at(
                function.expr(),
                "a function whose checked type is not a function type",
            ));
        };
        let k = Var::new(
            "k",
            Some(arrow(
                cps_type(&func_type.ret, &self.answer),
                self.answer.clone(),
            )),
            None,
        );
        let mut params: Vec<Var> = function.params().iter().map(|p| self.remap(p)).collect();
        params.push(k.clone());
        let k_expr = k.expr().clone();
        let call_k = move |e: Expr| Ok(Expr::call(k_expr.clone(), vec![e], None, None));
        let body = self.visit(function.body(), &call_k)?;
        let data = function.data();
        Ok(Function::new(
            FunctionData {
                params,
                body,
                ret_type: Some(self.answer.clone()),
                ..data.clone()
            },
            None,
        ))
    }

    fn visit(&self, expr: &Expr, k: MCont<'_>) -> Result<Expr, Diagnostic> {
        crate::partial_eval::with_stack(|| self.visit_inner(expr, k))
    }

    /// The operands `exprs[done..]` converted left to right, then `last`
    /// of all of them (TVM's `next` loops over arguments and fields).
    fn visit_all(
        &self,
        exprs: &[Expr],
        done: Vec<Expr>,
        last: &dyn Fn(Vec<Expr>) -> Result<Expr, Diagnostic>,
    ) -> Result<Expr, Diagnostic> {
        let Some(operand) = exprs.get(done.len()) else {
            return last(done);
        };
        // The continuation owns the values so far; it runs once.
        let done = RefCell::new(Some(done));
        let next = |v: Expr| {
            let mut values = done
                .borrow_mut()
                .take()
                .ok_or_else(|| Diagnostic::pass_failed("a continuation of ToCPS ran twice"))?;
            values.push(v);
            self.visit_all(exprs, values, last)
        };
        self.visit(operand, &next)
    }

    fn visit_inner(&self, expr: &Expr, k: MCont<'_>) -> Result<Expr, Diagnostic> {
        match expr.kind() {
            ExprKind::Var(_) => k(self.remap(&expr.as_var().expect("a variable")).into_expr()),
            ExprKind::Constant(_) => k(expr.clone()),
            ExprKind::GlobalVar(global) => {
                let name = global.name().to_string();
                let known = self.globals.borrow().converted.get(&name).cloned();
                let cps_name = match known {
                    Some(cps_name) => cps_name,
                    None => {
                        let input = self.globals.borrow().input;
                        let Some(function) = input.function(&name).cloned() else {
                            return Err(Diagnostic::pass_failed_at(
                                expr,
                                format!("Cannot find global var {name} in the module"),
                            ));
                        };
                        let cps_name = format!("{name}_cps");
                        self.globals
                            .borrow_mut()
                            .converted
                            .insert(name.clone(), cps_name.clone());
                        let converted = convert_global(&function, self.globals)?;
                        self.globals
                            .borrow_mut()
                            .added
                            .push((cps_name.clone(), converted));
                        cps_name
                    }
                };
                k(Expr::global(&cps_name, None))
            }
            ExprKind::Function(_) => {
                let function = expr.as_function().expect("a function");
                if function.is_primitive() {
                    return Err(Diagnostic::pass_failed_at(
                        expr,
                        "primitive func not supported yet.",
                    )
                    .with_note("TVM v0.13's ToCPS stops here too, with this message")
                    .with_help(
                        "ToCPS converts unfused code: run it before FuseOps, or undo the \
                         fusion first (`-p DefuseOps,ToANormalForm,InferType,ToCPS \
                         --opt-level 3`; ToANormalForm binds what the code shares, which \
                         ToCPS refuses)",
                    ));
                }
                let converted = self.function(&function)?;
                k(converted.into_expr())
            }
            ExprKind::Let { var, value, body } => {
                let var = self.remap(var);
                let then = |v: Expr| {
                    let body = self.visit(body, k)?;
                    Ok(Expr::let_(var.clone(), v, body, None))
                };
                self.visit(value, &then)
            }
            ExprKind::RefCreate(value) => {
                self.visit(value, &|v| k(Expr::new(ExprKind::RefCreate(v), None)))
            }
            ExprKind::RefRead(reference) => self.visit(reference, &|r| {
                let_bind(Expr::new(ExprKind::RefRead(r), None), k)
            }),
            ExprKind::RefWrite { reference, value } => {
                let operands = [reference.clone(), value.clone()];
                self.visit_all(&operands, Vec::new(), &|values| {
                    let [reference, value]: [Expr; 2] = values.try_into().expect("two operands");
                    let_bind(Expr::new(ExprKind::RefWrite { reference, value }, None), k)
                })
            }
            ExprKind::Tuple(fields) => {
                self.visit_all(fields, Vec::new(), &|values| k(Expr::tuple(values, None)))
            }
            ExprKind::TupleGetItem { tuple, index } => {
                let index = *index;
                self.visit(tuple, &|v| k(Expr::tuple_get_item(v, index, None)))
            }
            ExprKind::If {
                cond,
                then_branch,
                else_branch,
            } => self.with_reified(k, &|this, kf| {
                this.visit(cond, &|c| {
                    let then_branch = this.visit(then_branch, kf)?;
                    let else_branch = this.visit(else_branch, kf)?;
                    Ok(Expr::if_(c, then_branch, else_branch, None))
                })
            }),
            ExprKind::Match {
                data,
                clauses,
                complete,
            } => self.with_reified(k, &|this, kf| {
                this.visit(data, &|d| {
                    let mut new_clauses = Vec::with_capacity(clauses.len());
                    for clause in clauses {
                        let pattern = this.pattern(&clause.pattern);
                        let rhs = this.visit(&clause.rhs, kf)?;
                        new_clauses.push(Clause { pattern, rhs });
                    }
                    Ok(Expr::new(
                        ExprKind::Match {
                            data: d,
                            clauses: new_clauses,
                            complete: *complete,
                        },
                        None,
                    ))
                })
            }),
            ExprKind::Call(call) => {
                let attrs = call.attrs.clone();
                if matches!(
                    call.callee.kind(),
                    ExprKind::Op(_) | ExprKind::Constructor(_)
                ) {
                    let callee = call.callee.clone();
                    self.visit_all(&call.args, Vec::new(), &|args| {
                        let_bind(Expr::call(callee.clone(), args, attrs.clone(), None), k)
                    })
                } else {
                    let args = &call.args;
                    self.visit(&call.callee, &|f| {
                        self.visit_all(args, Vec::new(), &|mut values| {
                            values.push(reify(k)?);
                            Ok(Expr::call(f.clone(), values, attrs.clone(), None))
                        })
                    })
                }
            }
            ExprKind::Op(op) => Err(Diagnostic::pass_failed_at(
                expr,
                format!("Do not have a default for Op ({}) as a value", op.name),
            )),
            ExprKind::Constructor(c) => Err(Diagnostic::pass_failed_at(
                expr,
                format!(
                    "Do not have a default for relay.Constructor ({}) as a value",
                    c.name()
                ),
            )),
        }
    }

    /// TVM's `reify(k, cont)`: `let %x = fn (%arg) { k(%arg) }; cont(%x(…))`.
    fn with_reified(
        &self,
        k: MCont<'_>,
        cont: &dyn Fn(&Self, MCont<'_>) -> Result<Expr, Diagnostic>,
    ) -> Result<Expr, Diagnostic> {
        let continuation = reify(k)?;
        let var = Var::new("x", None, None);
        let callee = var.expr().clone();
        let kf = move |e: Expr| Ok(Expr::call(callee.clone(), vec![e], None, None));
        let body = cont(self, &kf)?;
        Ok(Expr::let_(var, continuation, body, None))
    }

    fn pattern(&self, pattern: &Pattern) -> Pattern {
        match pattern {
            Pattern::Wildcard => Pattern::Wildcard,
            Pattern::Var(var) => Pattern::Var(self.remap(var)),
            Pattern::Constructor(c, fields) => {
                Pattern::Constructor(c.clone(), fields.iter().map(|p| self.pattern(p)).collect())
            }
            Pattern::Tuple(fields) => {
                Pattern::Tuple(fields.iter().map(|p| self.pattern(p)).collect())
            }
        }
    }
}

/// An UnCPS error on a function ToCPS did not make: TVM's own message,
/// and what UnCPS is for.
fn not_cps(error: Diagnostic) -> Diagnostic {
    error
        .with_note("TVM v0.13's UnCPS fails on this function too, with this message")
        .with_help(
            "UnCPS undoes ToCPS: it takes a function in continuation-passing style, whose last \
             parameter is the continuation and last type parameter the answer type \
             (`-p ToCPS,UnCPS`)",
        )
}

/// TVM's `UnCPS(f)`.
pub fn un_cps(function: &Function) -> Result<Function, Diagnostic> {
    check_features(
        "UnCPS",
        function.expr(),
        FeatureSet::all().without(Feature::Graph),
    )?;
    if function.params().is_empty() {
        return Err(Diagnostic::pass_failed_at(
            function.expr(),
            "Check failed: (f->params.size() > 0) is false: UnCPS needs the continuation parameter",
        ));
    }
    let mut params = Vec::with_capacity(function.params().len());
    for param in function.params() {
        params.push(Var::new(
            param.name(),
            Some(checked_type(param.expr())?),
            None,
        ));
    }
    let continuation = params.pop().expect("not empty");
    let continuation_type = continuation
        .type_annotation()
        .cloned()
        .expect("annotated above");
    let TypeKind::Func(continuation_type) = continuation_type.kind() else {
        return Err(not_cps(Diagnostic::pass_failed_at(
            function.expr(),
            format!(
                "Downcast from {} to relay.FuncType failed: the last parameter of a CPS \
                 function is its continuation",
                type_key(&continuation_type)
            ),
        )));
    };
    let [result_type] = &continuation_type.params[..] else {
        return Err(not_cps(Diagnostic::pass_failed_at(
            function.expr(),
            format!(
                "Check failed: cont_type->arg_types.size() == 1 ({} vs. 1): the continuation \
                 takes the result",
                continuation_type.params.len()
            ),
        )));
    };
    let mut type_params: Vec<TypeVar> = function
        .data()
        .type_params
        .iter()
        .map(|tp| TypeVar::new(tp.name(), tp.kind()))
        .collect();
    if type_params.pop().is_none() {
        return Err(not_cps(Diagnostic::pass_failed_at(
            function.expr(),
            "IndexError: cannot index an empty array: UnCPS needs the answer type parameter \
             of a CPS function, and this function has no type parameters",
        )));
    }
    let x = Var::new("x", Some(result_type.clone()), None);
    let identity = lambda(vec![x.clone()], x.into_expr(), Some(result_type.clone()));
    let mut args: Vec<Expr> = params.iter().map(|p| p.expr().clone()).collect();
    args.push(identity);
    let body = Expr::call(function.expr().clone(), args, None, None);
    Ok(Function::new(
        FunctionData {
            params,
            body,
            ret_type: Some(result_type.clone()),
            type_params,
            attrs: function.data().attrs.clone(),
            virtual_device: None,
        },
        None,
    ))
}

/// TVM's type key of a type, for the message of a failed downcast.
fn type_key(ty: &Type) -> &'static str {
    match ty.kind() {
        TypeKind::Tensor(_) => "relay.TensorType",
        TypeKind::Tuple(_) => "TupleType",
        TypeKind::Func(_) => "FuncType",
        TypeKind::Var(_) => "TypeVar",
        TypeKind::GlobalVar(_) => "GlobalTypeVar",
        TypeKind::Call { .. } => "TypeCall",
        TypeKind::Ref(_) => "relay.RefType",
        TypeKind::Incomplete(_) => "IncompleteType",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_ir::printer::{print_module, PrintOptions};
    use relay_lower::parse_and_lower;
    use relay_pass_manager::{registry, run_pass, PassContextOptions};

    /// A chain of globals calling one another, a global reached along two
    /// paths, a recursive one and an external one reached from a converted
    /// function.
    const CALL_CHAIN: &str = r#"#[version = "0.0.5"]
def @ext(%x: Tensor[(2), float32], Compiler="ccompiler", global_symbol="ext") -> Tensor[(2), float32] {
  negative(%x)
}

def @f0(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
  @ext(add(%x, %x))
}

def @f1(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
  @f0(negative(%x))
}

def @f2(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
  %0 = @f1(%x);
  @f0(%0)
}

def @loop(%n: int32, %x: Tensor[(2), float32]) -> Tensor[(2), float32] {
  if (less(%n, 1)) {
    @f2(%x)
  } else {
    @loop(subtract(%n, 1), @f1(%x))
  }
}

def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
  %1 = @loop(3, %x);
  @f2(%1)
}
"#;

    fn typed(text: &str, ctx: &PassContext) -> IRModule {
        crate::register_builtin_passes();
        let (module, diagnostics) = parse_and_lower("t.relay", text);
        assert!(!diagnostics.has_errors());
        let infer = registry::create("InferType", &[]).unwrap();
        run_pass(&*infer, module, ctx).unwrap()
    }

    fn print(module: &IRModule) -> String {
        print_module(
            module,
            &PrintOptions {
                show_meta_data: true,
                show_types: true,
                reparseable: false,
            },
        )
    }

    /// The pass converts each global once for the whole module; TVM's
    /// per-function `CPSMap` ([`to_cps`] of each function on its own,
    /// every global it reaches converted again) must give the same module.
    #[test]
    fn one_conversion_per_global_gives_what_one_map_per_function_gives() {
        let ctx = PassContext::new(PassContextOptions::default()).unwrap();
        let _scope = ctx.enter().unwrap();
        let input = typed(CALL_CHAIN, &ctx);
        let mut per_function = input.clone();
        for (name, function) in input.functions().filter(|(_, f)| f.is_optimizable()) {
            let (converted, added) = to_cps(function, &input).unwrap();
            per_function.add_function(name, converted);
            for (global, function) in added {
                per_function.add_function(&global, function);
            }
        }
        let expected = print(&crate::infer_type::infer_types(per_function, &ctx).unwrap());
        let pass = registry::create("ToCPS", &[]).unwrap();
        let actual = print(&run_pass(&*pass, input, &ctx).unwrap());
        assert!(actual.contains("def @f0_cps") && actual.contains("def @ext_cps"));
        assert_eq!(actual, expected);
    }
}
