// Predict page: rows of (benchmark, score) -> /api/predict; the URL's ?scores= holds the state.
(() => {
  const tbody = document.querySelector("#score-rows tbody");
  const known = new Map(); // lower-cased id, name or alias -> canonical id
  const resolvedByServer = new Map();
  const suggestedByServer = new Map(); // unknown name -> the resolver's closest ids
  let timer = null, seq = 0;

  function addRow(name = "", value = "") {
    const tr = document.createElement("tr");
    tr.innerHTML = '<td><input class="bench" list="benchmark-names" placeholder="benchmark" aria-label="benchmark" size="28"> <span class="flag"></span></td>' +
      '<td><input class="score" placeholder="score" aria-label="score" size="8"></td><td><button type="button" class="remove" aria-label="remove">×</button></td>';
    tr.querySelector(".bench").value = name;
    tr.querySelector(".score").value = value;
    tr.querySelector(".remove").addEventListener("click", () => { tr.remove(); schedule(); });
    tr.querySelector(".bench").addEventListener("input", () => { flag(tr); schedule(); });
    tr.querySelector(".score").addEventListener("input", schedule);
    tbody.appendChild(tr);
    return tr;
  }

  async function flag(tr) {
    const input = tr.querySelector(".bench"), out = tr.querySelector(".flag");
    const name = input.value.trim();
    let id = name ? known.get(name.toLowerCase()) : undefined;
    if (name && id === undefined) {
      if (!resolvedByServer.has(name)) {
        try {
          const { body } = await BP.getJSON("/api/resolve?names=" + encodeURIComponent(name));
          resolvedByServer.set(name, body.resolved[name]);
          suggestedByServer.set(name, body.suggestions[name] || []);
        } catch (e) { BP.showError(e.message); return; }
      }
      id = resolvedByServer.get(name);
    }
    if (input.value.trim() !== name) return; // typed on meanwhile
    const bad = name !== "" && !id;
    input.classList.toggle("unknown", bad);
    const near = suggestedByServer.get(name) || [];
    out.textContent = bad ? "unknown benchmark" + (near.length ? `; did you mean ${near.join(" or ")}?` : "")
      : (id && id !== name ? "→ " + id : "");
  }

  function scoresText() {
    const parts = [];
    for (const tr of tbody.querySelectorAll("tr")) {
      const n = tr.querySelector(".bench").value.trim(), v = tr.querySelector(".score").value.trim();
      if (n && v) parts.push(`${n}:${v}`);
    }
    return parts.join(",");
  }

  const metaInputs = [...document.querySelectorAll(".meta")];

  function metadataText() {
    return metaInputs.filter((e) => e.value.trim()).map((e) => `${e.dataset.field}:${e.value.trim()}`).join(",");
  }

  function schedule() { clearTimeout(timer); timer = setTimeout(run, 200); }

  // the filter hides rows whose benchmark id and name do not contain the text
  function applyFilter() {
    const words = document.getElementById("filter").value.trim().toLowerCase();
    const rows = document.querySelectorAll("#predictions tbody tr");
    let shown = 0;
    for (const tr of rows) { tr.hidden = !!words && !tr.dataset.text.includes(words); shown += !tr.hidden; }
    document.getElementById("filter-count").textContent = words ? `${shown} of ${rows.length} benchmarks` : "";
  }
  document.getElementById("filter").addEventListener("input", applyFilter);

  async function run() {
    const text = scoresText(), meta = metadataText();
    const url = new URL(location.href);
    if (text) url.searchParams.set("scores", text); else url.searchParams.delete("scores");
    if (meta) url.searchParams.set("metadata", meta); else url.searchParams.delete("metadata");
    history.replaceState(null, "", url);
    if (!text) {
      document.getElementById("result").hidden = true;
      document.getElementById("contradicted-note").hidden = true;
      BP.showError("");
      return;
    }
    const mine = ++seq;
    document.getElementById("status").textContent = "predicting…";
    try {
      const query = "scores=" + encodeURIComponent(text) + (meta ? "&metadata=" + encodeURIComponent(meta) : "");
      const { body } = await BP.getJSON("/api/predict?" + query);
      document.getElementById("download-csv").href = "/api/predict.csv?" + query;
      document.getElementById("download-json").href = "/api/predict?" + query;
      if (mine !== seq) return;
      document.getElementById("meta-note").textContent = body.metadata_note ||
        (body.with_covariates ? "used: the prediction takes these details into account" : "");
      BP.showError(body.unknown_note ? `${body.unknown_note} (left out)` : "");
      const contradicted = document.getElementById("contradicted-note");
      contradicted.textContent = body.contradicted_note || "";
      contradicted.hidden = !body.contradicted_note;
      render(body);
      document.getElementById("status").textContent = `answered in ${body.ms} ms`;
    } catch (e) {
      if (mine !== seq) return;
      BP.showError(e.message);
      document.getElementById("status").textContent = "";
    }
  }

  function render(d) {
    document.getElementById("result").hidden = false;
    const rows = d.predictions.slice().sort((a, b) => (b.given !== null) - (a.given !== null) || b.n_models - a.n_models);
    const tb = document.querySelector("#predictions tbody");
    tb.replaceChildren();
    for (const p of rows) {
      const trust = p.trust === null ? null : Math.round(p.trust * 100);
      const bar = BP.el("span"); bar.className = "bar"; bar.style.width = (trust || 0) / 2 + "px";
      const t = BP.el("span", trust === null ? "" : trust + "% "); if (trust !== null) t.appendChild(bar);
      const name = BP.el("span", p.benchmark_id); name.title = p.name;
      const tr = BP.row([name, BP.fmt(p.given), BP.fmt(p.predicted),
        p.lower === null ? "" : `${BP.fmt(p.lower)} – ${BP.fmt(p.upper)}`,
        p.lower === null ? "" : "± " + BP.fmt((p.upper - p.lower) / 2), t, String(p.n_models)]);
      tr.dataset.benchmark = p.benchmark_id;
      tr.dataset.text = (p.benchmark_id + " " + (p.name || "")).toLowerCase();
      if (p.given !== null) tr.className = "given";
      tb.appendChild(tr);
    }
    applyFilter();
    const nb = document.querySelector("#nearest tbody");
    nb.replaceChildren();
    for (const m of d.nearest) {
      const s = Object.entries(m.scores).map(([k, v]) => `${k} ${BP.fmt(v)}`).join(", ");
      nb.appendChild(BP.row([BP.link("/model/" + encodeURIComponent(m.model_id), m.model_id), BP.fmt(m.distance_z, 2),
        `${m.n_measured} of ${m.n_given}`, s]));
    }
    const rn = document.getElementById("run-next");
    rn.replaceChildren();
    if (!d.run_next.best) { rn.textContent = "Nothing left to run."; return; }
    const b = d.run_next.best;
    const p = BP.el("p"); p.id = "run-next-best";
    p.append(BP.el("strong", b.benchmark_id), ` (${b.name}): narrows the other 90% intervals by ${BP.fmt(b.width_reduction_points, 0)} points in total (${BP.fmt(100 * b.width_reduction_share, 1)}%)`,
      b.cost === null ? "; cost unknown." : `; cost ${BP.fmt(b.cost, 2)}.`);
    rn.appendChild(p);
    const ol = BP.el("ol");
    for (const r of d.run_next.ranked.slice(1)) ol.appendChild(BP.el("li", `${r.benchmark_id}: ${BP.fmt(r.width_reduction_points, 0)} points` + (r.cost === null ? "" : `, cost ${BP.fmt(r.cost, 2)}`)));
    rn.append(BP.el("p", `Next best of ${d.run_next.n_candidates} candidates (the most-measured benchmarks you have not given):`, "hint"), ol);
  }

  document.getElementById("add-row").addEventListener("click", () => addRow().querySelector(".bench").focus());
  document.getElementById("paste-apply").addEventListener("click", () => {
    const text = document.getElementById("paste").value;
    for (const tr of [...tbody.querySelectorAll("tr")]) if (!tr.querySelector(".bench").value.trim()) tr.remove();
    for (const part of text.split(/[,;\n]+/)) {
      const m = part.trim().match(/^(.+?)\s*[:=\s]\s*(-?[0-9.]+)\s*%?$/);
      if (m) flag(addRow(m[1].trim(), m[2]));
      else if (part.trim()) BP.showError(`could not read '${part.trim()}' as BENCHMARK: SCORE`);
    }
    addRow();
    schedule();
  });

  (async () => {
    try {
      const { body } = await BP.getJSON("/api/benchmarks");
      const list = document.getElementById("benchmark-names");
      for (const b of body.benchmarks) {
        for (const key of [b.benchmark_id, b.name, ...b.aliases]) known.set(String(key).toLowerCase(), b.benchmark_id);
        const o = document.createElement("option"); o.value = b.benchmark_id; o.label = b.name; list.appendChild(o);
        for (const a of b.aliases) { const oa = document.createElement("option"); oa.value = a; oa.label = `alias of ${b.benchmark_id}`; list.appendChild(oa); }
      }
    } catch (e) { BP.showError(e.message); }
    const params = new URLSearchParams(location.search);
    for (const part of (params.get("metadata") || "").split(",").filter((p) => p.trim())) {
      const i = part.indexOf(":"), input = document.getElementById("meta-" + part.slice(0, i).trim());
      if (input) { input.value = part.slice(i + 1).trim(); document.getElementById("model-details").open = true; }
    }
    for (const e of metaInputs) e.addEventListener(e.tagName === "SELECT" ? "change" : "input", schedule);
    const initial = params.get("scores") || "";
    for (const part of initial.split(",").filter((p) => p.trim())) {
      const i = Math.max(part.lastIndexOf(":"), part.lastIndexOf("="));
      flag(addRow(part.slice(0, i).trim(), part.slice(i + 1).trim()));
    }
    addRow();
    if (initial) run();
  })();
})();
