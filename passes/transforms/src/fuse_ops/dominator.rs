//! The post-dominator tree of the dataflow graph (TVM's `DominatorTree`).
//!
//! A node's immediate post-dominator is the nearest node that every path
//! from it to the function's result goes through. Because the graph is
//! acyclic and numbered operands-first, one sweep from the last node to the
//! first suffices: a node's parent in the tree is the least common ancestor
//! (in the tree built so far) of all its consumers. Externally referenced
//! nodes, and nodes whose consumers have no common ancestor, are roots.
//!
//! Alongside the parent, each tree node keeps the "worst" (highest) pattern
//! met on the way to it: the patterns of its uses and of every tree node
//! passed while climbing to the common ancestor. The partitioner uses it to
//! decide whether the whole region up to the post-dominator can be fused.

use super::graph::IndexedGraph;
use relay_ir::op::OpPattern;

/// One node of the post-dominator tree (same index as the graph node).
#[derive(Clone, Copy, Debug)]
pub(crate) struct TreeNode {
    pub parent: Option<usize>,
    pub depth: usize,
    pub pattern: OpPattern,
}

fn worse(lhs: OpPattern, rhs: OpPattern) -> OpPattern {
    if lhs.code() > rhs.code() {
        lhs
    } else {
        rhs
    }
}

/// Builds the post-dominator tree of `graph`.
pub(crate) fn post_dominator_tree(graph: &IndexedGraph) -> Result<Vec<TreeNode>, String> {
    let count = graph.nodes.len();
    let mut tree: Vec<Option<TreeNode>> = vec![None; count];
    for index in (0..count).rev() {
        let node = &graph.nodes[index];
        let tree_node = if node.extern_ref {
            TreeNode {
                parent: None,
                depth: 1,
                pattern: OpPattern::Opaque,
            }
        } else {
            let mut pattern = OpPattern::ElemWise;
            let parent = common_ancestor_of_uses(&tree, &node.outputs, &mut pattern)?;
            let depth = match parent {
                Some(p) => tree[p].map_or(1, |t| t.depth + 1),
                None => 1,
            };
            TreeNode {
                parent,
                depth,
                pattern,
            }
        };
        tree[index] = Some(tree_node);
    }
    tree.into_iter()
        .map(|t| t.ok_or_else(|| "FuseOps: incomplete post-dominator tree".to_string()))
        .collect()
}

/// The least common ancestor of all consumers, widening `pattern` with the
/// use patterns and the tree nodes climbed over.
fn common_ancestor_of_uses(
    tree: &[Option<TreeNode>],
    uses: &[(usize, OpPattern)],
    pattern: &mut OpPattern,
) -> Result<Option<usize>, String> {
    let Some(&(first, first_pattern)) = uses.first() else {
        return Ok(None);
    };
    let known = |index: usize| -> Result<usize, String> {
        match tree.get(index) {
            Some(Some(_)) => Ok(index),
            _ => Err("FuseOps: a node is used by an earlier node".to_string()),
        }
    };
    let mut ancestor = Some(known(first)?);
    *pattern = worse(*pattern, first_pattern);
    for &(consumer, use_pattern) in &uses[1..] {
        let consumer = known(consumer)?;
        ancestor = ancestor.and_then(|a| common_ancestor(tree, a, consumer, pattern));
        *pattern = worse(*pattern, use_pattern);
    }
    Ok(ancestor)
}

/// The least common ancestor of two tree nodes (`None` when they are in
/// different trees), widening `pattern` with every node climbed over.
fn common_ancestor(
    tree: &[Option<TreeNode>],
    mut lhs: usize,
    mut rhs: usize,
    pattern: &mut OpPattern,
) -> Option<usize> {
    while lhs != rhs {
        let left = tree.get(lhs).copied().flatten()?;
        let right = tree.get(rhs).copied().flatten()?;
        if left.depth < right.depth {
            *pattern = worse(*pattern, right.pattern);
            rhs = right.parent?;
        } else if right.depth < left.depth {
            *pattern = worse(*pattern, left.pattern);
            lhs = left.parent?;
        } else {
            *pattern = worse(*pattern, left.pattern);
            *pattern = worse(*pattern, right.pattern);
            lhs = left.parent?;
            rhs = right.parent?;
        }
    }
    Some(lhs)
}
