//! `Defunctionalization`: TVM v0.13's `defunctionalization.cc`, which turns
//! one function of a module into first-order code: every function passed as
//! an argument becomes a value of an ADT and every call of such a value a
//! call of an `@apply` function that matches on it.
//!
//! TVM's algorithm, step for step (`DefuncMutator`):
//! - A call of a global whose instantiated type (type parameters replaced by
//!   the call's type arguments) takes function arguments is redirected to a
//!   specialised copy named `<global><type>` (the type written as TVM's
//!   `operator<<` writes it, see [`type_script`]), made once per name: the
//!   global is copied with fresh variables (`DeDup`), its type parameters
//!   replaced (`Specialize`), its function-typed parameters retyped as the
//!   ADT of their type and its body rewritten the same way (`FirstifyVars`).
//! - A function-typed argument is encoded as a constructor of the ADT
//!   `Defunc<type>` (created with its first constructor): a global `@g`
//!   gets a constructor without fields named by a counter (`0`, `1`, …; a
//!   new one for every use, as TVM's copy of its per-global table forgets
//!   the last), a function literal one whose fields are the literal's free
//!   variables (named by the counter incremented first) — and `@apply<type>`
//!   gets a clause `Ctor(fields…) => callee(%y…)` (the function is created
//!   with its first clause: `fn (%x: Defunc<type>[], %y: A…) -> R`).
//! - A call of a variable (an encoded argument) becomes
//!   `@apply<type>(%f, args…)`; a call of a function literal is reduced by
//!   binding its parameters to the arguments.
//! - Arguments that are not functions are kept as they are, not rewritten
//!   (TVM pushes them unvisited).
//!
//! What TVM refuses, it refuses here with its messages: polymorphic entry
//! functions, function-typed parameters or results of the entry function,
//! calls without explicit type arguments, instantiated types with free type
//! variables, globals returning functions, function arguments that are not
//! a variable, a global or a literal, nested function types in parameters,
//! calls of variables that are not encoded arguments.
//!
//! TVM offers this as a function, `relay.transform.Defunctionalization(func,
//! mod)`, which adds the new globals and types to `mod` and returns the new
//! `func`; the pass `Defunctionalization(entry="main")` applies it to one
//! function of the module and puts the result in its place (as TVM's tests
//! do with `mod["main"]`). It needs typed input (the calls' type arguments).

pub mod type_script;

use crate::partial_eval::{dedup_specialized, free_vars_of, with_stack};
use relay_ir::diagnostic::Diagnostic;
use relay_ir::rewrite::{for_each_child, rewrite_post_order, with_children};
use relay_ir::{
    Call, Clause, Constructor, Expr, ExprKind, FuncType, Function, FunctionData, GlobalTypeVar,
    GlobalVar, IRModule, Pattern, Type, TypeData, TypeKind, TypeVar, Var, VarId,
};
use relay_pass_manager::registry::{ParamSpec, PassSpec};
use std::collections::{HashMap, HashSet};
use type_script::type_to_string;

pub(crate) fn spec() -> PassSpec {
    PassSpec::module("Defunctionalization", 0)
        .doc(
            "Turn the function `entry` into first-order code: function arguments become \
             constructors of `Defunc<type>` ADTs, calls of them calls of `@apply<type>`, \
             higher-order globals specialised copies; needs typed input. In TVM a function \
             (relay.transform.Defunctionalization(func, mod)), not a registered pass",
        )
        .param(ParamSpec::string(
            "entry",
            "main",
            "the global function to defunctionalize (replaced by the result)",
        ))
        .build(|args| {
            let entry = args.string("entry");
            Ok(
                move |module: IRModule, _ctx: &relay_pass_manager::PassContext| {
                    defunctionalize_entry(module, &entry)
                },
            )
        })
}

/// The pass: [`defunctionalize`] of the global `entry`, put back under its
/// name.
fn defunctionalize_entry(module: IRModule, entry: &str) -> Result<IRModule, Diagnostic> {
    let function = module.function(entry).cloned().ok_or_else(|| {
        Diagnostic::pass_failed(format!(
            "Defunctionalization: the module has no global function @{entry}"
        ))
    })?;
    let mut module = module;
    let result = defunctionalize(&function, &mut module)?;
    module.add_function(entry, result);
    Ok(module)
}

