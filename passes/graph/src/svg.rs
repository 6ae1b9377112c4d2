//! SVG: the laid-out graph drawn by the binary itself (no Graphviz).
//! Nodes, edges and clusters are `<g>` elements with ids and `data-`
//! attributes (`data-node`, `data-span`, `data-clusters`, `data-status`)
//! that the HTML page and the editors' panels script against.

use crate::diff::Status;
use crate::labels::shorten;
use crate::layout::{layout, node_lines, Layout, Rect, CHAR_WIDTH, LINE_HEIGHT};
use crate::model::Graph;
use std::fmt::Write;

/// Gap between the panels of a diff.
const PANEL_GAP: f64 = 60.0;
/// Height of a panel's title line.
const PANEL_TITLE: f64 = 28.0;

const STYLE: &str = "\
.node rect{stroke:#5f6368;stroke-width:1;rx:4}\
.node.op rect{fill:#e8f0fe}.node.call rect{fill:#d2e3fc}\
.node.param rect{fill:#e6f4ea}.node.constant rect{fill:#f1f3f4}\
.node.tuple rect,.node.project rect{fill:#fef7e0}\
.node.if rect,.node.match rect,.node.pattern rect{fill:#fce8e6}\
.node.function rect,.node.value rect,.node.ref rect{fill:#f3e8fd}\
.node.output rect{fill:#ede7f6;stroke-width:2}\
.node text{fill:#202124}.node .detail{fill:#5f6368;font-size:10px}\
.node.added rect{stroke:#188038;stroke-width:3}\
.node.removed rect{stroke:#d93025;stroke-width:3;stroke-dasharray:5 3}\
.node.rewritten rect{stroke:#e37400;stroke-width:3}\
.node.highlight rect{stroke:#1a73e8;stroke-width:4}\
.edge path{fill:none;stroke:#80868b;stroke-width:1.2}\
.edge-label{fill:#5f6368;font-size:9px}\
.cluster rect{fill:none;stroke:#9aa0a6;stroke-dasharray:4 2;rx:6}\
.cluster.primitive rect{fill:#f8f9fa;stroke:#1a73e8}\
.cluster text{fill:#1a73e8;font-size:10px}\
.panel-title{font-size:14px;font-weight:bold;fill:#202124}\
.summary{font-size:12px;fill:#202124}";

/// One graph drawn at a horizontal offset, optionally with a title and a
/// diff status per node.
pub struct Panel<'a> {
    pub graph: &'a Graph,
    pub layout: &'a Layout,
    pub title: Option<&'a str>,
    pub status: Option<&'a [Status]>,
    /// Prefix of the element ids (`n3` → `before-n3`), so two panels of
    /// one document stay unique.
    pub id_prefix: &'a str,
}

/// The SVG of one graph.
pub fn render_svg(graph: &Graph) -> String {
    let layout = layout(graph);
    render_panels(
        &[Panel {
            graph,
            layout: &layout,
            title: None,
            status: None,
            id_prefix: "",
        }],
        None,
    )
}

