//! Grouping the dataflow graph into fused functions (TVM's
//! `GraphPartitioner`).
//!
//! Every numbered node starts in its own group; groups are merged with a
//! union-find whose root is the group of the last node (the one whose value
//! the fused function returns). A node is only ever merged into the group of
//! its immediate post-dominator, together with every node on the paths
//! between them, and only when all of those nodes pass a pattern test:
//!
//! * phase 0: an `OutEWiseFusable` node (conv2d, dense, ...) takes its
//!   element-wise consumers when everything up to the post-dominator is at
//!   most `Broadcast`; element-wise/broadcast nodes fuse into an injective
//!   or reducing post-dominator (the sink may be the group of an anchor);
//! * phase 1: the same for element-wise/broadcast nodes, and injective nodes
//!   and tuples fuse into their post-dominator when every path is at most
//!   `Injective`;
//! * phase 2: injective nodes join a tuple that is itself already part of an
//!   injective group.
//!
//! A merge is refused when the resulting group would exceed `max_depth`
//! nodes. At fuse level 0 nothing is merged. The bookkeeping (which group
//! object's pattern or size is consulted, including sizes of non-root
//! groups that are no longer updated) follows TVM exactly, since it decides
//! the result.

use super::dominator::TreeNode;
use super::graph::IndexedGraph;
use relay_ir::op::OpPattern;
// Tables consulted per node: the fast hasher, not SipHash.
use relay_ir::fxhash::FxSet as HashSet;

fn code(pattern: OpPattern) -> i32 {
    pattern.code()
}

/// A union-find group; group `i` starts as the group of node `i`.
#[derive(Clone, Debug)]
struct Group {
    parent: Option<usize>,
    pattern: OpPattern,
    /// The node whose value the group's function returns (root groups).
    root_ref: usize,
    /// The `OutEWiseFusable` node the group is built around, if any.
    anchor: Option<usize>,
    num_nodes: u64,
}

struct Partitioner<'a> {
    graph: &'a IndexedGraph,
    groups: Vec<Group>,
    visited: HashSet<usize>,
    max_depth: u64,
}

/// The result: for every node, the root group it belongs to. A root group
/// `g` returns the value of node `g` (its root reference).
pub(crate) fn partition(
    graph: &IndexedGraph,
    tree: Option<&[TreeNode]>,
    opt_level: i64,
    max_depth: u64,
) -> Result<Vec<usize>, String> {
    let groups = graph
        .nodes
        .iter()
        .enumerate()
        .map(|(index, node)| Group {
            parent: None,
            pattern: node.pattern,
            root_ref: index,
            anchor: (node.pattern == OpPattern::OutEWiseFusable).then_some(index),
            num_nodes: 1,
        })
        .collect();
    let mut partitioner = Partitioner {
        graph,
        groups,
        visited: HashSet::default(),
        max_depth,
    };
    if opt_level != 0 {
        let tree = tree.ok_or_else(|| "FuseOps: no post-dominator tree".to_string())?;
        for phase in 0..3 {
            partitioner.run_phase(tree, phase)?;
        }
    }
    let roots = (0..partitioner.groups.len())
        .map(|g| {
            let root = partitioner.find_root(g);
            partitioner.groups[root].root_ref
        })
        .collect();
    Ok(roots)
}

