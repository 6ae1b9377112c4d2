//! `PartialEvaluate`: TVM v0.13's partial evaluator (`partial_eval.cc`,
//! module pass `PartialEval`, opt_level 1), an interpreter over partially
//! static values that emits A-normal-form code for what it cannot compute.
//!
//! Every expression evaluates to a `PStatic`: an optional static part
//! (`Static`: a constant tensor, a tuple, an ADT value, a reference, a
//! function) and an atomic dynamic part (a variable, constant, global or
//! operator) that computes the same value at run time. Compound dynamic
//! code is bound with `let %x_N = …` from the process-wide fresh-name
//! counter, in TVM's order, so names match TVM's.
//!
//! - Operator calls whose arguments are all static are evaluated with
//!   `relay-eval`'s kernels (TVM's interpreter); the names TVM's interpreter
//!   draws while compiling the call (`FuseOps(0)` + `ToANormalForm`: the
//!   fused function, each constant or tuple argument, the call) are drawn
//!   too. A call our kernels cannot evaluate stays a call (TVM would fold
//!   it): the output is then correct but not TVM's.
//! - Calls of known functions are inlined (a renamed copy of the function,
//!   type arguments substituted), guarded by TVM's *fuel*: per function, a
//!   meet-semilattice of the arguments' creation times and static integer
//!   values; a call that makes no progress is emitted as a call.
//! - References live in a store with frames, rolled back around branches
//!   and function bodies and invalidated by unknown effects.
//! - `match` on a static value picks its clause; otherwise every clause is
//!   evaluated with unknown pattern variables.
//!
//! Each global function is replaced by its partially evaluated version
//! (renamed afresh, as TVM's `DeDup`). Input with shared sub-expressions
//! (graph form) is refused, as TVM's feature check does. Primitive
//! (fused) functions are never evaluated, only called.

pub(crate) mod dedup;
mod values;

#[cfg(test)]
mod tests;

use dedup::{dedup, free_vars, use_types, TypeSubst};

/// A copy of `root` with fresh variables and type parameters (TVM's
/// `DeDup`) and the type variables of `subst` replaced (`TypeSubst`).
pub(crate) fn dedup_specialized(root: &Expr, subst: &TypeSubst) -> Expr {
    dedup(root, subst).0
}

/// The variables used in `root` but bound outside it, in first-use order
/// (TVM's `FreeVars`).
pub(crate) fn free_vars_of(root: &Expr) -> Vec<Var> {
    free_vars(root)
}
use relay_eval::{self as eval, CallInfo, Value};
use relay_ir::build::fresh_let_variable;
use relay_ir::diagnostic::Diagnostic;
use relay_ir::rewrite::for_each_child;
use relay_ir::{
    Attrs, Call, Clause, Expr, ExprKind, Function, IRModule, Pattern, Type, Var, VarId,
};
use relay_pass_manager::registry::PassSpec;
// Tables consulted per node: the fast hasher, not SipHash.
use relay_ir::fxhash::{FxMap as HashMap, FxSet as HashSet};
use std::rc::Rc;
use values::{Closure, Fuel, PStatic, Static, StaticFunc, PS};

pub(crate) fn spec() -> PassSpec {
    PassSpec::module("PartialEvaluate", 1)
        .info_name("PartialEval")
        .doc(
            "Evaluate at compile time what is known (constants, tuples, ADT values, references, \
             calls of known functions with fuel), emitting A-normal-form code for the rest; \
             operator calls fold where relay-eval has a kernel; graph-form input is refused",
        )
        .transform(|module, _ctx| partial_evaluate(module))
}

/// How deep the evaluator may recurse (nested expressions plus inlined
/// calls) before it reports: the stack grows as needed (see [`with_stack`]),
/// this bounds the memory a runaway program may take.
const MAX_DEPTH: usize = 50_000;

/// Runs `f` with enough stack for one more level of recursion, growing the
/// stack in segments (nesting depth comes from the user's program).
pub(crate) fn with_stack<R>(f: impl FnOnce() -> R) -> R {
    const RED_ZONE: usize = 128 << 10;
    const SEGMENT: usize = 4 << 20;
    stacker::maybe_grow(RED_ZONE, SEGMENT, f)
}