/// Panels side by side (a diff: before, after), with an optional summary
/// line on top.
pub fn render_panels(panels: &[Panel<'_>], summary: Option<&str>) -> String {
    let titled = summary.is_some() || panels.iter().any(|p| p.title.is_some());
    let top = if titled { PANEL_TITLE * 1.5 } else { 0.0 };
    let width: f64 = panels.iter().map(|p| p.layout.width).sum::<f64>()
        + PANEL_GAP * panels.len().saturating_sub(1) as f64;
    let width = width.max(summary.map_or(0.0, |s| s.chars().count() as f64 * CHAR_WIDTH + 40.0));
    let height = panels.iter().map(|p| p.layout.height).fold(0.0, f64::max) + top;
    let mut out = String::with_capacity(
        256 * panels.iter().map(|p| p.graph.nodes.len()).sum::<usize>() + 4096,
    );
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" \
         font-family=\"monospace\" font-size=\"12\">",
        w = num(width),
        h = num(height)
    );
    out.push_str("<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" \
                  markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#80868b\"/></marker></defs>\n");
    let _ = writeln!(out, "<style>{STYLE}</style>");
    out.push_str("<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
    if let Some(summary) = summary {
        let _ = writeln!(
            out,
            "<text class=\"summary\" x=\"20\" y=\"18\">{}</text>",
            escape(summary)
        );
    }
    let mut x = 0.0;
    for panel in panels {
        let _ = writeln!(
            out,
            "<g class=\"panel\" transform=\"translate({},{})\">",
            num(x),
            num(top)
        );
        if let Some(title) = panel.title {
            let _ = writeln!(
                out,
                "<text class=\"panel-title\" x=\"20\" y=\"-6\">{}</text>",
                escape(title)
            );
        }
        write_panel(&mut out, panel);
        out.push_str("</g>\n");
        x += panel.layout.width + PANEL_GAP;
    }
    out.push_str("</svg>\n");
    out
}

fn write_panel(out: &mut String, panel: &Panel<'_>) {
    let (graph, layout, prefix) = (panel.graph, panel.layout, panel.id_prefix);
    let id = |kind: &str, i: usize| {
        if prefix.is_empty() {
            format!("{kind}{i}")
        } else {
            format!("{prefix}-{kind}{i}")
        }
    };
    out.push_str("<g class=\"clusters\">\n");
    for (c, cluster) in graph.clusters.iter().enumerate() {
        let Some(rect) = layout.clusters[c] else {
            continue;
        };
        let _ = write!(
            out,
            "<g class=\"cluster {}\" id=\"{}\" data-cluster=\"{c}\"",
            cluster.kind.name(),
            id("c", c)
        );
        if let Some(span) = cluster.span {
            let _ = write!(out, " data-span=\"{},{}\"", span.start, span.end);
        }
        let mut outer = Vec::new();
        let mut next = cluster.parent;
        while let Some(p) = next {
            outer.push(p.to_string());
            next = graph.clusters[p].parent;
        }
        if !outer.is_empty() {
            let _ = write!(out, " data-clusters=\"{}\"", outer.join(" "));
        }
        let _ = write!(out, "><title>{}</title>", escape(&cluster.label));
        write_rect(out, &rect);
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\">{}</text></g>",
            num(rect.x + 6.0),
            num(rect.y + 12.0),
            escape(&cluster.label)
        );
    }
    out.push_str("</g>\n<g class=\"edges\">\n");
    for (e, edge) in graph.edges.iter().enumerate() {
        let route = &layout.edges[e];
        let _ = write!(
            out,
            "<g class=\"edge\" id=\"{}\" data-from=\"{}\" data-to=\"{}\"><title>{}</title><path d=\"",
            id("e", e),
            edge.from,
            edge.to,
            escape(&edge.label)
        );
        for (i, &(px, py)) in route.points.iter().enumerate() {
            let _ = write!(
                out,
                "{}{},{}",
                if i == 0 { "M" } else { " L" },
                num(px),
                num(py)
            );
        }
        out.push_str("\" marker-end=\"url(#arrow)\"/></g>\n");
    }
    // One type label per value, under the node that makes it (every edge
    // leaving a node carries the same value).
    let mut labelled = vec![false; graph.nodes.len()];
    for (e, edge) in graph.edges.iter().enumerate() {
        if labelled[edge.from] || edge.label.is_empty() {
            continue;
        }
        labelled[edge.from] = true;
        let Some(&(px, py)) = layout.edges[e].points.first() else {
            continue;
        };
        let text = relay_type_short(&edge.label).unwrap_or_else(|| shorten(&edge.label));
        let _ = writeln!(
            out,
            "<text class=\"edge-label\" x=\"{}\" y=\"{}\">{}</text>",
            num(px + 4.0),
            num(py + 11.0),
            escape(&text)
        );
    }
    out.push_str("</g>\n<g class=\"nodes\">\n");
    for (i, node) in graph.nodes.iter().enumerate() {
        let rect = layout.nodes[i];
        let status = panel.status.map(|s| s[i]).unwrap_or(Status::Unchanged);
        let _ = write!(
            out,
            "<g class=\"node {}{}\" id=\"{}\" data-node=\"{i}\"",
            node.kind.name(),
            match status {
                Status::Unchanged => "",
                Status::Added => " added",
                Status::Removed => " removed",
                Status::Rewritten => " rewritten",
            },
            id("n", i)
        );
        if let Some(span) = node.span {
            let _ = write!(out, " data-span=\"{},{}\"", span.start, span.end);
        }
        let path = graph.cluster_path(i);
        if !path.is_empty() {
            let path: Vec<String> = path.iter().map(usize::to_string).collect();
            let _ = write!(out, " data-clusters=\"{}\"", path.join(" "));
        }
        if status != Status::Unchanged {
            let _ = write!(out, " data-status=\"{}\"", status.name());
        }
        let mut title = node.label.clone();
        for d in &node.details {
            title.push('\n');
            title.push_str(d);
        }
        let _ = write!(out, "><title>{}</title>", escape(&title));
        write_rect(out, &rect);
        out.push_str("<text>");
        for (l, line) in node_lines(node).iter().enumerate() {
            let _ = write!(
                out,
                "<tspan x=\"{}\" y=\"{}\"{}>{}</tspan>",
                num(rect.x + 10.0),
                num(rect.y + 6.0 + LINE_HEIGHT * (l as f64 + 1.0) - 3.5),
                if l > 0 { " class=\"detail\"" } else { "" },
                escape(line)
            );
        }
        out.push_str("</text></g>\n");
    }
    out.push_str("</g>\n");
}

/// `Tensor[(1, 64, 56, 56), float32]` → `1×64×56×56 float32`; other
/// types are kept (cut when long).
fn relay_type_short(full: &str) -> Option<String> {
    let inner = full.strip_prefix("Tensor[(")?.strip_suffix(']')?;
    let (dims, dtype) = inner.rsplit_once("), ")?;
    let dims: Vec<&str> = dims.split(", ").collect();
    Some(format!("{} {dtype}", dims.join("×")))
}

fn write_rect(out: &mut String, r: &Rect) {
    let _ = write!(
        out,
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>",
        num(r.x),
        num(r.y),
        num(r.w),
        num(r.h)
    );
}

/// A coordinate with one decimal: small files, stable across platforms.
fn num(v: f64) -> String {
    let rounded = (v * 10.0).round() / 10.0;
    if rounded == rounded.trunc() {
        format!("{}", rounded as i64)
    } else {
        format!("{rounded:.1}")
    }
}

/// Text for XML content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tensor_types_shorten_to_dims_and_dtype() {
        assert_eq!(
            relay_type_short("Tensor[(1, 64, 56, 56), float32]").as_deref(),
            Some("1×64×56×56 float32")
        );
        assert_eq!(relay_type_short("(int32, int32)"), None);
    }

    #[test]
    fn markup_characters_are_escaped() {
        assert_eq!(escape("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
    }
}
