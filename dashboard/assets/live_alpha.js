// Live blocks (dashboard/live_alpha.py): a block holds its numbers at every stop of the alpha
// slider and shows the stop the sidebar's slider is at, in the frame it moves. Every value is
// set with textContent (never markup): the data is the database's and the models' text.

const SHARED = globalThis.__s3kgLiveAlpha || (globalThis.__s3kgLiveAlpha = {
  blocks: new Set(),
  observer: null,
  drawn: [], // the last draws: {kind, key, alpha, at: performance.now()}, for the browser
  // test and bench/speed/bench_alpha_step.py (the time from a key or a drag to the numbers)
});

const WAITING = "…";
const WAITING_TITLE = "Computed by the server for this alpha when you release the slider.";

function slider() {
  return document.querySelector(
    '[data-testid="stSidebar"] input[type="range"][aria-label="alpha"]'
  );
}

function sliderValue() {
  const s = slider();
  return s ? parseFloat(s.value) : NaN;
}

function stopOf(grid, value, fallback) {
  if (!Number.isFinite(value)) return fallback;
  for (let k = 0; k < grid.length; k++) {
    if (Math.abs(grid[k] - value) < 1e-9) return k;
  }
  return fallback;
}

function watch() {
  if (SHARED.observer) return;
  // Streamlit's slider (react-aria) rewrites its range input's aria-valuetext at every stop of
  // a drag or a key, before it sends the value to the server (on release).
  SHARED.observer = new MutationObserver(() => {
    const value = sliderValue();
    for (const draw of SHARED.blocks) {
      if (draw.root.isConnected) draw(value);
      else SHARED.blocks.delete(draw); // a block the page no longer shows
    }
  });
  SHARED.observer.observe(document.body, {
    subtree: true,
    attributes: true,
    attributeFilter: ["aria-valuetext"],
  });
}

function pick(x, k) {
  return Array.isArray(x) ? x[k] : x;
}

function formatCell(c, k) {
  if (c == null) return { text: "" };
  if ("r" in c) {
    const [lo, hi] = Array.isArray(c.r[0]) ? c.r[k] : c.r; // one interval, or one per stop
    if (lo === null || hi === null) return { text: "n/a" };
    return { text: `${lo.toFixed(c.d)} – ${hi.toFixed(c.d)}`, value: `${lo},${hi}` };
  }
  if ("v" in c) {
    const v = pick(c.v, k);
    if (v === null || v === undefined) return { text: "n/a" };
    return { text: c.d > 0 ? v.toFixed(c.d) : String(Math.round(v)), value: String(v) };
  }
  return { text: String(pick(c.t, k) ?? ""), href: c.href != null ? pick(c.href, k) : null };
}

function fill(el, c, k, at) {
  el.replaceChildren();
  el.removeAttribute("title");
  delete el.dataset.value;
  el.classList.remove("waiting");
  // "server": the server's value only; "wait": not ready at this stop (one flag per stop)
  if (c && ((c.server && k !== at) || (Array.isArray(c.wait) && c.wait[k]))) {
    el.textContent = WAITING;
    el.title = WAITING_TITLE;
    el.classList.add("waiting");
    return;
  }
  const f = formatCell(c, k);
  if (f.value !== undefined) el.dataset.value = f.value;
  if (c && c.title) el.title = c.title;
  if (f.href) {
    const a = document.createElement("a");
    a.href = f.href;
    a.target = "_self";
    a.textContent = f.text;
    el.appendChild(a);
  } else {
    el.textContent = f.text;
  }
}

