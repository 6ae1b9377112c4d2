//! The evaluator: TVM's Relay interpreter (`src/relay/backend/interpreter.cc`)
//! over our IR, with the operator calls done by relay-eval's kernels.
//!
//! The evaluation is a recursive walk whose native stack grows on the heap
//! (`stacker`), with a bound on the nesting depth that is a clear error
//! rather than an exhausted memory; a `let` chain is a loop, not a
//! recursion, so a long one costs no depth.

use crate::env::Frame;
use crate::error::{RunResult, RuntimeError};
use crate::pattern::match_pattern;
use crate::range_effects::operator_out_of_range;
use crate::value::{AdtValue, Closure, Value};
use relay_eval::{CallInfo, EvalError};
use relay_ir::source::Span;
use relay_ir::{Expr, ExprKind, Function, IRModule, TypeKind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Limits of a run.
#[derive(Debug, Clone)]
pub struct Limits {
    /// The most elements one operator result may have.
    pub max_elements: u64,
    /// The deepest nesting of evaluations (calls inside arguments, function
    /// calls inside function bodies); deeper is a run-time error.
    pub max_depth: usize,
    /// When the run must stop (an editor's time limit); past it the run
    /// fails with a [`RuntimeError`] whose `stopped` is set.
    pub deadline: Option<Instant>,
    /// Set by another thread to stop the run (an editor's cancelled
    /// request), with the same error.
    pub cancel: Option<Arc<AtomicBool>>,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_elements: 1 << 28,
            max_depth: 400_000,
            deadline: None,
            cancel: None,
        }
    }
}

impl Limits {
    /// Why the run must stop now, if it must.
    fn stop_reason(&self) -> Option<&'static str> {
        if self
            .cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
        {
            return Some("the run was cancelled");
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Some("the run took longer than its time limit");
        }
        None
    }
}

/// How many evaluations pass between two looks at the clock and the
/// cancel flag (reading the clock at every node would cost more than many
/// nodes do).
const STOP_CHECK_EVERY: u64 = 256;

/// Operators with no computation: their value is their first argument.
/// They have no kernel because FoldConstant leaves them alone, but a run
/// must pass through them.
const PASS_THROUGH: &[&str] = &["on_device", "device_copy"];

/// An interpreter of one module.
pub struct Interpreter<'m> {
    module: &'m IRModule,
    limits: Limits,
    depth: usize,
    /// Evaluations so far, to look at the stop conditions now and then.
    evaluations: u64,
    /// Operator calls evaluated, for statistics.
    pub op_calls: u64,
    /// Whether a closure was put into a reference's cell: it may outlive
    /// the activation that made it, so frames are no longer released
    /// when their activation ends.
    closure_in_ref: bool,
    /// Closures made over a frame so far: an activation during which none
    /// was made is in no cycle, and its frame goes when it ends.
    closures_made: u64,
    /// Whether to watch every operator result for an overflow (off by
    /// default: it reads every element).
    pub watch_overflow: bool,
    /// With the watch on, the first operator result that overflowed, as
    /// text.
    pub first_out_of_range: Option<String>,
}

const RED_ZONE: usize = 128 * 1024;

/// How many values of a result (or of a value written into a reference)
/// are looked at for a closure before assuming one is there: keeps the
/// check at each return constant-time, at worst keeping a frame that could
/// have gone.
const ESCAPE_CHECK_BUDGET: usize = 4096;
const SEGMENT: usize = 4 * 1024 * 1024;

