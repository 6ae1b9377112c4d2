//! `DeadCodeElimination(inline_once=false, ignore_impurity=false)`: removes
//! (or inlines) let bindings, as TVM v0.13's `dead_code.cc` does.
//!
//! Three steps, each following TVM's visitor exactly (the results depend on
//! visiting order, memoisation and a call-depth cut-off, so they are
//! emulated step for step, with explicit stacks instead of recursion):
//!
//! 1. **Purity** over the whole module (`PurityVisitor`): for every
//!    let-bound variable, whether evaluating its value is definitely pure.
//!    Global functions with `Primitive` or `Extern` set are not visited on
//!    their own (a `Primitive` one still is when it is referred to), calls
//!    of `Extern` globals are impure, and a let the visitor never reaches
//!    (inside `ref(…)`, below calls nested more than 25 deep) counts as
//!    impure.
//! 2. **Use counts** per function (`UsageVisitor`): the value of a pure
//!    let is only visited once its variable is first used, so bindings used
//!    only by dead bindings are dead too; a use inside a function nested
//!    deeper than the binding counts twice.
//! 3. **Rewrite** (`Eliminator`): a pure binding with no use is dropped;
//!    with one use and `inline_once` its value replaces the use; anything
//!    else stays.
//!
//! The pass needs checked types: TVM asks whether a call, a projection, a
//! `ref_read`, a parameter or a pattern variable has a function type
//! (`IsFirstOrder`) to decide whether calling it later is pure. A node
//! without a checked type (TVM would abort) is taken to be higher-order,
//! the conservative choice.

use relay_ir::diagnostic::Diagnostic;
use relay_ir::rewrite::{children, for_each_child, with_children};
use relay_ir::{Expr, ExprKind, IRModule, Pattern, TypeKind, VarId};
use relay_pass_manager::registry::{ParamSpec, PassSpec};
use relay_pass_manager::PassContext;
// Every table is consulted once or more per node: the fast hasher.
use relay_ir::fxhash::{FxMap as HashMap, FxSet as HashSet};

/// TVM's `kMaxCallDepth`: calls nested deeper are assumed impure.
const MAX_CALL_DEPTH: usize = 25;

/// The registry entry.
pub(crate) fn spec() -> PassSpec {
    PassSpec::module("DeadCodeElimination", 1)
        .required(&["InferType"])
        .param(ParamSpec::bool(
            "inline_once",
            false,
            "inline a pure let-bound value used exactly once into its use",
        ))
        .param(ParamSpec::bool(
            "ignore_impurity",
            false,
            "treat every let-bound value as pure (removes dead stateful bindings too)",
        ))
        .doc(
            "Remove let bindings whose variable is unused and whose value is pure; \
             optionally inline pure single-use bindings",
        )
        .build(|args| {
            let inline_once = args.bool("inline_once");
            let ignore_impurity = args.bool("ignore_impurity");
            Ok(move |module: IRModule, _ctx: &PassContext| {
                dead_code_elimination(&module, inline_once, ignore_impurity)
            })
        })
}

/// Runs dead-code elimination over every global function of `module`.
/// Global functions themselves are never removed.
pub fn dead_code_elimination(
    module: &IRModule,
    inline_once: bool,
    ignore_impurity: bool,
) -> Result<IRModule, Diagnostic> {
    let purity: HashMap<VarId, bool> = if ignore_impurity {
        HashMap::default()
    } else {
        let mut visitor = PurityVisitor::new(module);
        visitor.visit_module()?;
        visitor.purity_map()
    };
    let mut result = module.clone();
    for (name, function) in module.functions() {
        let mut usage = UsageVisitor::new(&purity, ignore_impurity);
        usage.run(function.expr());
        let mut eliminator = Eliminator {
            inline_once,
            usage: &usage,
            purity: &purity,
            default_purity: ignore_impurity,
            memo: HashMap::default(),
        };
        let rewritten = eliminator.run(function.expr());
        let rewritten = rewritten
            .as_function()
            .expect("a function is rewritten to a function");
        result.add_function(name, rewritten);
    }
    Ok(result)
}

/// Memo key: the node's identity. All uses of a variable are one node in
/// TVM, so variables are keyed by their id.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Key {
    Node(usize),
    Var(VarId),
}

fn key(e: &Expr) -> Key {
    match e.kind() {
        ExprKind::Var(v) => Key::Var(v.id),
        _ => Key::Node(e.addr()),
    }
}

/// TVM's `IsFirstOrder`: the checked type is not a function type. Without
/// a checked type (a variable's annotation is used if it has one) the node
/// is taken to be higher-order.
fn is_first_order(e: &Expr) -> bool {
    let ty = e.checked_type().or_else(|| match e.kind() {
        ExprKind::Var(v) => v.type_annotation.as_ref(),
        _ => None,
    });
    match ty {
        Some(t) => !matches!(t.kind(), TypeKind::Func(_)),
        None => false,
    }
}