/// Runs the partial evaluator on every global function of `module`.
pub fn partial_evaluate(module: IRModule) -> Result<IRModule, Diagnostic> {
    check_no_sharing(&module)?;
    let names: Vec<String> = module.functions().map(|(n, _)| n.to_string()).collect();
    let mut evaluator = PartialEvaluator::new(module);
    for name in &names {
        evaluator.visit_global(name)?;
    }
    Ok(evaluator.output)
}

/// TVM's `CheckFeature(m, All - fGraph)`: a non-atomic node reached twice.
fn check_no_sharing(module: &IRModule) -> Result<(), Diagnostic> {
    for (_, function) in module.functions() {
        let mut seen: HashSet<usize> = HashSet::default();
        let mut shared: Option<Expr> = None;
        let mut stack: Vec<&Expr> = vec![function.expr()];
        while let Some(expr) = stack.pop() {
            if !seen.insert(expr.addr()) {
                if !is_atomic(expr) && shared.is_none() {
                    shared = Some(expr.clone());
                }
                continue;
            }
            if let ExprKind::Function(f) = expr.kind() {
                if f.attrs.get("Primitive").and_then(|v| v.as_int()) == Some(1) {
                    continue;
                }
            }
            for_each_child(expr, |c| stack.push(c));
        }
        if let Some(expr) = shared {
            return Err(Diagnostic::pass_failed_at(
                &expr,
                "PartialEvaluate: has unsupported feature: [fGraph, ] (this expression is used \
                 more than once; the partial evaluator needs every expression to have one use)",
            )
            .with_help("run ToANormalForm first to bind shared expressions to variables"));
        }
    }
    Ok(())
}

fn is_atomic(expr: &Expr) -> bool {
    matches!(
        expr.kind(),
        ExprKind::Var(_)
            | ExprKind::GlobalVar(_)
            | ExprKind::Constant(_)
            | ExprKind::Op(_)
            | ExprKind::Constructor(_)
    )
}

/// Bindings being emitted, innermost scope (TVM's `LetList`).
#[derive(Default)]
struct LetList {
    bindings: Vec<(Var, Expr)>,
}

impl LetList {
    fn push(&mut self, value: Expr) -> Expr {
        let var = fresh_let_variable();
        self.push_named(var, value)
    }

    fn push_named(&mut self, var: Var, value: Expr) -> Expr {
        let use_ = var.expr().clone();
        self.bindings.push((var, value));
        use_
    }

    fn wrap(self, body: Expr) -> Expr {
        self.bindings
            .into_iter()
            .rev()
            .fold(body, |body, (var, value)| {
                Expr::let_(var, value, body, None)
            })
    }
}

/// One frame of the reference store; see [`Store`].
struct StoreFrame {
    cells: HashMap<u64, PS>,
    /// `false` on a frame pushed by an unknown effect: frames below it are
    /// out of date.
    history_valid: bool,
}

/// The values of static references, in frames so that a branch's writes
/// can be rolled back.
struct Store {
    frames: Vec<StoreFrame>,
}

impl Store {
    fn new() -> Store {
        Store {
            frames: vec![StoreFrame {
                cells: HashMap::default(),
                history_valid: true,
            }],
        }
    }

    fn open(&mut self) {
        self.frames.push(StoreFrame {
            cells: HashMap::default(),
            history_valid: true,
        });
    }

    /// Drops the frames pushed since the matching [`Store::open`].
    fn close(&mut self) {
        while self.frames.last().is_some_and(|f| !f.history_valid) {
            self.frames.pop();
        }
        self.frames.pop();
        if self.frames.is_empty() {
            self.open();
        }
    }

    fn insert(&mut self, cell: u64, value: PS) {
        if let Some(frame) = self.frames.last_mut() {
            frame.cells.insert(cell, value);
        }
    }

