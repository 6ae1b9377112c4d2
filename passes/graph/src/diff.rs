//! What a pass did to a function's graph, matched structurally (names of
//! variables play no part):
//!
//! 1. Every node gets a hash of what it computes: its kind, label,
//!    details and content with the hashes of its inputs (a parameter of a
//!    called function is its argument, so fusing calls into `Primitive`
//!    functions changes nothing that is computed). Nodes of equal hash pair
//!    up, in node order: unchanged.
//! 2. Walking the new graph from its sources, a node not yet matched pairs
//!    with an unmatched old node of the same kind and label that consumes
//!    the old partner of one of its inputs (most shared inputs wins):
//!    rewritten, or unchanged when it differs from its partner only
//!    upstream.
//! 3. What is left is added (new graph) or removed (old graph).

use crate::model::{ClusterKind, Graph, NodeKind};
use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, VecDeque};
use std::hash::{Hash, Hasher};

/// What became of a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    Unchanged,
    Added,
    Removed,
    Rewritten,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Unchanged => "unchanged",
            Status::Added => "added",
            Status::Removed => "removed",
            Status::Rewritten => "rewritten",
        }
    }
}

/// How many nodes of each status (a pair of matched nodes counts once).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiffStats {
    pub added: usize,
    pub removed: usize,
    pub rewritten: usize,
    pub unchanged: usize,
}

/// Two graphs of one function, before and after a pipeline, matched.
#[derive(Debug, Clone)]
pub struct GraphDiff {
    /// What ran (the pipeline's text), for the summary.
    pub title: String,
    pub before: Graph,
    pub after: Graph,
    pub before_status: Vec<Status>,
    pub after_status: Vec<Status>,
    /// For each node of `after`, its partner in `before`.
    pub after_match: Vec<Option<usize>>,
}

impl GraphDiff {
    pub fn stats(&self) -> DiffStats {
        let mut stats = DiffStats::default();
        for s in &self.after_status {
            match s {
                Status::Added => stats.added += 1,
                Status::Rewritten => stats.rewritten += 1,
                Status::Unchanged => stats.unchanged += 1,
                Status::Removed => {}
            }
        }
        stats.removed = self
            .before_status
            .iter()
            .filter(|s| **s == Status::Removed)
            .count();
        stats
    }

    /// One line saying what the pipeline did, e.g. `FuseOps: 465 calls
    /// grouped into 156 primitive functions`.
    pub fn summary(&self) -> String {
        let before = self.before.counts();
        let after = self.after.counts();
        let mut parts = Vec::new();
        if after.primitive_functions > before.primitive_functions {
            let fused_before = calls_in_primitives(&self.before);
            let fused_after = calls_in_primitives(&self.after);
            parts.push(format!(
                "{} grouped into {}",
                plural(fused_after.saturating_sub(fused_before), "call"),
                plural(
                    after.primitive_functions - before.primitive_functions,
                    "primitive function"
                )
            ));
        } else if after.primitive_functions < before.primitive_functions {
            parts.push(format!(
                "{} primitive functions dissolved",
                before.primitive_functions - after.primitive_functions
            ));
        }
        let calls = match after.op_calls.cmp(&before.op_calls) {
            std::cmp::Ordering::Less => format!(
                "{} removed ({} → {})",
                plural(before.op_calls - after.op_calls, "call"),
                before.op_calls,
                after.op_calls
            ),
            std::cmp::Ordering::Greater => format!(
                "{} added ({} → {})",
                plural(after.op_calls - before.op_calls, "call"),
                before.op_calls,
                after.op_calls
            ),
            std::cmp::Ordering::Equal if parts.is_empty() => {
                format!("{}, none added or removed", plural(after.op_calls, "call"))
            }
            std::cmp::Ordering::Equal => String::new(),
        };
        if !calls.is_empty() {
            parts.push(calls);
        }
        let stats = self.stats();
        if stats.rewritten > 0 && parts.iter().all(|p| !p.contains("grouped")) {
            parts.push(format!("{} rewritten", plural(stats.rewritten, "node")));
        }
        format!("{}: {}", self.title, parts.join("; "))
    }