/// The callee and arguments of a call, seeing through `call_lowered(@f,
/// (args…), …)` as TVM's `GetAnyCall` does.
fn any_call(call: &relay_ir::Call) -> (Expr, Vec<Expr>) {
    if let ExprKind::Op(op) = call.callee.kind() {
        if op.name == "call_lowered" && call.args.len() == 2 {
            if let (ExprKind::GlobalVar(_), ExprKind::Tuple(fields)) =
                (call.args[0].kind(), call.args[1].kind())
            {
                return (call.args[0].clone(), fields.clone());
            }
        }
    }
    (call.callee.clone(), call.args.clone())
}

// ---------------------------------------------------------------------------
// Purity
// ---------------------------------------------------------------------------

/// The purity of a sub-expression: `pure_eval` — evaluating it is pure;
/// `pure_call` — calling its value (if it is a function) is pure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Purity {
    pure_eval: bool,
    pure_call: bool,
}

const PURE: Purity = Purity {
    pure_eval: true,
    pure_call: true,
};

/// One suspended visit of TVM's recursive `PurityVisitor`.
enum Frame {
    /// A call: callee, then each argument. `received` counts the results
    /// delivered so far.
    Call {
        key: Key,
        callee: Expr,
        args: Vec<Expr>,
        received: usize,
        callee_purity: Purity,
        args_pure: bool,
        first_order: bool,
    },
    Function {
        key: Key,
        body: Expr,
        started: bool,
    },
    /// A chain of lets: each value in turn, then the final body. Only the
    /// outermost let is memoised (inner ones are walked by the loop).
    Let {
        key: Key,
        cursor: Expr,
        all_values_pure: bool,
        in_body: bool,
        started: bool,
    },
    If {
        key: Key,
        parts: [Expr; 3],
        results: Vec<Purity>,
    },
    Tuple {
        key: Key,
        fields: Vec<Expr>,
        received: usize,
        all_pure: bool,
    },
    TupleGetItem {
        key: Key,
        tuple: Expr,
        first_order: bool,
        started: bool,
    },
    RefWrite {
        key: Key,
        parts: [Expr; 2],
        received: usize,
    },
    RefRead {
        key: Key,
        reference: Expr,
        first_order: bool,
        started: bool,
    },
    Match {
        key: Key,
        data: Expr,
        clauses: Vec<(Pattern, Expr)>,
        /// 0: data not yet visited; then 1 + the index of the next clause.
        received: usize,
        data_purity: Purity,
        all_eval: bool,
        all_call: bool,
    },
    /// `VisitGlobalFunction` reached through a global variable: the result
    /// is the function's purity, memoised for the global variable too.
    Global {
        name: String,
        function: Expr,
        started: bool,
    },
}

enum Next {
    Visit(Expr),
    Return(Purity),
}

/// TVM's `PurityVisitor`, run without recursion.
struct PurityVisitor<'m> {
    module: &'m IRModule,
    memo: HashMap<Key, Purity>,
    /// `VisitExpr` results for global variables (one node per name in TVM).
    global_var_memo: HashMap<String, Purity>,
    var_purity: HashMap<VarId, Purity>,
    global_purity: HashMap<String, Purity>,
    depth: usize,
}

impl<'m> PurityVisitor<'m> {
    fn new(module: &'m IRModule) -> Self {
        PurityVisitor {
            module,
            memo: HashMap::default(),
            global_var_memo: HashMap::default(),
            var_purity: HashMap::default(),
            global_purity: HashMap::default(),
            depth: 0,
        }
    }

    /// Visits every global function except `Primitive` and `Extern` ones.
    /// TVM iterates its (hash) map of functions; we go in name order.
    fn visit_module(&mut self) -> Result<(), Diagnostic> {
        let module = self.module;
        for (name, function) in module.functions() {
            let nonzero = |key: &str| function.attr(key).is_some_and(|v| v.as_int() != Some(0));
            if nonzero("Primitive") || nonzero("Extern") {
                continue;
            }
            if self.global_purity.contains_key(name) {
                continue;
            }
            self.global_purity.insert(name.to_string(), PURE);
            let purity = self.visit(function.expr())?;
            self.global_purity.insert(name.to_string(), purity);
        }
        Ok(())
    }

    /// Every visited variable (let-bound, parameter or pattern variable)
    /// with whether evaluating its value is pure.
    fn purity_map(&self) -> HashMap<VarId, bool> {
        self.var_purity
            .iter()
            .map(|(id, p)| (*id, p.pure_eval))
            .collect()
    }

    /// `VisitExpr(root)`.
    fn visit(&mut self, root: &Expr) -> Result<Purity, Diagnostic> {
        let mut stack: Vec<Frame> = Vec::new();
        let mut incoming = self.enter(root, &mut stack)?;
        if stack.is_empty() {
            return Ok(incoming.expect("a leaf gives its purity at once"));
        }
        while let Some(frame) = stack.last_mut() {
            match self.step(frame, incoming.take()) {
                Next::Visit(e) => incoming = self.enter(&e, &mut stack)?,
                Next::Return(p) => {
                    let frame = stack.pop().expect("the stack is not empty");
                    self.finish(frame, p);
                    incoming = Some(p);
                }
            }
        }
        Ok(incoming.expect("the root gives its purity"))
    }