    fn lookup(&self, cell: u64) -> Option<PS> {
        for frame in self.frames.iter().rev() {
            if let Some(value) = frame.cells.get(&cell) {
                return Some(value.clone());
            }
            if !frame.history_valid {
                return None;
            }
        }
        None
    }

    fn invalidate(&mut self) {
        self.frames.push(StoreFrame {
            cells: HashMap::default(),
            history_valid: false,
        });
    }
}

/// Whether a pattern matches a partially static value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MatchStatus {
    Match,
    NoMatch,
    Unknown,
}

type PeResult<T = PS> = Result<T, Diagnostic>;

struct PartialEvaluator {
    /// The functions as they were before the pass (inlining uses these).
    original: IRModule,
    output: IRModule,
    env: Vec<HashMap<VarId, PS>>,
    store: Store,
    globals: HashMap<String, PS>,
    /// Function identity (node address) → function id; copies made by
    /// renaming share their original's id. `keep_alive` holds the nodes so
    /// that addresses are never reused.
    func_ids: HashMap<usize, usize>,
    next_func_id: usize,
    keep_alive: Vec<Expr>,
    fuel: HashMap<usize, Fuel>,
    next_time: u64,
    next_ref: u64,
    depth: usize,
}

impl PartialEvaluator {
    fn new(module: IRModule) -> PartialEvaluator {
        PartialEvaluator {
            original: module.clone(),
            output: module,
            env: vec![HashMap::default()],
            store: Store::new(),
            globals: HashMap::default(),
            func_ids: HashMap::default(),
            next_func_id: 0,
            keep_alive: Vec::new(),
            fuel: HashMap::default(),
            next_time: 0,
            next_ref: 0,
            depth: 0,
        }
    }

    fn make(&mut self, stat: Option<Static>, dynamic: Expr) -> PS {
        let time = self.next_time;
        self.next_time += 1;
        Rc::new(PStatic {
            stat,
            dynamic,
            time,
        })
    }

    fn no_static(&mut self, dynamic: Expr) -> PS {
        self.make(None, dynamic)
    }

    fn has_static(&mut self, stat: Static, dynamic: Expr) -> PS {
        self.make(Some(stat), dynamic)
    }

    // ----- environment -----

    fn insert(&mut self, var: &Var, value: PS) {
        if let Some(frame) = self.env.last_mut() {
            frame.insert(var.id(), value);
        }
    }

    fn lookup(&self, var: &Var) -> PeResult {
        for frame in self.env.iter().rev() {
            if let Some(value) = frame.get(&var.id()) {
                return Ok(value.clone());
            }
        }
        Err(Diagnostic::pass_failed(format!(
            "PartialEvaluate: unknown variable %{}",
            var.name()
        )))
    }

    fn with_frame<T>(&mut self, body: impl FnOnce(&mut Self) -> T) -> T {
        self.env.push(HashMap::default());
        let result = body(self);
        self.env.pop();
        result
    }

    fn with_store_frame<T>(&mut self, body: impl FnOnce(&mut Self) -> T) -> T {
        self.store.open();
        let result = body(self);
        self.store.close();
        result
    }

    /// Evaluates `body` with a fresh let list and wraps its bindings around
    /// the dynamic result (TVM's `LetList::With`).
    fn with_let_list(
        &mut self,
        body: impl FnOnce(&mut Self, &mut LetList) -> PeResult,
    ) -> PeResult<Expr> {
        let mut ll = LetList::default();
        let result = body(self, &mut ll)?;
        Ok(ll.wrap(result.dynamic.clone()))
    }

    // ----- function ids -----

    fn func_id_of(&self, function: &Expr) -> Option<usize> {
        self.func_ids.get(&function.addr()).copied()
    }

    /// Numbers every function literal in `root` (pre-order), as TVM's
    /// `InitializeFuncId`.
    fn initialize_func_ids(&mut self, root: &Expr) {
        let mut stack = vec![root.clone()];
        let mut seen = HashSet::default();
        while let Some(expr) = stack.pop() {
            if !seen.insert(expr.addr()) {
                continue;
            }
            if matches!(expr.kind(), ExprKind::Function(_))
                && !self.func_ids.contains_key(&expr.addr())
            {
                self.func_ids.insert(expr.addr(), self.next_func_id);
                self.next_func_id += 1;
                self.keep_alive.push(expr.clone());
            }
            let mut children = Vec::new();
            for_each_child(&expr, |c| children.push(c.clone()));
            stack.extend(children.into_iter().rev());
        }
    }

