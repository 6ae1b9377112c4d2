//! `CanonicalizeCast`: gives every element-wise or broadcast user of a
//! shared up-cast its own copy of the cast, as TVM v0.13's
//! `canonicalize_cast.cc` does, so that fusion can fuse the cast into each
//! user and the fused functions take the narrower input.
//!
//! The walk follows TVM's `ExprMutator`: depth first, arguments in order,
//! each node rewritten once. When an element-wise / broadcast call (pattern
//! at most `Broadcast`) takes an argument that is an up-cast (`cast` to more
//! bits than its input's checked type has), the first such use keeps the
//! node and every later use gets a fresh copy of it. Other users (a
//! convolution, a tuple) always keep the shared node.

use relay_ir::op::OpPattern;
use relay_ir::rewrite::{children, with_children};
use relay_ir::{Expr, ExprKind, Function};
use relay_pass_manager::registry::PassSpec;
// Tables consulted per node: the fast hasher, not SipHash.
use relay_ir::fxhash::FxMap as HashMap;

pub(crate) fn spec() -> PassSpec {
    PassSpec::function("CanonicalizeCast", 3)
        .required(&["InferType"])
        .doc("Copy a shared up-cast for each element-wise user so fusion can absorb it")
        .transform(|f, _m, _ctx| Ok(canonicalize_cast(&f)))
}

/// Un-shares the up-casts of `function` used by element-wise operators.
pub fn canonicalize_cast(function: &Function) -> Function {
    CastCanonicalizer::default()
        .run(function.expr())
        .as_function()
        .expect("a function is rewritten to a function")
}

#[derive(Default)]
struct CastCanonicalizer {
    memo: HashMap<usize, Expr>,
    /// How many element-wise uses of each up-cast have been met.
    uses: HashMap<usize, usize>,
}

/// A node being rewritten: its children and the rewritten ones so far.
struct Frame {
    node: Expr,
    children: Vec<Expr>,
    rewritten: Vec<Expr>,
    /// Whether the node is a call of an element-wise / broadcast operator,
    /// whose arguments (children after the callee) are the counted uses.
    counts_uses: bool,
}

impl Frame {
    fn new(node: &Expr) -> Frame {
        let counts_uses = node
            .as_call()
            .and_then(|call| call.callee.as_op())
            .is_some_and(|op| op.fusion_pattern() <= OpPattern::Broadcast);
        Frame {
            children: children(node).into_iter().cloned().collect(),
            rewritten: Vec::new(),
            node: node.clone(),
            counts_uses,
        }
    }
}

impl CastCanonicalizer {
    /// Rewrites `root` depth first without recursion (real models are
    /// thousands of calls deep).
    fn run(&mut self, root: &Expr) -> Expr {
        let mut stack = vec![Frame::new(root)];
        loop {
            let top = stack
                .last_mut()
                .expect("the stack holds the root until the end");
            let next = top.rewritten.len();
            if let Some(child) = top.children.get(next).cloned() {
                match self.memo.get(&child.addr()).cloned() {
                    Some(done) => {
                        let arg = self.argument(top, &child, done);
                        top.rewritten.push(arg);
                    }
                    None => stack.push(Frame::new(&child)),
                }
                continue;
            }
            let frame = stack.pop().expect("the top frame exists");
            let rebuilt = with_children(&frame.node, &frame.rewritten);
            self.memo.insert(frame.node.addr(), rebuilt.clone());
            match stack.last_mut() {
                Some(parent) => {
                    let arg = self.argument(parent, &frame.node, rebuilt);
                    parent.rewritten.push(arg);
                }
                None => return rebuilt,
            }
        }
    }

    /// The rewritten child `child` as `parent` takes it: a fresh copy for
    /// every element-wise use of an up-cast after the first.
    fn argument(&mut self, parent: &Frame, child: &Expr, rewritten: Expr) -> Expr {
        // Index 0 of a call's children is its callee.
        if !parent.counts_uses || parent.rewritten.is_empty() || !is_upcast(child) {
            return rewritten;
        }
        let uses = self.uses.entry(child.addr()).or_insert(0);
        *uses += 1;
        if *uses == 1 {
            return rewritten;
        }
        match rewritten.kind() {
            ExprKind::Call(call) => Expr::call(
                call.callee.clone(),
                call.args.clone(),
                call.attrs.clone(),
                rewritten.span(),
            ),
            _ => rewritten,
        }
    }
}

/// A `cast` to a type with more bits than its input's checked type.
fn is_upcast(expr: &Expr) -> bool {
    let Some(call) = expr.as_call() else {
        return false;
    };
    if call.callee.as_op().map(|op| op.name.as_str()) != Some("cast") {
        return false;
    }
    let from = call
        .args
        .first()
        .and_then(|arg| arg.checked_type())
        .and_then(|ty| ty.as_tensor())
        .map(|t| t.dtype.bits);
    let to = call
        .attrs
        .as_ref()
        .and_then(|attrs| attrs.get("dtype"))
        .and_then(|value| match value {
            relay_ir::AttrValue::DataType(dtype) => Some(dtype.bits),
            _ => None,
        });
    matches!((from, to), (Some(from), Some(to)) if from < to)
}