    /// The node counts per status, as a line.
    pub fn stats_line(&self) -> String {
        let s = self.stats();
        format!(
            "nodes: {} added, {} removed, {} rewritten, {} unchanged",
            s.added, s.removed, s.rewritten, s.unchanged
        )
    }
}

/// `1 call`, `2 calls`.
fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// Operator calls inside a fused function.
fn calls_in_primitives(graph: &Graph) -> usize {
    graph
        .nodes
        .iter()
        .enumerate()
        .filter(|(i, n)| {
            n.kind == NodeKind::OpCall
                && graph
                    .cluster_path(*i)
                    .iter()
                    .any(|&c| graph.clusters[c].kind == ClusterKind::Primitive)
        })
        .count()
}

/// The inputs of each node by port, and its consumers.
struct Wiring {
    inputs: Vec<Vec<usize>>,
    consumers: Vec<Vec<usize>>,
    /// The node a parameter of a called function stands for (itself for
    /// every other node).
    source: Vec<usize>,
    /// Whether the node only forwards its argument (a called function's
    /// parameter): it takes no part in matching.
    forwards: Vec<bool>,
}

fn wiring(graph: &Graph) -> Wiring {
    let n = graph.nodes.len();
    let mut inputs: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
    let mut consumers: Vec<Vec<usize>> = vec![Vec::new(); n];
    for e in &graph.edges {
        inputs[e.to].push((e.port, e.from));
    }
    let forwards: Vec<bool> = (0..n)
        .map(|i| {
            graph.nodes[i].kind == NodeKind::Param
                && graph.nodes[i].cluster.is_some()
                && inputs[i].len() == 1
        })
        .collect();
    // Follow chains of forwarding parameters to what they forward.
    let source: Vec<usize> = (0..n)
        .map(|i| {
            let mut s = i;
            let mut steps = 0;
            while forwards[s] && steps <= n {
                s = inputs[s][0].1;
                steps += 1;
            }
            s
        })
        .collect();
    let inputs: Vec<Vec<usize>> = inputs
        .into_iter()
        .map(|mut ins| {
            ins.sort_by_key(|&(port, _)| port);
            ins.into_iter().map(|(_, from)| source[from]).collect()
        })
        .collect();
    for (to, ins) in inputs.iter().enumerate() {
        if forwards[to] {
            continue;
        }
        for &from in ins {
            consumers[from].push(to);
        }
    }
    Wiring {
        inputs,
        consumers,
        source,
        forwards,
    }
}

/// Nodes in an order where inputs come first (nodes on cycles last).
fn topological(graph: &Graph, wiring: &Wiring) -> Vec<usize> {
    let n = graph.nodes.len();
    let mut indegree: Vec<usize> = wiring.inputs.iter().map(Vec::len).collect();
    let mut succs: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (to, ins) in wiring.inputs.iter().enumerate() {
        for &from in ins {
            succs[from].push(to);
        }
    }
    let mut queue: VecDeque<usize> = (0..n).filter(|&i| indegree[i] == 0).collect();
    let mut order = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    while let Some(v) = queue.pop_front() {
        order.push(v);
        seen[v] = true;
        for &w in &succs[v] {
            indegree[w] -= 1;
            if indegree[w] == 0 {
                queue.push_back(w);
            }
        }
    }
    order.extend((0..n).filter(|&i| !seen[i]));
    order
}

/// What a node computes by itself, names aside.
fn local_hash(graph: &Graph, i: usize, param_index: &HashMap<usize, usize>) -> u64 {
    let node = &graph.nodes[i];
    let mut h = DefaultHasher::new();
    node.kind.hash(&mut h);
    match node.kind {
        // Parameters are matched by position, not name.
        NodeKind::Param | NodeKind::PatternVar => param_index.get(&i).hash(&mut h),
        _ => {
            node.label.hash(&mut h);
            node.details.hash(&mut h);
            node.content.hash(&mut h);
        }
    }
    h.finish()
}

