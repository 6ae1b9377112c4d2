//! A layered (Sugiyama-style) layout of a graph with nested clusters,
//! linear-ish in the size of the graph. Clusters are laid out inside out:
//! each cluster's nodes and inner clusters are laid out on their own, and
//! the cluster is then one block in the layout around it, so a fused
//! function is a compact box that nothing else overlaps. Each level is
//! laid out in four steps:
//!
//! 1. **Layering** by longest path from the sources; then every element
//!    moves down to just above its first consumer, so a weight (and what
//!    prepares it) sits beside the call that reads it. What a cluster
//!    receives from outside (a fused function's parameters) stays in its
//!    top layer. Cycles (a closure that calls itself) are broken by
//!    reversing their back edges.
//! 2. **Long edges** are split by one dummy vertex per layer they cross.
//! 3. **Crossing reduction**: a few down and up sweeps ordering each layer
//!    by the barycenter of the neighbours in the layer before.
//! 4. **Coordinates** by Sugiyama's priority method: long edges first, then
//!    by how many neighbours pull on a vertex, sources last, each moved
//!    toward the mean position of its neighbours without passing the ones
//!    placed before it.
//!
//! Everything is deterministic: ties keep the order of the node ids.

use crate::model::{Graph, Node};

/// Width of one character of the 12px monospace font the writers use.
pub const CHAR_WIDTH: f64 = 7.2;
/// Height of one line of text in a node.
pub const LINE_HEIGHT: f64 = 15.0;
const NODE_PAD_X: f64 = 10.0;
const NODE_PAD_Y: f64 = 6.0;
const MIN_NODE_WIDTH: f64 = 40.0;
/// Horizontal gap between neighbours in a layer.
const NODE_GAP: f64 = 24.0;
/// Vertical gap between layers (room for edge labels).
const LAYER_GAP: f64 = 40.0;
/// Room between a cluster's border and what it holds; its title sits in
/// the top padding.
pub const CLUSTER_PAD: f64 = 10.0;
pub const CLUSTER_TITLE: f64 = 16.0;
const MARGIN: f64 = 20.0;
/// Width of the column a dummy vertex (a long edge passing a layer) takes.
const DUMMY_WIDTH: f64 = 8.0;
const ORDER_SWEEPS: usize = 4;
const COORDINATE_SWEEPS: usize = 4;
/// Lines of details drawn on a node; more are summed up as `…`.
pub const MAX_DETAIL_LINES: usize = 3;

/// A rectangle, top-left corner and size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl Rect {
    pub fn center_x(&self) -> f64 {
        self.x + self.w / 2.0
    }

    pub fn bottom(&self) -> f64 {
        self.y + self.h
    }

    pub fn right(&self) -> f64 {
        self.x + self.w
    }

    /// Whether the two rectangles share interior points.
    pub fn overlaps(&self, other: &Rect) -> bool {
        self.x < other.right()
            && other.x < self.right()
            && self.y < other.bottom()
            && other.y < self.bottom()
    }

    /// Whether `other` lies inside this rectangle.
    pub fn contains(&self, other: &Rect) -> bool {
        self.x <= other.x
            && self.y <= other.y
            && other.right() <= self.right()
            && other.bottom() <= self.bottom()
    }
}

/// The drawn route of an edge, from its source to its target.
#[derive(Debug, Clone, PartialEq)]
pub struct EdgeRoute {
    pub points: Vec<(f64, f64)>,
}

/// Where everything goes.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    pub nodes: Vec<Rect>,
    /// Per edge of the graph, in its order.
    pub edges: Vec<EdgeRoute>,
    /// Per cluster; `None` for a cluster without nodes.
    pub clusters: Vec<Option<Rect>>,
    pub width: f64,
    pub height: f64,
}

/// The lines of text a node shows: the label (with its `let` name) and
/// its details.
pub fn node_lines(node: &Node) -> Vec<String> {
    let mut first = node.label.clone();
    if let Some(binding) = &node.binding {
        first = format!("{binding} = {first}");
    }
    let mut lines = vec![first];
    if node.details.len() > MAX_DETAIL_LINES {
        lines.extend(node.details[..MAX_DETAIL_LINES - 1].iter().cloned());
        lines.push(format!(
            "… {} more",
            node.details.len() - (MAX_DETAIL_LINES - 1)
        ));
    } else {
        lines.extend(node.details.iter().cloned());
    }
    lines
}

