//! `relay-graph`: dataflow graphs of Relay functions, for people to look
//! at. [`function_graph`] turns a function of a module into a [`Graph`]
//! (operator calls with their key attributes, edges with types, fused
//! `Primitive` functions as clusters); [`layout::layout`] places it with a
//! layered layout of our own; the writers give SVG ([`render_svg`]), DOT
//! ([`render_dot`]), JSON ([`graph_json`]) and an HTML page with zoom, pan
//! and collapsible clusters ([`render_html`]). [`diff_graphs`] matches the
//! graph before and after a pipeline structurally and marks what was
//! added, removed and rewritten.
//!
//! The `relay graph` command and the language server's `relay/graph`
//! request both call this crate.

mod build;
mod diff;
mod dot;
mod html;
mod json;
mod labels;
pub mod layout;
mod model;
mod svg;

pub use build::{default_function, function_graph, graph_of, GraphError};
pub use diff::{diff_graphs, DiffStats, GraphDiff, Status};
pub use dot::{render_dot, render_dot_diff};
pub use html::render_html;
pub use json::{diff_json, graph_json};
pub use model::{Cluster, ClusterKind, Edge, Graph, GraphCounts, Node, NodeKind, SourceSpan};
pub use svg::{render_panels, render_svg, Panel};

/// An output format of a graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Svg,
    Dot,
    Json,
    Html,
}

/// `graph` written in `format`.
pub fn render(graph: &Graph, format: Format) -> String {
    match format {
        Format::Svg => render_svg(graph),
        Format::Dot => render_dot(graph),
        Format::Json => {
            let mut text = serde_json::to_string_pretty(&graph_json(graph))
                .expect("a JSON value always serialises");
            text.push('\n');
            text
        }
        Format::Html => render_html(&render_svg(graph), &format!("@{}", graph.function)),
    }
}

/// The SVG of a diff: before and after side by side under the summary.
pub fn render_diff_svg(diff: &GraphDiff) -> String {
    let before = layout::layout(&diff.before);
    let after = layout::layout(&diff.after);
    let summary = format!("{} — {}", diff.summary(), diff.stats_line());
    render_panels(
        &[
            Panel {
                graph: &diff.before,
                layout: &before,
                title: Some("before"),
                status: Some(&diff.before_status),
                id_prefix: "before",
            },
            Panel {
                graph: &diff.after,
                layout: &after,
                title: Some("after"),
                status: Some(&diff.after_status),
                id_prefix: "after",
            },
        ],
        Some(&summary),
    )
}

/// `diff` written in `format`.
pub fn render_diff(diff: &GraphDiff, format: Format) -> String {
    match format {
        Format::Svg => render_diff_svg(diff),
        Format::Dot => render_dot_diff(
            &diff.before,
            &diff.before_status,
            &diff.after,
            &diff.after_status,
            &diff.summary(),
        ),
        Format::Json => {
            let mut text = serde_json::to_string_pretty(&diff_json(diff))
                .expect("a JSON value always serialises");
            text.push('\n');
            text
        }
        Format::Html => render_html(&render_diff_svg(diff), &diff.summary()),
    }
}
