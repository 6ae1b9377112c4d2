//! DOT (Graphviz) output, for those who have Graphviz: clusters are
//! `subgraph cluster_N`, edges carry the full type.

use crate::diff::Status;
use crate::model::{Graph, NodeKind};
use std::fmt::Write;

/// The DOT text of one graph.
pub fn render_dot(graph: &Graph) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "digraph {} {{", quote(&graph.function));
    header(&mut out);
    body(&mut out, graph, "n", None, "  ");
    out.push_str("}\n");
    out
}

/// The DOT text of a diff: the two graphs as clusters `before` and `after`,
/// changed nodes coloured.
pub fn render_dot_diff(
    before: &Graph,
    before_status: &[Status],
    after: &Graph,
    after_status: &[Status],
    summary: &str,
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "digraph {} {{", quote(&after.function));
    header(&mut out);
    let _ = writeln!(out, "  label={}; labelloc=t;", quote(summary));
    for (name, graph, status) in [
        ("before", before, before_status),
        ("after", after, after_status),
    ] {
        let _ = writeln!(
            out,
            "  subgraph cluster_{name} {{\n    label={};",
            quote(name)
        );
        body(&mut out, graph, &format!("{name}_n"), Some(status), "    ");
        out.push_str("  }\n");
    }
    out.push_str("}\n");
    out
}

fn header(out: &mut String) {
    out.push_str(
        "  node [shape=box, style=\"rounded,filled\", fontname=\"monospace\", fontsize=10];\n  \
         edge [fontname=\"monospace\", fontsize=8];\n",
    );
}

fn body(out: &mut String, graph: &Graph, prefix: &str, status: Option<&[Status]>, indent: &str) {
    // Nodes are declared inside their innermost cluster.
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); graph.clusters.len()];
    let mut top_clusters = Vec::new();
    for (c, cluster) in graph.clusters.iter().enumerate() {
        match cluster.parent {
            Some(p) => children[p].push(c),
            None => top_clusters.push(c),
        }
    }
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); graph.clusters.len()];
    let mut top_nodes = Vec::new();
    for (i, node) in graph.nodes.iter().enumerate() {
        match node.cluster {
            Some(c) => members[c].push(i),
            None => top_nodes.push(i),
        }
    }
    let node_line = |out: &mut String, i: usize, indent: &str| {
        let node = &graph.nodes[i];
        let mut label = node.label.clone();
        if let Some(b) = &node.binding {
            label = format!("{b} = {label}");
        }
        for d in &node.details {
            label.push('\n');
            label.push_str(d);
        }
        let mut attrs = format!("label={}, fillcolor=\"{}\"", quote(&label), fill(node.kind));
        match status.map(|s| s[i]) {
            Some(Status::Added) => attrs.push_str(", color=\"#188038\", penwidth=3"),
            Some(Status::Removed) => {
                attrs.push_str(", color=\"#d93025\", penwidth=3, style=\"rounded,filled,dashed\"")
            }
            Some(Status::Rewritten) => attrs.push_str(", color=\"#e37400\", penwidth=3"),
            _ => {}
        }
        let _ = writeln!(out, "{indent}{prefix}{i} [{attrs}];");
    };
    // Iterative walk of the cluster tree (clusters may nest deeply).
    enum Step {
        Open(usize, usize),
        Close(usize),
    }
    let mut stack: Vec<Step> = top_clusters
        .iter()
        .rev()
        .map(|&c| Step::Open(c, 0))
        .collect();
    for &i in &top_nodes {
        node_line(out, i, indent);
    }
    while let Some(step) = stack.pop() {
        match step {
            Step::Open(c, depth) => {
                let pad = format!("{indent}{}", "  ".repeat(depth));
                let cluster = &graph.clusters[c];
                let style = if cluster.kind == crate::model::ClusterKind::Primitive {
                    "filled"
                } else {
                    "dashed"
                };
                let _ = writeln!(
                    out,
                    "{pad}subgraph cluster_{prefix}{c} {{\n{pad}  label={}; style={style}; fillcolor=\"#f8f9fa\";",
                    quote(&cluster.label)
                );
                let inner = format!("{pad}  ");
                for &i in &members[c] {
                    node_line(out, i, &inner);
                }
                stack.push(Step::Close(depth));
                for &child in children[c].iter().rev() {
                    stack.push(Step::Open(child, depth + 1));
                }
            }
            Step::Close(depth) => {
                let _ = writeln!(out, "{indent}{}}}", "  ".repeat(depth));
            }
        }
    }
    for edge in &graph.edges {
        let _ = writeln!(
            out,
            "{indent}{prefix}{} -> {prefix}{} [label={}];",
            edge.from,
            edge.to,
            quote(&edge.label)
        );
    }
}

fn fill(kind: NodeKind) -> &'static str {
    match kind {
        NodeKind::OpCall => "#e8f0fe",
        NodeKind::Call => "#d2e3fc",
        NodeKind::Param => "#e6f4ea",
        NodeKind::Constant => "#f1f3f4",
        NodeKind::Tuple | NodeKind::Project => "#fef7e0",
        NodeKind::If | NodeKind::Match | NodeKind::PatternVar => "#fce8e6",
        NodeKind::Function | NodeKind::Value | NodeKind::Ref => "#f3e8fd",
        NodeKind::Output => "#ede7f6",
    }
}

/// A DOT string literal (newlines as `\n`, which DOT centres).
fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