fn node_size(node: &Node) -> (f64, f64) {
    let lines = node_lines(node);
    let chars = lines.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    let w = (chars as f64 * CHAR_WIDTH + 2.0 * NODE_PAD_X).max(MIN_NODE_WIDTH);
    let h = lines.len() as f64 * LINE_HEIGHT + 2.0 * NODE_PAD_Y;
    (w, h)
}

/// An element of one level: a node, or a cluster drawn as a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Element {
    Node(usize),
    Cluster(usize),
}

/// The layout of one level (the top, or the inside of a cluster),
/// relative to its own top-left corner.
struct Level {
    elements: Vec<Element>,
    /// Top-left of each element.
    positions: Vec<(f64, f64)>,
    /// For each graph edge routed at this level: the points between its
    /// two elements (dummies), from source to target.
    routes: Vec<(usize, Vec<(f64, f64)>)>,
    width: f64,
    height: f64,
}

/// Lays `graph` out.
pub fn layout(graph: &Graph) -> Layout {
    let n = graph.nodes.len();
    let c = graph.clusters.len();
    let sizes: Vec<(f64, f64)> = graph.nodes.iter().map(node_size).collect();
    // Each node's and cluster's chain of enclosing clusters, outermost first.
    let node_paths: Vec<Vec<usize>> = (0..n)
        .map(|i| {
            let mut p = graph.cluster_path(i);
            p.reverse();
            p
        })
        .collect();
    let mut cluster_depth = vec![0usize; c];
    for k in 0..c {
        cluster_depth[k] = graph.clusters[k].parent.map_or(0, |p| cluster_depth[p] + 1);
    }
    // Direct members of each level (index c is the top level).
    let mut members: Vec<Vec<Element>> = vec![Vec::new(); c + 1];
    for (i, node) in graph.nodes.iter().enumerate() {
        members[node.cluster.unwrap_or(c)].push(Element::Node(i));
    }
    for (k, cluster) in graph.clusters.iter().enumerate() {
        members[cluster.parent.unwrap_or(c)].push(Element::Cluster(k));
    }
    // The element of `level` holding node `i` (None when `i` is outside).
    let element_at = |level: usize, i: usize| -> Option<Element> {
        let path = &node_paths[i];
        if level == c {
            return Some(match path.first() {
                Some(&k) => Element::Cluster(k),
                None => Element::Node(i),
            });
        }
        let depth = cluster_depth[level];
        if path.get(depth) != Some(&level) {
            return None;
        }
        Some(match path.get(depth + 1) {
            Some(&k) => Element::Cluster(k),
            None => Element::Node(i),
        })
    };

    // Each edge is routed at the innermost level holding both its ends, and
    // pins its target's element in every cluster it enters.
    let mut routed_at: Vec<Vec<usize>> = vec![Vec::new(); c + 1];
    let mut fed_at: Vec<Vec<usize>> = vec![Vec::new(); c + 1];
    for (e, edge) in graph.edges.iter().enumerate() {
        let (from, to) = (&node_paths[edge.from], &node_paths[edge.to]);
        let shared = from.iter().zip(to).take_while(|(a, b)| a == b).count();
        routed_at[if shared == 0 { c } else { from[shared - 1] }].push(e);
        for &k in &to[shared..] {
            fed_at[k].push(edge.to);
        }
    }

    // Inside out: an inner cluster has a larger id than its parent.
    let mut block_size: Vec<(f64, f64)> = vec![(0.0, 0.0); c];
    let mut levels: Vec<Option<Level>> = (0..=c).map(|_| None).collect();
    // The top level (index c) comes last.
    for level in (0..c).rev().chain([c]) {
        let elements = std::mem::take(&mut members[level]);
        if elements.is_empty() {
            continue;
        }
        let index_of: std::collections::HashMap<Element, usize> =
            elements.iter().enumerate().map(|(i, &e)| (e, i)).collect();
        let element_sizes: Vec<(f64, f64)> = elements
            .iter()
            .map(|e| match *e {
                Element::Node(i) => sizes[i],
                Element::Cluster(k) => block_size[k],
            })
            .collect();
        let mut level_edges = Vec::new();
        let mut edge_ids = Vec::new();
        for &e in &routed_at[level] {
            let edge = &graph.edges[e];
            if let (Some(a), Some(b)) = (element_at(level, edge.from), element_at(level, edge.to)) {
                if a != b {
                    level_edges.push((index_of[&a], index_of[&b]));
                    edge_ids.push(e);
                }
            }
        }
        // Fed from outside the cluster: kept at the top.
        let mut pinned = vec![false; elements.len()];
        for &to in &fed_at[level] {
            if let Some(b) = element_at(level, to) {
                pinned[index_of[&b]] = true;
            }
        }
        let flat = layered(&element_sizes, &level_edges, &pinned);
        let routes = edge_ids.into_iter().zip(flat.routes).collect();
        let (width, height) = (flat.width, flat.height);
        if level < c {
            block_size[level] = (
                width + 2.0 * CLUSTER_PAD,
                height + 2.0 * CLUSTER_PAD + CLUSTER_TITLE,
            );
        }
        levels[level] = Some(Level {
            elements,
            positions: flat.positions,
            routes,
            width,
            height,
        });
    }

    // Outside in: absolute positions.
    let mut nodes = vec![
        Rect {
            x: 0.0,
            y: 0.0,
            w: 0.0,
            h: 0.0
        };
        n
    ];
    let mut clusters: Vec<Option<Rect>> = vec![None; c];
    let mut origin = vec![(0.0, 0.0); c + 1];
    origin[c] = (MARGIN, MARGIN);
    let mut order = vec![c];
    order.extend(0..c);
    for &level in &order {
        let Some(lv) = &levels[level] else {
            continue;
        };
        let (ox, oy) = origin[level];
        for (element, &(x, y)) in lv.elements.iter().zip(&lv.positions) {
            match *element {
                Element::Node(i) => {
                    nodes[i] = Rect {
                        x: ox + x,
                        y: oy + y,
                        w: sizes[i].0,
                        h: sizes[i].1,
                    }
                }
                Element::Cluster(k) => {
                    clusters[k] = Some(Rect {
                        x: ox + x,
                        y: oy + y,
                        w: block_size[k].0,
                        h: block_size[k].1,
                    });
                    origin[k] = (ox + x + CLUSTER_PAD, oy + y + CLUSTER_PAD + CLUSTER_TITLE);
                }
            }
        }
    }

    // Edge routes: the source, down out of its enclosing blocks, the
    // dummies of the level where both ends meet, into the target's blocks.
    let mut edges: Vec<EdgeRoute> = graph
        .edges
        .iter()
        .map(|e| EdgeRoute {
            points: vec![
                (nodes[e.from].center_x(), nodes[e.from].bottom()),
                (nodes[e.to].center_x(), nodes[e.to].y),
            ],
        })
        .collect();
    for &level in &order {
        let Some(lv) = &levels[level] else {
            continue;
        };
        let (ox, oy) = origin[level];
        for (e, dummies) in &lv.routes {
            let edge = &graph.edges[*e];
            let (from, to) = (nodes[edge.from], nodes[edge.to]);
            let mut points = vec![(from.center_x(), from.bottom())];
            if let Some(Element::Cluster(k)) = element_at(level, edge.from) {
                if let Some(block) = clusters[k] {
                    if block.bottom() > from.bottom() {
                        points.push((from.center_x(), block.bottom()));
                    }
                }
            }
            points.extend(dummies.iter().map(|&(x, y)| (ox + x, oy + y)));
            if let Some(Element::Cluster(k)) = element_at(level, edge.to) {
                if let Some(block) = clusters[k] {
                    points.push((to.center_x(), block.y));
                }
            }
            points.push((to.center_x(), to.y));
            edges[*e] = EdgeRoute { points };
        }
    }
    let top = levels[c].as_ref();
    Layout {
        nodes,
        edges,
        clusters,
        width: top.map_or(0.0, |l| l.width) + 2.0 * MARGIN,
        height: top.map_or(0.0, |l| l.height) + 2.0 * MARGIN,
    }
}