    /// A renamed copy of `function` whose function literals keep the ids of
    /// the ones they copy.
    fn renamed_copy(&mut self, function: &Function, subst: &TypeSubst) -> Function {
        let (copy, copied_functions) = dedup(function.expr(), subst);
        for (original, copied) in copied_functions {
            if let Some(id) = self.func_id_of(&original) {
                self.func_ids.insert(copied.addr(), id);
                self.keep_alive.push(copied);
            }
        }
        copy.as_function()
            .expect("a copy of a function is a function")
    }

    // ----- globals -----

    fn visit_global(&mut self, name: &str) -> PeResult {
        if let Some(value) = self.globals.get(name) {
            return Ok(value.clone());
        }
        let gv = Expr::global(name, None);
        let Some(function) = self.original.function(name).cloned() else {
            return Ok(self.no_static(gv));
        };
        self.initialize_func_ids(function.expr());
        let closure = self.closure(&function, Some(gv.clone()))?;
        let value = self.has_static(Static::Func(closure.clone()), gv.clone());
        self.globals.insert(name.to_string(), value.clone());
        let evaluated = self.function_dynamic(&function, &closure, gv)?;
        let (renamed, _) = dedup(evaluated.expr(), &TypeSubst::default());
        let renamed = renamed
            .as_function()
            .expect("a copy of a function is a function");
        self.output.add_function(name, renamed);
        Ok(value)
    }

    // ----- functions -----

    /// TVM's `VisitFuncStatic`: what calling `function` does.
    fn closure(&mut self, function: &Function, name: Option<Expr>) -> PeResult<Rc<StaticFunc>> {
        if function.is_primitive() {
            return Ok(Rc::new(StaticFunc::Primitive(function.expr().clone())));
        }
        let self_id = name.as_ref().and_then(Expr::as_var).map(|v| v.id());
        let mut captured = Vec::new();
        for var in free_vars(function.expr()) {
            if Some(var.id()) != self_id {
                let value = self.lookup(&var)?;
                captured.push((var, value));
            }
        }
        Ok(Rc::new(StaticFunc::Closure(Closure {
            function: function.clone(),
            name,
            captured,
        })))
    }

    /// TVM's `VisitFuncDynamic`: the function with its body partially
    /// evaluated for unknown arguments.
    fn function_dynamic(
        &mut self,
        function: &Function,
        closure: &Rc<StaticFunc>,
        self_expr: Expr,
    ) -> PeResult<Function> {
        self.store.open();
        self.store.invalidate();
        let result = self.with_let_list(|pe, ll| {
            let args: Vec<PS> = function
                .params()
                .iter()
                .map(|p| pe.no_static(p.expr().clone()))
                .collect();
            let type_args: Vec<Type> = function
                .data()
                .type_params
                .iter()
                .map(|tp| Type::var(tp.clone()))
                .collect();
            let this = pe.has_static(Static::Func(closure.clone()), self_expr.clone());
            pe.apply(closure, &this, &args, None, &type_args, ll)
        });
        self.store.close();
        let body = result?;
        Ok(function.with_body(body))
    }

    /// A function literal bound to `name` (a `let` variable or a fresh one).
    fn visit_function(&mut self, function: &Function, ll: &mut LetList, name: Var) -> PeResult {
        let closure = self.closure(function, Some(name.expr().clone()))?;
        let copy = self.renamed_copy(function, &TypeSubst::default());
        let dynamic = self.function_dynamic(&copy, &closure, name.expr().clone())?;
        let var = ll.push_named(name, dynamic.into_expr());
        Ok(self.has_static(Static::Func(closure), var))
    }

