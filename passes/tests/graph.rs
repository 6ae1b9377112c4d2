//! The dataflow graphs of `relay_passes::graph`:
//!
//! - data-driven cases in `test_data/graph/<case>.relay`, one per construct:
//!   insta snapshots of the DOT and JSON of `@main` (or the first
//!   function), and for a case with a `// pipeline:` header the diff's
//!   summary and the JSON of the diff;
//! - the SVG of every case and of TVM's models: well-formed XML, no two
//!   nodes overlap, edges run downward, each cluster's box holds its nodes
//!   and sibling clusters do not overlap, the same bytes on every run;
//! - the FuseOps summary on resnet152;
//! - PNGs of resnet18 and of its FuseOps diff rendered with chromium when
//!   it is installed, written to `$CARGO_TARGET_DIR/graph-artifacts/`.
//!
//! Drawing speed and SVG sizes are measured by `benches/graph.rs`, not here.

mod common;

use relay_passes::graph::layout::{layout, Layout};
use relay_passes::graph::{
    diff_graphs, function_graph, graph_json, render_diff, render_diff_svg, render_dot, render_svg,
    Format, Graph,
};
use relay_passes::ir::IRModule;
use relay_test_support::files::case_header;
use std::path::{Path, PathBuf};

fn cases() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/graph");
    relay_test_support::files::sorted_files(&dir, ".relay")
}

fn typed(path: &Path) -> (IRModule, String) {
    let text = std::fs::read_to_string(path).expect("the case is readable");
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    let module = common::parse_typed(&name, &text).unwrap_or_else(|e| panic!("{name}: {e}"));
    (module, text)
}

fn run(module: IRModule, pipeline: &str) -> IRModule {
    common::run_pipeline(module, pipeline, Default::default(), Vec::new())
        .unwrap_or_else(|e| panic!("{pipeline}: {e}"))
}

#[test]
fn dot_and_json_of_each_construct() {
    let cases = cases();
    assert!(cases.len() >= 7, "the cases are missing");
    for path in cases {
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        let (module, text) = typed(&path);
        let graph = function_graph(&module, None).expect("the case has a function");
        insta::assert_snapshot!(format!("{stem}.dot"), render_dot(&graph));
        insta::assert_snapshot!(
            format!("{stem}.json"),
            serde_json::to_string_pretty(&graph_json(&graph)).unwrap()
        );
        if let Some(pipeline) = case_header(&text, "pipeline") {
            let after = function_graph(&run(module, &pipeline), Some(&graph.function)).unwrap();
            let diff = diff_graphs(&pipeline, graph, after);
            insta::assert_snapshot!(
                format!("{stem}.diff"),
                format!(
                    "{}\n{}\n{}",
                    diff.summary(),
                    diff.stats_line(),
                    render_diff(&diff, Format::Json)
                )
            );
        }
    }
}