    /// Starts visiting `e`: a memoised or leaf result at once, or a frame
    /// pushed on `stack` (then `None`).
    fn enter(&mut self, e: &Expr, stack: &mut Vec<Frame>) -> Result<Option<Purity>, Diagnostic> {
        let k = key(e);
        if let ExprKind::GlobalVar(gv) = e.kind() {
            if let Some(p) = self.global_var_memo.get(gv.name()) {
                return Ok(Some(*p));
            }
        } else if let Some(p) = self.memo.get(&k) {
            return Ok(Some(*p));
        }
        let leaf = match e.kind() {
            ExprKind::Constant(_) | ExprKind::Constructor(_) | ExprKind::RefCreate(_) => PURE,
            ExprKind::Op(op) => Purity {
                pure_eval: true,
                pure_call: !op.stateful,
            },
            ExprKind::Var(v) => Purity {
                pure_eval: true,
                pure_call: match self.var_purity.get(&v.id) {
                    Some(p) => p.pure_call,
                    // A free variable (TVM aborts): assume the worst.
                    None => is_first_order(e),
                },
            },
            ExprKind::GlobalVar(gv) => {
                let name = gv.name();
                let Some(function) = self.module.function(name) else {
                    return Err(Diagnostic::pass_failed(format!(
                        "No definition for '{name}'"
                    )));
                };
                let is_extern = function
                    .attr("Extern")
                    .is_some_and(|v| v.as_int() != Some(0));
                if is_extern {
                    // Externals are assumed call-impure [RULE F].
                    let p = Purity {
                        pure_eval: true,
                        pure_call: false,
                    };
                    self.global_var_memo.insert(name.to_string(), p);
                    return Ok(Some(p));
                }
                if let Some(p) = self.global_purity.get(name) {
                    let p = *p;
                    self.global_var_memo.insert(name.to_string(), p);
                    return Ok(Some(p));
                }
                // Entering a possibly recursive global: assume it is pure.
                self.global_purity.insert(name.to_string(), PURE);
                stack.push(Frame::Global {
                    name: name.to_string(),
                    function: function.expr().clone(),
                    started: false,
                });
                return Ok(None);
            }
            ExprKind::Call(call) => {
                if self.depth >= MAX_CALL_DEPTH {
                    Purity {
                        pure_eval: false,
                        pure_call: is_first_order(e),
                    }
                } else {
                    self.depth += 1;
                    let (callee, args) = any_call(call);
                    stack.push(Frame::Call {
                        key: k,
                        callee,
                        args,
                        received: 0,
                        callee_purity: PURE,
                        args_pure: true,
                        first_order: is_first_order(e),
                    });
                    return Ok(None);
                }
            }
            ExprKind::Function(f) => {
                for param in &f.params {
                    // Higher-order parameters are call-impure [RULE B].
                    let p = Purity {
                        pure_eval: true,
                        pure_call: is_first_order(param.expr()),
                    };
                    self.var_purity.insert(param.id(), p);
                }
                stack.push(Frame::Function {
                    key: k,
                    body: f.body.clone(),
                    started: false,
                });
                return Ok(None);
            }
            ExprKind::Let { .. } => {
                stack.push(Frame::Let {
                    key: k,
                    cursor: e.clone(),
                    all_values_pure: true,
                    in_body: false,
                    started: false,
                });
                return Ok(None);
            }
            ExprKind::If {
                cond,
                then_branch,
                else_branch,
            } => {
                stack.push(Frame::If {
                    key: k,
                    parts: [cond.clone(), then_branch.clone(), else_branch.clone()],
                    results: Vec::with_capacity(3),
                });
                return Ok(None);
            }
            ExprKind::Tuple(fields) => {
                stack.push(Frame::Tuple {
                    key: k,
                    fields: fields.clone(),
                    received: 0,
                    all_pure: true,
                });
                return Ok(None);
            }
            ExprKind::TupleGetItem { tuple, .. } => {
                stack.push(Frame::TupleGetItem {
                    key: k,
                    tuple: tuple.clone(),
                    first_order: is_first_order(e),
                    started: false,
                });
                return Ok(None);
            }
            ExprKind::RefWrite { reference, value } => {
                stack.push(Frame::RefWrite {
                    key: k,
                    parts: [reference.clone(), value.clone()],
                    received: 0,
                });
                return Ok(None);
            }
            ExprKind::RefRead(reference) => {
                stack.push(Frame::RefRead {
                    key: k,
                    reference: reference.clone(),
                    first_order: is_first_order(e),
                    started: false,
                });
                return Ok(None);
            }
            ExprKind::Match { data, clauses, .. } => {
                stack.push(Frame::Match {
                    key: k,
                    data: data.clone(),
                    clauses: clauses
                        .iter()
                        .map(|c| (c.pattern.clone(), c.rhs.clone()))
                        .collect(),
                    received: 0,
                    data_purity: PURE,
                    all_eval: true,
                    all_call: true,
                });
                return Ok(None);
            }
        };
        self.memo.insert(k, leaf);
        Ok(Some(leaf))
    }

