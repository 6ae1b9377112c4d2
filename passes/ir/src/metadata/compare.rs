//! Structural comparison of objects in (possibly different) object graphs:
//! two nodes are equal when their type keys, compact representations, keys
//! and fields are equal, following object references and tensor blobs rather
//! than comparing indices. Used by IR equality for objects the IR keeps
//! opaque (virtual devices, symbolic sizes).

use super::schema::{field_kind, FieldKind};
use super::ObjectGraph;
use std::collections::HashSet;

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
        if nx.type_key != ny.type_key
            || nx.repr_bytes != ny.repr_bytes
            || nx.keys != ny.keys
            || nx.data.len() != ny.data.len()
            || nx.attrs.len() != ny.attrs.len()
        {
            return false;
        }
        work.extend(nx.data.iter().copied().zip(ny.data.iter().copied()));
        for (name, vx) in &nx.attrs {
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
