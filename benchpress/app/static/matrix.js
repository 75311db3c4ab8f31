// Matrix page: the heatmap of /api/matrix (same query string as the page); a click opens the cell.
(async () => {
  const status = document.getElementById("status");
  status.textContent = "loading…";
  let d;
  try {
    ({ body: d } = await BP.getJSON("/api/matrix" + location.search));
  } catch (e) { BP.showError(e.message); status.textContent = ""; return; }
  status.textContent = `${d.models.length} of ${BP.count(d.n_matching, "matching model")} x ${BP.count(d.benchmarks.length, "benchmark")} (${d.ms} ms)`;
  const custom = d.value.map((row, i) => row.map((v, j) => [
    v === null ? "" : v.toFixed(2), d.observed[i][j] ? "observed" : "predicted",
    d.lower[i][j] === null ? "" : `90% interval ${d.lower[i][j].toFixed(1)} – ${d.upper[i][j].toFixed(1)}`]));
  const ox = [], oy = [];
  d.observed.forEach((row, i) => row.forEach((o, j) => { if (o) { ox.push(d.benchmarks[j]); oy.push(d.models[i]); } }));
  const heat = { type: "heatmap", z: d.norm, x: d.benchmarks, y: d.models, customdata: custom, colorscale: "Viridis",
    zmin: 0, zmax: 1, colorbar: { title: { text: "within range" } }, xgap: 1, ygap: 1,
    hovertemplate: "%{y}<br>%{x}: %{customdata[0]} (%{customdata[1]})<br>%{customdata[2]}<extra></extra>" };
  const dots = { type: "scatter", mode: "markers", x: ox, y: oy, hoverinfo: "skip", showlegend: false,
    marker: { size: 4, color: "rgba(255,255,255,0.8)", symbol: "circle" } };
  // every row keeps its label: rows get thinner as they grow (16 px, 12 px from 150 rows, 8 px
  // from 600), and past 600 every k-th model is labelled (all of them on hover); the
  // benchmarks are labelled above the heatmap as well as below it, so a tall one still
  // names its columns where it starts
  const n = d.models.length;
  const rowPx = n < 150 ? 16 : n < 600 ? 12 : 8;
  const every = rowPx >= 10 ? 1 : Math.ceil(10 / rowPx);
  const labelled = d.models.filter((_, i) => i % every === 0);
  const yaxis = { range: [n - 0.5, -0.5], type: "category", automargin: true,  // reversed
    tickfont: { size: Math.min(12, rowPx - 2 + (every > 1 ? 4 : 0)) },
    tickmode: "array", tickvals: labelled, ticktext: labelled };
  const xaxis = { type: "category", tickangle: -45, automargin: true };
  const top = { ...xaxis, overlaying: "x", side: "top", matches: "x", showgrid: false };
  const header = { type: "scatter", mode: "markers", x: d.benchmarks, y: d.benchmarks.map(() => d.models[0]),
    xaxis: "x2", hoverinfo: "skip", showlegend: false, marker: { opacity: 0 } };
  const el = document.getElementById("heatmap");
  el.style.height = Math.max(400, rowPx * n + 360) + "px";
  await Plotly.newPlot(el, n ? [heat, dots, header] : [heat, dots], {
    margin: { l: 10, b: 10, t: 10, r: 10 }, yaxis, xaxis, xaxis2: top },
    { responsive: true, displaylogo: false });
  el.on("plotly_click", async (ev) => {
    const pt = ev.points[0];
    const model = pt.y, bench = pt.x;
    const panel = document.getElementById("cell"), body = document.getElementById("cell-body");
    panel.hidden = false;
    document.getElementById("cell-title").textContent = `${model} · ${bench}`;
    body.textContent = "loading…";
    try {
      const { body: c } = await BP.getJSON(`/api/cell?model=${encodeURIComponent(model)}&benchmark=${encodeURIComponent(bench)}`);
      body.replaceChildren();
      body.appendChild(BP.el("p", c.observed ? `observed ${BP.fmt(c.value, 2)}` :
        `predicted ${BP.fmt(c.predicted)} (90% interval ${BP.fmt(c.lower)} – ${BP.fmt(c.upper)}, trust ${Math.round(100 * c.trust)}%)`));
      if (c.observations.length) {
        const t = BP.el("table"); t.className = "data";
        t.appendChild(BP.row(["score", "source", "type", "setting", "citation", ""]));
        for (const o of c.observations) {
          const cite = o.reference_url ? BP.link(o.reference_url, o.reference_url) : "";
          if (cite) { cite.target = "_blank"; cite.rel = "noopener noreferrer"; }
          t.appendChild(BP.row([BP.fmt(o.score, 2), o.source_id, o.cited_as || o.source_type, o.reported_setting || "", cite,
            o.resolved ? "resolved value" : "conflicting value"]));
        }
        body.appendChild(t);
      }
      body.appendChild(BP.link("/model/" + encodeURIComponent(model), "model page →"));
    } catch (e) { BP.showError(e.message); }
  });
})();