    /// Advances `frame` with the result of its last child visit.
    fn step(&mut self, frame: &mut Frame, incoming: Option<Purity>) -> Next {
        match frame {
            Frame::Call {
                callee,
                args,
                received,
                callee_purity,
                args_pure,
                first_order,
                ..
            } => {
                if let Some(p) = incoming {
                    if *received == 0 {
                        *callee_purity = p;
                    } else {
                        *args_pure &= p.pure_eval;
                    }
                    *received += 1;
                }
                if *received == 0 {
                    Next::Visit(callee.clone())
                } else if *received - 1 < args.len() {
                    Next::Visit(args[*received - 1].clone())
                } else {
                    self.depth -= 1;
                    Next::Return(Purity {
                        pure_eval: *args_pure && callee_purity.pure_eval && callee_purity.pure_call,
                        pure_call: *first_order || callee_purity.pure_call,
                    })
                }
            }
            Frame::Function { body, started, .. } => match incoming {
                Some(p) if *started => Next::Return(Purity {
                    pure_eval: true,
                    // A function returning a function folds in the purity
                    // of calling the result [RULE A].
                    pure_call: p.pure_eval && p.pure_call,
                }),
                _ => {
                    *started = true;
                    Next::Visit(body.clone())
                }
            },
            Frame::Let {
                cursor,
                all_values_pure,
                in_body,
                started,
                ..
            } => {
                if !*started {
                    *started = true;
                    return self.let_value(cursor);
                }
                let p = incoming.expect("a let frame resumes with a result");
                if *in_body {
                    return Next::Return(Purity {
                        pure_eval: *all_values_pure && p.pure_eval,
                        pure_call: p.pure_call,
                    });
                }
                let ExprKind::Let { var, body, .. } = cursor.kind() else {
                    unreachable!("the cursor is a let while values are visited")
                };
                // Revise the variable to its value's true purity.
                self.var_purity.insert(var.id(), p);
                *all_values_pure &= p.pure_eval;
                let body = body.clone();
                *cursor = body;
                if matches!(cursor.kind(), ExprKind::Let { .. }) {
                    self.let_value(cursor)
                } else {
                    *in_body = true;
                    Next::Visit(cursor.clone())
                }
            }
            Frame::If { parts, results, .. } => {
                if let Some(p) = incoming {
                    results.push(p);
                }
                if results.len() < 3 {
                    Next::Visit(parts[results.len()].clone())
                } else {
                    let (c, t, f) = (results[0], results[1], results[2]);
                    Next::Return(Purity {
                        pure_eval: c.pure_eval && t.pure_eval && f.pure_eval,
                        pure_call: t.pure_call && f.pure_call,
                    })
                }
            }
            Frame::Tuple {
                fields,
                received,
                all_pure,
                ..
            } => {
                if let Some(p) = incoming {
                    *all_pure &= p.pure_eval;
                    *received += 1;
                }
                if *received < fields.len() {
                    Next::Visit(fields[*received].clone())
                } else {
                    // The call purity of the fields is lost [RULE C].
                    Next::Return(Purity {
                        pure_eval: *all_pure,
                        pure_call: true,
                    })
                }
            }
            Frame::TupleGetItem {
                tuple,
                first_order,
                started,
                ..
            } => match incoming {
                Some(p) if *started => Next::Return(Purity {
                    pure_eval: p.pure_eval,
                    pure_call: *first_order,
                }),
                _ => {
                    *started = true;
                    Next::Visit(tuple.clone())
                }
            },
            Frame::RefWrite {
                parts, received, ..
            } => {
                if incoming.is_some() {
                    *received += 1;
                }
                if *received < 2 {
                    Next::Visit(parts[*received].clone())
                } else {
                    Next::Return(Purity {
                        pure_eval: false,
                        pure_call: true,
                    })
                }
            }
            Frame::RefRead {
                reference,
                first_order,
                started,
                ..
            } => match incoming {
                Some(_) if *started => Next::Return(Purity {
                    pure_eval: false,
                    pure_call: *first_order,
                }),
                _ => {
                    *started = true;
                    Next::Visit(reference.clone())
                }
            },
            Frame::Match {
                data,
                clauses,
                received,
                data_purity,
                all_eval,
                all_call,
                ..
            } => {
                if let Some(p) = incoming {
                    if *received == 0 {
                        *data_purity = p;
                    } else {
                        *all_eval &= p.pure_eval;
                        *all_call &= p.pure_call;
                    }
                    *received += 1;
                }
                if *received == 0 {
                    Next::Visit(data.clone())
                } else if *received - 1 < clauses.len() {
                    let (pattern, rhs) = &clauses[*received - 1];
                    // Pattern variables lose call purity [RULE E].
                    self.bind_pattern(pattern);
                    Next::Visit(rhs.clone())
                } else {
                    Next::Return(Purity {
                        pure_eval: data_purity.pure_eval && *all_eval,
                        pure_call: *all_call,
                    })
                }
            }
            Frame::Global {
                function, started, ..
            } => match incoming {
                Some(p) if *started => Next::Return(p),
                _ => {
                    *started = true;
                    Next::Visit(function.clone())
                }
            },
        }
    }