    /// Calls a static function (TVM's `SFunc`).
    fn apply(
        &mut self,
        func: &Rc<StaticFunc>,
        this: &PS,
        args: &[PS],
        attrs: Option<&Attrs>,
        type_args: &[Type],
        ll: &mut LetList,
    ) -> PeResult {
        match func.as_ref() {
            StaticFunc::Op(op_expr) => self.apply_op(op_expr, args, attrs, type_args, ll),
            StaticFunc::Primitive(function) => {
                let call = make_call(
                    function.clone(),
                    dynamics(args),
                    attrs.cloned(),
                    type_args.to_vec(),
                );
                let var = ll.push(call);
                Ok(self.no_static(var))
            }
            StaticFunc::Constructor(ctor_expr) => {
                let ExprKind::Constructor(ctor) = ctor_expr.kind() else {
                    unreachable!("a constructor value wraps a constructor")
                };
                let call = make_call(ctor_expr.clone(), dynamics(args), None, Vec::new());
                let var = ll.push(call);
                Ok(self.has_static(Static::Constructor(ctor.clone(), args.to_vec()), var))
            }
            StaticFunc::Closure(closure) => {
                self.apply_closure(closure, this, args, attrs, type_args, ll)
            }
        }
    }

    fn apply_closure(
        &mut self,
        closure: &Closure,
        this: &PS,
        args: &[PS],
        attrs: Option<&Attrs>,
        type_args: &[Type],
        ll: &mut LetList,
    ) -> PeResult {
        let function = &closure.function;
        if args.len() != function.params().len() {
            return Err(Diagnostic::pass_failed(format!(
                "PartialEvaluate: a function of {} parameters is called with {} arguments",
                function.params().len(),
                args.len()
            )));
        }
        let Some(fid) = self.func_id_of(function.expr()) else {
            return Err(Diagnostic::pass_failed(
                "PartialEvaluate: internal error: a function without an id",
            ));
        };
        let arg_fuel = Fuel::Seq(args.iter().map(|a| a.fuel()).collect());
        let current = self.fuel.get(&fid).cloned().unwrap_or(Fuel::Top);
        let (met, progress) = current.meet(&arg_fuel);
        self.with_frame(|pe| {
            if !progress {
                let callee = closure
                    .name
                    .clone()
                    .unwrap_or_else(|| function.expr().clone());
                let call = make_call(callee, dynamics(args), attrs.cloned(), type_args.to_vec());
                let var = ll.push(call);
                return Ok(pe.no_static(var));
            }
            let old = pe.fuel.insert(fid, met);
            let mut subst = TypeSubst::default();
            for (i, tp) in function.data().type_params.iter().enumerate() {
                let ty = type_args.get(i).cloned().unwrap_or_else(Type::incomplete);
                subst.insert(tp.id(), ty);
            }
            let copy = pe.renamed_copy(function, &subst);
            if let Some(var) = closure.name.as_ref().and_then(Expr::as_var) {
                pe.insert(&var, this.clone());
            }
            for (param, arg) in copy.params().iter().zip(args) {
                pe.insert(param, arg.clone());
            }
            for (var, value) in &closure.captured {
                pe.insert(var, value.clone());
            }
            let result = pe.visit(copy.body(), ll);
            match old {
                Some(old) => pe.fuel.insert(fid, old),
                None => pe.fuel.remove(&fid),
            };
            result
        })
    }

    /// TVM's `ConstEvaluateFunc` for an operator.
    fn apply_op(
        &mut self,
        op_expr: &Expr,
        args: &[PS],
        attrs: Option<&Attrs>,
        type_args: &[Type],
        ll: &mut LetList,
    ) -> PeResult {
        let op = op_expr
            .as_op()
            .expect("an operator value wraps an operator");
        if !op.stateful {
            let values: Option<Vec<Value>> = args.iter().map(reflect).collect();
            if let Some(values) = values {
                let info = CallInfo::new(&op.name, attrs);
                if let Ok(value) = eval::eval_call(&info, &values) {
                    // TVM's interpreter compiles the call: FuseOps(0) wraps
                    // the operator in a function, ToANormalForm binds that
                    // function, each argument and the call.
                    let drawn = 2 + values.iter().map(anf_bindings).sum::<usize>();
                    for _ in 0..drawn {
                        fresh_let_variable();
                    }
                    return Ok(self.reify(value, ll));
                }
            }
        }
        let call = make_call(
            op_expr.clone(),
            dynamics(args),
            attrs.cloned(),
            type_args.to_vec(),
        );
        let var = ll.push(call);
        Ok(self.no_static(var))
    }

