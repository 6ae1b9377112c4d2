//! `rewrite` and `partition`: TVM's `PatternRewriter` and
//! `PatternPartitioner`.
//!
//! Both group the matches of a pattern (see [`crate::group`]), then rebuild
//! the expression bottom-up; at the root of each group a rewrite calls its
//! callback with the original node, the node rebuilt over the rewritten
//! children and what each pattern node matched (rewritten), and a partition
//! replaces the root by a call to the group's function.

use crate::group::{group_matches, PARTITIONED_FROM_PATTERN};
use crate::matcher::NodeMap;
use crate::pattern::{Pattern, PatternKind};
use relay_ir::equal::structural_equal;
use relay_ir::rewrite::{children, post_order, with_children};
use relay_ir::{AttrValue, DictAttrs, Expr, ExprKind, Function, FunctionData, IRModule};
use std::collections::HashMap;

/// The callback of a rewrite: `(pre, post, node_map) -> replacement`.
pub type RewriteFn = dyn Fn(&Expr, &Expr, &NodeMap) -> Expr + Send + Sync;

/// TVM's `DFPatternCallback`.
pub struct Callback {
    pub pattern: Pattern,
    pub function: Box<RewriteFn>,
    /// Infer types before each round of this callback (so the callback and
    /// type patterns see checked types).
    pub require_type: bool,
    /// Stop applying this callback once it has changed the expression.
    pub rewrite_once: bool,
}

impl Callback {
    pub fn new(
        pattern: Pattern,
        function: impl Fn(&Expr, &Expr, &NodeMap) -> Expr + Send + Sync + 'static,
    ) -> Callback {
        Callback {
            pattern,
            function: Box::new(function),
            require_type: false,
            rewrite_once: false,
        }
    }

    pub fn require_type(mut self, yes: bool) -> Callback {
        self.require_type = yes;
        self
    }

    pub fn rewrite_once(mut self, yes: bool) -> Callback {
        self.rewrite_once = yes;
        self
    }
}

/// How many callback applications `rewrite` allows before it gives up
/// (TVM's limit).
pub const MAX_REWRITE_ROUNDS: usize = 100;

/// `rewrite(callbacks, expr, mod)`: applies the callbacks in order, again
/// and again, until a round changes nothing.
pub fn rewrite(
    callbacks: &[Callback],
    expr: &Expr,
    module: Option<&IRModule>,
) -> Result<Expr, String> {
    let mut post = expr.clone();
    let mut count = 0;
    let mut done = vec![false; callbacks.len()];
    loop {
        let last = post.clone();
        for (i, callback) in callbacks.iter().enumerate() {
            if done[i] {
                continue;
            }
            let before = post.clone();
            if callback.require_type {
                post = infer_with_module(&post, module)?;
            }
            post = rewrite_once_with(callback, &post);
            count += 1;
            if callback.rewrite_once && !structural_equal(&before, &post, true) {
                done[i] = true;
            }
        }
        if structural_equal(&last, &post, true) {
            break;
        }
        if count >= MAX_REWRITE_ROUNDS {
            return Err("Observed 100 rewrite passes, possible conflicting passes?".to_string());
        }
    }
    Ok(post)
}

/// One round of one callback.
fn rewrite_once_with(callback: &Callback, expr: &Expr) -> Expr {
    let groups = group_matches(&callback.pattern, expr);
    if groups.groups.is_empty() {
        return expr.clone();
    }
    rebuild(expr, |pre, post, memo| match groups.rooted_at(pre) {
        Some(group) => {
            // The root itself is not in the memo yet: it maps to `post`.
            let node_map = group.matched.map_exprs(|e| {
                if e.ptr_eq(pre) {
                    return post.clone();
                }
                memo.get(&e.addr()).cloned().unwrap_or_else(|| e.clone())
            });
            (callback.function)(pre, &post, &node_map)
        }
        None => post,
    })
}

/// `partition(pattern, expr, attrs, check)`: replaces each group whose root
/// passes `check` by a call to its function, with
/// `PartitionedFromPattern` and `attrs` on the function.
pub fn partition(
    pattern: &Pattern,
    expr: &Expr,
    attrs: &[(String, AttrValue)],
    check: &dyn Fn(&Expr) -> bool,
) -> Expr {
    if matches!(pattern.kind(), PatternKind::Function { .. }) {
        // TVM warns and skips: a function that is not called is not a region.
        return expr.clone();
    }
    let groups = group_matches(pattern, expr);
    if groups.groups.is_empty() {
        return expr.clone();
    }
    rebuild(expr, |pre, post, memo| match groups.rooted_at(pre) {
        Some(group) if check(pre) => {
            let args: Vec<Expr> = group
                .args
                .iter()
                .map(|a| memo.get(&a.addr()).cloned().unwrap_or_else(|| a.clone()))
                .collect();
            let data = group.function.data();
            let mut dict = DictAttrs::default();
            dict.set(PARTITIONED_FROM_PATTERN, AttrValue::Str(group.name.clone()));
            for (key, value) in attrs {
                dict.set(key, value.clone());
            }
            let function = Function::new(
                FunctionData {
                    params: data.params.clone(),
                    body: data.body.clone(),
                    ret_type: None,
                    type_params: Vec::new(),
                    attrs: dict,
                    virtual_device: None,
                },
                None,
            );
            Expr::call(function.into_expr(), args, None, None)
        }
        _ => post,
    })
}

/// Rebuilds `root` bottom-up; `at` sees each original node, the node
/// rebuilt over the new children and the original → new memo so far.
fn rebuild(root: &Expr, mut at: impl FnMut(&Expr, Expr, &HashMap<usize, Expr>) -> Expr) -> Expr {
    let mut memo: HashMap<usize, Expr> = HashMap::new();
    for node in post_order(root) {
        let new_children: Vec<Expr> = children(&node)
            .into_iter()
            .map(|c| memo.get(&c.addr()).cloned().unwrap_or_else(|| c.clone()))
            .collect();
        let rebuilt = with_children(&node, &new_children);
        let replacement = at(&node, rebuilt, &memo);
        memo.insert(node.addr(), replacement);
    }
    memo.remove(&root.addr()).unwrap_or_else(|| root.clone())
}

/// TVM's `InferTypeWithModule`: the expression's types, inferred with the
/// module's globals.
pub fn infer_with_module(expr: &Expr, module: Option<&IRModule>) -> Result<Expr, String> {
    let (typed, diagnostics) = relay_infer::infer_expr(expr, module);
    if let Some(error) = diagnostics.iter().find(|d| d.is_error()) {
        return Err(error.message.clone());
    }
    Ok(typed)
}

/// Whether the function was made by a partition.
pub fn is_partitioned(expr: &Expr) -> bool {
    matches!(expr.kind(), ExprKind::Function(f) if f.attrs.get(PARTITIONED_FROM_PATTERN).is_some())
}
