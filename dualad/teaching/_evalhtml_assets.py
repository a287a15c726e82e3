"""The teaching page's stylesheet and script (:mod:`.evalhtml`), as string constants so
the package needs no data files.

The CSS is scoped to the root's class ``.dualad-trace``. ``JS`` is one function
expression taking the root element: the page calls it with its own root, so several
traces on one page never touch each other's elements. It reads each panel's steps from
the panel's ``<script type="application/json" class="dt-data">`` and only ever sets text
with ``textContent``, except the captions, which the page has already escaped.
"""

__all__ = ["CSS", "JS", "HIGHLIGHT"]

HIGHLIGHT = (255, 241, 184)   # the current row's background (#fff1b8); the browser test looks for it

_MATH = ('"STIX Two Math", "STIX Two Text", "Cambria Math", "Latin Modern Math", '
         '"DejaVu Serif", Georgia, serif')
_SANS = ('system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", "DejaVu Sans", '
         'Arial, sans-serif')
_MONO = 'ui-monospace, "SF Mono", Menlo, Consolas, "DejaVu Sans Mono", monospace'

CSS = """
.dualad-trace{--accent:#2563eb;--soft:#e8f0fe;--hl:#fff1b8;--hl-edge:#d97706;--ink:#1e293b;
 --muted:#64748b;--faint:#a3afbf;--line:#e2e8f0;--partial:#b45309;--partial-soft:#fdf3e7;
 font-family:SANS;color:var(--ink);
 background:#fff;border-radius:14px;padding:20px 24px 14px;max-width:1320px;margin:0 auto;
 box-shadow:0 1px 3px rgba(15,23,42,.08),0 10px 30px rgba(15,23,42,.06);line-height:1.45;
 font-size:15px;outline:none;box-sizing:border-box;container:dualad-trace/inline-size}
.dualad-trace *{box-sizing:border-box}
.dualad-trace [hidden]{display:none!important}
.dualad-trace .dt-reverse{--accent:#7c3aed;--soft:#f1eafe}
.dualad-trace sub{font-size:.72em;line-height:0;vertical-align:-.28em}
.dualad-trace .dt-head{display:flex;flex-wrap:wrap;align-items:baseline;gap:4px 14px;
 margin-bottom:10px}
.dualad-trace .dt-title{font-family:MATH;font-size:23px;font-weight:600;margin:0}
.dualad-trace .dt-point{margin:0;color:var(--muted);font-family:MATH;font-size:17px}
.dualad-trace .dt-tabs{display:flex;gap:4px;border-bottom:1px solid var(--line);margin-bottom:12px}
.dualad-trace .dt-tab{font:inherit;font-weight:600;background:none;border:0;
 border-bottom:3px solid transparent;padding:8px 14px 7px;color:var(--muted);cursor:pointer}
.dualad-trace .dt-tab[aria-selected=true]{color:#1e293b;border-bottom-color:#2563eb}
.dualad-trace .dt-tab[aria-selected=true][data-tab="1"]{border-bottom-color:#7c3aed}
.dualad-trace .dt-tabmark{font-family:MATH;font-weight:400;color:var(--muted);margin-left:4px}
.dualad-trace .dt-what{margin:2px 0 10px;color:var(--muted);font-family:MATH;font-size:16px}
.dualad-trace .dt-controls{display:flex;align-items:center;gap:8px;flex-wrap:wrap}
.dualad-trace .dt-controls button{font:inherit;font-size:14px;font-weight:500;
 padding:6px 14px;border:1px solid #cbd5e1;border-radius:8px;background:#fff;color:var(--ink);
 cursor:pointer;transition:background .15s}
.dualad-trace .dt-controls button:hover:not(:disabled){background:#f1f5f9}
.dualad-trace .dt-controls button:disabled{opacity:.4;cursor:default}
.dualad-trace .dt-controls .dt-primary{background:var(--accent);border-color:var(--accent);
 color:#fff;min-width:84px}
.dualad-trace .dt-controls .dt-primary:hover:not(:disabled){background:var(--accent);
 filter:brightness(1.1)}
.dualad-trace .dt-count{margin-left:auto;color:var(--muted);font-size:14px;
 font-variant-numeric:tabular-nums}
.dualad-trace .dt-caption{margin:12px 0;min-height:96px;padding:10px 16px;background:var(--soft);
 border-left:4px solid var(--accent);border-radius:8px}
.dualad-trace .dt-lead{font-family:MATH;font-size:18px;font-weight:600;min-height:1.2em}
.dualad-trace .dt-text{font-size:15px;color:#334155}
.dualad-trace .dt-main{display:grid;
 grid-template-columns:minmax(0,var(--dt-graph-w,700px)) minmax(0,1fr);
 gap:18px;align-items:start}
@media (max-width:900px){.dualad-trace .dt-main{grid-template-columns:minmax(0,1fr)}}
@container dualad-trace (max-width:1180px){
 .dualad-trace .dt-main{grid-template-columns:minmax(0,1fr)}}
.dualad-trace .dt-card{border:1px solid var(--line);border-radius:12px;padding:10px;
 background:#fff;overflow:auto}
.dualad-trace .dt-tablecard{max-height:720px;padding:4px 6px}
.dualad-trace .dt-graph{width:100%;height:auto;display:block;margin:0 auto}
.dualad-trace .dt-node>rect{fill:#f8fafc;stroke:#94a3b8;stroke-width:1.2;
 transition:fill .2s,stroke .2s}
.dualad-trace .dt-node.dt-input>rect{fill:#f1f5f9;stroke:#64748b}
.dualad-trace .dt-node.dt-output>rect{stroke-width:2}
.dualad-trace .dt-node text{font-family:MATH;font-size:16px;fill:var(--ink)}
.dualad-trace .dt-node .dt-l2{font-family:MONO;font-size:13.5px;fill:var(--muted)}
.dualad-trace .dt-node .dt-l3{fill:var(--faint)}
.dualad-trace .dt-node .dt-dv{font-family:MONO;font-size:13.5px}
.dualad-trace .dt-node .dt-badge{font-family:SANS;font-size:12px;letter-spacing:.04em;
 text-transform:uppercase;fill:var(--muted);paint-order:stroke;stroke:#fff;stroke-width:4px;
 stroke-linejoin:round}
.dualad-trace .dt-node .dt-pbadge{display:none}
.dualad-trace .dt-node.dt-partial .dt-pbadge{display:inline}
.dualad-trace .dt-node.dt-partial .dt-badge{visibility:hidden}
.dualad-trace .dt-node .dt-pbadge rect{fill:var(--partial);stroke:#fff;stroke-width:1.5}
.dualad-trace .dt-node .dt-pbadge text{font-family:SANS;font-size:12px;font-weight:600;fill:#fff}
.dualad-trace .dt-node.dt-known>rect{fill:var(--soft);stroke:var(--accent)}
.dualad-trace .dt-node.dt-known .dt-l3{fill:var(--accent);font-weight:700}
.dualad-trace .dt-node.dt-partial>rect{fill:var(--partial-soft);stroke:var(--partial)}
.dualad-trace .dt-node.dt-partial .dt-l3{fill:var(--partial)}
.dualad-trace .dt-node.dt-via>rect{stroke:var(--accent);stroke-width:2.5;stroke-dasharray:5 3}
.dualad-trace .dt-node.dt-current>rect{fill:var(--hl);stroke:var(--hl-edge);stroke-width:2.5;
 stroke-dasharray:none}
.dualad-trace .dt-edge{fill:none;stroke:#cbd5e1;stroke-width:1.6}
.dualad-trace .dt-edge.dt-on{stroke:var(--accent);stroke-width:3;stroke-dasharray:9 5;
 animation:dt-flow .9s linear infinite}
.dualad-trace .dt-reverse .dt-edge.dt-on{animation-direction:reverse}
@keyframes dt-flow{to{stroke-dashoffset:-14}}
.dualad-trace .dt-arrow path{fill:#b6c2d2}
.dualad-trace .dt-arrow-on path{fill:var(--accent)}
.dualad-trace .dt-table{border-collapse:collapse;width:100%;font-size:15px}
.dualad-trace .dt-table th{text-align:left;font-size:11.5px;font-weight:600;color:var(--muted);
 text-transform:uppercase;letter-spacing:.06em;padding:6px 10px;border-bottom:1px solid var(--line);
 position:sticky;top:0;background:#fff}
.dualad-trace .dt-table td{padding:2px 10px;border-bottom:1px solid #f1f5f9;font-family:MATH;
 white-space:nowrap}
.dualad-trace .dt-table td:nth-child(2){white-space:normal;min-width:14em}
.dualad-trace .dt-table .dt-num{text-align:right;font-family:MONO;font-size:13.5px;
 font-variant-numeric:tabular-nums}
.dualad-trace .dt-sec td{font-family:SANS;font-size:11.5px;font-weight:600;color:var(--muted);
 text-transform:uppercase;letter-spacing:.06em;padding-top:10px;background:#fff}
.dualad-trace .dt-primal td{color:#475569}
.dualad-trace .dt-row td{color:var(--faint)}
.dualad-trace .dt-row.dt-done td{color:var(--ink)}
.dualad-trace .dt-row.dt-done .dt-val{color:var(--accent);font-weight:700}
.dualad-trace .dt-row.dt-done.dt-partial .dt-val{color:var(--partial)}
.dualad-trace .dt-partial-key{font-family:MONO;color:var(--partial);font-weight:700}
.dualad-trace .dt-row.dt-current td{background:var(--hl)}
.dualad-trace .dt-row.dt-current td:first-child{box-shadow:inset 4px 0 0 var(--hl-edge)}
.dualad-trace .dt-legend{color:var(--muted);font-size:13px;margin:8px 0 0;padding:8px 12px;
 background:#f8fafc;border-radius:8px}
.dualad-trace button:focus{outline:none}
.dualad-trace button:focus-visible{outline:2px solid var(--accent);outline-offset:2px}
.dualad-trace .dt-tab:focus-visible{outline:2px solid #bfd3f6;outline-offset:-2px;
 border-radius:8px 8px 0 0}
.dualad-trace .dt-summary,.dualad-trace .dt-keys{color:var(--muted);font-size:13px;margin:10px 0 0}
.dualad-trace .dt-detail{color:var(--faint)}
""".replace("MATH", _MATH).replace("SANS", _SANS).replace("MONO", _MONO)