    /// Starts the value of the let at `cursor`: its variable is assumed
    /// call-pure while the value is visited (it may be a recursive function).
    fn let_value(&mut self, cursor: &Expr) -> Next {
        let ExprKind::Let { var, value, .. } = cursor.kind() else {
            unreachable!("the cursor is a let")
        };
        self.var_purity.insert(var.id(), PURE);
        Next::Visit(value.clone())
    }

    fn bind_pattern(&mut self, pattern: &Pattern) {
        let mut work = vec![pattern];
        while let Some(p) = work.pop() {
            match p {
                Pattern::Wildcard => {}
                Pattern::Var(v) => {
                    let purity = Purity {
                        pure_eval: true,
                        pure_call: is_first_order(v.expr()),
                    };
                    self.var_purity.insert(v.id(), purity);
                }
                Pattern::Constructor(_, fields) | Pattern::Tuple(fields) => {
                    work.extend(fields.iter().rev());
                }
            }
        }
    }

    /// Memoises a finished frame's result.
    fn finish(&mut self, frame: Frame, p: Purity) {
        let k = match frame {
            Frame::Global { name, .. } => {
                self.global_purity.insert(name.clone(), p);
                self.global_var_memo.insert(name, p);
                return;
            }
            Frame::Call { key, .. }
            | Frame::Function { key, .. }
            | Frame::Let { key, .. }
            | Frame::If { key, .. }
            | Frame::Tuple { key, .. }
            | Frame::TupleGetItem { key, .. }
            | Frame::RefWrite { key, .. }
            | Frame::RefRead { key, .. }
            | Frame::Match { key, .. } => key,
        };
        self.memo.insert(k, p);
    }
}

// ---------------------------------------------------------------------------
// Use counts
// ---------------------------------------------------------------------------

enum Task {
    /// `VisitExpr`: at most two visits of any node.
    Visit(Expr),
    /// One let of a chain (inner lets do not go through `VisitExpr`).
    LetStep(Expr),
    /// The rest of a variable use, after its deferred value was visited.
    VarPost(VarId),
    ExitScope,
}

/// TVM's `UsageVisitor`: the value bound to and the number of uses of every
/// let-bound variable of one function.
struct UsageVisitor<'p> {
    let_bound_values: HashMap<VarId, Expr>,
    use_map: HashMap<VarId, usize>,
    scope_level_map: HashMap<VarId, usize>,
    visit_counter: HashMap<Key, usize>,
    scope: usize,
    purity: &'p HashMap<VarId, bool>,
    default_purity: bool,
}

impl<'p> UsageVisitor<'p> {
    fn new(purity: &'p HashMap<VarId, bool>, default_purity: bool) -> Self {
        UsageVisitor {
            let_bound_values: HashMap::default(),
            use_map: HashMap::default(),
            scope_level_map: HashMap::default(),
            visit_counter: HashMap::default(),
            scope: 0,
            purity,
            default_purity,
        }
    }

    fn is_pure(&self, id: VarId) -> bool {
        self.purity.get(&id).copied().unwrap_or(self.default_purity)
    }

    fn run(&mut self, root: &Expr) {
        let mut stack = vec![Task::Visit(root.clone())];
        while let Some(task) = stack.pop() {
            match task {
                Task::Visit(e) => {
                    let count = self.visit_counter.entry(key(&e)).or_insert(0);
                    *count += 1;
                    if *count <= 2 {
                        self.dispatch(&e, &mut stack);
                    }
                }
                Task::LetStep(e) => self.let_step(&e, &mut stack),
                Task::VarPost(id) => self.count_outer_scope(id),
                Task::ExitScope => self.scope -= 1,
            }
        }
    }

    fn dispatch(&mut self, e: &Expr, stack: &mut Vec<Task>) {
        match e.kind() {
            ExprKind::Var(v) => {
                if !self.let_bound_values.contains_key(&v.id) {
                    // A parameter or pattern variable: nothing to count.
                    return;
                }
                let n = self.use_map.entry(v.id).or_insert(0);
                *n += 1;
                if *n == 1 && self.is_pure(v.id) {
                    // The first use: the deferred value is needed after all.
                    let value = self.let_bound_values[&v.id].clone();
                    stack.push(Task::VarPost(v.id));
                    stack.push(Task::Visit(value));
                } else {
                    self.count_outer_scope(v.id);
                }
            }
            ExprKind::Function(f) => {
                self.scope += 1;
                stack.push(Task::ExitScope);
                stack.push(Task::Visit(f.body.clone()));
                for param in f.params.iter().rev() {
                    stack.push(Task::Visit(param.expr().clone()));
                }
            }
            ExprKind::Let { .. } => self.let_step(e, stack),
            ExprKind::Match { data, clauses, .. } => {
                for clause in clauses.iter().rev() {
                    stack.push(Task::Visit(clause.rhs.clone()));
                }
                stack.push(Task::Visit(data.clone()));
            }
            _ => {
                // Children in reverse order, without a vector per node.
                let first = stack.len();
                for_each_child(e, |child| stack.push(Task::Visit(child.clone())));
                stack[first..].reverse();
            }
        }
    }

