//! `LazyGradientInit`: TVM v0.13's function pass (opt_level 2,
//! `lazy_gradient_init.cc`) that delays making tensors of zeros and ones
//! until they are needed, by computing on `GradCell[T]` values instead of
//! tensors:
//!
//! - the module gets TVM's `gradient.rly` (the `GradCell` type with `Raw`,
//!   `One`, `Zero`, and `@FromGradCell`, `@AddGradCell`,
//!   `@MultiplyGradCell`), once;
//! - each function is rewritten into one on `GradCell`s: every tensor type
//!   `T` becomes `GradCell[T]`, a constant `c` becomes `Raw(c)`, a call of
//!   `add`/`multiply` on two arguments of one type calls
//!   `@AddGradCell`/`@MultiplyGradCell` with the operator as a fallback
//!   function, `ones`/`zeros` become `One(fn () { … })`/`Zero(…)`, and
//!   any other operator call unwraps its arguments with `@FromGradCell` and
//!   wraps its result with `Raw`;
//! - the original function becomes a wrapper that wraps its parameters,
//!   calls the rewritten one and unwraps the result, so its type is
//!   unchanged.
//!
//! TVM's quirks are kept: `ones_like` and `zeros_like` both become `One`;
//! the wrapper loses the function's attributes and type parameters; match
//! patterns are not rewritten. Like TVM, the pass refuses a module in which
//! an expression is shared (the `fGraph` feature), with TVM's message.
//!
//! An operator returning a tuple (`nn.batch_norm`, `nn.dropout`, `split`)
//! is wrapped whole, as `Raw` of type `GradCell[(…)]`, as TVM does; a field
//! `.i` of it, or a `let` annotated with the tuple type, then no longer
//! type-checks, and the InferType that follows the pass rejects the module —
//! TVM v0.13's as well (`TupleGetItemRel`: "TupleGetItem expect input type
//! to be TupleType"; the solver: "unable to show the following types
//! match"). Those errors get a note naming the operators and what to run
//! first (`explain_tuple_results`).
//! Nested expressions deeper than [`MAX_DEPTH`] are refused with a
//! diagnostic rather than risking the call stack.

use super::let_list::LetList;
use crate::feature::{check_features, check_module_features, Feature, FeatureSet};
use relay_ir::diagnostic::Diagnostic;
use relay_ir::rewrite::{children, rebuild, NodeUpdate};
use relay_ir::ty::{FuncType, TypeKind};
use relay_ir::{
    Call, Constructor, Expr, ExprKind, Function, FunctionData, GlobalTypeVar, IRModule, Type, Var,
    VarId,
};
use relay_pass_manager::PassSpec;
// Tables consulted per node: the fast hasher, not SipHash.
use relay_ir::fxhash::FxMap as HashMap;
use std::collections::BTreeSet;

/// TVM's `gradient.rly`, in our own copy (see the file).
const GRADIENT_RLY: &str = include_str!("gradient.rly");

/// The definitions `gradient.rly` adds.
const STD_FUNCTIONS: [&str; 3] = ["FromGradCell", "AddGradCell", "MultiplyGradCell"];

/// How deeply nested an expression the rewrite follows (it recurses).
pub const MAX_DEPTH: usize = 2000;

/// The pass's name, for messages.
const PASS: &str = "LazyGradientInit";

pub(crate) fn spec() -> PassSpec {
    PassSpec::module(PASS, 2)
        .doc(
            "Compute on GradCell values so that tensors of zeros and ones are made only when \
             needed (adds TVM's gradient.rly to the module, so it runs as a module pass; a \
             function pass in TVM)",
        )
        .transform(|module, ctx| {
            let (transformed, tuple_results) = rewrite_module(module)?;
            // A function pass in TVM: the module is type-checked afterwards.
            crate::infer_type::infer_types_explaining(transformed, ctx, |error| {
                explain_tuple_results(error, &tuple_results)
            })
        })
}