fn structural_hashes(graph: &Graph, wiring: &Wiring, order: &[usize]) -> (Vec<u64>, Vec<u64>) {
    let n = graph.nodes.len();
    // The drawn function's parameters, and pattern variables, by position.
    let mut param_index = HashMap::new();
    let mut next = 0;
    for (i, node) in graph.nodes.iter().enumerate() {
        if matches!(node.kind, NodeKind::Param | NodeKind::PatternVar) && !wiring.forwards[i] {
            param_index.insert(i, next);
            next += 1;
        }
    }
    let local: Vec<u64> = (0..n).map(|i| local_hash(graph, i, &param_index)).collect();
    let mut full = vec![0u64; n];
    for &i in order {
        let mut h = DefaultHasher::new();
        local[i].hash(&mut h);
        for &input in &wiring.inputs[i] {
            full[input].hash(&mut h);
        }
        full[i] = h.finish();
    }
    (local, full)
}

/// Matches `after` against `before`; `title` names what ran.
pub fn diff_graphs(title: &str, before: Graph, after: Graph) -> GraphDiff {
    let wb = wiring(&before);
    let wa = wiring(&after);
    let order_b = topological(&before, &wb);
    let order_a = topological(&after, &wa);
    let (local_b, full_b) = structural_hashes(&before, &wb, &order_b);
    let (local_a, full_a) = structural_hashes(&after, &wa, &order_a);

    let mut after_match: Vec<Option<usize>> = vec![None; after.nodes.len()];
    let mut before_match: Vec<Option<usize>> = vec![None; before.nodes.len()];
    let mut after_status = vec![Status::Added; after.nodes.len()];

    // 1. Same computation.
    let mut by_hash: HashMap<u64, VecDeque<usize>> = HashMap::new();
    for &b in &order_b {
        if !wb.forwards[b] {
            by_hash.entry(full_b[b]).or_default().push_back(b);
        }
    }
    for &a in &order_a {
        if wa.forwards[a] {
            continue;
        }
        if let Some(b) = by_hash.get_mut(&full_a[a]).and_then(VecDeque::pop_front) {
            after_match[a] = Some(b);
            before_match[b] = Some(a);
            after_status[a] = Status::Unchanged;
        }
    }
    // 2. Same place in the dataflow.
    for &a in &order_a {
        if wa.forwards[a] || after_match[a].is_some() {
            continue;
        }
        let node = &after.nodes[a];
        let mut best: Option<(usize, usize)> = None;
        for &input in &wa.inputs[a] {
            let Some(old_input) = after_match[input] else {
                continue;
            };
            for &candidate in &wb.consumers[old_input] {
                let old = &before.nodes[candidate];
                if before_match[candidate].is_some()
                    || old.kind != node.kind
                    || old.label != node.label
                {
                    continue;
                }
                let shared = wa.inputs[a]
                    .iter()
                    .zip(&wb.inputs[candidate])
                    .filter(|(x, y)| after_match[**x] == Some(**y))
                    .count();
                let better = match best {
                    None => true,
                    Some((s, c)) => shared > s || (shared == s && candidate < c),
                };
                if better {
                    best = Some((shared, candidate));
                }
            }
        }
        // The function's result is always the same node.
        if best.is_none() && node.kind == NodeKind::Output {
            best = before
                .nodes
                .iter()
                .position(|n| n.kind == NodeKind::Output)
                .filter(|&b| before_match[b].is_none())
                .map(|b| (0, b));
        }
        if let Some((_, b)) = best {
            after_match[a] = Some(b);
            before_match[b] = Some(a);
            let same_inputs = wa.inputs[a].len() == wb.inputs[b].len()
                && wa.inputs[a]
                    .iter()
                    .zip(&wb.inputs[b])
                    .all(|(x, y)| after_match[*x] == Some(*y));
            after_status[a] = if local_a[a] == local_b[b] && same_inputs {
                Status::Unchanged
            } else {
                Status::Rewritten
            };
        }
    }
    // Forwarding parameters take the status of what they forward.
    for a in 0..after.nodes.len() {
        if wa.forwards[a] {
            after_status[a] = after_status[wa.source[a]];
        }
    }
    let mut before_status: Vec<Status> = before_match
        .iter()
        .map(|m| match m {
            Some(a) => after_status[*a],
            None => Status::Removed,
        })
        .collect();
    for b in 0..before.nodes.len() {
        if wb.forwards[b] {
            before_status[b] = before_status[wb.source[b]];
        }
    }
    GraphDiff {
        title: title.to_string(),
        before,
        after,
        before_status,
        after_status,
        after_match,
    }
}