impl Partitioner<'_> {
    fn find_root(&mut self, group: usize) -> usize {
        let mut root = group;
        while let Some(parent) = self.groups[root].parent {
            root = parent;
        }
        // Path compression, as TVM does (it does not change any result).
        let mut current = group;
        while current != root {
            let next = self.groups[current].parent.unwrap_or(root);
            self.groups[current].parent = Some(root);
            current = next;
        }
        root
    }

    /// Whether every node reachable from `src`'s consumers, stopping at
    /// `sink`, has a root-group pattern accepted by `accept(pattern,
    /// is_sink)`.
    fn check_path(
        &mut self,
        src: usize,
        sink: usize,
        accept: impl Fn(OpPattern, bool) -> bool,
    ) -> bool {
        self.visited.clear();
        let mut pending: Vec<usize> = self.graph.nodes[src]
            .outputs
            .iter()
            .rev()
            .map(|&(n, _)| n)
            .collect();
        while let Some(node) = pending.pop() {
            if !self.visited.insert(node) {
                continue;
            }
            let root = self.find_root(node);
            let is_sink = node == sink;
            if !accept(self.groups[root].pattern, is_sink) {
                return false;
            }
            if is_sink {
                continue;
            }
            pending.extend(self.graph.nodes[node].outputs.iter().rev().map(|&(n, _)| n));
        }
        true
    }

    fn merge(&mut self, child: usize, parent: usize) -> Result<(), String> {
        let child = self.find_root(child);
        let parent = self.find_root(parent);
        if child == parent {
            return Ok(());
        }
        self.groups[parent].num_nodes += self.groups[child].num_nodes;
        self.groups[child].parent = Some(parent);
        if let Some(anchor) = self.groups[child].anchor {
            if self.groups[parent].anchor.is_some() {
                return Err("FuseOps: two anchored groups would be merged".into());
            }
            let (lhs, rhs) = (self.groups[child].pattern, self.groups[parent].pattern);
            if code(lhs) > code(OpPattern::Broadcast) && code(rhs) > code(OpPattern::Broadcast) {
                return Err("FuseOps: cannot merge two complex groups together".into());
            }
            self.groups[parent].anchor = Some(anchor);
            self.groups[parent].pattern = if code(lhs) > code(rhs) { lhs } else { rhs };
        }
        Ok(())
    }

    /// Merges `src` and every node on its paths to `sink` (exclusive) into
    /// the group of `sink`.
    fn commit_fuse(&mut self, src: usize, sink: usize) -> Result<(), String> {
        self.visited.clear();
        let mut pending = vec![src];
        while let Some(node) = pending.pop() {
            if node == sink || !self.visited.insert(node) {
                continue;
            }
            self.merge(node, sink)?;
            pending.extend(self.graph.nodes[node].outputs.iter().rev().map(|&(n, _)| n));
        }
        Ok(())
    }

    /// The size the group of `dom_parent` would have with `child` and the
    /// nodes between them (counting each node's own group size).
    fn fused_size_with(&mut self, child: usize, dom_parent: usize) -> u64 {
        self.visited.clear();
        let root = self.find_root(dom_parent);
        let mut total = self.groups[root].num_nodes;
        let mut pending = vec![child];
        while let Some(node) = pending.pop() {
            if node == dom_parent || !self.visited.insert(node) {
                continue;
            }
            total += self.groups[node].num_nodes;
            pending.extend(self.graph.nodes[node].outputs.iter().rev().map(|&(n, _)| n));
        }
        total
    }

    fn run_phase(&mut self, tree: &[TreeNode], phase: u32) -> Result<(), String> {
        // The tree has one node per graph node, so per group.
        for (nid, &dom) in tree.iter().enumerate() {
            let group_pattern = self.groups[nid].pattern;
            if group_pattern == OpPattern::Opaque {
                continue;
            }
            let Some(dom_parent) = dom.parent else {
                continue;
            };
            if self.fused_size_with(nid, dom_parent) > self.max_depth {
                continue;
            }
            if phase == 2 {
                if code(group_pattern) > code(OpPattern::Injective) {
                    continue;
                }
                let dom_root = self.find_root(dom_parent);
                let dom_root_pattern = self.groups[dom_root].pattern;
                if dom_root_pattern == OpPattern::Tuple {
                    continue;
                }
                if self.groups[dom_parent].pattern == OpPattern::Tuple
                    && code(dom_root_pattern) <= code(OpPattern::Injective)
                {
                    let injective = |p: OpPattern, _: bool| code(p) <= code(OpPattern::Injective);
                    if self.check_path(nid, dom_parent, injective) {
                        self.commit_fuse(nid, dom_parent)?;
                    }
                }
                continue;
            }
            if self.find_root(nid) == self.find_root(dom_parent) {
                continue;
            }
            if self.groups[dom_parent].pattern == OpPattern::Tuple {
                continue;
            }
            if group_pattern == OpPattern::OutEWiseFusable {
                if phase != 0 {
                    continue;
                }
                if dom.pattern == OpPattern::ElemWise {
                    let broadcast = |p: OpPattern, _: bool| code(p) <= code(OpPattern::Broadcast);
                    if self.check_path(nid, dom_parent, broadcast) {
                        self.commit_fuse(nid, dom_parent)?;
                    }
                }
            } else if code(group_pattern) <= code(OpPattern::Broadcast) {
                if code(dom.pattern) <= code(OpPattern::Injective)
                    || dom.pattern == OpPattern::CommReduce
                {
                    let accept = |p: OpPattern, is_sink: bool| {
                        if is_sink {
                            code(p) <= code(OpPattern::Injective)
                                || p == OpPattern::CommReduce
                                || p == OpPattern::OutEWiseFusable
                        } else {
                            code(p) <= code(OpPattern::Injective)
                        }
                    };
                    if self.check_path(nid, dom_parent, accept) {
                        self.commit_fuse(nid, dom_parent)?;
                    }
                }
            } else if group_pattern == OpPattern::Injective || group_pattern == OpPattern::Tuple {
                if phase != 1 {
                    continue;
                }
                let injective = |p: OpPattern, _: bool| code(p) <= code(OpPattern::Injective);
                if self.check_path(nid, dom_parent, injective) {
                    self.commit_fuse(nid, dom_parent)?;
                }
            }
        }
        Ok(())
    }
}
