//! `EliminateCommonSubexpr`: merges calls that compute the same thing, as
//! TVM v0.13's `eliminate_common_subexpr.cc` does.
//!
//! The function is rewritten bottom-up in TVM's visiting order (a `match`
//! visits its clauses before its scrutinee, as TVM's `ExprMutator` does).
//! One table serves the whole function, so a call may be replaced by an
//! equal call met earlier in another `if` branch or nested function.
//!
//! * A candidate is a call whose callee is a non-stateful operator and that
//!   has at least one argument (and that `fskip` does not skip). It is
//!   replaced by the first earlier candidate with the same operator,
//!   structurally equal attributes, and arguments that are the same node or
//!   equal scalar constants; a tuple argument is compared field by field
//!   with the same rule.
//! * A projection `t.i` is replaced by an earlier projection of the same
//!   tuple node with the same index.
//! * Calls of anything but an operator, and calls without arguments, are
//!   never merged.

use relay_ir::attr_equal::{attrs_equal, AttrEquality};
use relay_ir::diagnostic::Diagnostic;
use relay_ir::dtype::DataType;
use relay_ir::rewrite::{children, with_children};
use relay_ir::{Expr, ExprKind, Function, IRModule, VarId};
use relay_pass_manager::registry::PassSpec;
use relay_pass_manager::PassContext;
// Every table is consulted once or more per node: the fast hasher.
use relay_ir::fxhash::{FxMap as HashMap, FxSet as HashSet};

/// The registry entry. `fskip` is a Python callback in TVM and cannot be
/// given in a pipeline; Rust callers use [`eliminate_common_subexpr_with`].
pub(crate) fn spec() -> PassSpec {
    PassSpec::function("EliminateCommonSubexpr", 3)
        .required(&["InferType"])
        .doc(
            "Replace operator calls (and tuple projections) equal to an earlier one by \
             that earlier one",
        )
        .transform(cse_function)
}

fn cse_function(f: Function, _m: &IRModule, _ctx: &PassContext) -> Result<Function, Diagnostic> {
    Ok(eliminate_common_subexpr(&f))
}

/// Eliminates common subexpressions in `function`.
pub fn eliminate_common_subexpr(function: &Function) -> Function {
    eliminate_common_subexpr_with(function.expr(), None)
        .as_function()
        .expect("a function is rewritten to a function")
}

/// Eliminates common subexpressions in `expr`; `fskip` returning true for a
/// (rewritten) call or projection keeps it out of the table.
pub fn eliminate_common_subexpr_with(expr: &Expr, fskip: Option<&dyn Fn(&Expr) -> bool>) -> Expr {
    Eliminator {
        fskip,
        memo: HashMap::default(),
        calls: HashMap::default(),
        projections: HashMap::default(),
    }
    .run(expr)
}

/// Node identity; all uses of a variable are one node in TVM, so
/// variables are identified by their id.
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

/// What decides whether two arguments are equivalent (TVM's
/// `IsEquivalent`): the same node, or an equal scalar constant, field by
/// field for tuples. Two arguments are equivalent exactly when their
/// signatures are equal, so candidates can be found by hashing instead of
/// TVM's linear scan (the first match in order is the same).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
enum ArgSig {
    Node(Key),
    /// A rank-0 constant: dtype and bytes (what structural equality of
    /// constants compares).
    Scalar(DataType, Vec<u8>),
    Tuple(Vec<ArgSig>),
}

fn leaf_sig(e: &Expr) -> ArgSig {
    match e.as_constant() {
        Some(data) if data.ndim() == 0 => ArgSig::Scalar(data.dtype, data.data.clone()),
        _ => ArgSig::Node(key(e)),
    }
}

fn arg_sig(e: &Expr) -> ArgSig {
    match e.kind() {
        ExprKind::Tuple(fields) => ArgSig::Tuple(fields.iter().map(leaf_sig).collect()),
        _ => leaf_sig(e),
    }
}

struct Eliminator<'f> {
    fskip: Option<&'f dyn Fn(&Expr) -> bool>,
    memo: HashMap<Key, Expr>,
    /// Earlier candidate calls by operator and argument signatures, in
    /// order (they differ in their attributes).
    calls: HashMap<(usize, Vec<ArgSig>), Vec<Expr>>,
    /// The first projection of each (rewritten) tuple node and index.
    projections: HashMap<(Key, usize), Expr>,
}

