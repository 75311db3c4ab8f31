// Versions page: drift between the two chosen versions, computed on demand (polls /api/drift).
(() => {
  const btn = document.getElementById("drift-run");
  if (!btn) return;
  btn.addEventListener("click", async () => {
    const p = new URLSearchParams(location.search);
    const url = `/api/drift?from=${encodeURIComponent(p.get("from"))}&to=${encodeURIComponent(p.get("to"))}`;
    const st = document.getElementById("drift-status"), out = document.getElementById("drift");
    btn.disabled = true;
    st.textContent = "computing drift (fitting each version)…";
    try {
      const job = await BP.poll(url, (s) => { st.textContent = `drift: ${s}…`; });
      if (job.status === "error") throw new Error(job.error);
      st.textContent = `done in ${job.seconds} s`;
      const r = job.result;
      const t = BP.el("table"); t.className = "data"; t.id = "drift-table";
      t.appendChild(BP.row(["version", "models", "benchmarks", "cells", "var. 2 factors", "best rank", "MedAE", "probes"]));
      for (const s of r.snapshots) t.appendChild(BP.row([s.label, s.n_models, s.n_benchmarks, s.n_cells,
        BP.fmt(s.var2, 3), s.best_rank, BP.fmt(s.medae, 2), (s.probes || []).join(", ")]));
      out.replaceChildren(t);
      for (const tr of r.transitions) {
        out.appendChild(BP.el("p", `${tr.from_label} → ${tr.to_label}: largest factor angle ${BP.fmt(tr.max_angle_deg)}°` +
          ` (noise ${BP.fmt(tr.angle_noise_deg)}°), probes added [${tr.probes_added.join(", ")}], removed [${tr.probes_removed.join(", ")}]` +
          (tr.alarms.length ? `; alarms: ${tr.alarms.join("; ")}` : "; no alarm")));
      }
    } catch (e) { BP.showError(e.message); st.textContent = ""; }
    btn.disabled = false;
  });
})();

// the pipeline's own drift report (drift/report.json), when the workspace has one
(async () => {
  try {
    const { body } = await BP.getJSON("/api/versions");
    const r = body.pipeline_drift;
    const box = document.getElementById("pipeline-drift");
    if (!r || !box) return;
    const t = BP.el("table"); t.className = "data";
    t.appendChild(BP.row(["version", "models", "benchmarks", "cells", "var. 2 factors", "best rank", "MedAE", "probes"]));
    for (const s of r.snapshots) t.appendChild(BP.row([s.label, s.n_models, s.n_benchmarks, s.n_cells,
      BP.fmt(s.var2, 3), s.best_rank, BP.fmt(s.medae, 2), (s.probes || []).join(", ")]));
    box.append(BP.el("h2", "Drift by snapshot (the pipeline's drift/report.json)"), t);
    for (const tr of r.transitions) box.appendChild(BP.el("p", `${tr.from_label} → ${tr.to_label}: probes added [${tr.probes_added.join(", ")}], removed [${tr.probes_removed.join(", ")}]` + (tr.alarms.length ? `; alarms: ${tr.alarms.join("; ")}` : "; no alarm")));
  } catch (e) { BP.showError(e.message); }
})();
