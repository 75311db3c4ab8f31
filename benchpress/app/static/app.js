// Shared helpers of every page (no framework): fetch JSON, show one-line errors, fill datalists.
const BP = {
  async getJSON(url) {
    const r = await fetch(url, { headers: { Accept: "application/json" } });
    let body = null;
    try { body = await r.json(); } catch (e) { body = { error: `the server answered ${r.status}` }; }
    if (!r.ok && r.status !== 202) throw new Error(body && body.error ? body.error : `HTTP ${r.status}`);
    return { status: r.status, body };
  },
  showError(msg) {
    const box = document.getElementById("error");
    if (!box) return;
    box.textContent = msg || "";
    box.hidden = !msg;
  },
  async fillDatalist(id, url, pick) {
    try {
      const { body } = await BP.getJSON(url);
      const list = document.getElementById(id);
      for (const v of pick(body)) { const o = document.createElement("option"); o.value = v; list.appendChild(o); }
    } catch (e) { BP.showError(e.message); }
  },
  // "1 cell", "2 cells" (`many`: the plural when it is not `one` + "s")
  count(n, one, many) { return `${Number(n).toLocaleString("en")} ${n === 1 ? one : many || one + "s"}`; },
  fmt(v, d = 1) { return v === null || v === undefined ? "" : Number(v).toFixed(d); },
  el(tag, text, cls) { const e = document.createElement(tag); if (text !== undefined) e.textContent = text; if (cls) e.className = cls; return e; },
  link(href, text) { const a = document.createElement("a"); a.href = href; a.textContent = text; return a; },
  row(cells) { const tr = document.createElement("tr"); for (const c of cells) { const td = document.createElement("td"); if (c instanceof Node) td.appendChild(c); else td.textContent = c; tr.appendChild(td); } return tr; },
  // poll a background job (202 while running) until done
  async poll(url, onStatus, every = 1000) {
    for (;;) {
      const { status, body } = await BP.getJSON(url);
      if (status !== 202) return body;
      onStatus(body.status);
      await new Promise((res) => setTimeout(res, every));
    }
  },
};