/// One vertex of a flat layered graph: an element or a dummy.
#[derive(Clone)]
struct Vertex {
    layer: usize,
    width: f64,
    preds: Vec<usize>,
    succs: Vec<usize>,
    x: f64,
    /// A point of a long edge, not an element.
    is_dummy: bool,
}

/// A flat layout: positions (top-left) and the dummy points of each edge.
struct Flat {
    positions: Vec<(f64, f64)>,
    routes: Vec<Vec<(f64, f64)>>,
    width: f64,
    height: f64,
}

/// Lays out elements of the given sizes joined by `edges`; `pinned`
/// elements stay in the top layer.
fn layered(sizes: &[(f64, f64)], edges: &[(usize, usize)], pinned: &[bool]) -> Flat {
    let n = sizes.len();
    let (forward, reversed) = orient_edges(n, edges);
    let layers = assign_layers(n, &forward, pinned);
    let mut vertices: Vec<Vertex> = (0..n)
        .map(|i| Vertex {
            layer: layers[i],
            width: sizes[i].0,
            preds: Vec::new(),
            succs: Vec::new(),
            x: 0.0,
            is_dummy: false,
        })
        .collect();
    let mut chains: Vec<Vec<usize>> = Vec::with_capacity(forward.len());
    for &(from, to) in &forward {
        let mut chain = vec![from];
        for layer in layers[from] + 1..layers[to] {
            vertices.push(Vertex {
                layer,
                width: DUMMY_WIDTH,
                preds: Vec::new(),
                succs: Vec::new(),
                x: 0.0,
                is_dummy: true,
            });
            chain.push(vertices.len() - 1);
        }
        chain.push(to);
        for pair in chain.windows(2) {
            vertices[pair[0]].succs.push(pair[1]);
            vertices[pair[1]].preds.push(pair[0]);
        }
        chains.push(chain);
    }
    let layer_count = layers.iter().copied().max().map_or(0, |m| m + 1);
    let mut order: Vec<Vec<usize>> = vec![Vec::new(); layer_count];
    for (v, vertex) in vertices.iter().enumerate() {
        order[vertex.layer].push(v);
    }
    reduce_crossings(&mut order, &vertices);
    assign_x(&order, &mut vertices);
    close_empty_columns(&mut vertices);

    // Layer bands as tall as their tallest element; elements hang from the
    // top of their band.
    let mut band_height = vec![0.0f64; layer_count];
    for (i, &(_, h)) in sizes.iter().enumerate() {
        band_height[layers[i]] = band_height[layers[i]].max(h);
    }
    let mut band_top = vec![0.0; layer_count];
    let mut y = 0.0;
    for layer in 0..layer_count {
        band_top[layer] = y;
        y += band_height[layer] + LAYER_GAP;
    }
    let height = (y - LAYER_GAP).max(0.0);
    let min_left = vertices
        .iter()
        .map(|v| v.x - v.width / 2.0)
        .fold(f64::INFINITY, f64::min);
    let max_right = vertices
        .iter()
        .map(|v| v.x + v.width / 2.0)
        .fold(f64::NEG_INFINITY, f64::max);
    let shift = if min_left.is_finite() { -min_left } else { 0.0 };
    let width = if max_right.is_finite() {
        max_right - min_left
    } else {
        0.0
    };
    let positions = (0..n)
        .map(|i| {
            (
                vertices[i].x + shift - sizes[i].0 / 2.0,
                band_top[layers[i]],
            )
        })
        .collect();
    let routes = chains
        .iter()
        .zip(&reversed)
        .map(|(chain, &is_reversed)| {
            let mut points: Vec<(f64, f64)> = chain[1..chain.len() - 1]
                .iter()
                .map(|&d| {
                    let layer = vertices[d].layer;
                    (
                        vertices[d].x + shift,
                        band_top[layer] + band_height[layer] / 2.0,
                    )
                })
                .collect();
            if is_reversed {
                points.reverse();
            }
            points
        })
        .collect();
    Flat {
        positions,
        routes,
        width,
        height,
    }
}