/// TVM's `Defunctionalization(f, mod)`: the first-order version of `f`; the
/// specialised globals, `@apply` functions and `Defunc` ADTs it uses are
/// added to `module`.
pub fn defunctionalize(function: &Function, module: &mut IRModule) -> Result<Function, Diagnostic> {
    let data = function.data();
    if !data.type_params.is_empty() {
        return Err(Diagnostic::pass_failed_at(
            function.expr(),
            "no polymorphism supported for defunctionalization",
        ));
    }
    for param in &data.params {
        let ty = param
            .expr()
            .checked_type()
            .or(param.type_annotation())
            .ok_or_else(|| untyped(param.expr()))?;
        if has_func_type(ty) {
            return Err(Diagnostic::pass_failed_at(
                param.expr(),
                "program cannot have func type parameters",
            ));
        }
    }
    if data.ret_type.as_ref().is_some_and(has_func_type) {
        return Err(Diagnostic::pass_failed_at(
            function.expr(),
            "return type cannot contain function",
        ));
    }
    let mut mutator = Defunc {
        module,
        specialized: HashSet::new(),
        encoded_types: HashMap::new(),
        constructor_counter: 0,
        memo: HashMap::new(),
    };
    let result = mutator.visit(function.expr())?;
    result.as_function().ok_or_else(|| {
        Diagnostic::pass_failed("Defunctionalization: the function did not stay a function")
    })
}

fn untyped(expr: &Expr) -> Diagnostic {
    Diagnostic::pass_failed_at(
        expr,
        "The type checker has not populated the checked_type for this node (run InferType \
         before Defunctionalization)",
    )
}

/// Whether a function type occurs in `ty` (TVM's `HasFuncType`).
fn has_func_type(ty: &Type) -> bool {
    ty.any_part(|t| matches!(t.kind(), TypeKind::Func(_)))
}

/// Whether a parameter or the result of `ty` holds a function type.
fn is_higher_order(ty: &FuncType) -> bool {
    ty.params.iter().any(has_func_type) || has_func_type(&ty.ret)
}

/// `ty` with the type variables of `map` replaced (TVM's `TypeSubst`).
fn subst_type(ty: &Type, map: &HashMap<u64, Type>) -> Type {
    match ty.kind() {
        TypeKind::Var(tv) => map.get(&tv.id()).cloned().unwrap_or_else(|| ty.clone()),
        TypeKind::Tuple(fields) => Type::tuple(fields.iter().map(|f| subst_type(f, map)).collect()),
        TypeKind::Func(func) => Type::func(
            func.params.iter().map(|p| subst_type(p, map)).collect(),
            subst_type(&func.ret, map),
            func.type_params.clone(),
        ),
        TypeKind::Call { func, args } => Type::new(TypeKind::Call {
            func: subst_type(func, map),
            args: args.iter().map(|a| subst_type(a, map)).collect(),
        }),
        TypeKind::Ref(inner) => Type::new(TypeKind::Ref(subst_type(inner, map))),
        TypeKind::Tensor(_) | TypeKind::GlobalVar(_) | TypeKind::Incomplete(_) => ty.clone(),
    }
}

/// TVM's `InstFuncType`: `fty` without its type parameters, each replaced
/// by the type argument at its position.
fn inst_func_type(fty: &FuncType, type_args: &[Type], at: &Expr) -> Result<FuncType, Diagnostic> {
    if fty.type_params.len() != type_args.len() {
        return Err(Diagnostic::pass_failed_at(
            at,
            "size mismatch between function type params and type args",
        ));
    }
    let map: HashMap<u64, Type> = fty
        .type_params
        .iter()
        .map(TypeVar::id)
        .zip(type_args.iter().cloned())
        .collect();
    Ok(FuncType {
        params: fty.params.iter().map(|p| subst_type(p, &map)).collect(),
        ret: subst_type(&fty.ret, &map),
        type_params: Vec::new(),
    })
}

/// Whether `ty` uses a type variable that no function type inside it binds.
fn has_free_type_vars(ty: &Type, bound: &mut Vec<u64>) -> bool {
    match ty.kind() {
        TypeKind::Var(tv) => !bound.contains(&tv.id()),
        TypeKind::Tuple(fields) => fields.iter().any(|f| has_free_type_vars(f, bound)),
        TypeKind::Func(func) => {
            let depth = bound.len();
            bound.extend(func.type_params.iter().map(TypeVar::id));
            let free = func.params.iter().any(|p| has_free_type_vars(p, bound))
                || has_free_type_vars(&func.ret, bound);
            bound.truncate(depth);
            free
        }
        TypeKind::Call { func, args } => {
            has_free_type_vars(func, bound) || args.iter().any(|a| has_free_type_vars(a, bound))
        }
        TypeKind::Ref(inner) => has_free_type_vars(inner, bound),
        TypeKind::Tensor(_) | TypeKind::GlobalVar(_) | TypeKind::Incomplete(_) => false,
    }
}