    fn reify(&mut self, value: Value, ll: &mut LetList) -> PS {
        match value {
            Value::Tensor(data) => {
                let var = ll.push(Expr::new(ExprKind::Constant(data.clone()), None));
                self.has_static(Static::Tensor(data), var)
            }
            Value::Tuple(fields) => {
                let fields: Vec<PS> = fields.into_iter().map(|f| self.reify(f, ll)).collect();
                let var = ll.push(Expr::tuple(dynamics(&fields), None));
                self.has_static(Static::Tuple(fields), var)
            }
        }
    }

    // ----- expressions -----

    /// `value` of `let name = value`: a function literal keeps the name.
    fn visit_named(&mut self, expr: &Expr, ll: &mut LetList, name: &Var) -> PeResult {
        match expr.kind() {
            ExprKind::Function(_) => {
                let function = expr.as_function().expect("a function node");
                self.visit_function(&function, ll, name.clone())
            }
            _ => self.visit(expr, ll),
        }
    }

    fn visit(&mut self, expr: &Expr, ll: &mut LetList) -> PeResult {
        if self.depth >= MAX_DEPTH {
            return Err(Diagnostic::pass_failed_at(
                expr,
                format!(
                    "PartialEvaluate: the program nests expressions or inlined calls more than \
                     {MAX_DEPTH} deep"
                ),
            ));
        }
        self.depth += 1;
        let result = with_stack(|| self.visit_inner(expr, ll));
        self.depth -= 1;
        result
    }

