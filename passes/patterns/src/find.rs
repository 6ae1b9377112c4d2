//! Every place a pattern matches: what the editor's "Find pattern" shows.
//! Unlike `partition`, matches may overlap (each node where the pattern
//! matches is reported), since the user is searching, not rewriting.

use crate::graph::ExprGraph;
use crate::matcher::Matcher;
use crate::pattern::{Pattern, PatternKind};
use relay_ir::{Expr, ExprKind};
use std::collections::HashSet;

/// One match.
#[derive(Debug, Clone)]
pub struct Found {
    /// The expression the pattern matched at.
    pub root: Expr,
    /// The other expressions the pattern's non-wildcard nodes matched (the
    /// body of the match), each once.
    pub parts: Vec<Expr>,
}

/// Every expression under `root` that `pattern` matches, in post-order
/// (inner matches first). Operator nodes are skipped: a pattern that is
/// just an operator name would otherwise match every use of the callee.
pub fn find_all(pattern: &Pattern, root: &Expr) -> Vec<Found> {
    let graph = ExprGraph::new(root);
    let mut matcher = Matcher::new(Some(&graph));
    let mut out = Vec::new();
    for node in &graph.nodes {
        let expr = &node.expr;
        if matches!(expr.kind(), ExprKind::Op(_)) {
            continue;
        }
        if !matcher.match_at(pattern, expr) {
            continue;
        }
        let mut seen: HashSet<usize> = HashSet::from([expr.addr()]);
        let mut parts = Vec::new();
        for (p, matched) in matcher.memo().iter() {
            if matches!(p.kind(), PatternKind::Wildcard) {
                continue;
            }
            for e in matched {
                if !matches!(e.kind(), ExprKind::Op(_)) && seen.insert(e.addr()) {
                    parts.push(e.clone());
                }
            }
        }
        out.push(Found {
            root: expr.clone(),
            parts,
        });
    }
    out
}
