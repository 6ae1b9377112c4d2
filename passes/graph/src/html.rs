//! HTML: the SVG in a page with a small inline script: the wheel zooms,
//! dragging pans, clicking a cluster's title collapses it to its box
//! (clicking again opens it), and hovering a node shows its details.

use crate::svg::escape;

const SCRIPT: &str = r#"
(function () {
  const svg = document.querySelector('svg');
  const view = svg.viewBox.baseVal;
  const full = { x: view.x, y: view.y, w: view.width, h: view.height };
  svg.removeAttribute('width');
  svg.removeAttribute('height');
  svg.style.width = '100%';
  svg.style.height = '100%';
  function point(event) {
    const r = svg.getBoundingClientRect();
    return { x: view.x + (event.clientX - r.left) / r.width * view.width,
             y: view.y + (event.clientY - r.top) / r.height * view.height };
  }
  svg.addEventListener('wheel', (event) => {
    event.preventDefault();
    const p = point(event);
    const k = event.deltaY > 0 ? 1.2 : 1 / 1.2;
    view.x = p.x - (p.x - view.x) * k;
    view.y = p.y - (p.y - view.y) * k;
    view.width *= k;
    view.height *= k;
  }, { passive: false });
  let drag = null;
  svg.addEventListener('mousedown', (event) => { drag = point(event); });
  window.addEventListener('mouseup', () => { drag = null; });
  svg.addEventListener('mousemove', (event) => {
    if (!drag) return;
    const p = point(event);
    view.x -= p.x - drag.x;
    view.y -= p.y - drag.y;
  });
  document.getElementById('fit').addEventListener('click', () => {
    view.x = full.x; view.y = full.y; view.width = full.w; view.height = full.h;
  });
  // Collapsing a cluster hides what is inside it (nested clusters too) and
  // the edges between hidden nodes; its box stays, filled, as one node.
  function refresh(panel) {
    const collapsed = new Set();
    panel.querySelectorAll('.cluster.collapsed').forEach((c) => collapsed.add(c.dataset.cluster));
    const hidden = new Set();
    panel.querySelectorAll('.node').forEach((n) => {
      const path = (n.dataset.clusters || '').split(' ').filter((s) => s);
      const hide = path.some((c) => collapsed.has(c));
      n.style.display = hide ? 'none' : '';
      if (hide) hidden.add(n.dataset.node);
    });
    panel.querySelectorAll('.edge').forEach((e) => {
      e.style.display = hidden.has(e.dataset.from) && hidden.has(e.dataset.to) ? 'none' : '';
    });
    panel.querySelectorAll('.cluster').forEach((c) => {
      const outer = (c.dataset.clusters || '').split(' ').filter((s) => s);
      c.style.display = outer.some((o) => collapsed.has(o)) ? 'none' : '';
    });
  }
  document.querySelectorAll('.cluster').forEach((cluster) => {
    cluster.style.cursor = 'pointer';
    cluster.addEventListener('click', (event) => {
      event.stopPropagation();
      cluster.classList.toggle('collapsed');
      const rect = cluster.querySelector('rect');
      rect.style.fill = cluster.classList.contains('collapsed') ? '#d2e3fc' : '';
      refresh(cluster.closest('.panel') || svg);
    });
  });
})();
"#;

/// A standalone page showing `svg` (the output of [`crate::render_svg`]
/// or of a diff), titled `title`.
pub fn render_html(svg: &str, title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{title}</title>\n\
         <style>html,body{{margin:0;height:100%;overflow:hidden;font-family:sans-serif}}\
         #bar{{position:fixed;top:8px;right:8px;z-index:1}}#graph{{height:100%}}</style></head>\n\
         <body><div id=\"bar\"><button id=\"fit\">Fit</button> wheel: zoom · drag: pan · click a cluster: collapse</div>\n\
         <div id=\"graph\">\n{svg}</div>\n<script>{SCRIPT}</script>\n</body></html>\n",
        title = escape(title),
    )
}