    fn visit_inner(&mut self, expr: &Expr, ll: &mut LetList) -> PeResult {
        match expr.kind() {
            ExprKind::Constant(data) => {
                let var = ll.push(expr.clone());
                Ok(self.has_static(Static::Tensor(data.clone()), var))
            }
            ExprKind::Tuple(fields) => {
                let mut values = Vec::with_capacity(fields.len());
                for field in fields {
                    values.push(self.visit(field, ll)?);
                }
                let var = ll.push(Expr::tuple(dynamics(&values), None));
                Ok(self.has_static(Static::Tuple(values), var))
            }
            ExprKind::TupleGetItem { tuple, index } => {
                let value = self.visit(tuple, ll)?;
                if let Some(Static::Tuple(fields)) = &value.stat {
                    if let Some(field) = fields.get(*index) {
                        return Ok(field.clone());
                    }
                }
                let var = ll.push(Expr::tuple_get_item(value.dynamic.clone(), *index, None));
                Ok(self.no_static(var))
            }
            ExprKind::Var(_) => {
                let var = expr.as_var().expect("a variable node");
                self.lookup(&var)
            }
            ExprKind::GlobalVar(gv) => self.visit_global(gv.name()),
            ExprKind::Let { .. } => {
                // A chain of lets is walked in a loop, not recursively.
                let mut current = expr;
                while let ExprKind::Let { var, value, body } = current.kind() {
                    let bound = self.visit_named(value, ll, var)?;
                    self.insert(var, bound);
                    current = body;
                }
                self.visit(current, ll)
            }
            ExprKind::If {
                cond,
                then_branch,
                else_branch,
            } => {
                let c = self.visit(cond, ll)?;
                if let Some(Static::Tensor(data)) = &c.stat {
                    if data.dtype.is_bool() && !data.data.is_empty() {
                        let branch = if data.data[0] != 0 {
                            then_branch
                        } else {
                            else_branch
                        };
                        return self.visit(branch, ll);
                    }
                }
                let t = self
                    .with_store_frame(|pe| pe.with_let_list(|pe, ll| pe.visit(then_branch, ll)))?;
                let f = self
                    .with_store_frame(|pe| pe.with_let_list(|pe, ll| pe.visit(else_branch, ll)))?;
                self.store.invalidate();
                let var = ll.push(Expr::if_(c.dynamic.clone(), t, f, None));
                Ok(self.no_static(var))
            }
            ExprKind::RefCreate(value) => {
                let v = self.visit(value, ll)?;
                let cell = self.next_ref;
                self.next_ref += 1;
                self.store.insert(cell, v.clone());
                let var = ll.push(Expr::new(ExprKind::RefCreate(v.dynamic.clone()), None));
                Ok(self.has_static(Static::Ref(cell), var))
            }
            ExprKind::RefWrite { reference, value } => {
                let r = self.visit(reference, ll)?;
                let v = self.visit(value, ll)?;
                match &r.stat {
                    Some(Static::Ref(cell)) => self.store.insert(*cell, v.clone()),
                    _ => self.store.invalidate(),
                }
                let var = ll.push(Expr::new(
                    ExprKind::RefWrite {
                        reference: r.dynamic.clone(),
                        value: v.dynamic.clone(),
                    },
                    None,
                ));
                Ok(self.has_static(Static::Tuple(Vec::new()), var))
            }
            ExprKind::RefRead(reference) => {
                let r = self.visit(reference, ll)?;
                if let Some(Static::Ref(cell)) = &r.stat {
                    if let Some(value) = self.store.lookup(*cell) {
                        return Ok(value);
                    }
                }
                let var = ll.push(Expr::new(ExprKind::RefRead(r.dynamic.clone()), None));
                Ok(self.no_static(var))
            }
            ExprKind::Call(call) => self.visit_call(call, ll),
            ExprKind::Function(_) => {
                let function = expr.as_function().expect("a function node");
                let name = fresh_let_variable();
                self.visit_function(&function, ll, name)
            }
            ExprKind::Op(_) => {
                let func = Rc::new(StaticFunc::Op(expr.clone()));
                Ok(self.has_static(Static::Func(func), expr.clone()))
            }
            ExprKind::Constructor(_) => {
                let func = Rc::new(StaticFunc::Constructor(expr.clone()));
                Ok(self.has_static(Static::Func(func), expr.clone()))
            }
            ExprKind::Match {
                data,
                clauses,
                complete,
            } => self.visit_match(data, clauses, *complete, ll),
        }
    }

    fn visit_call(&mut self, call: &Call, ll: &mut LetList) -> PeResult {
        let f = self.visit(&call.callee, ll)?;
        let mut args = Vec::with_capacity(call.args.len());
        for arg in &call.args {
            args.push(self.visit(arg, ll)?);
        }
        if let Some(Static::Func(func)) = &f.stat {
            let func = func.clone();
            return self.apply(&func, &f, &args, call.attrs.as_ref(), &call.type_args, ll);
        }
        self.store.invalidate();
        let dynamic = make_call(
            f.dynamic.clone(),
            dynamics(&args),
            call.attrs.clone(),
            call.type_args.to_vec(),
        );
        let var = ll.push(dynamic);
        Ok(self.no_static(var))
    }

    fn visit_match(
        &mut self,
        data: &Expr,
        clauses: &[Clause],
        complete: bool,
        ll: &mut LetList,
    ) -> PeResult {
        let value = self.visit(data, ll)?;
        self.with_frame(|pe| {
            for clause in clauses {
                match pe.match_pattern(&clause.pattern, &value) {
                    MatchStatus::Match => return pe.visit(&clause.rhs, ll),
                    MatchStatus::NoMatch => continue,
                    MatchStatus::Unknown => return pe.dynamic_match(&value, clauses, complete, ll),
                }
            }
            Err(Diagnostic::pass_failed(
                "PartialEvaluate: no clause of the match applies to its (static) value",
            ))
        })
    }