    /// One iteration of TVM's loop over a let chain.
    fn let_step(&mut self, e: &Expr, stack: &mut Vec<Task>) {
        let ExprKind::Let { var, value, body } = e.kind() else {
            unreachable!("a let step is on a let")
        };
        *self.visit_counter.entry(key(e)).or_insert(0) += 1;
        self.let_bound_values.insert(var.id(), value.clone());
        self.use_map.insert(var.id(), 0);
        self.scope_level_map.insert(var.id(), self.scope);
        if matches!(body.kind(), ExprKind::Let { .. }) {
            stack.push(Task::LetStep(body.clone()));
        } else {
            stack.push(Task::Visit(body.clone()));
        }
        if !self.is_pure(var.id()) {
            // An impure value is always evaluated: visit it now.
            stack.push(Task::Visit(value.clone()));
        }
    }

    /// A use inside a function nested deeper than the binding counts twice.
    fn count_outer_scope(&mut self, id: VarId) {
        if self.scope_level_map.get(&id).copied().unwrap_or(0) < self.scope {
            *self.use_map.entry(id).or_insert(0) += 1;
        }
    }
}

// ---------------------------------------------------------------------------
// Rewrite
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Action {
    Elide,
    Inline,
    NoChange,
}

/// TVM's `EliminatorMutator`, as a memoised post-order rewrite.
struct Eliminator<'a> {
    inline_once: bool,
    usage: &'a UsageVisitor<'a>,
    purity: &'a HashMap<VarId, bool>,
    default_purity: bool,
    memo: HashMap<Key, Expr>,
}

impl Eliminator<'_> {
    fn action(&self, id: VarId) -> Action {
        if !self.usage.let_bound_values.contains_key(&id) {
            return Action::NoChange;
        }
        if !self.purity.get(&id).copied().unwrap_or(self.default_purity) {
            return Action::NoChange;
        }
        match self.usage.use_map.get(&id).copied().unwrap_or(0) {
            0 => Action::Elide,
            1 if self.inline_once => Action::Inline,
            _ => Action::NoChange,
        }
    }

    /// Calls `f` on each node to rewrite before `e`, in order: a let's
    /// value only when the binding stays or is inlined; an inlined
    /// variable's value; no binding sites.
    fn for_each_traversal_child<'e>(&'e self, e: &'e Expr, mut f: impl FnMut(&'e Expr)) {
        match e.kind() {
            ExprKind::Var(v) => {
                if self.action(v.id) == Action::Inline {
                    f(&self.usage.let_bound_values[&v.id]);
                }
            }
            ExprKind::Let { var, value, body } => {
                if self.action(var.id()) != Action::Elide {
                    f(value);
                }
                f(body);
            }
            ExprKind::Function(func) => f(&func.body),
            ExprKind::Match { data, clauses, .. } => {
                f(data);
                clauses.iter().for_each(|c| f(&c.rhs));
            }
            _ => for_each_child(e, f),
        }
    }

    /// Whether [`Self::mapped`] of `e` is `e` itself (without cloning it).
    fn mapped_is_itself(&self, e: &Expr) -> bool {
        if let ExprKind::Var(v) = e.kind() {
            if self.action(v.id) != Action::Inline {
                return true;
            }
        }
        self.memo.get(&key(e)).is_none_or(|m| m.ptr_eq(e))
    }

    /// The rewritten `e`. A variable stays itself (the very node, binding
    /// sites included) unless it is inlined.
    fn mapped(&self, e: &Expr) -> Expr {
        if let ExprKind::Var(v) = e.kind() {
            if self.action(v.id) != Action::Inline {
                return e.clone();
            }
        }
        self.memo.get(&key(e)).cloned().unwrap_or_else(|| e.clone())
    }

    fn run(&mut self, root: &Expr) -> Expr {
        let mut seen: HashSet<Key> = HashSet::default();
        let mut stack: Vec<(Expr, bool)> = vec![(root.clone(), false)];
        while let Some((e, expanded)) = stack.pop() {
            if expanded {
                let rewritten = self.rebuild(&e);
                self.memo.insert(key(&e), rewritten);
                continue;
            }
            if !seen.insert(key(&e)) {
                continue;
            }
            stack.push((e.clone(), true));
            // Children in reverse order, without a vector per node.
            let first = stack.len();
            self.for_each_traversal_child(&e, |child| {
                if !seen.contains(&key(child)) {
                    stack.push((child.clone(), false));
                }
            });
            stack[first..].reverse();
        }
        self.mapped(root)
    }

    fn rebuild(&self, e: &Expr) -> Expr {
        match e.kind() {
            ExprKind::Var(v) => match self.action(v.id) {
                Action::Inline => self.mapped(&self.usage.let_bound_values[&v.id]),
                _ => e.clone(),
            },
            ExprKind::Let { var, value, body } => match self.action(var.id()) {
                Action::Elide | Action::Inline => self.mapped(body),
                Action::NoChange => {
                    let new_value = self.mapped(value);
                    let new_body = self.mapped(body);
                    if new_value.ptr_eq(value) && new_body.ptr_eq(body) {
                        e.clone()
                    } else {
                        // TVM rebuilds the binding with the same variable.
                        Expr::with_type(
                            ExprKind::Let {
                                var: var.clone(),
                                value: new_value,
                                body: new_body,
                            },
                            e.span(),
                            e.checked_type().cloned(),
                        )
                    }
                }
            },
            _ => {
                // Most nodes keep all their children: then the node stays,
                // and no vector of children is built.
                let mut changed = false;
                for_each_child(e, |c| changed |= !self.mapped_is_itself(c));
                if !changed {
                    return e.clone();
                }
                let new_children: Vec<Expr> =
                    children(e).into_iter().map(|c| self.mapped(c)).collect();
                with_children(e, &new_children)
            }
        }
    }
}