JS = r"""function (root) {
  if (!root || root.getAttribute("data-ready")) return;
  root.setAttribute("data-ready", "1");
  var all = function (el, sel) { return Array.prototype.slice.call(el.querySelectorAll(sel)); };
  var panels = all(root, ".dt-panel"), tabs = all(root, ".dt-tab"), active = 0;
  var players = panels.map(setup);
  function show(k) {
    active = k;
    panels.forEach(function (p, i) { p.hidden = i !== k; });
    tabs.forEach(function (t, i) { t.setAttribute("aria-selected", i === k ? "true" : "false"); });
    players.forEach(function (pl, i) { if (i !== k) pl.stop(); });
  }
  tabs.forEach(function (t, i) { t.addEventListener("click", function () { show(i); }); });

  function setup(panel) {
    var data = JSON.parse(panel.querySelector("script.dt-data").textContent);
    var steps = data.steps, pos = 0, timer = null, rows = {}, nodes = {}, edges = {}, btn = {};
    all(panel, "tr[data-row]").forEach(function (tr) { rows[tr.getAttribute("data-row")] = tr; });
    all(panel, "g[data-node]").forEach(function (g) { nodes[g.getAttribute("data-node")] = g; });
    all(panel, "path[data-edge]").forEach(function (p) { edges[p.getAttribute("data-edge")] = p; });
    all(panel, "button[data-act]").forEach(function (b) { btn[b.getAttribute("data-act")] = b; });
    var on = "url(#" + panel.querySelector("marker.dt-arrow-on").id + ")";
    var off = "url(#" + panel.querySelector("marker.dt-arrow").id + ")";
    var lead = panel.querySelector(".dt-lead"), text = panel.querySelector(".dt-text");
    var count = panel.querySelector(".dt-count"), box = panel.querySelector(".dt-tablecard");
    var card = panel.querySelector(".dt-graphcard");
    function mark(el, name, yes) { el.classList.toggle(name, !!yes); }

    function render() {
      var known = {}, part = {}, shown = {}, cur = pos > 0 ? steps[pos - 1] : null;
      for (var i = 0; i < pos; i++) {
        steps[i].rows.forEach(function (r) { shown[r] = true; });
        for (var v in steps[i].set) {
          known[v] = steps[i].set[v];
          part[v] = (steps[i].partial || {})[v] || null;   // [i, n] while a partial sum
        }
      }
      Object.keys(rows).forEach(function (r) {
        mark(rows[r], "dt-done", shown[r]);
        mark(rows[r], "dt-current", cur && cur.rows.indexOf(+r) >= 0);
        rows[r].querySelector(".dt-val").textContent = shown[r] ? data.rows[r] : "";
      });
      Object.keys(nodes).forEach(function (v) {
        mark(nodes[v], "dt-known", v in known);
        mark(nodes[v], "dt-current", cur && cur.nodes.indexOf(v) >= 0);
        mark(nodes[v], "dt-via", cur && cur.via === v);
        mark(nodes[v], "dt-partial", part[v]);
        nodes[v].querySelector(".dt-dv").textContent =
          v in known ? known[v] + (part[v] ? " + …" : "") : "?";
        var pb = nodes[v].querySelector(".dt-pbadge");
        if (pb) {   // the pill: about 7 px per character of 12 px sans, plus its padding
          var said = part[v] ? "partial: " + part[v][0] + " of " + part[v][1] : "";
          pb.querySelector("text").textContent = said;
          pb.querySelector("rect").setAttribute("width", said ? 7 * said.length + 16 : 0);
        }
      });
      Object.keys(edges).forEach(function (e) {
        var lit = !!cur && cur.edges.indexOf(e) >= 0;
        mark(edges[e], "dt-on", lit);
        var back = lit && data.mode === "reverse";   // the adjoint flows against the edge
        edges[e].setAttribute("marker-end", back ? "none" : (lit ? on : off));
        if (back) edges[e].setAttribute("marker-start", on);
        else edges[e].removeAttribute("marker-start");
      });
      lead.innerHTML = cur ? cur.lead : "";
      text.innerHTML = cur ? cur.caption : data.intro;
      count.textContent = "step " + pos + " of " + steps.length;
      btn.reset.disabled = btn.back.disabled = pos === 0;
      btn.step.disabled = pos === steps.length;
      btn.play.textContent = timer ? "Pause" : (pos === steps.length ? "Replay" : "Play");
      if (cur && !panel.hidden) {   // keep the current row and node in view in their boxes
        var tr = rows[cur.rows[cur.rows.length - 1]].getBoundingClientRect();
        var b = box.getBoundingClientRect();
        if (tr.bottom > b.bottom) box.scrollTop += tr.bottom - b.bottom + 12;
        else if (tr.top < b.top + 32) box.scrollTop -= b.top + 32 - tr.top;
        var g = nodes[cur.nodes[0]] && nodes[cur.nodes[0]].getBoundingClientRect();
        var c = card.getBoundingClientRect();
        if (g && g.right > c.right) card.scrollLeft += g.right - c.right + 24;
        else if (g && g.left < c.left) card.scrollLeft -= c.left - g.left + 24;
        // a tall graph grows down the page: bring the current node into the window
        if (g && (g.bottom > window.innerHeight || g.top < 0))
          nodes[cur.nodes[0]].scrollIntoView({block: "nearest", inline: "nearest"});
      }
    }
    function go(p) { pos = Math.max(0, Math.min(steps.length, p)); render(); }
    function stop() { if (timer) { clearInterval(timer); timer = null; render(); } }
    function tick() { go(pos + 1); if (pos >= steps.length) stop(); }
    function play() {
      if (timer) { stop(); return; }
      if (pos >= steps.length) pos = 0;
      timer = setInterval(tick, 1100);
      tick();
    }
    var player = {
      step: function () { stop(); go(pos + 1); }, back: function () { stop(); go(pos - 1); },
      reset: function () { stop(); go(0); }, end: function () { stop(); go(steps.length); },
      play: play, stop: stop
    };
    Object.keys(btn).forEach(function (k) { btn[k].addEventListener("click", player[k]); });
    render();
    return player;
  }

  function onKey(e) {
    if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey) return;
    var tag = e.target && e.target.tagName;
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") return;
    if (tag === "BUTTON" && (e.key === " " || e.key === "Enter")) return;
    var pl = players[active], act = {ArrowRight: "step", ArrowLeft: "back", Home: "reset",
                                     End: "end", " ": "play"}[e.key];
    if (!pl || !act) return;
    e.preventDefault();
    pl[act]();
  }
  if (root.getAttribute("data-standalone")) document.addEventListener("keydown", onKey);
  else root.addEventListener("keydown", onKey);
}"""