/// The pass over every optimizable function of `module` (as TVM's function
/// pass visits them), without the type inference that follows it.
pub fn lazy_gradient_init(module: IRModule) -> Result<IRModule, Diagnostic> {
    rewrite_module(module).map(|(module, _)| module)
}

/// Operators whose result is a tuple and that SimplifyInference replaces by
/// operators on tensors.
const SIMPLIFIED_BY_SIMPLIFY_INFERENCE: [&str; 2] = ["nn.batch_norm", "nn.dropout"];

/// A type error in the pass's output, with why the pass made it and what to
/// run first, when the pass wrapped tuple results (`tuple_results`, the
/// operators' names): only those make output that does not type-check.
fn explain_tuple_results(error: Diagnostic, tuple_results: &BTreeSet<String>) -> Diagnostic {
    // The wrapped tuple's type, as the checker prints it in both messages.
    if tuple_results.is_empty() || !error.message.contains("GradCell[(") {
        return error;
    }
    let names: Vec<String> = tuple_results.iter().map(|op| format!("`{op}`")).collect();
    let names = names.join(", ");
    let error = error.with_note(format!(
        "LazyGradientInit wraps the tuple that {names} returns{} as one `GradCell[(…)]` value, \
         so a field `.i` of it, or a `let` annotated with the tuple type, no longer \
         type-checks; TVM v0.13 rejects this output too (the InferType after its function \
         pass fails: \"TupleGetItem expect input type to be TupleType\", or \"unable to show \
         the following types match\")",
        if tuple_results.len() > 1 { " each" } else { "" }
    ));
    if tuple_results
        .iter()
        .all(|op| SIMPLIFIED_BY_SIMPLIFY_INFERENCE.contains(&op.as_str()))
    {
        error.with_help(
            "run `-p SimplifyInference,ToANormalForm,InferType,LazyGradientInit`: \
             SimplifyInference replaces nn.batch_norm and nn.dropout by operators on \
             tensors, ToANormalForm binds the expressions that leaves shared (the pass \
             refuses shared expressions) and InferType types them",
        )
    } else {
        error.with_help(
            "LazyGradientInit (TVM's too) handles functions whose operators return tensors; \
             a function using an operator that returns a tuple cannot go through it",
        )
    }
}

/// The rewrite of every optimizable function of `module`, and the names of
/// the operators whose tuple results it wrapped whole.
fn rewrite_module(module: IRModule) -> Result<(IRModule, BTreeSet<String>), Diagnostic> {
    let mut tuple_results = BTreeSet::new();
    let targets: Vec<(String, Function)> = module
        .functions()
        .filter(|(_, f)| f.is_optimizable())
        .map(|(name, f)| (name.to_string(), f.clone()))
        .collect();
    if targets.is_empty() {
        return Ok((module, tuple_results));
    }
    let mut module = import_gradient_std(module)?;
    let allowed = FeatureSet::all().without(Feature::Graph);
    let mut updates = Vec::with_capacity(targets.len());
    for (name, function) in targets {
        check_features(PASS, function.expr(), allowed)?;
        check_module_features(PASS, &module, allowed)?;
        let mut initializer = Initializer::new(&module)?;
        let transformed = initializer.transform(&function)?;
        tuple_results.append(&mut initializer.tuple_results);
        check_features(PASS, transformed.expr(), allowed)?;
        check_module_features(PASS, &module, allowed)?;
        updates.push((name, transformed));
    }
    for (name, function) in updates {
        module.add_function(&name, function);
    }
    Ok((module, tuple_results))
}