impl Eliminator<'_> {
    /// The children in TVM's visiting order: as [`children`], except that a
    /// match visits its clauses before its scrutinee.
    fn visit_order(e: &Expr) -> Vec<Expr> {
        match e.kind() {
            ExprKind::Match { .. } => {
                let mut all: Vec<Expr> = children(e).into_iter().cloned().collect();
                let data = all.remove(0);
                all.push(data);
                all
            }
            _ => children(e).into_iter().cloned().collect(),
        }
    }

    /// The rewritten `e`; variables are never rewritten.
    fn mapped(&self, e: &Expr) -> Expr {
        if matches!(e.kind(), ExprKind::Var(_)) {
            return e.clone();
        }
        self.memo.get(&key(e)).cloned().unwrap_or_else(|| e.clone())
    }

    fn run(&mut self, root: &Expr) -> Expr {
        let mut seen: HashSet<Key> = HashSet::default();
        let mut stack: Vec<(Expr, bool)> = vec![(root.clone(), false)];
        while let Some((e, expanded)) = stack.pop() {
            if expanded {
                let new_children: Vec<Expr> =
                    children(&e).into_iter().map(|c| self.mapped(c)).collect();
                let post = with_children(&e, &new_children);
                let rewritten = self.rewrite(post);
                self.memo.insert(key(&e), rewritten);
                continue;
            }
            if !seen.insert(key(&e)) {
                continue;
            }
            stack.push((e.clone(), true));
            for child in Self::visit_order(&e).into_iter().rev() {
                if !seen.contains(&key(&child)) {
                    stack.push((child, false));
                }
            }
        }
        self.mapped(root)
    }

    fn skipped(&self, post: &Expr) -> bool {
        self.fskip.is_some_and(|f| f(post))
    }

    fn rewrite(&mut self, post: Expr) -> Expr {
        match post.kind() {
            ExprKind::Call(call) => {
                let Some(op) = call.callee.as_op() else {
                    return post;
                };
                if call.args.is_empty() || op.stateful || self.skipped(&post) {
                    return post;
                }
                let op_key = op as *const _ as usize;
                let table_key = (op_key, call.args.iter().map(arg_sig).collect::<Vec<_>>());
                let candidates = self.calls.entry(table_key).or_default();
                for candidate in candidates.iter() {
                    let other = candidate.as_call().expect("only calls are candidates");
                    if attrs_equal(
                        call.attrs.as_ref(),
                        other.attrs.as_ref(),
                        AttrEquality::TVM_PASSES,
                    ) {
                        return candidate.clone();
                    }
                }
                candidates.push(post.clone());
                post
            }
            ExprKind::TupleGetItem { tuple, index } => {
                if self.skipped(&post) {
                    return post;
                }
                let table_key = (key(tuple), *index);
                if let Some(candidate) = self.projections.get(&table_key) {
                    return candidate.clone();
                }
                self.projections.insert(table_key, post.clone());
                post
            }
            _ => post,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_ir::metadata::TensorData;
    use relay_ir::{AttrValue, Attrs, DictAttrs, FunctionData, Type, Var};

    fn scalar(v: f64) -> Expr {
        Expr::constant(
            TensorData::from_f64s(DataType::FLOAT32, vec![], &[v]).unwrap(),
            None,
        )
    }

    fn vector(v: f64) -> Expr {
        Expr::constant(
            TensorData::from_f64s(DataType::FLOAT32, vec![1], &[v]).unwrap(),
            None,
        )
    }

    fn call(op: &str, args: Vec<Expr>) -> Expr {
        Expr::call(
            Expr::op(relay_ir::op::lookup(op).unwrap(), None),
            args,
            None,
            None,
        )
    }

    fn call_attrs(op: &str, args: Vec<Expr>, attrs: Attrs) -> Expr {
        Expr::call(
            Expr::op(relay_ir::op::lookup(op).unwrap(), None),
            args,
            Some(attrs),
            None,
        )
    }

    fn func(params: Vec<Var>, body: Expr) -> Function {
        Function::new(
            FunctionData {
                params,
                body,
                ret_type: None,
                type_params: vec![],
                attrs: DictAttrs::default(),
                virtual_device: None,
            },
            None,
        )
    }

    fn tuple_fields(e: &Expr) -> Vec<Expr> {
        match e.kind() {
            ExprKind::Tuple(fields) => fields.clone(),
            _ => panic!("a tuple"),
        }
    }

    fn run(body: Expr, params: Vec<Var>) -> Vec<Expr> {
        let f = func(params, body);
        tuple_fields(eliminate_common_subexpr(&f).body())
    }

    #[test]
    fn merges_equal_calls_on_the_same_nodes() {
        let x = Var::new("x", None, None);
        let a = call("nn.relu", vec![x.expr().clone()]);
        let b = call("nn.relu", vec![x.expr().clone()]);
        let out = run(Expr::tuple(vec![a, b], None), vec![x]);
        assert!(out[0].ptr_eq(&out[1]));
    }

    #[test]
    fn merges_bottom_up_and_with_equal_scalar_constants() {
        let x = Var::new("x", None, None);
        let a = call(
            "add",
            vec![call("nn.relu", vec![x.expr().clone()]), scalar(1.0)],
        );
        let b = call(
            "add",
            vec![call("nn.relu", vec![x.expr().clone()]), scalar(1.0)],
        );
        let c = call(
            "add",
            vec![call("nn.relu", vec![x.expr().clone()]), scalar(2.0)],
        );
        let out = run(Expr::tuple(vec![a, b, c], None), vec![x]);
        assert!(out[0].ptr_eq(&out[1]));
        assert!(!out[0].ptr_eq(&out[2]));
    }

    #[test]
    fn non_scalar_constants_must_be_the_same_node() {
        let x = Var::new("x", None, None);
        let a = call("add", vec![x.expr().clone(), vector(1.0)]);
        let b = call("add", vec![x.expr().clone(), vector(1.0)]);
        let out = run(Expr::tuple(vec![a, b], None), vec![x]);
        assert!(!out[0].ptr_eq(&out[1]));
    }

    #[test]
    fn attributes_must_be_equal() {
        let x = Var::new("x", None, None);
        let attrs = |axis: i64| {
            Attrs::new(
                "relay.attrs.SoftmaxAttrs",
                vec![("axis".to_string(), AttrValue::Int(axis))],
            )
        };
        let a = call_attrs("nn.softmax", vec![x.expr().clone()], attrs(1));
        let b = call_attrs("nn.softmax", vec![x.expr().clone()], attrs(1));
        let c = call_attrs("nn.softmax", vec![x.expr().clone()], attrs(0));
        let out = run(Expr::tuple(vec![a, b, c], None), vec![x]);
        assert!(out[0].ptr_eq(&out[1]));
        assert!(!out[0].ptr_eq(&out[2]));
    }

    #[test]
    fn attributes_holding_nan_never_match_as_in_tvm_v0_13() {
        let x = Var::new("x", None, None);
        let clip = |a_min: f64| {
            Attrs::new(
                "relay.attrs.ClipAttrs",
                vec![
                    ("a_min".to_string(), AttrValue::Double(a_min)),
                    ("a_max".to_string(), AttrValue::Double(6.0)),
                ],
            )
        };
        let shared = clip(f64::NAN);
        let a = call_attrs("clip", vec![x.expr().clone()], shared.clone());
        let b = call_attrs("clip", vec![x.expr().clone()], shared);
        // Within TVM's tolerance, and -0.0 == 0.0: merged.
        let c = call_attrs("clip", vec![x.expr().clone()], clip(0.0));
        let d = call_attrs("clip", vec![x.expr().clone()], clip(-1e-12));
        let out = run(Expr::tuple(vec![a, b, c, d], None), vec![x]);
        assert!(!out[0].ptr_eq(&out[1]));
        assert!(out[2].ptr_eq(&out[3]));
    }

    #[test]
    fn tuple_arguments_compare_field_by_field() {
        let x = Var::new("x", None, None);
        let t1 = Expr::tuple(vec![x.expr().clone(), scalar(1.0)], None);
        let t2 = Expr::tuple(vec![x.expr().clone(), scalar(1.0)], None);
        let attrs = Attrs::new(
            "relay.attrs.ConcatenateAttrs",
            vec![("axis".to_string(), AttrValue::Int(0))],
        );
        let a = call_attrs("concatenate", vec![t1], attrs.clone());
        let b = call_attrs("concatenate", vec![t2], attrs);
        let out = run(Expr::tuple(vec![a, b], None), vec![x]);
        assert!(out[0].ptr_eq(&out[1]));
    }

    #[test]
    fn projections_of_the_same_tuple_merge() {
        let x = Var::new("x", None, None);
        let t = Expr::tuple(vec![x.expr().clone(), x.expr().clone()], None);
        let p0 = Expr::tuple_get_item(t.clone(), 0, None);
        let p0b = Expr::tuple_get_item(t.clone(), 0, None);
        let p1 = Expr::tuple_get_item(t, 1, None);
        let out = run(Expr::tuple(vec![p0, p0b, p1], None), vec![x]);
        assert!(out[0].ptr_eq(&out[1]));
        assert!(!out[0].ptr_eq(&out[2]));
    }

    #[test]
    fn zero_argument_calls_and_non_op_callees_are_kept() {
        let x = Var::new("x", None, None);
        let g = Var::new("g", None, None);
        let a = Expr::call(g.expr().clone(), vec![x.expr().clone()], None, None);
        let b = Expr::call(g.expr().clone(), vec![x.expr().clone()], None, None);
        let out = run(Expr::tuple(vec![a, b], None), vec![x, g]);
        assert!(!out[0].ptr_eq(&out[1]));
    }

    #[test]
    fn stateful_ops_are_never_merged() {
        let stateful = relay_ir::op::all_ops()
            .iter()
            .find(|op| op.stateful)
            .unwrap();
        let x = Var::new("x", None, None);
        let a = Expr::call(Expr::op(stateful, None), vec![x.expr().clone()], None, None);
        let b = Expr::call(Expr::op(stateful, None), vec![x.expr().clone()], None, None);
        let out = run(Expr::tuple(vec![a, b], None), vec![x]);
        assert!(!out[0].ptr_eq(&out[1]));
    }

    #[test]
    fn a_match_may_come_from_another_branch() {
        let c = Var::new("c", Some(Type::scalar(DataType::bool())), None);
        let x = Var::new("x", None, None);
        let then_branch = call("nn.relu", vec![x.expr().clone()]);
        let else_branch = call("nn.relu", vec![x.expr().clone()]);
        let body = Expr::if_(c.expr().clone(), then_branch, else_branch, None);
        let f = func(vec![c, x], body);
        let out = eliminate_common_subexpr(&f);
        let ExprKind::If {
            then_branch,
            else_branch,
            ..
        } = out.body().kind()
        else {
            panic!("an if")
        };
        assert!(then_branch.ptr_eq(else_branch));
    }

    #[test]
    fn fskip_keeps_calls_out() {
        let x = Var::new("x", None, None);
        let a = call("nn.relu", vec![x.expr().clone()]);
        let b = call("nn.relu", vec![x.expr().clone()]);
        let body = Expr::tuple(vec![a, b], None);
        let skip_all = |_: &Expr| true;
        let out = eliminate_common_subexpr_with(&body, Some(&skip_all));
        let fields = tuple_fields(&out);
        assert!(!fields[0].ptr_eq(&fields[1]));
    }

    #[test]
    fn untouched_function_is_the_same_node() {
        let x = Var::new("x", None, None);
        let f = func(vec![x.clone()], call("nn.relu", vec![x.expr().clone()]));
        assert!(eliminate_common_subexpr(&f).expr().ptr_eq(f.expr()));
    }

    #[test]
    fn deep_chains_do_not_overflow() {
        let x = Var::new("x", None, None);
        let mut e = x.expr().clone();
        for _ in 0..100_000 {
            e = call("nn.relu", vec![e]);
        }
        let f = func(vec![x], e);
        let handle = std::thread::spawn(move || {
            let out = eliminate_common_subexpr(&f);
            relay_ir::rewrite::post_order(out.body()).len()
        });
        assert_eq!(handle.join().unwrap(), 200_001);
    }
}