fn orient_edges(n: usize, edges: &[(usize, usize)]) -> (Vec<(usize, usize)>, Vec<bool>) {
    let mut succs: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(from, to) in edges {
        succs[from].push(to);
    }
    // Iterative depth-first search: an edge to a node still on the stack
    // closes a cycle.
    const NEW: u8 = 0;
    const ON_STACK: u8 = 1;
    const DONE: u8 = 2;
    let mut state = vec![NEW; n];
    let mut back = std::collections::HashSet::new();
    for root in 0..n {
        if state[root] != NEW {
            continue;
        }
        let mut stack = vec![(root, 0usize)];
        state[root] = ON_STACK;
        while let Some(&mut (v, ref mut next)) = stack.last_mut() {
            if let Some(&w) = succs[v].get(*next) {
                *next += 1;
                match state[w] {
                    NEW => {
                        state[w] = ON_STACK;
                        stack.push((w, 0));
                    }
                    ON_STACK => {
                        back.insert((v, w));
                    }
                    _ => {}
                }
            } else {
                state[v] = DONE;
                stack.pop();
            }
        }
    }
    let mut forward = Vec::with_capacity(edges.len());
    let mut reversed = Vec::with_capacity(edges.len());
    for &(from, to) in edges {
        if back.contains(&(from, to)) {
            forward.push((to, from));
            reversed.push(true);
        } else {
            forward.push((from, to));
            reversed.push(false);
        }
    }
    (forward, reversed)
}

