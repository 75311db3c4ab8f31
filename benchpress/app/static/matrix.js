// Matrix page: the heatmap of /api/matrix (same query string as the page); a click opens the cell.
(async () => {
  const status = document.getElementById("status");
  status.textContent = "loading…";
  let d;
  try {
    ({ body: d } = await BP.getJSON("/api/matrix" + location.search));
  } catch (e) { BP.showError(e.message); status.textContent = ""; return; }
  status.textContent = `${d.models.length} of ${d.n_matching} matching models x ${d.benchmarks.length} benchmarks (${d.ms} ms)`;
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
  const el = document.getElementById("heatmap");
  el.style.height = Math.max(400, 16 * d.models.length + 200) + "px";
  await Plotly.newPlot(el, [heat, dots], {
    margin: { l: 200, b: 160, t: 10, r: 10 }, yaxis: { autorange: "reversed", type: "category" },
    xaxis: { type: "category", tickangle: -45 } }, { responsive: true, displaylogo: false });
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
          t.appendChild(BP.row([BP.fmt(o.score, 2), o.source_id, o.source_type, o.reported_setting || "", cite,
            o.resolved ? "resolved value" : "conflicting value"]));
        }
        body.appendChild(t);
      }
      body.appendChild(BP.link("/model/" + encodeURIComponent(model), "model page →"));
    } catch (e) { BP.showError(e.message); }
  });
})();