impl<'m> Interpreter<'m> {
    pub fn new(module: &'m IRModule, limits: Limits) -> Interpreter<'m> {
        Interpreter {
            module,
            limits,
            depth: 0,
            evaluations: 0,
            op_calls: 0,
            closure_in_ref: false,
            closures_made: 0,
            watch_overflow: false,
            first_out_of_range: None,
        }
    }

    /// Calls the global function `name` with `args`.
    pub fn call_global(&mut self, name: &str, args: Vec<Value>) -> RunResult<Value> {
        let function = self
            .module
            .function(name)
            .ok_or_else(|| RuntimeError::new(format!("no global function @{name}"), None))?;
        let closure = Closure {
            function: function.clone(),
            env: None,
            recursive: None,
            global: Some(name.to_string()),
        };
        self.invoke(&Arc::new(closure), args, function.expr().span())
    }

    /// Evaluates a closed expression (no free local variables).
    pub fn eval_closed(&mut self, expr: &Expr) -> RunResult<Value> {
        let closures_before = self.closures_made;
        let frame = Frame::new(None);
        let result = self.eval(expr, &frame);
        self.end_activation(&frame, &result, closures_before);
        result
    }

    fn eval(&mut self, expr: &Expr, frame: &Arc<Frame>) -> RunResult<Value> {
        if self.depth >= self.limits.max_depth {
            return Err(RuntimeError::new(
                format!(
                    "evaluation nested deeper than {} levels (unbounded recursion?)",
                    self.limits.max_depth
                ),
                expr.span(),
            ));
        }
        self.evaluations += 1;
        if self.evaluations.is_multiple_of(STOP_CHECK_EVERY) {
            if let Some(reason) = self.limits.stop_reason() {
                let mut error = RuntimeError::new(reason, expr.span());
                error.stopped = true;
                return Err(error);
            }
        }
        self.depth += 1;
        let result = stacker::maybe_grow(RED_ZONE, SEGMENT, || self.eval_memo(expr, frame));
        self.depth -= 1;
        result
    }

    fn eval_memo(&mut self, expr: &Expr, frame: &Arc<Frame>) -> RunResult<Value> {
        let memoized = !matches!(
            expr.kind(),
            ExprKind::Var(_) | ExprKind::Constant(_) | ExprKind::GlobalVar(_)
        );
        if memoized {
            if let Some(v) = frame.recall(expr.addr()) {
                return Ok(v);
            }
        }
        let value = self.eval_node(expr, frame)?;
        if memoized {
            frame.remember(expr.addr(), value.clone());
        }
        Ok(value)
    }

    fn eval_node(&mut self, expr: &Expr, frame: &Arc<Frame>) -> RunResult<Value> {
        let span = expr.span();
        match expr.kind() {
            ExprKind::Var(var) => frame
                .lookup(var.id)
                .ok_or_else(|| RuntimeError::new(format!("unbound variable %{}", var.name), span)),
            ExprKind::GlobalVar(g) => {
                let function = self.module.function(g.name()).ok_or_else(|| {
                    RuntimeError::new(format!("no global function @{}", g.name()), span)
                })?;
                Ok(Value::Closure(Arc::new(Closure {
                    function: function.clone(),
                    env: None,
                    recursive: None,
                    global: Some(g.name().to_string()),
                })))
            }
            ExprKind::Constant(data) => Ok(Value::Tensor(data.clone())),
            ExprKind::Tuple(fields) => {
                let values = fields
                    .iter()
                    .map(|f| self.eval(f, frame))
                    .collect::<RunResult<Vec<_>>>()?;
                Ok(Value::tuple(values))
            }
            ExprKind::TupleGetItem { tuple, index } => match self.eval(tuple, frame)? {
                Value::Tuple(fields) => fields.get(*index).cloned().ok_or_else(|| {
                    RuntimeError::new(
                        format!(
                            "tuple index {index} is out of range for a tuple of {} fields",
                            fields.len()
                        ),
                        span,
                    )
                }),
                other => Err(RuntimeError::new(
                    format!("`.{index}` of {}, not a tuple", other.kind_name()),
                    span,
                )),
            },
            ExprKind::Call(call) => {
                let args = call
                    .args
                    .iter()
                    .map(|a| self.eval(a, frame))
                    .collect::<RunResult<Vec<_>>>()?;
                match call.callee.kind() {
                    ExprKind::Op(op) if op.name == "call_lowered" => self.call_lowered(args, span),
                    ExprKind::Op(op) => self.call_op(expr, &op.name, call, args),
                    ExprKind::Constructor(c) => {
                        self.apply(Value::Constructor(c.clone()), args, span)
                    }
                    _ => {
                        let callee = self.eval(&call.callee, frame)?;
                        self.apply(callee, args, span)
                    }
                }
            }
            ExprKind::Let { .. } => self.eval_let_chain(expr, frame),
            ExprKind::If {
                cond,
                then_branch,
                else_branch,
            } => {
                let value = self.eval(cond, frame)?;
                let taken = condition(&value).map_err(|m| RuntimeError::new(m, cond.span()))?;
                self.eval(if taken { then_branch } else { else_branch }, frame)
            }
            ExprKind::Function(_) => {
                let function = expr.as_function().expect("a function node");
                self.closures_made += 1;
                Ok(Value::Closure(Arc::new(Closure {
                    function,
                    env: Some(frame.clone()),
                    recursive: None,
                    global: None,
                })))
            }
            ExprKind::Match { data, clauses, .. } => {
                let value = self.eval(data, frame)?;
                for clause in clauses {
                    if match_pattern(&clause.pattern, &value, frame) {
                        return self.eval(&clause.rhs, frame);
                    }
                }
                Err(RuntimeError::new(
                    format!("no clause of the match fits the value {value:?}"),
                    span,
                ))
            }
            ExprKind::RefCreate(value) => {
                let v = self.eval(value, frame)?;
                self.closure_in_ref |= v.may_hold_closure(ESCAPE_CHECK_BUDGET);
                Ok(Value::Ref(Arc::new(Mutex::new(v))))
            }
            ExprKind::RefRead(reference) => match self.eval(reference, frame)? {
                Value::Ref(cell) => Ok(cell.lock().unwrap_or_else(|e| e.into_inner()).clone()),
                other => Err(RuntimeError::new(
                    format!("ref_read of {}, not a reference", other.kind_name()),
                    span,
                )),
            },
            ExprKind::RefWrite { reference, value } => {
                let target = self.eval(reference, frame)?;
                let v = self.eval(value, frame)?;
                self.closure_in_ref |= v.may_hold_closure(ESCAPE_CHECK_BUDGET);
                match target {
                    Value::Ref(cell) => {
                        *cell.lock().unwrap_or_else(|e| e.into_inner()) = v;
                        Ok(Value::tuple(Vec::new()))
                    }
                    other => Err(RuntimeError::new(
                        format!("ref_write to {}, not a reference", other.kind_name()),
                        span,
                    )),
                }
            }
            ExprKind::Constructor(c) => {
                if c.data().inputs.is_empty() {
                    Ok(Value::Adt(Arc::new(AdtValue {
                        constructor: c.clone(),
                        fields: Vec::new(),
                    })))
                } else {
                    Ok(Value::Constructor(c.clone()))
                }
            }
            ExprKind::Op(op) => Err(RuntimeError::new(
                format!(
                    "the operator `{}` is used as a value; operators can only be called",
                    op.name
                ),
                span,
            )),
        }
    }

    /// `let %x = v; let %y = w; …; body` as a loop: each binding is
    /// evaluated in this frame, then the body.
    fn eval_let_chain(&mut self, expr: &Expr, frame: &Arc<Frame>) -> RunResult<Value> {
        let mut current = expr;
        while let ExprKind::Let { var, value, body } = current.kind() {
            let bound = match value.as_function() {
                // A function bound by a let sees itself under the let's
                // variable (TVM's RecClosure), whether it recurses or not.
                Some(function) => {
                    self.closures_made += 1;
                    Value::Closure(Arc::new(Closure {
                        function,
                        env: Some(frame.clone()),
                        recursive: Some(var.clone()),
                        global: None,
                    }))
                }
                None => self.eval(value, frame)?,
            };
            frame.bind(var.id(), bound);
            current = body;
        }
        self.eval(current, frame)
    }

    /// Calls a function value.
    fn apply(&mut self, callee: Value, args: Vec<Value>, span: Option<Span>) -> RunResult<Value> {
        match callee {
            Value::Closure(closure) => self.invoke(&closure, args, span),
            Value::Constructor(constructor) => {
                let expected = constructor.data().inputs.len();
                if args.len() != expected {
                    return Err(RuntimeError::new(
                        format!(
                            "constructor {} takes {expected} fields, given {}",
                            constructor.name(),
                            args.len()
                        ),
                        span,
                    ));
                }
                Ok(Value::Adt(Arc::new(AdtValue {
                    constructor,
                    fields: args,
                })))
            }
            other => Err(RuntimeError::new(
                format!("call of {}, which is not a function", other.kind_name()),
                span,
            )),
        }
    }

    fn invoke(
        &mut self,
        closure: &Arc<Closure>,
        args: Vec<Value>,
        span: Option<Span>,
    ) -> RunResult<Value> {
        let function: &Function = &closure.function;
        let params = function.params();
        if params.len() != args.len() {
            return Err(RuntimeError::new(
                format!(
                    "{} takes {} arguments, given {}",
                    describe(closure),
                    params.len(),
                    args.len()
                ),
                span,
            ));
        }
        let closures_before = self.closures_made;
        let frame = Frame::new(closure.env.clone());
        for (param, arg) in params.iter().zip(args) {
            frame.bind(param.id(), arg);
        }
        if let Some(var) = &closure.recursive {
            frame.bind(var.id(), Value::Closure(closure.clone()));
        }
        let result = self.eval(function.body(), &frame).map_err(|mut e| {
            if let Some(name) = &closure.global {
                e.trace.push(format!("@{name}"));
            }
            e.or_span(span)
        });
        self.end_activation(&frame, &result, closures_before);
        result
    }

    /// Releases an activation's frame when closures were made during it
    /// (otherwise it is in no cycle and goes by itself) and none of them
    /// can outlive it: none is in its result, and none was ever put into a
    /// reference (the only other way out; a closure passed to a call
    /// ends in that call's frame, its result, or a reference).
    fn end_activation(&self, frame: &Arc<Frame>, result: &RunResult<Value>, closures_before: u64) {
        if self.closures_made == closures_before || self.closure_in_ref {
            return;
        }
        let escapes = match result {
            Ok(value) => value.may_hold_closure(ESCAPE_CHECK_BUDGET),
            Err(_) => false,
        };
        if !escapes {
            frame.release();
        }
    }

    /// `call_lowered(@f, (a, b, …))`, what LowerTE leaves: a call of the
    /// function `@f` with the tuple's fields as its arguments.
    fn call_lowered(&mut self, args: Vec<Value>, span: Option<Span>) -> RunResult<Value> {
        let mut args = args.into_iter();
        let (Some(callee), Some(arguments)) = (args.next(), args.next()) else {
            return Err(RuntimeError::new(
                "`call_lowered` takes the function and a tuple of its arguments",
                span,
            ));
        };
        match arguments {
            Value::Tuple(fields) => self.apply(callee, fields.to_vec(), span),
            other => Err(RuntimeError::new(
                format!(
                    "the arguments of `call_lowered` are {}, not a tuple",
                    other.kind_name()
                ),
                span,
            )),
        }
    }

    /// An operator call through the evaluator's kernel of the operator.
    fn call_op(
        &mut self,
        expr: &Expr,
        op: &str,
        call: &relay_ir::Call,
        args: Vec<Value>,
    ) -> RunResult<Value> {
        let span = expr.span();
        let mut eval_args = Vec::with_capacity(args.len());
        for (i, arg) in args.iter().enumerate() {
            match arg.to_eval() {
                Some(v) => eval_args.push(v),
                None => {
                    return Err(RuntimeError::new(
                        format!(
                            "argument {i} of `{op}` is {}; operators take tensors and tuples of tensors",
                            arg.kind_name()
                        ),
                        span,
                    ))
                }
            }
        }
        self.op_calls += 1;
        if relay_eval::kernel(op).is_none() && PASS_THROUGH.contains(&op) {
            return args
                .into_iter()
                .next()
                .ok_or_else(|| RuntimeError::new(format!("`{op}` without an argument"), span));
        }
        let info = CallInfo {
            op,
            attrs: call.attrs.as_ref(),
            ret_type: expr.checked_type(),
            max_elements: self.limits.max_elements,
        };
        let result = relay_eval::run_call(&info, &eval_args).map_err(|e| match e {
            EvalError::NoKernel(op) => {
                let mut error = RuntimeError::new(
                    format!(
                        "`{op}` cannot be run: the evaluator has no kernel for it (`relay ops {op}`)"
                    ),
                    span,
                );
                error.missing_kernel = Some(op);
                error
            }
            EvalError::Unsupported(why) => RuntimeError::new(format!("`{op}` failed: {why}"), span),
            EvalError::TooLarge(why) => {
                RuntimeError::new(format!("`{op}` result too large: {why}"), span)
            }
        })?;
        let value = Value::from_eval(result);
        if self.watch_overflow && self.first_out_of_range.is_none() {
            self.first_out_of_range = operator_out_of_range(op, &value);
        }
        if let Some(ty) = expr.checked_type() {
            check_against_type(&value, ty).map_err(|why| {
                RuntimeError::new(
                    format!(
                        "the kernel of `{op}` gave a result that is not of the call's type: {why}"
                    ),
                    span,
                )
            })?;
        }
        Ok(value)
    }
}

fn describe(closure: &Closure) -> String {
    match (&closure.global, &closure.recursive) {
        (Some(name), _) => format!("@{name}"),
        (None, Some(var)) => format!("%{}", var.name()),
        (None, None) => "the function".to_string(),
    }
}

/// The truth of an `if` condition: a rank-0 boolean (TVM reads the first
/// element of a `bool` tensor; other types are a type error it never sees).
fn condition(value: &Value) -> Result<bool, String> {
    let t = value.as_tensor().ok_or_else(|| {
        format!(
            "the condition is {}, not a boolean tensor",
            value.kind_name()
        )
    })?;
    if t.num_elements() != 1 {
        return Err(format!(
            "the condition has shape {:?}; it must be a single boolean",
            t.shape
        ));
    }
    if t.dtype.is_float() {
        return t.get_f64(0).map(|v| v != 0.0).map_err(|e| e.message);
    }
    t.get_i64(0).map(|v| v != 0).map_err(|e| e.message)
}

/// Checks a kernel's result against the dimensions the call's checked type
/// knows (`?` dimensions take whatever the kernel computed: that is the
/// shape function).
fn check_against_type(value: &Value, ty: &relay_ir::Type) -> Result<(), String> {
    match (value, ty.kind()) {
        (Value::Tensor(t), TypeKind::Tensor(tt)) => {
            let fits = t.dtype == tt.dtype
                && t.shape.len() == tt.shape.len()
                && t.shape
                    .iter()
                    .zip(&tt.shape)
                    .all(|(n, d)| d.as_int().is_none_or(|m| m == *n));
            if fits {
                Ok(())
            } else {
                Err(format!(
                    "{:?} {} for {}",
                    t.shape,
                    t.dtype,
                    relay_ir::printer::readable::ty(ty)
                ))
            }
        }
        (Value::Tuple(fields), TypeKind::Tuple(types)) if fields.len() == types.len() => fields
            .iter()
            .zip(types)
            .try_for_each(|(f, t)| check_against_type(f, t)),
        (v, _) => Err(format!(
            "{} for {}",
            v.kind_name(),
            relay_ir::printer::readable::ty(ty)
        )),
    }
}