/// `Name[]`: the type of values of the ADT `gtv`.
fn adt_type(gtv: &GlobalTypeVar) -> Type {
    Type::new(TypeKind::Call {
        func: Type::new(TypeKind::GlobalVar(gtv.clone())),
        args: Vec::new(),
    })
}

/// `expr` with the variables of `bindings` replaced, at binders too (TVM's
/// `Bind`).
fn bind(expr: &Expr, bindings: &HashMap<VarId, Expr>) -> Expr {
    if bindings.is_empty() {
        return expr.clone();
    }
    rewrite_post_order(expr, |old, rebuilt| match old.as_var() {
        Some(var) => bindings.get(&var.id()).cloned().unwrap_or(rebuilt),
        None => rebuilt,
    })
}

/// The state of one run (TVM's `DefuncMutator`).
struct Defunc<'m> {
    module: &'m mut IRModule,
    /// Names of the specialised globals made so far.
    specialized: HashSet<String>,
    /// `Defunc<type>` ADT name → the function type it encodes.
    encoded_types: HashMap<String, Type>,
    /// Names constructors: a literal's is the counter incremented first,
    /// a global's the counter before incrementing (as in TVM).
    constructor_counter: u64,
    /// Each node rewritten once (TVM's `ExprMutator` memo); the original is
    /// kept so its address is not reused.
    memo: HashMap<usize, (Expr, Expr)>,
}