/// Longest-path layers; then every element not pinned to the top sinks to
/// just above its first consumer.
fn assign_layers(n: usize, edges: &[(usize, usize)], pinned: &[bool]) -> Vec<usize> {
    let mut succs: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut indegree = vec![0usize; n];
    for &(from, to) in edges {
        succs[from].push(to);
        indegree[to] += 1;
    }
    let mut layer = vec![0usize; n];
    let mut queue: std::collections::VecDeque<usize> =
        (0..n).filter(|&v| indegree[v] == 0).collect();
    let mut topological = Vec::with_capacity(n);
    while let Some(v) = queue.pop_front() {
        topological.push(v);
        for &w in &succs[v] {
            layer[w] = layer[w].max(layer[v] + 1);
            indegree[w] -= 1;
            if indegree[w] == 0 {
                queue.push_back(w);
            }
        }
    }
    for &v in topological.iter().rev() {
        if pinned[v] && layer[v] == 0 {
            continue;
        }
        if let Some(first_use) = succs[v].iter().map(|&w| layer[w]).min() {
            layer[v] = first_use.saturating_sub(1).max(layer[v]);
        }
    }
    layer
}

/// Barycenter sweeps, down then up.
fn reduce_crossings(order: &mut [Vec<usize>], vertices: &[Vertex]) {
    let mut position = vec![0usize; vertices.len()];
    for layer in order.iter() {
        for (i, &v) in layer.iter().enumerate() {
            position[v] = i;
        }
    }
    for _ in 0..ORDER_SWEEPS {
        for layer in order.iter_mut().skip(1) {
            sort_layer(layer, &position, |v| &vertices[v].preds);
            for (i, &v) in layer.iter().enumerate() {
                position[v] = i;
            }
        }
        for l in (0..order.len().saturating_sub(1)).rev() {
            sort_layer(&mut order[l], &position, |v| &vertices[v].succs);
            for (i, &v) in order[l].iter().enumerate() {
                position[v] = i;
            }
        }
    }
}

/// Orders one layer by the barycenters of the neighbours `neighbours`
/// gives; a vertex without neighbours keeps its place.
fn sort_layer<'a>(
    layer: &mut [usize],
    position: &[usize],
    neighbours: impl Fn(usize) -> &'a Vec<usize>,
) {
    let mut keyed: Vec<(f64, usize, usize)> = layer
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let ns = neighbours(v);
            let key = if ns.is_empty() {
                position[v] as f64
            } else {
                ns.iter().map(|&w| position[w] as f64).sum::<f64>() / ns.len() as f64
            };
            (key, i, v)
        })
        .collect();
    keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    for (slot, (_, _, v)) in layer.iter_mut().zip(keyed) {
        *slot = v;
    }
}

/// The least distance between the centres of neighbours `a` (left) and `b`.
/// The widest vertical strip with no vertex in it that a layout keeps.
const MAX_EMPTY_COLUMN: f64 = 2.0 * NODE_GAP;

