//! Structural comparison of objects in (possibly different) object graphs:
//! two nodes are equal when their type keys, compact representations, keys
//! and compared fields are equal, following object references and tensor
//! blobs rather than comparing indices. Used by IR equality for objects the
//! IR keeps opaque (virtual devices, symbolic sizes), and by tests comparing
//! printed metadata tables as TVM's `structural_equal` compares modules.
//!
//! The fields compared are those TVM's `SEqualReduce` compares: never a
//! `span` or a `_checked_type_` (where a node came from and what InferType
//! wrote on it), and of a `relay.Constant` only its `data`.

use super::schema::{field_kind, FieldKind};
use super::{Node, ObjectGraph};
use std::collections::HashSet;

/// Whether TVM's structural equality compares field `name` of `type_key`.
fn is_compared(type_key: &str, name: &str) -> bool {
    match name {
        "span" | "_checked_type_" => false,
        _ => type_key != "relay.Constant" || name == "data",
    }
}

/// Whether node `ia` of `a` and node `ib` of `b` are structurally equal.
pub fn subgraphs_equal(a: &ObjectGraph, ia: usize, b: &ObjectGraph, ib: usize) -> bool {
    let mut seen = HashSet::new();
    let mut work = vec![(ia, ib)];
    while let Some((x, y)) = work.pop() {
        if !seen.insert((x, y)) {
            continue;
        }
        let (Some(nx), Some(ny)) = (a.nodes.get(x), b.nodes.get(y)) else {
            return false;
        };
        let compared = |node: &Node| {
            node.attrs
                .iter()
                .filter(|(name, _)| is_compared(&node.type_key, name))
                .count()
        };
        if nx.type_key != ny.type_key
            || nx.repr_bytes != ny.repr_bytes
            || nx.keys != ny.keys
            || nx.data.len() != ny.data.len()
            || compared(nx) != compared(ny)
        {
            return false;
        }
        work.extend(nx.data.iter().copied().zip(ny.data.iter().copied()));
        for (name, vx) in &nx.attrs {
            if !is_compared(&nx.type_key, name) {
                continue;
            }
            let Some(vy) = ny.attrs.get(name) else {
                return false;
            };
            match field_kind(&nx.type_key, name) {
                Some(FieldKind::Object) => match (vx.parse::<usize>(), vy.parse::<usize>()) {
                    (Ok(px), Ok(py)) => work.push((px, py)),
                    _ => return false,
                },
                Some(FieldKind::NdArray) => match (vx.parse::<usize>(), vy.parse::<usize>()) {
                    (Ok(px), Ok(py)) => match (a.b64ndarrays.get(px), b.b64ndarrays.get(py)) {
                        (Some(tx), Some(ty)) if tx == ty => {}
                        _ => return false,
                    },
                    _ => return false,
                },
                _ if vx != vy => return false,
                _ => {}
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table of one `relay.Constant` (blob `data`) with the given span and
    /// checked type; blob 0 holds `[1f]`, blob 1 `[2f]`.
    fn constant_table(data: usize, span: &str, checked_type: &str) -> ObjectGraph {
        let one = "P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAAAQAAAAIgAQABAAAAAAAAAAQAAAAAAAAAAACAPw==";
        let two = "P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAAAQAAAAIgAQABAAAAAAAAAAQAAAAAAAAAAAAAQA==";
        ObjectGraph::parse(&format!(
            r#"{{"root": 1, "nodes": [
              {{"type_key": ""}},
              {{"type_key": "Map", "keys": ["relay.Constant"], "data": [2]}},
              {{"type_key": "Array", "data": [3]}},
              {{"type_key": "relay.Constant", "attrs": {{"data": "{data}", "span": "{span}",
                "_checked_type_": "{checked_type}", "virtual_device_": "0"}}}},
              {{"type_key": "SourceName", "repr_str": "GeneratedSource"}},
              {{"type_key": "Span", "attrs": {{"source_name": "4", "line": "3", "column": "7",
                "end_line": "3", "end_column": "9"}}}},
              {{"type_key": "Span", "attrs": {{"source_name": "4", "line": "8", "column": "1",
                "end_line": "8", "end_column": "2"}}}}
            ], "b64ndarrays": ["{one}", "{two}"], "attrs": {{"tvm_version": "0.13.0"}}}}"#
        ))
        .expect("the table parses")
    }

    #[test]
    fn constants_compare_by_their_data_only() {
        let here = constant_table(0, "5", "0");
        let elsewhere = constant_table(0, "6", "0");
        let without_span = constant_table(0, "0", "0");
        let other_data = constant_table(1, "5", "0");
        assert!(subgraphs_equal(&here, 3, &elsewhere, 3));
        assert!(subgraphs_equal(&here, 3, &without_span, 3));
        assert!(subgraphs_equal(&here, 1, &elsewhere, 1));
        assert!(!subgraphs_equal(&here, 3, &other_data, 3));
        // Spans themselves still compare field by field.
        assert!(!subgraphs_equal(&here, 5, &here, 6));
    }
}