function drawMetrics(root, data, k) {
  let row = root.querySelector(".metrics");
  if (!row) {
    row = document.createElement("div");
    row.className = "metrics";
    for (const item of data.items) {
      const box = document.createElement("div");
      box.className = item.small ? "metric small" : "metric"; // small: a two-number figure
      box.setAttribute("data-testid", "s3kgLiveMetric");
      const label = document.createElement("div");
      label.className = "label";
      label.textContent = item.label;
      const value = document.createElement("div");
      value.className = "value";
      box.append(label, value);
      if (item.delta) {
        const delta = document.createElement("div");
        delta.className = "delta";
        box.appendChild(delta);
      }
      row.appendChild(box);
    }
    root.replaceChildren(row);
  }
  row.querySelectorAll(".metric").forEach((box, i) => {
    const item = data.items[i];
    fill(box.querySelector(".value"), item.cell, k, data.at);
    const delta = box.querySelector(".delta");
    if (delta) {
      fill(delta, item.delta, k, data.at);
      delta.dataset.tone = item.tone ? pick(item.tone, k) : "off"; // up, down, warn or off
    }
    const help = item.help == null ? "" : pick(item.help, k); // one help, or one per stop
    if (help) box.title = help;
    else box.removeAttribute("title");
  });
}

function drawNote(root, data, k) {
  root.replaceChildren();
  const text = data.texts[k];
  if (data.style === "caption") {
    // one grey line: the text at this stop, and what waits for the server while it moves
    const line = document.createElement("div");
    line.className = "caption";
    const waiting = k !== data.at && data.pending;
    if (waiting) line.setAttribute("role", "status");
    const pending = waiting ? data.pending.replace("{alpha}", String(data.grid[k])) : "";
    line.textContent = [text, pending].filter(Boolean).join(" · ");
    root.appendChild(line);
    return;
  }
  if (k !== data.at && data.pending) {
    const p = document.createElement("div");
    p.className = "pending";
    p.setAttribute("role", "status");
    p.textContent = data.pending.replace("{alpha}", String(data.grid[k]));
    root.appendChild(p);
  }
  if (text) {
    const box = document.createElement("div");
    box.className = "note";
    box.textContent = text;
    root.appendChild(box);
  }
}

function drawTable(root, data, k) {
  let tbl = root.querySelector("table");
  if (!tbl) {
    tbl = document.createElement("table");
    tbl.setAttribute("aria-label", data.label);
    const head = tbl.createTHead().insertRow();
    for (const col of data.columns) {
      const th = document.createElement("th");
      th.textContent = col.label;
      th.dataset.key = col.key;
      if (col.help) th.title = col.help;
      if (col.width) th.style.width = `${col.width}px`;
      if (col.align) th.style.textAlign = col.align;
      if (col.wrap) th.style.whiteSpace = "normal";
      head.appendChild(th);
    }
    tbl.createTBody();
    const wrap = document.createElement("div");
    wrap.className = "wrap";
    wrap.appendChild(tbl);
    root.replaceChildren(wrap);
  }
  const rows = [...data.rows].sort((a, b) => a.order[k] - b.order[k] || a.id - b.id);
  const body = tbl.tBodies[0];
  body.replaceChildren();
  for (const r of rows) {
    const tr = body.insertRow();
    tr.dataset.run = String(r.id);
    for (const col of data.columns) {
      const td = tr.insertCell();
      td.dataset.key = col.key;
      if (col.align) td.style.textAlign = col.align;
      if (col.wrap) td.style.whiteSpace = "normal";
      fill(td, r.cells[col.key], k, data.at);
    }
  }
}

const DRAW = { metrics: drawMetrics, note: drawNote, table: drawTable };

export default function ({ parentElement, data }) {
  const root = parentElement.querySelector(".s3kg-live");
  root.dataset.kind = data.kind;
  root.dataset.at = String(data.grid[data.at]);
  let last = null;
  const draw = (value) => {
    const k = stopOf(data.grid, value, data.at);
    if (k === last) return;
    last = k;
    const started = performance.now();
    DRAW[data.kind](root, data, k);
    const done = performance.now();
    root.dataset.alpha = String(data.grid[k]);
    root.dataset.drawMs = (done - started).toFixed(2);
    SHARED.drawn.push({ kind: data.kind, alpha: data.grid[k], server: k === data.at, at: done });
    if (SHARED.drawn.length > 200) SHARED.drawn.splice(0, SHARED.drawn.length - 200);
  };
  draw.root = root;
  if (root.s3kgDraw) SHARED.blocks.delete(root.s3kgDraw); // new data: one draw per block
  root.s3kgDraw = draw;
  SHARED.blocks.add(draw);
  watch();
  draw(sliderValue());
  return () => SHARED.blocks.delete(draw);
}