/// TVM's `ImportFromStd("gradient.rly")`. A module that already has all of
/// its definitions is taken to have it (TVM remembers the import in the
/// module); one with only some of them is refused.
fn import_gradient_std(module: IRModule) -> Result<IRModule, Diagnostic> {
    let present: Vec<&str> = STD_FUNCTIONS
        .iter()
        .copied()
        .filter(|name| module.function(name).is_some())
        .chain(module.type_definition("GradCell").map(|_| "GradCell"))
        .collect();
    if present.len() == STD_FUNCTIONS.len() + 1 {
        return Ok(module);
    }
    if let Some(clash) = present.first() {
        return Err(Diagnostic::pass_failed(format!(
            "LazyGradientInit: the module already defines `{clash}`, a name that \
                 gradient.rly defines"
        )));
    }
    let (module, diagnostics) =
        relay_lower::parse_and_lower_into(module, "gradient.rly", GRADIENT_RLY);
    match diagnostics.iter().find(|d| d.is_error()) {
        Some(error) => Err(error.clone()),
        None => Ok(module),
    }
}

/// The rewrite of one function (TVM's `LazyGradientInitializer`).
struct Initializer {
    grad_cell: GlobalTypeVar,
    raw: Constructor,
    one: Constructor,
    zero: Constructor,
    from_grad_cell: Expr,
    add_grad_cell: Expr,
    multiply_grad_cell: Expr,
    /// ExprMutator's memo: rewritten node by the address of the original.
    memo: HashMap<usize, Expr>,
    /// Variables whose type changed, by the original's id.
    vars: HashMap<VarId, Var>,
    /// Operators whose result, a tuple, was wrapped whole in `Raw`.
    tuple_results: BTreeSet<String>,
}

fn std_missing(name: &str) -> Diagnostic {
    Diagnostic::pass_failed(format!(
        "LazyGradientInit: `{name}` of gradient.rly is missing from the module"
    ))
}

fn too_deep() -> Diagnostic {
    Diagnostic::pass_failed(format!(
        "LazyGradientInit: the expression is nested more than {MAX_DEPTH} levels deep"
    ))
}

fn untyped(expr: &Expr) -> Diagnostic {
    Diagnostic::pass_failed_at(
        expr,
        "LazyGradientInit: an expression has no checked type; run InferType first",
    )
}

fn checked_type(expr: &Expr) -> Result<Type, Diagnostic> {
    expr.checked_type().cloned().ok_or_else(|| untyped(expr))
}

