//! JSON output: nodes, edges, clusters and source spans, for scripts and
//! for the editors' panels (`relay/graph` answers this).

use crate::diff::{GraphDiff, Status};
use crate::model::{Graph, SourceSpan};
use serde_json::{json, Map, Value};

fn span(span: Option<SourceSpan>) -> Value {
    match span {
        Some(s) => json!({"start": s.start, "end": s.end}),
        None => Value::Null,
    }
}

/// The graph as JSON. Keys: `function`, `nodes` (`id`, `kind`, `label`,
/// `details`, `binding`, `cluster`, `span`), `edges` (`from`, `to`, `port`,
/// `type`), `clusters` (`id`, `kind`, `label`, `parent`, `span`) and
/// `counts` (`opCalls`, `primitiveFunctions`).
pub fn graph_json(graph: &Graph) -> Value {
    graph_json_with_status(graph, None)
}

fn graph_json_with_status(graph: &Graph, status: Option<&[Status]>) -> Value {
    let nodes: Vec<Value> = graph
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let mut node = Map::new();
            node.insert("id".into(), json!(i));
            node.insert("kind".into(), json!(n.kind.name()));
            node.insert("label".into(), json!(n.label));
            node.insert("details".into(), json!(n.details));
            node.insert("binding".into(), json!(n.binding));
            node.insert("cluster".into(), json!(n.cluster));
            node.insert("span".into(), span(n.span));
            if let Some(status) = status {
                node.insert("status".into(), json!(status[i].name()));
            }
            Value::Object(node)
        })
        .collect();
    let edges: Vec<Value> = graph
        .edges
        .iter()
        .map(|e| json!({"from": e.from, "to": e.to, "port": e.port, "type": e.label}))
        .collect();
    let clusters: Vec<Value> = graph
        .clusters
        .iter()
        .enumerate()
        .map(|(i, c)| {
            json!({"id": i, "kind": c.kind.name(), "label": c.label, "parent": c.parent, "span": span(c.span)})
        })
        .collect();
    let counts = graph.counts();
    json!({
        "function": graph.function,
        "nodes": nodes,
        "edges": edges,
        "clusters": clusters,
        "counts": {"opCalls": counts.op_calls, "primitiveFunctions": counts.primitive_functions},
    })
}

/// A diff as JSON: `summary`, `stats` (`added`, `removed`, `rewritten`,
/// `unchanged`), `before` and `after` (graphs whose nodes have a
/// `status`), `matches` (`[after, before]` node pairs).
pub fn diff_json(diff: &GraphDiff) -> Value {
    let stats = diff.stats();
    json!({
        "summary": diff.summary(),
        "stats": {
            "added": stats.added,
            "removed": stats.removed,
            "rewritten": stats.rewritten,
            "unchanged": stats.unchanged,
        },
        "before": graph_json_with_status(&diff.before, Some(&diff.before_status)),
        "after": graph_json_with_status(&diff.after, Some(&diff.after_status)),
        "matches": diff
            .after_match
            .iter()
            .enumerate()
            .filter_map(|(a, b)| b.map(|b| json!([a, b])))
            .collect::<Vec<_>>(),
    })
}
