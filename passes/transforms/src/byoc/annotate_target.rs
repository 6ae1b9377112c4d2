//! `AnnotateTarget(targets, include_non_call_ops)`: TVM v0.13's pass that
//! puts `compiler_begin`/`compiler_end` annotations around every operator
//! for the first of `targets` that supports it, `default` otherwise (a
//! `Sequential` named `AnnotateTarget` of the function pass
//! `AnnotateTargetFunc`, which requires `InferType`, and `InferType`).
//!
//! Whether a target supports an operator call is what the target declares
//! in the registry of `relay_patterns::targets` (TVM's operator attribute
//! `target.<name>`: `[targets.<name>]` in `relay.toml`,
//! `tvm.ir.register_op_attr` in the Python frontend); a target that
//! declares nothing supports no operator, as in TVM. A call of a
//! `Composite` function (what `MergeComposite` makes) whose name starts
//! with `<target>.` for one of `targets` is annotated for that target.
//!
//! With `include_non_call_ops` (the default) tuples, projections, `let`
//! values and references are annotated too; without it, they only close
//! the regions of their operands.

use super::{annotation, compiler_begin, compiler_end, Boundary};
use relay_ir::diagnostic::Diagnostic;
use relay_ir::fxhash::FxMap;
use relay_ir::rewrite::{rewrite_post_order, with_children};
use relay_ir::{Expr, ExprKind, Function};
use relay_pass_manager::registry::{ParamSpec, PassSpec};
use relay_pass_manager::{FunctionPass, PassInfo};
use relay_patterns::targets::supports;
use std::sync::Arc;

const DEFAULT_TARGET: &str = "default";

pub(crate) fn spec() -> PassSpec {
    PassSpec::sequential("AnnotateTarget", 0)
        .param(ParamSpec::list(
            "targets",
            Vec::new(),
            "the external compilers, in order of priority",
        ))
        .param(ParamSpec::bool(
            "include_non_call_ops",
            true,
            "annotate tuples, projections, let values and references too",
        ))
        .doc(
            "Annotate operators with compiler_begin/compiler_end for the first target that \
             supports them ([targets.<name>] in relay.toml; Composite calls for their \
             target), `default` otherwise",
        )
        .build(|args| {
            let targets = args.string_list("targets")?;
            let include_non_call_ops = args.bool("include_non_call_ops");
            let annotate = FunctionPass::new(
                PassInfo::new("AnnotateTargetFunc", 0, &["InferType"]),
                move |function, _module, _ctx| {
                    annotate_target(&function, &targets, include_non_call_ops)
                },
            );
            let infer = relay_pass_manager::registry::create_by_name("InferType")?;
            Ok(vec![Arc::new(annotate), infer])
        })
}

/// Annotates `function` (see the module documentation); a target's
/// predicate that fails is an error.
pub fn annotate_target(
    function: &Function,
    targets: &[String],
    include_non_call_ops: bool,
) -> Result<Function, Diagnostic> {
    let mut annotator = Annotator {
        targets,
        include_non_call_ops,
        chosen: FxMap::default(),
        failure: None,
    };
    let annotated = rewrite_post_order(function.expr(), |old, rebuilt| {
        annotator.rewrite(old, rebuilt)
    });
    if let Some(failure) = annotator.failure {
        return Err(failure);
    }
    Ok(annotated
        .as_function()
        .expect("rewriting a function gives a function"))
}

/// TVM's `AnnotateTargetRewriter` (and, without non-call operators, its
/// `CallOpsTargetRewriter`).
struct Annotator<'a> {
    targets: &'a [String],
    include_non_call_ops: bool,
    /// The target chosen for each rewritten node, by address (the node is
    /// kept so the address stays its own).
    chosen: FxMap<usize, (Expr, String)>,
    /// The first predicate that failed (the rewrite goes on, the pass
    /// fails).
    failure: Option<Diagnostic>,
}

