// Probes page: the probe set and its error curve (/api/probes; a search runs in the background).
(async () => {
  const st = document.getElementById("status");
  const asked = new URLSearchParams(location.search);
  const query = new URLSearchParams();
  for (const name of ["k", "max_models"]) if (asked.get(name)) query.set(name, asked.get(name));
  st.textContent = "loading the probe set…";
  try {
    const d = await BP.poll("/api/probes" + (query.size ? "?" + query : ""),
      (s) => { st.textContent = `probe search ${s} (one fit per model; this can take minutes on a large registry)…`; });
    const costs = document.querySelector("#costs tbody");
    for (const c of d.costs || []) costs.appendChild(BP.row([c.benchmark_id, BP.fmt(c.cost, 2)]));
    if (d.status === "error") throw new Error(d.error);
    const r = d.result;
    st.textContent = `${d.origin}` + (d.seconds !== undefined ? `, ${d.seconds} s` : "");
    document.getElementById("probes-result").hidden = false;
    document.getElementById("probe-set").textContent = `${r.probes.join(", ")} — MedAE ${BP.fmt(r.medae, 2)} points on all cells, ${BP.fmt(r.medae_hidden, 2)} on the others; cost ${r.cost === null ? "unknown" : BP.fmt(r.cost, 2)}`;
    const tb = document.querySelector("#steps tbody");
    for (const s of r.steps) tb.appendChild(BP.row([s.probes.length, s.probes.join(", "), s.cost === null ? "?" : BP.fmt(s.cost, 2), BP.fmt(s.medae, 2), BP.fmt(s.medae_hidden, 2)]));
    const ks = r.steps.map((s) => s.probes.length);
    await Plotly.newPlot("curve", [
      { x: ks, y: r.steps.map((s) => s.medae), name: "MedAE, all cells", mode: "lines+markers" },
      { x: ks, y: r.steps.map((s) => s.medae_hidden), name: "MedAE, non-probe cells", mode: "lines+markers" }],
      { margin: { t: 10 }, xaxis: { title: { text: "number of probes (k)" }, dtick: 1 }, yaxis: { title: { text: "MedAE (points)" } } },
      { responsive: true, displaylogo: false });
  } catch (e) { BP.showError(e.message); st.textContent = ""; }
})();