/// What every drawing must satisfy.
fn check_layout(what: &str, graph: &Graph, layout: &Layout) {
    let nodes = &layout.nodes;
    // No two nodes overlap (sorted by x, a sweep compares neighbours in reach).
    let mut by_x: Vec<usize> = (0..nodes.len()).collect();
    by_x.sort_by(|&a, &b| nodes[a].x.total_cmp(&nodes[b].x));
    for (i, &a) in by_x.iter().enumerate() {
        for &b in &by_x[i + 1..] {
            if nodes[b].x >= nodes[a].right() {
                break;
            }
            assert!(
                !nodes[a].overlaps(&nodes[b]),
                "{what}: nodes {a} ({}) and {b} ({}) overlap",
                graph.nodes[a].label,
                graph.nodes[b].label
            );
        }
    }
    // No wide empty strip: from the left edge on, the nodes leave no
    // vertical band over 1,000 px with nothing in it (a FuseOps diff's
    // panel once put one parameter 22,000 px left of everything else).
    let mut reach = by_x.first().map_or(0.0, |&a| nodes[a].right());
    for &a in &by_x {
        assert!(
            nodes[a].x <= reach + 1000.0,
            "{what}: {:.0} px with no node left of node {a} ({})",
            nodes[a].x - reach,
            graph.nodes[a].label
        );
        reach = reach.max(nodes[a].right());
    }
    // Edges run from the bottom of their source down to the top of their
    // target (graphs without recursion have no edge turned around).
    for (e, edge) in graph.edges.iter().enumerate() {
        let points = &layout.edges[e].points;
        let (first, last) = (points[0], points[points.len() - 1]);
        assert!(
            last.1 > first.1,
            "{what}: edge {e} ({} -> {}) does not point down",
            graph.nodes[edge.from].label,
            graph.nodes[edge.to].label
        );
        for pair in points.windows(2) {
            assert!(pair[1].1 >= pair[0].1, "{what}: edge {e} goes back up");
        }
    }
    // Clusters hold their nodes; clusters side by side do not overlap.
    for (i, node) in graph.nodes.iter().enumerate() {
        if let Some(c) = node.cluster {
            let rect = layout.clusters[c].expect("a cluster with nodes has a box");
            assert!(
                rect.contains(&nodes[i]),
                "{what}: node {i} outside cluster {c}"
            );
        }
    }
    for a in 0..graph.clusters.len() {
        for b in a + 1..graph.clusters.len() {
            if graph.clusters[a].parent != graph.clusters[b].parent {
                continue;
            }
            if let (Some(ra), Some(rb)) = (layout.clusters[a], layout.clusters[b]) {
                assert!(!ra.overlaps(&rb), "{what}: clusters {a} and {b} overlap");
            }
        }
    }
}

/// Well-formed XML whose nodes are the graph's.
fn check_svg(what: &str, svg: &str, node_count: usize) {
    let doc = roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("{what}: bad XML: {e}"));
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    let drawn = doc
        .descendants()
        .filter(|n| n.attribute("data-node").is_some())
        .count();
    assert_eq!(drawn, node_count, "{what}: every node is drawn once");
}

#[test]
fn svg_of_each_case_is_well_formed_and_laid_out_cleanly() {
    for path in cases() {
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        let (module, text) = typed(&path);
        let graph = function_graph(&module, None).unwrap();
        check_layout(&stem, &graph, &layout(&graph));
        let svg = render_svg(&graph);
        check_svg(&stem, &svg, graph.nodes.len());
        assert_eq!(svg, render_svg(&graph), "{stem}: the same SVG on every run");
        if let Some(pipeline) = case_header(&text, "pipeline") {
            let after = function_graph(&run(module, &pipeline), None).unwrap();
            let diff = diff_graphs(&pipeline, graph.clone(), after);
            let svg = render_diff_svg(&diff);
            check_svg(
                &stem,
                &svg,
                diff.before.nodes.len() + diff.after.nodes.len(),
            );
        }
    }
}

fn model(name: &str) -> Option<IRModule> {
    let root = relay_test_support::tvm::root_or_skip(name)?;
    let path = root.join("models").join(format!("{name}.relay"));
    Some(typed(&path).0)
}

#[test]
fn models_before_and_after_fusion_are_laid_out_cleanly() {
    for name in ["resnet18", "mobilenet", "lstm", "resnet152"] {
        let Some(module) = model(name) else {
            return;
        };
        let fused = run(module.clone(), "SimplifyInference, FoldConstant, FuseOps");
        for (what, m) in [("input", &module), ("fused", &fused)] {
            let graph = function_graph(m, None).unwrap();
            let l = layout(&graph);
            check_layout(&format!("{name} {what}"), &graph, &l);
            check_svg(
                &format!("{name} {what}"),
                &render_svg(&graph),
                graph.nodes.len(),
            );
        }
    }
}