/// `callee(args)` with type arguments (and no span, as TVM's new calls).
fn call(
    callee: Expr,
    args: Vec<Expr>,
    attrs: Option<relay_ir::Attrs>,
    type_args: Vec<Type>,
) -> Expr {
    Expr::new(
        ExprKind::Call(Call {
            callee,
            args,
            attrs,
            type_args: type_args.into(),
        }),
        None,
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

impl Initializer {
    fn new(module: &IRModule) -> Result<Initializer, Diagnostic> {
        let grad_cell = module
            .global_type_var("GradCell")
            .cloned()
            .ok_or_else(|| std_missing("GradCell"))?;
        let constructor = |name: &str| {
            module
                .constructor(name)
                .cloned()
                .ok_or_else(|| std_missing(name))
        };
        let global = |name: &str| {
            module
                .function(name)
                .map(|_| Expr::global(name, None))
                .ok_or_else(|| std_missing(name))
        };
        Ok(Initializer {
            raw: constructor("Raw")?,
            one: constructor("One")?,
            zero: constructor("Zero")?,
            from_grad_cell: global("FromGradCell")?,
            add_grad_cell: global("AddGradCell")?,
            multiply_grad_cell: global("MultiplyGradCell")?,
            grad_cell,
            memo: HashMap::default(),
            vars: HashMap::default(),
            tuple_results: BTreeSet::new(),
        })
    }

    /// TVM's `Transform`: the rewritten function, called from a wrapper of
    /// the original's type; the original itself when nothing changed.
    fn transform(&mut self, original: &Function) -> Result<Function, Diagnostic> {
        let rewritten = self.visit(original.expr(), 0)?;
        if rewritten.ptr_eq(original.expr()) {
            return Ok(original.clone());
        }
        let rewritten_fn = rewritten
            .as_function()
            .expect("a rewritten function is a function");
        let mut lets = LetList::default();
        let mut args = Vec::with_capacity(original.params().len());
        for param in original.params() {
            let ty = param
                .expr()
                .checked_type()
                .or(param.type_annotation())
                .cloned()
                .ok_or_else(|| untyped(param.expr()))?;
            args.push(self.wrap(param.clone(), &ty, &mut lets));
        }
        let result = lets.push(call(rewritten, args, None, Vec::new()));
        let output = match &rewritten_fn.data().ret_type {
            Some(ret) => self.unwrap(result, ret, &mut lets),
            None => result.into_expr(),
        };
        Ok(Function::new(
            FunctionData {
                params: original.params().to_vec(),
                body: lets.get(output),
                ret_type: original.data().ret_type.clone(),
                type_params: Vec::new(),
                attrs: Default::default(),
                virtual_device: None,
            },
            None,
        ))
    }

    /// TVM's `WrapExpr`: a value of type `ty` as its GradCell version.
    fn wrap(&self, var: Var, ty: &Type, lets: &mut LetList) -> Expr {
        match ty.kind() {
            TypeKind::Tensor(_) => self.raw_of(var.into_expr(), ty.clone()),
            TypeKind::Tuple(fields) => {
                let fields = fields
                    .iter()
                    .enumerate()
                    .map(|(i, field)| {
                        let item = lets.push(Expr::tuple_get_item(var.expr().clone(), i, None));
                        self.wrap(item, field, lets)
                    })
                    .collect();
                Expr::tuple(fields, None)
            }
            _ => var.into_expr(),
        }
    }

    /// TVM's `UnwrapExpr`: a GradCell-version value of type `ty` back as
    /// the original value.
    fn unwrap(&self, var: Var, ty: &Type, lets: &mut LetList) -> Expr {
        match ty.kind() {
            TypeKind::Call { func, .. } => {
                if matches!(func.kind(), TypeKind::GlobalVar(g) if *g == self.grad_cell) {
                    call(
                        self.from_grad_cell.clone(),
                        vec![var.into_expr()],
                        None,
                        Vec::new(),
                    )
                } else {
                    var.into_expr()
                }
            }
            TypeKind::Tuple(fields) => {
                let fields = fields
                    .iter()
                    .enumerate()
                    .map(|(i, field)| {
                        let item = lets.push(Expr::tuple_get_item(var.expr().clone(), i, None));
                        self.unwrap(item, field, lets)
                    })
                    .collect();
                Expr::tuple(fields, None)
            }
            _ => var.into_expr(),
        }
    }

    fn raw_of(&self, value: Expr, ty: Type) -> Expr {
        self.construct(&self.raw, value, ty)
    }

    fn construct(&self, constructor: &Constructor, value: Expr, ty: Type) -> Expr {
        let callee = Expr::new(ExprKind::Constructor(constructor.clone()), None);
        call(callee, vec![value], None, vec![ty])
    }

    /// TVM's `VisitType`: tensor types become `GradCell[T]`, everywhere.
    fn visit_type(&self, ty: &Type) -> Type {
        match ty.kind() {
            TypeKind::Tensor(_) => Type::new(TypeKind::Call {
                func: Type::new(TypeKind::GlobalVar(self.grad_cell.clone())),
                args: vec![ty.clone()],
            }),
            TypeKind::Tuple(fields) => Type::new(TypeKind::Tuple(
                fields.iter().map(|f| self.visit_type(f)).collect(),
            )),
            TypeKind::Func(func) => Type::new(TypeKind::Func(Box::new(FuncType {
                params: func.params.iter().map(|p| self.visit_type(p)).collect(),
                ret: self.visit_type(&func.ret),
                type_params: func.type_params.clone(),
            }))),
            TypeKind::Call { func, args } => Type::new(TypeKind::Call {
                func: self.visit_type(func),
                args: args.iter().map(|a| self.visit_type(a)).collect(),
            }),
            TypeKind::Ref(inner) => Type::new(TypeKind::Ref(self.visit_type(inner))),
            TypeKind::Var(_) | TypeKind::GlobalVar(_) | TypeKind::Incomplete(_) => ty.clone(),
        }
    }

    /// ExprMutator's `VisitExpr`: memoised except for constants, which
    /// become a new `Raw(c)` at each use, as in TVM.
    fn visit(&mut self, expr: &Expr, depth: usize) -> Result<Expr, Diagnostic> {
        if depth > MAX_DEPTH {
            return Err(too_deep());
        }
        if let ExprKind::Constant(_) = expr.kind() {
            return Ok(self.raw_of(expr.clone(), checked_type(expr)?));
        }
        if let Some(done) = self.memo.get(&expr.addr()) {
            return Ok(done.clone());
        }
        let result = self.visit_node(expr, depth)?;
        self.memo.insert(expr.addr(), result.clone());
        Ok(result)
    }

    fn visit_var(&mut self, var: &Var) -> Var {
        if let Some(done) = self.vars.get(&var.id()) {
            return done.clone();
        }
        let Some(annotation) = var.type_annotation() else {
            return var.clone();
        };
        let new_type = self.visit_type(annotation);
        if new_type == *annotation {
            return var.clone();
        }
        // TVM's `WithFields` makes a new variable object; the printer names
        // it apart from the original (`%x` becomes `%x1`).
        let new_var = Var::new(var.name(), Some(new_type), var.expr().span());
        self.vars.insert(var.id(), new_var.clone());
        new_var
    }

    fn visit_node(&mut self, expr: &Expr, depth: usize) -> Result<Expr, Diagnostic> {
        match expr.kind() {
            ExprKind::Var(_) => {
                let var = expr.as_var().expect("a variable node");
                Ok(self.visit_var(&var).into_expr())
            }
            ExprKind::Call(c) if c.callee.as_op().is_some() => self.visit_op_call(expr, c, depth),
            ExprKind::Function(data) => {
                let params: Vec<Var> = data.params.iter().map(|p| self.visit_var(p)).collect();
                let body = self.visit(&data.body, depth + 1)?;
                let ret_type = data.ret_type.as_ref().map(|t| self.visit_type(t));
                let unchanged = params
                    .iter()
                    .zip(&data.params)
                    .all(|(a, b)| a.expr().ptr_eq(b.expr()))
                    && body.ptr_eq(&data.body)
                    && ret_type == data.ret_type;
                if unchanged {
                    return Ok(expr.clone());
                }
                Ok(Function::new(
                    FunctionData {
                        params,
                        body,
                        ret_type,
                        ..(**data).clone()
                    },
                    expr.span(),
                )
                .into_expr())
            }
            ExprKind::Match { .. } => {
                // Patterns are kept as they are (ExprMutator's default).
                let data_and_rhs = self.match_children(expr, depth)?;
                Ok(rebuild(expr, &data_and_rhs, NodeUpdate::default()))
            }
            _ => {
                let mut new_children = Vec::new();
                for child in children(expr) {
                    new_children.push(self.visit(child, depth + 1)?);
                }
                // ExprMutator rewrites a call's type arguments with the
                // pass's type rewrite too (`@id(%f)` instantiates `A` with
                // `GradCell[float32]` afterwards).
                let type_args = match expr.kind() {
                    ExprKind::Call(c) => {
                        Some(c.type_args.iter().map(|t| self.visit_type(t)).collect())
                    }
                    _ => None,
                };
                let update = NodeUpdate {
                    type_args,
                    ..NodeUpdate::default()
                };
                Ok(rebuild(expr, &new_children, update))
            }
        }
    }

    /// The children of a match in `children` order: the scrutinee and the
    /// right-hand sides rewritten, pattern variables as they are.
    fn match_children(&mut self, expr: &Expr, depth: usize) -> Result<Vec<Expr>, Diagnostic> {
        let ExprKind::Match { data, clauses, .. } = expr.kind() else {
            unreachable!("called on a match")
        };
        let mut out = vec![self.visit(data, depth + 1)?];
        for clause in clauses {
            let mut pattern_vars = Vec::new();
            collect_pattern_vars(&clause.pattern, &mut pattern_vars);
            out.extend(pattern_vars);
            out.push(self.visit(&clause.rhs, depth + 1)?);
        }
        Ok(out)
    }

    fn visit_op_call(&mut self, expr: &Expr, c: &Call, depth: usize) -> Result<Expr, Diagnostic> {
        let op = c.callee.as_op().expect("an operator call");
        match op.name.as_str() {
            "add" => self.call_grad_cell_function(expr, c, self.add_grad_cell.clone(), depth),
            "multiply" => {
                self.call_grad_cell_function(expr, c, self.multiply_grad_cell.clone(), depth)
            }
            name @ ("ones" | "zeros" | "ones_like" | "zeros_like") => {
                let ty = checked_type(expr)?;
                let result = self.call_primitive_op(c, depth)?;
                let thunk = function(Vec::new(), result, Some(ty.clone()));
                // TVM v0.13 makes `One` for `zeros_like` too.
                let constructor = if name == "zeros" {
                    self.zero.clone()
                } else {
                    self.one.clone()
                };
                Ok(self.construct(&constructor, thunk, ty))
            }
            _ => {
                let ty = checked_type(expr)?;
                if matches!(ty.kind(), TypeKind::Tuple(_)) {
                    self.tuple_results.insert(op.name.to_string());
                }
                let result = self.call_primitive_op(c, depth)?;
                Ok(self.raw_of(result, ty))
            }
        }
    }

    /// TVM's `CallGradCellFunction`: `@AddGradCell(fn (%lhs, %rhs) { add(%lhs,
    /// %rhs) }, l, r)` when both arguments have one type.
    fn call_grad_cell_function(
        &mut self,
        expr: &Expr,
        c: &Call,
        overloaded: Expr,
        depth: usize,
    ) -> Result<Expr, Diagnostic> {
        let same_types = match c.args.as_slice() {
            [lhs, rhs] => checked_type(lhs)? == checked_type(rhs)?,
            _ => false,
        };
        if !same_types {
            let ty = checked_type(expr)?;
            let result = self.call_primitive_op(c, depth)?;
            return Ok(self.raw_of(result, ty));
        }
        let param_type = checked_type(&c.args[0])?;
        let lhs = Var::new("lhs", Some(param_type.clone()), None);
        let rhs = Var::new("rhs", Some(param_type.clone()), None);
        let fallback_call = call(
            c.callee.clone(),
            vec![lhs.expr().clone(), rhs.expr().clone()],
            None,
            Vec::new(),
        );
        let fallback = function(vec![lhs, rhs], fallback_call, Some(param_type.clone()));
        let mut args = vec![fallback];
        for arg in &c.args {
            args.push(self.visit(arg, depth + 1)?);
        }
        Ok(call(overloaded, args, None, vec![param_type]))
    }

    /// TVM's `CallPrimitiveOp`: the operator on `@FromGradCell` of each
    /// rewritten argument.
    fn call_primitive_op(&mut self, c: &Call, depth: usize) -> Result<Expr, Diagnostic> {
        let mut args = Vec::with_capacity(c.args.len());
        for arg in &c.args {
            let ty = checked_type(arg)?;
            let visited = self.visit(arg, depth + 1)?;
            args.push(call(
                self.from_grad_cell.clone(),
                vec![visited],
                None,
                vec![ty],
            ));
        }
        Ok(call(c.callee.clone(), args, c.attrs.clone(), Vec::new()))
    }
}

fn collect_pattern_vars(pattern: &relay_ir::Pattern, out: &mut Vec<Expr>) {
    match pattern {
        relay_ir::Pattern::Wildcard => {}
        relay_ir::Pattern::Var(var) => out.push(var.expr().clone()),
        relay_ir::Pattern::Constructor(_, fields) | relay_ir::Pattern::Tuple(fields) => {
            fields.iter().for_each(|f| collect_pattern_vars(f, out))
        }
    }
}