/// A node rebuilt with other children (span and checked type kept).
fn rebuilt_with(node: &Expr, children: Vec<Expr>) -> Expr {
    with_children(node, &children)
}

impl Annotator<'_> {
    fn target_of(&self, expr: &Expr) -> Option<&str> {
        self.chosen.get(&expr.addr()).map(|(_, t)| t.as_str())
    }

    fn choose(&mut self, expr: &Expr, target: &str) {
        self.chosen
            .insert(expr.addr(), (expr.clone(), target.to_string()));
    }

    /// `compiler_end`/`compiler_begin` typed as the value it annotates.
    fn annotate(expr: &Expr, target: &str, boundary: Boundary) -> Expr {
        let call = match boundary {
            Boundary::Begin => compiler_begin(expr.clone(), target),
            Boundary::End => compiler_end(expr.clone(), target),
        };
        match expr.checked_type() {
            Some(ty) => Expr::with_type(clone_kind(&call), None, Some(ty.clone())),
            None => call,
        }
    }

    /// Ends the regions of the arguments and begins one for the node: its
    /// `target`, or with none given the arguments' common target
    /// (`default` when they differ). Returns the target and the new
    /// arguments (existing non-default begins first, as in TVM).
    fn annotate_args(&mut self, args: &[Expr], target: Option<&str>) -> (String, Vec<Expr>) {
        let mut reference: Option<String> = None;
        let mut begins = Vec::new();
        let mut ends = Vec::new();
        for arg in args {
            let mut arg_target = DEFAULT_TARGET.to_string();
            if let Some(begin) = annotation(arg).filter(|m| m.boundary == Boundary::Begin) {
                if begin.compiler != DEFAULT_TARGET {
                    begins.push(arg.clone());
                } else {
                    ends.push(begin.arg.clone());
                }
                if let Some(end) = annotation(begin.arg).filter(|m| m.boundary == Boundary::End) {
                    arg_target = end.compiler.to_string();
                }
            } else if let Some(t) = self.target_of(arg).map(str::to_string) {
                let is_nullary_call = arg.as_call().is_some_and(|c| c.args.is_empty());
                if is_nullary_call {
                    // Tensor constructors like zeros are taken as inputs.
                    ends.push(arg.clone());
                } else {
                    ends.push(Self::annotate(arg, &t, Boundary::End));
                }
                arg_target = t;
            } else {
                ends.push(arg.clone());
            }
            reference = Some(match reference {
                None => arg_target,
                Some(r) if r == arg_target => r,
                Some(_) => DEFAULT_TARGET.to_string(),
            });
        }
        let Some(reference) = reference else {
            return (target.unwrap_or("").to_string(), args.to_vec());
        };
        let op_target = target.map(str::to_string).unwrap_or(reference);
        for end in ends {
            begins.push(Self::annotate(&end, &op_target, Boundary::Begin));
        }
        (op_target, begins)
    }

    /// Closes the region of `expr` where it ends a scope (a function body,
    /// a branch, a `let` body).
    fn end_and_propagate(&mut self, expr: &Expr) -> Expr {
        if let Some(target) = self.target_of(expr).map(str::to_string) {
            let has_operands = match expr.kind() {
                ExprKind::RefWrite { .. }
                | ExprKind::RefCreate(_)
                | ExprKind::RefRead(_)
                | ExprKind::TupleGetItem { .. } => true,
                ExprKind::Call(call) => !call.args.is_empty(),
                ExprKind::Tuple(fields) => !fields.is_empty(),
                _ => false,
            };
            if !has_operands {
                return expr.clone();
            }
            let ended = Self::annotate(expr, &target, Boundary::End);
            self.choose(&ended, &target);
            return ended;
        }
        if let Some(end) = annotation(expr).filter(|m| m.boundary == Boundary::End) {
            if end.compiler == DEFAULT_TARGET {
                let value = end.arg.clone();
                let target = self.target_of(&value).unwrap_or("").to_string();
                let ended = Self::annotate(&value, &target, Boundary::End);
                self.choose(&ended, &target);
                return ended;
            }
        }
        expr.clone()
    }

    fn rewrite(&mut self, old: &Expr, rebuilt: Expr) -> Expr {
        match old.kind() {
            ExprKind::Call(_) => self.rewrite_call(old, rebuilt),
            ExprKind::Tuple(_) => {
                let ExprKind::Tuple(fields) = rebuilt.kind() else {
                    return rebuilt;
                };
                if self.include_non_call_ops {
                    let (target, fields) = self.annotate_args(&fields.clone(), None);
                    let tuple = rebuilt_with(&rebuilt, fields);
                    self.choose(&tuple, &target);
                    tuple
                } else {
                    let fields: Vec<Expr> = fields
                        .clone()
                        .iter()
                        .map(|f| self.end_and_propagate(f))
                        .collect();
                    rebuilt_with(&rebuilt, fields)
                }
            }
            ExprKind::TupleGetItem { .. } => {
                let ExprKind::TupleGetItem { tuple, index } = rebuilt.kind() else {
                    return rebuilt;
                };
                let (tuple, index) = (tuple.clone(), *index);
                if self.include_non_call_ops {
                    let (target, args) = self.annotate_args(&[tuple], None);
                    let kind = ExprKind::TupleGetItem {
                        tuple: args[0].clone(),
                        index,
                    };
                    let projection = Expr::new(kind, None);
                    self.choose(&projection, &target);
                    projection
                } else {
                    let kind = ExprKind::TupleGetItem {
                        tuple: self.end_and_propagate(&tuple),
                        index,
                    };
                    Expr::new(kind, None)
                }
            }
            ExprKind::Function(data) => {
                if data.attrs.get("Composite").is_some() {
                    // Composite functions are not stepped into.
                    return old.clone();
                }
                let function = rebuilt.as_function().expect("a rebuilt function");
                let body = self.end_and_propagate(function.body());
                let mut children: Vec<Expr> =
                    function.params().iter().map(|p| p.expr().clone()).collect();
                children.push(body);
                rebuilt_with(&rebuilt, children)
            }
            ExprKind::Let { .. } => {
                let ExprKind::Let { var, value, body } = rebuilt.kind() else {
                    return rebuilt;
                };
                let (var, value, body) = (var.clone(), value.clone(), body.clone());
                let body = self.end_and_propagate(&body);
                let value = if matches!(value.kind(), ExprKind::Function(_)) {
                    value
                } else {
                    self.annotate_args(&[value], None).1.remove(0)
                };
                Expr::let_(var, value, body, None)
            }
            ExprKind::If { .. } => {
                let ExprKind::If {
                    cond,
                    then_branch,
                    else_branch,
                } = rebuilt.kind()
                else {
                    return rebuilt;
                };
                let (cond, then_branch, else_branch) =
                    (cond.clone(), then_branch.clone(), else_branch.clone());
                Expr::if_(
                    self.end_and_propagate(&cond),
                    self.end_and_propagate(&then_branch),
                    self.end_and_propagate(&else_branch),
                    None,
                )
            }
            ExprKind::RefCreate(_) | ExprKind::RefRead(_) => {
                let (ExprKind::RefCreate(inner) | ExprKind::RefRead(inner)) = rebuilt.kind() else {
                    return rebuilt;
                };
                let inner = inner.clone();
                let is_create = matches!(old.kind(), ExprKind::RefCreate(_));
                let make = |value: Expr| {
                    let kind = if is_create {
                        ExprKind::RefCreate(value)
                    } else {
                        ExprKind::RefRead(value)
                    };
                    Expr::new(kind, None)
                };
                if self.include_non_call_ops {
                    let (target, args) = self.annotate_args(&[inner], None);
                    let node = make(args[0].clone());
                    self.choose(&node, &target);
                    node
                } else {
                    make(self.end_and_propagate(&inner))
                }
            }
            ExprKind::RefWrite { .. } => {
                let ExprKind::RefWrite { reference, value } = rebuilt.kind() else {
                    return rebuilt;
                };
                let (reference, value) = (reference.clone(), value.clone());
                if self.include_non_call_ops {
                    let (target, mut args) = self.annotate_args(&[reference, value], None);
                    let value = args.pop().expect("two annotated operands");
                    let reference = args.pop().expect("two annotated operands");
                    let node = Expr::new(ExprKind::RefWrite { reference, value }, None);
                    self.choose(&node, &target);
                    node
                } else {
                    let kind = ExprKind::RefWrite {
                        reference: self.end_and_propagate(&reference),
                        value: self.end_and_propagate(&value),
                    };
                    Expr::new(kind, None)
                }
            }
            _ => rebuilt,
        }
    }

    fn rewrite_call(&mut self, old: &Expr, rebuilt: Expr) -> Expr {
        let pre = old.as_call().expect("a call");
        if let Some(mark) = annotation(old) {
            if mark.boundary == Boundary::End {
                let value = rebuilt.as_call().expect("a rebuilt call").args[0].clone();
                if self.target_of(&value).is_none() {
                    let compiler = annotation(&rebuilt).map_or(mark.compiler, |m| m.compiler);
                    let compiler = compiler.to_string();
                    self.choose(&value, &compiler);
                }
            }
            return rebuilt;
        }
        if let Some(first) = pre.args.first() {
            if annotation(first)
                .is_some_and(|m| m.boundary == Boundary::Begin && m.compiler != DEFAULT_TARGET)
            {
                // Annotated for another target by an earlier run.
                return rebuilt;
            }
        }
        let mut target = DEFAULT_TARGET.to_string();
        if let Some(op) = pre.callee.as_op() {
            // The first target, in the order given, whose registered
            // support accepts the call (checks see the typed original).
            for candidate in self.targets {
                match supports(candidate, &op.name, old) {
                    Ok(true) => {
                        target = candidate.clone();
                        break;
                    }
                    Ok(false) => {}
                    Err(message) => {
                        self.failure.get_or_insert_with(|| {
                            Diagnostic::pass_failed(format!(
                                "AnnotateTarget: the `target.{candidate}` predicate of `{}` \
                                     failed: {message}",
                                op.name
                            ))
                        });
                    }
                }
            }
        } else if let Some(function) = pre.callee.as_function() {
            let composite = function.attr("Composite").and_then(|v| v.as_str());
            if let Some((prefix, _)) = composite.and_then(|name| name.split_once('.')) {
                if self.targets.iter().any(|t| t == prefix) {
                    target = prefix.to_string();
                }
            }
        }
        let call = rebuilt.as_call().expect("a rebuilt call");
        if !self.include_non_call_ops && matches!(pre.callee.kind(), ExprKind::Var(_)) {
            let args: Vec<Expr> = call
                .args
                .clone()
                .iter()
                .map(|a| self.end_and_propagate(a))
                .collect();
            let kind = ExprKind::Call(relay_ir::Call {
                callee: call.callee.clone(),
                args,
                attrs: call.attrs.clone(),
                type_args: Box::default(),
            });
            return Expr::with_type(kind, None, rebuilt.checked_type().cloned());
        }
        let (_, args) = self.annotate_args(&call.args.clone(), Some(&target));
        let kind = ExprKind::Call(relay_ir::Call {
            callee: call.callee.clone(),
            args,
            attrs: call.attrs.clone(),
            type_args: Box::default(),
        });
        let new_call = Expr::with_type(kind, old.span(), old.checked_type().cloned());
        self.choose(&new_call, &target);
        new_call
    }
}

/// A copy of a freshly built call's kind, to give it a checked type.
fn clone_kind(call: &Expr) -> ExprKind {
    let c = call.as_call().expect("an annotation call");
    ExprKind::Call(relay_ir::Call {
        callee: c.callee.clone(),
        args: c.args.clone(),
        attrs: c.attrs.clone(),
        type_args: c.type_args.clone(),
    })
}