/// Narrows every vertical strip that no vertex (dummies included) occupies
/// to [`MAX_EMPTY_COLUMN`]. The coordinate sweeps can leave a source far
/// from the column it feeds (a FuseOps diff's "before" panel came out
/// 24,000 px wide with one parameter alone at its left edge); shifting
/// everything right of such a strip left by the same amount keeps the
/// order within each layer and every separation, so only empty space goes.
fn close_empty_columns(vertices: &mut [Vertex]) {
    let mut spans: Vec<(f64, f64)> = vertices
        .iter()
        .map(|v| (v.x - v.width / 2.0, v.x + v.width / 2.0))
        .collect();
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    let Some(&(_, first_right)) = spans.first() else {
        return;
    };
    // (left edge of the first span after a strip, total narrowed so far)
    let mut cuts: Vec<(f64, f64)> = Vec::new();
    let mut reach = first_right;
    let mut removed = 0.0;
    for &(left, right) in &spans[1..] {
        if left > reach + MAX_EMPTY_COLUMN {
            removed += left - reach - MAX_EMPTY_COLUMN;
            cuts.push((left, removed));
        }
        reach = reach.max(right);
    }
    if cuts.is_empty() {
        return;
    }
    for v in vertices.iter_mut() {
        let left = v.x - v.width / 2.0;
        let after = cuts.partition_point(|&(cut, _)| cut <= left);
        if after > 0 {
            v.x -= cuts[after - 1].1;
        }
    }
}

fn separation(a: &Vertex, b: &Vertex) -> f64 {
    (a.width + b.width) / 2.0 + NODE_GAP
}

fn assign_x(order: &[Vec<usize>], vertices: &mut [Vertex]) {
    // Start packed from the left.
    for layer in order {
        let mut x = 0.0;
        for (i, &v) in layer.iter().enumerate() {
            if i > 0 {
                x += separation(&vertices[layer[i - 1]], &vertices[v]);
            }
            vertices[v].x = x;
        }
    }
    for _ in 0..COORDINATE_SWEEPS {
        for layer in order.iter().skip(1) {
            place_toward(layer, vertices, true);
        }
        for layer in order.iter().rev().skip(1) {
            place_toward(layer, vertices, false);
        }
    }
}

/// Moves the vertices of `layer` toward the mean x of their predecessors
/// (`down`) or successors, keeping order and separations. Vertices are
/// placed by priority: long edges first (their dummies keep them
/// straight), then by how many neighbours pull on them; sources
/// (parameters, constants) come last and make room around the dataflow, so
/// a chain of calls stays a straight column.
fn place_toward(layer: &[usize], vertices: &mut [Vertex], down: bool) {
    let k = layer.len();
    if k == 0 {
        return;
    }
    let is_source = |v: usize| vertices[v].preds.is_empty() && !vertices[v].is_dummy;
    let mut desired = Vec::with_capacity(k);
    let mut priority = Vec::with_capacity(k);
    for &v in layer {
        let ns = if down {
            &vertices[v].preds
        } else {
            &vertices[v].succs
        };
        // Sources pull on a call less than the value flowing through it.
        let mut pulling: Vec<usize> = ns.iter().copied().filter(|&w| !is_source(w)).collect();
        if pulling.is_empty() {
            pulling = ns.clone();
        }
        desired.push(if pulling.is_empty() {
            vertices[v].x
        } else {
            pulling.iter().map(|&w| vertices[w].x).sum::<f64>() / pulling.len() as f64
        });
        priority.push(if vertices[v].is_dummy {
            usize::MAX
        } else if is_source(v) {
            0
        } else {
            1 + pulling.len()
        });
    }
    // offset[i]: the least distance from vertex 0 to vertex i.
    let mut offset = vec![0.0; k];
    for i in 1..k {
        offset[i] = offset[i - 1] + separation(&vertices[layer[i - 1]], &vertices[layer[i]]);
    }
    let mut by_priority: Vec<usize> = (0..k).collect();
    by_priority.sort_by(|&a, &b| priority[b].cmp(&priority[a]).then(a.cmp(&b)));
    let mut placed: Vec<Option<f64>> = vec![None; k];
    for &i in &by_priority {
        let lower = (0..i)
            .rev()
            .find_map(|j| placed[j].map(|x| x + offset[i] - offset[j]));
        let upper = (i + 1..k).find_map(|j| placed[j].map(|x| x - (offset[j] - offset[i])));
        let mut x = desired[i];
        if let Some(hi) = upper {
            x = x.min(hi);
        }
        if let Some(lo) = lower {
            x = x.max(lo);
        }
        placed[i] = Some(x);
    }
    for (i, &v) in layer.iter().enumerate() {
        vertices[v].x = placed[i].expect("every vertex is placed");
    }
}