    fn dynamic_match(
        &mut self,
        value: &PS,
        clauses: &[Clause],
        complete: bool,
        ll: &mut LetList,
    ) -> PeResult {
        let mut rebuilt = Vec::with_capacity(clauses.len());
        for clause in clauses {
            let rhs = self.with_store_frame(|pe| {
                pe.with_let_list(|pe, ll| {
                    // The pattern's binder may lack the checked type its
                    // uses have (TVM's are one object): use the typed node.
                    let types = use_types(&clause.rhs);
                    for var in pattern_vars(&clause.pattern) {
                        let dynamic = match types.get(&var.id()).cloned().flatten() {
                            Some(ty) if var.expr().checked_type().is_none() => {
                                var.with_checked_type(ty).into_expr()
                            }
                            _ => var.expr().clone(),
                        };
                        let unknown = pe.no_static(dynamic);
                        pe.insert(&var, unknown);
                    }
                    pe.visit(&clause.rhs, ll)
                })
            })?;
            rebuilt.push(Clause {
                pattern: clause.pattern.clone(),
                rhs,
            });
        }
        self.store.invalidate();
        let var = ll.push(Expr::new(
            ExprKind::Match {
                data: value.dynamic.clone(),
                clauses: rebuilt,
                complete,
            },
            None,
        ));
        Ok(self.no_static(var))
    }

    fn match_pattern(&mut self, pattern: &Pattern, value: &PS) -> MatchStatus {
        match pattern {
            Pattern::Wildcard => MatchStatus::Match,
            Pattern::Var(var) => {
                self.insert(var, value.clone());
                MatchStatus::Match
            }
            Pattern::Constructor(ctor, fields) => match &value.stat {
                Some(Static::Constructor(value_ctor, values)) => {
                    if value_ctor.data().tag != ctor.data().tag || value_ctor != ctor {
                        return MatchStatus::NoMatch;
                    }
                    self.match_fields(fields, values)
                }
                _ => MatchStatus::Unknown,
            },
            Pattern::Tuple(fields) => match &value.stat {
                Some(Static::Tuple(values)) => self.match_fields(fields, values),
                _ => MatchStatus::Unknown,
            },
        }
    }

    fn match_fields(&mut self, patterns: &[Pattern], values: &[PS]) -> MatchStatus {
        if patterns.len() != values.len() {
            return MatchStatus::Unknown;
        }
        let mut status = MatchStatus::Match;
        for (pattern, value) in patterns.iter().zip(values) {
            match self.match_pattern(pattern, value) {
                MatchStatus::Match => {}
                MatchStatus::NoMatch => return MatchStatus::NoMatch,
                MatchStatus::Unknown => status = MatchStatus::Unknown,
            }
        }
        status
    }
}

fn make_call(callee: Expr, args: Vec<Expr>, attrs: Option<Attrs>, type_args: Vec<Type>) -> Expr {
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

fn dynamics(values: &[PS]) -> Vec<Expr> {
    values.iter().map(|v| v.dynamic.clone()).collect()
}

/// TVM's `Reflect`: the run-time value of a static tensor or tuple.
fn reflect(value: &PS) -> Option<Value> {
    match value.stat.as_ref()? {
        Static::Tensor(data) => Some(Value::Tensor(data.clone())),
        Static::Tuple(fields) => fields
            .iter()
            .map(reflect)
            .collect::<Option<Vec<_>>>()
            .map(Value::Tuple),
        _ => None,
    }
}

/// How many bindings `ToANormalForm` makes for a reflected argument: one per
/// constant, one per tuple plus its fields.
fn anf_bindings(value: &Value) -> usize {
    match value {
        Value::Tensor(_) => 1,
        Value::Tuple(fields) => 1 + fields.iter().map(anf_bindings).sum::<usize>(),
    }
}

/// The variables a pattern binds, left to right.
fn pattern_vars(pattern: &Pattern) -> Vec<Var> {
    let mut out = Vec::new();
    let mut stack = vec![pattern];
    while let Some(p) = stack.pop() {
        match p {
            Pattern::Wildcard => {}
            Pattern::Var(v) => out.push(v.clone()),
            Pattern::Constructor(_, fields) | Pattern::Tuple(fields) => {
                stack.extend(fields.iter().rev())
            }
        }
    }
    out
}