#[test]
fn fuse_ops_on_resnet152_is_summed_up() {
    let Some(module) = model("resnet152") else {
        return;
    };
    let before = function_graph(&module, None).unwrap();
    let simplified = run(module, "SimplifyInference, FoldConstant");
    let before_fusion = function_graph(&simplified, None).unwrap();
    let after = function_graph(&run(simplified, "FuseOps"), None).unwrap();
    let counts = before_fusion.counts();
    let diff = diff_graphs("FuseOps", before_fusion, after);
    // Fusion only groups calls: every call is still there, none rewritten.
    let stats = diff.stats();
    assert_eq!(
        (stats.added, stats.removed, stats.rewritten),
        (0, 0, 0),
        "{}",
        diff.stats_line()
    );
    assert_eq!(diff.after.counts().op_calls, counts.op_calls);
    insta::assert_snapshot!("resnet152_fuse_ops_summary", diff.summary());
    assert!(before.nodes.len() > 1000);
}

/// Renders SVG files to PNG with headless chromium, if it is installed.
fn chromium_png(svg: &Path, png: &Path, width: u32, height: u32) -> Option<bool> {
    let chromium = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|c| {
            std::process::Command::new(c)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })?;
    let status = std::process::Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
        ])
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("--window-size={width},{height}"))
        .arg(format!("file://{}", svg.display()))
        .output()
        .ok()?;
    Some(status.status.success())
}

/// The `width` and `height` of the root `<svg>`.
fn svg_size(svg: &str) -> (f64, f64) {
    let doc = roxmltree::Document::parse(svg).expect("well-formed SVG");
    let root = doc.root_element();
    let number = |name: &str| -> f64 {
        root.attribute(name)
            .and_then(|v| v.parse().ok())
            .unwrap_or(1.0)
    };
    (number("width"), number("height"))
}

#[test]
fn resnet18_and_its_fusion_diff_render_to_png() {
    let Some(module) = model("resnet18") else {
        return;
    };
    let dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"))
        .join("graph-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    let graph = function_graph(&module, None).unwrap();
    let simplified = run(module, "SimplifyInference, FoldConstant");
    let before = function_graph(&simplified, None).unwrap();
    let after = function_graph(&run(simplified, "FuseOps"), None).unwrap();
    check_layout("resnet18 simplified", &before, &layout(&before));
    check_layout("resnet18 fused", &after, &layout(&after));
    let diff = diff_graphs("FuseOps", before, after);
    for (name, svg) in [
        ("resnet18", render_svg(&graph)),
        ("resnet18_fuse_ops_diff", render_diff_svg(&diff)),
    ] {
        let svg_path = dir.join(format!("{name}.svg"));
        let png_path = dir.join(format!("{name}.png"));
        std::fs::write(&svg_path, &svg).unwrap();
        // The whole drawing scaled to the page width: an overview.
        let (width, height) = svg_size(&svg);
        let page_height = ((1600.0 * height / width) as u32).clamp(400, 8000);
        let page = dir.join(format!("{name}.html"));
        std::fs::write(
            &page,
            format!(
                "<body style=\"margin:0\"><img src=\"{name}.svg\" style=\"width:100%\"></body>"
            ),
        )
        .unwrap();
        let _ = std::fs::remove_file(&png_path);
        match chromium_png(&page, &png_path, 1600, page_height) {
            None => {
                eprintln!(
                    "!!! SKIPPED the PNG of {name}: no chromium to render it (the SVG is {})",
                    svg_path.display()
                );
                return;
            }
            Some(ok) => {
                assert!(ok, "chromium failed on {}", svg_path.display());
                let png = std::fs::read(&png_path).expect("chromium wrote the PNG");
                assert!(png.starts_with(b"\x89PNG"), "{name}: not a PNG");
                assert!(
                    png.len() > 10_000,
                    "{name}: an empty picture ({} bytes)",
                    png.len()
                );
                eprintln!("{name}: {}", png_path.display());
            }
        }
    }
}