/// Runs the pass on a module holding only `function` as `@main`.
#[cfg(test)]
fn run_on_function(
    function: &relay_ir::Function,
    inline_once: bool,
    ignore_impurity: bool,
) -> Result<relay_ir::Function, Diagnostic> {
    let mut module = IRModule::new();
    module.add_function("main", function.clone());
    let out = dead_code_elimination(&module, inline_once, ignore_impurity)?;
    Ok(out.function("main").expect("main is kept").clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_ir::dtype::DataType;
    use relay_ir::metadata::TensorData;
    use relay_ir::{DictAttrs, Function, FunctionData, Type, Var};

    fn int_ty() -> Type {
        Type::scalar(DataType::INT32)
    }

    fn typed(kind: ExprKind, ty: Type) -> Expr {
        Expr::with_type(kind, None, Some(ty))
    }

    fn int(v: i64) -> Expr {
        let data = TensorData::from_i64s(DataType::INT32, vec![], &[v]).unwrap();
        typed(ExprKind::Constant(std::sync::Arc::new(data)), int_ty())
    }

    fn var(name: &str) -> Var {
        Var::new(name, None, None).with_checked_type(int_ty())
    }

    fn call(op: &str, args: Vec<Expr>) -> Expr {
        let op = relay_ir::op::lookup(op).unwrap();
        typed(
            ExprKind::Call(relay_ir::Call {
                callee: Expr::op(op, None),
                args,
                attrs: None,
                type_args: Box::default(),
            }),
            int_ty(),
        )
    }

    fn let_(v: &Var, value: Expr, body: Expr) -> Expr {
        typed(
            ExprKind::Let {
                var: v.clone(),
                value,
                body,
            },
            int_ty(),
        )
    }

    fn func(params: Vec<Var>, body: Expr) -> Function {
        Function::new(
            FunctionData {
                params,
                body,
                ret_type: Some(int_ty()),
                type_params: vec![],
                attrs: DictAttrs::default(),
                virtual_device: None,
            },
            None,
        )
    }

    fn let_vars(e: &Expr) -> Vec<String> {
        relay_ir::rewrite::post_order(e)
            .iter()
            .filter_map(|n| match n.kind() {
                ExprKind::Let { var, .. } => Some(var.name().to_string()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn removes_dead_pure_binding_and_keeps_live_one() {
        // let %x = 1; let %y = 2; add(%x, %x)
        let (z, x, y) = (var("z"), var("x"), var("y"));
        let body = call("add", vec![x.expr().clone(), x.expr().clone()]);
        let f = func(vec![z], let_(&x, int(1), let_(&y, int(2), body)));
        let out = run_on_function(&f, false, false).unwrap();
        assert_eq!(let_vars(out.body()), ["x"]);
    }

    #[test]
    fn dead_bindings_used_only_by_dead_bindings_go_too() {
        // let %a = 1; let %b = add(%a, %a); 0
        let (a, b) = (var("a"), var("b"));
        let value_b = call("add", vec![a.expr().clone(), a.expr().clone()]);
        let f = func(vec![], let_(&a, int(1), let_(&b, value_b, int(0))));
        let out = run_on_function(&f, false, false).unwrap();
        assert!(let_vars(out.body()).is_empty());
        assert!(out.body().as_constant().is_some());
    }

    #[test]
    fn inline_once_inlines_single_use() {
        // let %x = add(1, 1); negative(%x)
        let x = var("x");
        let value = call("add", vec![int(1), int(1)]);
        let body = call("negative", vec![x.expr().clone()]);
        let f = func(vec![], let_(&x, value.clone(), body));
        let kept = run_on_function(&f, false, false).unwrap();
        assert_eq!(let_vars(kept.body()), ["x"]);
        let inlined = run_on_function(&f, true, false).unwrap();
        assert!(let_vars(inlined.body()).is_empty());
        let call = inlined.body().as_call().unwrap();
        assert!(call.args[0].ptr_eq(&value));
    }

    #[test]
    fn use_inside_nested_function_counts_twice() {
        // let %x = 1; let %f = fn(%y) { add(%x, %y) }; %f(2)
        let (x, y) = (var("x"), var("y"));
        let fty = Type::func(vec![int_ty()], int_ty(), vec![]);
        let f_var = Var::new("f", None, None).with_checked_type(fty.clone());
        let inner = Expr::with_type(
            ExprKind::Function(Box::new(FunctionData {
                params: vec![y.clone()],
                body: call("add", vec![x.expr().clone(), y.expr().clone()]),
                ret_type: Some(int_ty()),
                type_params: vec![],
                attrs: DictAttrs::default(),
                virtual_device: None,
            })),
            None,
            Some(fty.clone()),
        );
        let apply = typed(
            ExprKind::Call(relay_ir::Call {
                callee: f_var.expr().clone(),
                args: vec![int(2)],
                attrs: None,
                type_args: Box::default(),
            }),
            int_ty(),
        );
        let f = func(vec![], let_(&x, int(1), let_(&f_var, inner, apply)));
        let out = run_on_function(&f, true, false).unwrap();
        // %x is used (once) inside the function: two uses, kept; %f is used
        // once at its own level: inlined.
        assert_eq!(let_vars(out.body()), ["x"]);
    }

    #[test]
    fn stateful_binding_is_kept_unless_impurity_is_ignored() {
        let stateful = relay_ir::op::all_ops()
            .iter()
            .find(|op| op.stateful)
            .unwrap();
        let x = var("x");
        let value = typed(
            ExprKind::Call(relay_ir::Call {
                callee: Expr::op(stateful, None),
                args: vec![int(1)],
                attrs: None,
                type_args: Box::default(),
            }),
            int_ty(),
        );
        let f = func(vec![], let_(&x, value, int(0)));
        let kept = run_on_function(&f, false, false).unwrap();
        assert_eq!(let_vars(kept.body()), ["x"]);
        let removed = run_on_function(&f, false, true).unwrap();
        assert!(let_vars(removed.body()).is_empty());
    }

    #[test]
    fn ref_read_is_impure() {
        let r = Var::new("r", None, None).with_checked_type(Type::new(TypeKind::Ref(int_ty())));
        let x = var("x");
        let read = typed(ExprKind::RefRead(r.expr().clone()), int_ty());
        let f = func(vec![r], let_(&x, read, int(0)));
        let out = run_on_function(&f, false, false).unwrap();
        assert_eq!(let_vars(out.body()), ["x"]);
    }

    #[test]
    fn call_of_higher_order_parameter_is_impure() {
        let fty = Type::func(vec![int_ty()], int_ty(), vec![]);
        let g = Var::new("g", None, None).with_checked_type(fty);
        let x = var("x");
        let value = typed(
            ExprKind::Call(relay_ir::Call {
                callee: g.expr().clone(),
                args: vec![int(1)],
                attrs: None,
                type_args: Box::default(),
            }),
            int_ty(),
        );
        let f = func(vec![g], let_(&x, value, int(0)));
        let out = run_on_function(&f, false, false).unwrap();
        assert_eq!(let_vars(out.body()), ["x"]);
    }

    #[test]
    fn long_let_chains_do_not_overflow() {
        let n = 30_000;
        let vars: Vec<Var> = (0..n).map(|i| var(&format!("v{i}"))).collect();
        // let %v0 = 1; let %v1 = add(%v0, 1); …; %v{n-1}
        let mut body = vars[n - 1].expr().clone();
        for i in (0..n).rev() {
            let value = if i == 0 {
                int(1)
            } else {
                call("add", vec![vars[i - 1].expr().clone(), int(1)])
            };
            body = let_(&vars[i], value, body);
        }
        let f = func(vec![], body);
        let handle = std::thread::spawn(move || {
            let out = run_on_function(&f, true, false).unwrap();
            let lets = let_vars(out.body()).len();
            (lets, relay_ir::rewrite::post_order(out.body()).len())
        });
        let (lets, _) = handle.join().unwrap();
        // Every binding is used once at its own level: all inlined.
        assert_eq!(lets, 0);
    }

    #[test]
    fn untouched_function_is_the_same_node() {
        let x = var("x");
        let f = func(vec![x.clone()], call("negative", vec![x.expr().clone()]));
        let out = run_on_function(&f, true, false).unwrap();
        assert!(out.expr().ptr_eq(f.expr()));
    }
}