impl Defunc<'_> {
    fn visit(&mut self, expr: &Expr) -> Result<Expr, Diagnostic> {
        if let Some((_, done)) = self.memo.get(&expr.addr()) {
            return Ok(done.clone());
        }
        let result = with_stack(|| self.visit_here(expr))?;
        self.memo
            .insert(expr.addr(), (expr.clone(), result.clone()));
        Ok(result)
    }

    fn visit_here(&mut self, expr: &Expr) -> Result<Expr, Diagnostic> {
        if let ExprKind::Call(call) = expr.kind() {
            match call.callee.kind() {
                ExprKind::GlobalVar(gv) => return self.global_call(expr, call, gv),
                ExprKind::Function(function) => {
                    if function.params.len() != call.args.len() {
                        return Err(Diagnostic::pass_failed_at(
                            expr,
                            "Defunctionalization: a function literal called with a different \
                             number of arguments than it has parameters",
                        ));
                    }
                    let bindings = function
                        .params
                        .iter()
                        .map(Var::id)
                        .zip(call.args.iter().cloned())
                        .collect();
                    let reduced = bind(&function.body, &bindings);
                    return self.visit(&reduced);
                }
                ExprKind::Var(_) => return self.var_call(expr, call),
                _ => {}
            }
        }
        self.visit_children(expr)
    }

    /// TVM's default `ExprMutator`: children rewritten, the node rebuilt
    /// only if one changed.
    fn visit_children(&mut self, expr: &Expr) -> Result<Expr, Diagnostic> {
        let mut children = Vec::new();
        for_each_child(expr, |c| children.push(c.clone()));
        if children.is_empty() {
            return Ok(expr.clone());
        }
        let mut changed = false;
        let mut rewritten = Vec::with_capacity(children.len());
        for child in &children {
            let new = self.visit(child)?;
            changed |= !new.ptr_eq(child);
            rewritten.push(new);
        }
        Ok(if changed {
            with_children(expr, &rewritten)
        } else {
            expr.clone()
        })
    }

    /// The type of the global `name`: its checked type where the call's
    /// callee has one, else its definition's.
    fn global_type(&self, callee: &Expr, name: &str) -> Result<FuncType, Diagnostic> {
        if let Some(TypeKind::Func(f)) = callee.checked_type().map(Type::kind) {
            return Ok((**f).clone());
        }
        let function = self.module.function(name).ok_or_else(|| {
            Diagnostic::pass_failed_at(
                callee,
                format!("Cannot find global var \"{name}\" in the Module"),
            )
        })?;
        let data = function.data();
        let mut params = Vec::with_capacity(data.params.len());
        for p in &data.params {
            let ty = p
                .type_annotation()
                .or(p.expr().checked_type())
                .ok_or_else(|| untyped(p.expr()))?;
            params.push(ty.clone());
        }
        let ret = data
            .ret_type
            .clone()
            .ok_or_else(|| untyped(function.expr()))?;
        Ok(FuncType {
            params,
            ret,
            type_params: data.type_params.clone(),
        })
    }

    fn global_call(
        &mut self,
        expr: &Expr,
        call: &Call,
        gv: &GlobalVar,
    ) -> Result<Expr, Diagnostic> {
        let fty = self.global_type(&call.callee, gv.name())?;
        if call.type_args.len() != fty.type_params.len() {
            return Err(Diagnostic::pass_failed_at(
                expr,
                "all type args must be explicit",
            ));
        }
        let op_type = inst_func_type(&fty, &call.type_args, expr)?;
        if has_free_type_vars(
            &Type::new(TypeKind::Func(Box::new(op_type.clone()))),
            &mut Vec::new(),
        ) {
            return Err(Diagnostic::pass_failed_at(
                expr,
                "free type vars in instantiated",
            ));
        }
        if has_func_type(&op_type.ret) {
            return Err(Diagnostic::pass_failed_at(
                expr,
                "returning functions not supported",
            ));
        }
        if !is_higher_order(&op_type) {
            return self.visit_children(expr);
        }
        if call.args.len() != op_type.params.len() {
            return Err(Diagnostic::pass_failed_at(
                expr,
                format!(
                    "Defunctionalization: @{} is called with {} arguments but takes {}",
                    gv.name(),
                    call.args.len(),
                    op_type.params.len()
                ),
            ));
        }
        let mut args = Vec::with_capacity(call.args.len());
        for (arg, ty) in call.args.iter().zip(&op_type.params) {
            if has_func_type(ty) {
                args.push(self.encode_arg(arg, ty)?);
            } else {
                args.push(arg.clone());
            }
        }
        let op_type = Type::new(TypeKind::Func(Box::new(op_type)));
        let name = format!("{}{}", gv.name(), type_to_string(&op_type));
        if self.specialized.insert(name.clone()) {
            let original = self.module.function(gv.name()).cloned().ok_or_else(|| {
                Diagnostic::pass_failed_at(
                    &call.callee,
                    format!("Cannot find global var \"{}\" in the Module", gv.name()),
                )
            })?;
            let specialized = self.specialize(&original, &call.type_args, expr)?;
            let first_order = self.firstify_vars(&specialized)?;
            self.module.add_function(&name, first_order);
        }
        Ok(Expr::call(
            Expr::global(&name, None),
            args,
            None,
            expr.span(),
        ))
    }

    /// TVM's `DeDup` then `Specialize`: a copy of `function` with fresh
    /// variables, its type parameters replaced by `type_args` and erased.
    fn specialize(
        &self,
        function: &Function,
        type_args: &[Type],
        at: &Expr,
    ) -> Result<Function, Diagnostic> {
        let data = function.data();
        if data.type_params.len() != type_args.len() {
            return Err(Diagnostic::pass_failed_at(
                at,
                "cannot specialize function with size mismatch between function type params \
                 and type args",
            ));
        }
        let subst = data
            .type_params
            .iter()
            .map(TypeVar::id)
            .zip(type_args.iter().cloned())
            .collect();
        let copy = dedup_specialized(function.expr(), &subst);
        let copy = copy.as_function().ok_or_else(|| {
            Diagnostic::pass_failed("Defunctionalization: a copied function is not a function")
        })?;
        let copied = copy.data();
        Ok(Function::new(
            FunctionData {
                type_params: Vec::new(),
                ..copied.clone()
            },
            function.expr().span(),
        ))
    }

    /// TVM's `FirstifyVars`: function-typed parameters retyped as their
    /// ADT, the body rewritten.
    fn firstify_vars(&mut self, function: &Function) -> Result<Function, Diagnostic> {
        let data = function.data();
        if !data.type_params.is_empty() {
            return Err(Diagnostic::pass_failed_at(
                function.expr(),
                "firstify function has type params",
            ));
        }
        let mut bindings: HashMap<VarId, Expr> = HashMap::new();
        for param in &data.params {
            match param.type_annotation() {
                Some(ty) if matches!(ty.kind(), TypeKind::Func(_)) => {
                    let adt = self.func_encode(ty);
                    if self.module.type_definition(adt.name()).is_none() {
                        return Err(Diagnostic::pass_failed_at(
                            param.expr(),
                            format!(
                                "There is no definition of I.GlobalTypeVar({:?}, \"AdtHandle\")",
                                adt.name()
                            ),
                        ));
                    }
                    let retyped = Var::new(param.name(), Some(adt_type(&adt)), param.expr().span());
                    bindings.insert(param.id(), retyped.into_expr());
                }
                Some(ty) if has_func_type(ty) => {
                    return Err(Diagnostic::pass_failed_at(
                        param.expr(),
                        "nested function type in parameter not supported yet",
                    ));
                }
                _ => {}
            }
        }
        let bound = bind(function.expr(), &bindings);
        let bound = bound.as_function().ok_or_else(|| {
            Diagnostic::pass_failed("Defunctionalization: a bound function is not a function")
        })?;
        let bound_data = bound.data();
        let body = self.visit(&bound_data.body)?;
        Ok(Function::new(
            FunctionData {
                body,
                type_params: Vec::new(),
                ..bound_data.clone()
            },
            function.expr().span(),
        ))
    }

    /// A call of an encoded argument: `@apply<type>(%f, args…)`.
    fn var_call(&mut self, expr: &Expr, call: &Call) -> Result<Expr, Diagnostic> {
        let var = call.callee.as_var().expect("the callee is a variable");
        let original = self.unencoded_type(var.type_annotation(), &call.callee)?;
        let op_type = inst_func_type(&original, &call.type_args, expr)?;
        let mut args = vec![call.callee.clone()];
        for arg in &call.args {
            args.push(self.visit(arg)?);
        }
        let apply = apply_name(&Type::new(TypeKind::Func(Box::new(op_type))));
        Ok(Expr::call(
            Expr::global(&apply, None),
            args,
            None,
            expr.span(),
        ))
    }

    /// TVM's `GetUnencodedType`: the function type the ADT of `annotation`
    /// encodes.
    fn unencoded_type(&self, annotation: Option<&Type>, at: &Expr) -> Result<FuncType, Diagnostic> {
        let Some(TypeKind::Call { func, .. }) = annotation.map(Type::kind) else {
            return Err(Diagnostic::pass_failed_at(
                at,
                "expected type call when getting original type from encoded type",
            ));
        };
        let TypeKind::GlobalVar(gtv) = func.kind() else {
            return Err(Diagnostic::pass_failed_at(
                at,
                "expected global type var in encoded type",
            ));
        };
        match self.encoded_types.get(gtv.name()).map(Type::kind) {
            Some(TypeKind::Func(f)) => Ok((**f).clone()),
            _ => Err(Diagnostic::pass_failed_at(
                at,
                "reverse mapping from encoded type to original type not found",
            )),
        }
    }

    /// TVM's `GetFuncEncode`: the ADT `Defunc<type>` (its definition is
    /// made with its first constructor).
    fn func_encode(&mut self, ty: &Type) -> GlobalTypeVar {
        let name = format!("Defunc{}", type_to_string(ty));
        self.encoded_types.insert(name.clone(), ty.clone());
        GlobalTypeVar::new(&name)
    }

    /// TVM's `EncodeArg`: a function-typed argument as a constructor value.
    fn encode_arg(&mut self, arg: &Expr, ty: &Type) -> Result<Expr, Diagnostic> {
        let Some(ft) = ty.as_func() else {
            return Err(Diagnostic::pass_failed_at(
                arg,
                "assume no nested functions",
            ));
        };
        match arg.kind() {
            // Already encoded: a parameter of the function being rewritten.
            ExprKind::Var(_) => Ok(arg.clone()),
            ExprKind::GlobalVar(_) => {
                // TVM looks the constructor up in a copy of its per-global
                // table and never stores it back: every use of a global
                // gets a new constructor and a new clause.
                let gtv = self.func_encode(ty);
                let name = self.constructor_counter.to_string();
                self.constructor_counter += 1;
                let constructor = self.add_constructor(&gtv, &name, Vec::new());
                self.add_apply_case(ty, ft, &constructor, arg.clone(), Vec::new())?;
                Ok(Expr::call(
                    Expr::new(ExprKind::Constructor(constructor), None),
                    Vec::new(),
                    None,
                    None,
                ))
            }
            ExprKind::Function(function) => self.encode_literal(arg, function, ty, ft),
            _ => Err(Diagnostic::pass_failed_at(
                arg,
                "assume all first-order-parameters are identifiers or functions",
            )),
        }
    }

    /// A function literal as a constructor whose fields are its free
    /// variables; its clause in `@apply` binds them again.
    fn encode_literal(
        &mut self,
        arg: &Expr,
        function: &FunctionData,
        ty: &Type,
        ft: &FuncType,
    ) -> Result<Expr, Diagnostic> {
        let mut field_types = Vec::new();
        let mut patterns = Vec::new();
        let mut fields = Vec::new();
        let mut bindings: HashMap<VarId, Expr> = HashMap::new();
        for free in free_vars_of(arg) {
            let field_type = free
                .type_annotation()
                .or(free.expr().checked_type())
                .ok_or_else(|| untyped(free.expr()))?;
            field_types.push(field_type.clone());
            let rebound = Var::new(free.name(), free.type_annotation().cloned(), None);
            bindings.insert(free.id(), rebound.expr().clone());
            patterns.push(Pattern::Var(rebound));
            fields.push(free.into_expr());
        }
        let gtv = self.func_encode(ty);
        self.constructor_counter += 1;
        let name = self.constructor_counter.to_string();
        let constructor = self.add_constructor(&gtv, &name, field_types);
        let body = self.visit(&bind(&function.body, &bindings))?;
        let literal = Expr::new(
            ExprKind::Function(Box::new(FunctionData {
                body,
                ..function.clone()
            })),
            arg.span(),
        );
        self.add_apply_case(ty, ft, &constructor, literal, patterns)?;
        Ok(Expr::call(
            Expr::new(ExprKind::Constructor(constructor), None),
            fields,
            None,
            None,
        ))
    }

    /// A new constructor at the end of the ADT `gtv`, made with it if new.
    fn add_constructor(
        &mut self,
        gtv: &GlobalTypeVar,
        name: &str,
        inputs: Vec<Type>,
    ) -> Constructor {
        let mut data = self
            .module
            .type_definition(gtv.name())
            .cloned()
            .unwrap_or_else(|| TypeData {
                header: gtv.clone(),
                type_vars: Vec::new(),
                constructors: Vec::new(),
            });
        let constructor = Constructor::new(name, inputs, gtv.clone(), data.constructors.len());
        data.constructors.push(constructor.clone());
        self.module.add_type_definition(data);
        constructor
    }

    /// TVM's `AddApplyCase`: the clause `constructor(patterns…) =>
    /// callee(%y…)` at the end of `@apply<type>`, which is made with it if
    /// new.
    fn add_apply_case(
        &mut self,
        ty: &Type,
        ft: &FuncType,
        constructor: &Constructor,
        callee: Expr,
        patterns: Vec<Pattern>,
    ) -> Result<(), Diagnostic> {
        let name = apply_name(ty);
        let pattern = Pattern::Constructor(constructor.clone(), patterns);
        let function = match self.module.function(&name) {
            None => {
                let x = Var::new("x", Some(adt_type(&constructor.data().belong_to)), None);
                let ys: Vec<Var> = ft
                    .params
                    .iter()
                    .map(|t| Var::new("y", Some(t.clone()), None))
                    .collect();
                let args = ys.iter().map(|y| y.expr().clone()).collect();
                let clause = Clause {
                    pattern,
                    rhs: Expr::call(callee, args, None, None),
                };
                let mut params = vec![x.clone()];
                params.extend(ys);
                FunctionData {
                    params,
                    body: match_on(x, vec![clause]),
                    ret_type: Some(ft.ret.clone()),
                    type_params: Vec::new(),
                    attrs: Default::default(),
                    virtual_device: None,
                }
            }
            Some(existing) => {
                let data = existing.data();
                let (ExprKind::Match { clauses, .. }, Some(x)) =
                    (data.body.kind(), data.params.first())
                else {
                    return Err(Diagnostic::pass_failed(
                        "internal invariant broken; apply function body should be a match node",
                    ));
                };
                let args = data.params[1..].iter().map(|y| y.expr().clone()).collect();
                let mut clauses = clauses.clone();
                clauses.push(Clause {
                    pattern,
                    rhs: Expr::call(callee, args, None, None),
                });
                FunctionData {
                    body: match_on(x.clone(), clauses),
                    attrs: Default::default(),
                    virtual_device: None,
                    ..data.clone()
                }
            }
        };
        self.module
            .add_function(&name, Function::new(function, None));
        Ok(())
    }
}

/// `match (%x) { clauses }`.
fn match_on(x: Var, clauses: Vec<Clause>) -> Expr {
    Expr::new(
        ExprKind::Match {
            data: x.into_expr(),
            clauses,
            complete: true,
        },
        None,
    )
}

/// TVM's `GetApplyFunction`: the name of the function applying encoded
/// functions of type `ty`.
fn apply_name(ty: &Type) -> String {
    format!("apply{}", type_to_string(ty))
}
