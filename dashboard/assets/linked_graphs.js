/* The sample explorer's linked graphs: three vis-network pictures and a triple table in one
 * document. Written by dashboard/graphs.py, which prepends `const S3KG_DATA = {...};` (JSON with
 * <, > and & written as \u escapes). Every text reaches the page through textContent or
 * vis-network's canvas, never as markup. Nothing is loaded from the network.
 *
 * For tests and benchmarks: window.s3kgNetworks (panel key -> vis.Network), window.s3kg with
 * data (the data above), ready (true once every picture is placed), focusNode(panel, id), focusRow(i), clear(),
 * highlighted() (panel key -> ids of highlighted nodes), rows() (indices of highlighted rows),
 * metrics() (scale, font sizes and every node's box on screen, from vis-network's own numbers)
 * and pack(components, W, H) (the shelf packing: [{w, h}, ...] -> {spots, w, h, scale}).
 */
(function () {
  "use strict";
  const D = S3KG_DATA;
  const O = D.options;
  const panels = {};
  const badgeIndex = {}; // badge -> [[panel key, node id], ...]
  let sticky = null; // focus chosen by a click
  let transient = null; // focus under the mouse
  let readyCount = 0;

  window.s3kgNetworks = {};
  window.s3kg = {
    data: D,
    ready: false,
    readyAt: null,
    focusNode: (panel, id) => { sticky = nodeFocus(panel, id); apply(); },
    sticky: () => (sticky ? sticky.id : null),
    focusRow: (i) => { sticky = rowFocus(i); apply(); },
    clear: () => { sticky = null; transient = null; apply(); },
    highlighted: () => {
      const f = transient || sticky;
      const out = {};
      for (const key of Object.keys(panels)) out[key] = f ? [...f.nodes[key]].sort() : [];
      return out;
    },
    rows: () => [...document.querySelectorAll("#s3kg-table tbody tr.hot")].map(r => +r.dataset.row),
    metrics: metrics,
    pack: (placed, W, H) => pack(placed, W, H),
  };

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function fade(hex, amount) {
    const n = parseInt(hex.slice(1), 16);
    const mix = c => Math.round(c + (255 - c) * amount);
    const r = mix((n >> 16) & 255), g = mix((n >> 8) & 255), b = mix(n & 255);
    return "#" + ((1 << 24) + (r << 16) + (g << 8) + b).toString(16).slice(1);
  }

  // -- building the pictures -------------------------------------------------------------------

  // An aligned node's frame: thin and lighter than its colour, so that the text is the
  // strongest line in the box (a 3 px frame in the full colour, 6 px from 12 px text, was:
  // OCR read 68 % of aligned nodes' labels against 96 % of the others', bench_explorer_ocr).
  // Its fill, its frame's hue and its badge's pill carry the entity's colour.
  const ALIGNED_BORDER = 1.5;
  const ALIGNED_BORDER_FADE = 0.4;

  function nodeStyle(n, state) {
    const dim = state === "dim";
    const hot = state === "hot";
    const aligned = n.badges.length > 0;
    return {
      id: n.id,
      color: {
        background: dim ? fade(n.fill, 0.6) : n.fill,
        border: hot ? "#111111" : dim ? fade(n.border, 0.65)
          : aligned ? fade(n.border, ALIGNED_BORDER_FADE) : n.border,
      },
      borderWidth: hot ? 4 : aligned ? ALIGNED_BORDER : 1,
      font: {
        size: O.nodeFont, face: O.fontFace, color: dim ? "#a8a8a8" : "#111111",
      },
    };
  }

  // vis-network keeps an edge's old label when given an empty one: a hidden label is a space.
  const HIDDEN = " ";
  // The share of a box a relation label may cover before it counts as on it (boxesMeet).
  const LABEL_COVER = 0.2;
  // The padding of a node's box around its text. The top one holds the lower half of the
  // entity's badge, whose pill ends 4 px above the text (at 9 px it touched the text and OCR
  // read "fE12) Hu bble own work"). Every node has the same padding, badge or none, so that a
  // node's box, and the picture, stay as they are when tau gives it a badge or takes it away.
  const BOX_MARGIN = { top: 11, right: 7, bottom: 5, left: 7 };
  function marginOf() {
    return BOX_MARGIN;
  }
  // How many layouts free of overlapping boxes arrange() also places the relation labels in.
  const LABEL_TRIES = 6;
  // The room thin() keeps around a label's text (labelBox's room: 1 px each side, half a
  // pixel above and below), so that rounding never lets it touch a text, a box or a label.
  const THIN_ROOM = 0.5;

  // A label thin() hid (it would lie on a node's text or another label) shows while its edge is part
  // of the focus (reveal), and always in the edge's tooltip. A lifted label (drawLifted) is drawn
  // by the page over the nodes, so vis-network draws none.
  function edgeStyle(e, state, reveal) {
    e.state = state;
    const dim = state === "dim";
    const hot = state === "hot";
    const base = e.marked ? O.markedEdge : hot ? "#222222" : dim ? "#e2e2e2" : "#8a8a8a";
    return {
      id: e.id,
      label: (e.hidden && !reveal) || e.lifted ? HIDDEN : e.label,
      color: { color: e.marked && dim ? fade(O.markedEdge, 0.5) : base, highlight: "#222222", hover: "#444444" },
      width: hot ? 3.5 : e.marked ? 3 : 1.5,
      font: {
        size: O.edgeFont, face: O.fontFace, align: "horizontal", color: dim ? "#c4c4c4" : "#404040",
        strokeWidth: 4, strokeColor: "#ffffff",
      },
    };
  }

  function build(panel, box) {
    const container = el("div", "s3kg-canvas");
    container.id = "s3kg-graph-" + panel.key;
    container.style.height = O.canvasHeight + "px";
    box.appendChild(container);
    if (!panel.nodes.length) {
      container.appendChild(el("div", "s3kg-empty", panel.empty));
      readyCount += 1;
      return;
    }
    const first = firstPlace(panel, container);
    const nodes = new vis.DataSet(panel.nodes.map(n => Object.assign(nodeStyle(n, "normal"), {
      label: n.label, title: n.title, x: first[n.id].x, y: first[n.id].y, shape: "box", chosen: false,
      margin: BOX_MARGIN, shapeProperties: { borderRadius: 4 }, widthConstraint: { maximum: O.nodeWrap },
    })));
    const edges = new vis.DataSet(panel.edges.map(e => {
      const out = Object.assign(edgeStyle(e, "normal"), {
        from: e.from, to: e.to, label: e.label, title: e.title, chosen: false,
        arrows: { to: { enabled: true, scaleFactor: 0.55 } },
        widthConstraint: { maximum: O.edgeWrap },
        smooth: e.smooth || false,
      });
      if (e.selfReference) out.selfReference = e.selfReference;
      return out;
    }));
    const network = new vis.Network(container, { nodes: nodes, edges: edges }, {
      autoResize: true,
      physics: { enabled: false },
      layout: { randomSeed: 7, improvedLayout: false },
      interaction: {
        hover: true, tooltipDelay: 250, zoomView: false, dragView: true, dragNodes: false,
        selectable: true, selectConnectedEdges: false, keyboard: false,
      },
      nodes: { scaling: { label: { drawThreshold: 1 } } },
      edges: { scaling: { label: { drawThreshold: 1 } } },
    });
    const p = { key: panel.key, panel: panel, nodes: nodes, edges: edges, network: network,
                container: container, byId: {}, scale: 1, overlap: 0 };
    for (const n of panel.nodes) {
      p.byId[n.id] = n;
      for (const b of n.badges) (badgeIndex[b] = badgeIndex[b] || []).push([panel.key, n.id]);
    }
    panels[panel.key] = p;
    window.s3kgNetworks[panel.key] = network;

    network.on("afterDrawing", ctx => { drawLifted(p, ctx); drawBadges(p, ctx); });
    network.on("hoverNode", ev => { transient = nodeFocus(panel.key, ev.node); apply(); });
    network.on("blurNode", () => { transient = null; apply(); });
    network.on("click", ev => {
      if (ev.nodes.length) {
        const f = nodeFocus(panel.key, ev.nodes[0]);
        sticky = sticky && sticky.id === f.id ? null : f;
      } else if (ev.edges.length) {
        const e = edges.get(ev.edges[0]);
        const rows = rowsOfTriple(panel.key, e.triple);
        sticky = rows.length ? rowFocus(rows[0]) : null;
      } else {
        sticky = null;
      }
      transient = null;
      apply();
    });
    // vis-network measures a label only when it draws the node, and it skips nodes outside the
    // view: show everything once, measure, then place (and count the panel ready once drawn).
    network.once("afterDrawing", () => {
      network.fit({ animation: false });
      network.once("afterDrawing", () => {
        arrange(p);
        fitHeads();
        network.once("afterDrawing", () => { readyCount += 1; markReady(); });
        network.redraw();
      });
      network.redraw();
    });
  }

  // The width of a node's badge's pill. Every badge is written out (a node of four answer
  // entities carries "E2+E3+E5+E15", as the table does), and a pill wider than its box runs
  // past the box's right border rather than widening the box (a box's size never depends on
  // its badges, see BOX_MARGIN).
  const pillMeasure = document.createElement("canvas").getContext("2d");
  function pillWidth(n) {
    pillMeasure.font = "bold " + O.badgeFont + "px " + O.fontFace;
    return pillMeasure.measureText(n.badgeText).width + 8;
  }

  // A lifted relation label: one the layout left on a node box's padding or border, never on
  // its text or badge. vis-network draws the nodes over the edges' labels, which would cut it
  // ("sed rabies" for "used rabies", issue 58), so the page draws it over the nodes, as
  // vis-network would draw it: at the middle of its edge, in lines of at most edgeWrap px,
  // with a white halo; dimmed with its edge.
  function drawLifted(p, ctx) {
    const lifted = p.panel.edges.filter(e => e.lifted && !e.hidden);
    if (!lifted.length) return;
    ctx.save();
    ctx.font = O.edgeFont + "px " + O.fontFace;
    ctx.textAlign = "center";
    ctx.textBaseline = "middle";
    ctx.lineJoin = "round";
    for (const e of lifted) {
      const pt = labelPoint(p, e);
      if (!pt) continue;
      const lines = wrapped(ctx, e.label, O.edgeWrap);
      const lh = labelSize(p, e)[1] / lines.length;
      lines.forEach((line, i) => {
        const y = pt.y + (i - (lines.length - 1) / 2) * lh;
        ctx.lineWidth = 4;
        ctx.strokeStyle = "#ffffff";
        ctx.strokeText(line, pt.x, y);
        ctx.fillStyle = e.state === "dim" ? "#c4c4c4" : "#404040";
        ctx.fillText(line, pt.x, y);
      });
    }
    ctx.restore();
  }

  // Words in lines of at most width px, as vis-network 9.1.2 wraps a label with a width
  // constraint: its LabelSplitter measures a line with three spaces between words (a space is
  // a word of its own there, and it joins words with a space), then draws it with one.
  function wrapped(ctx, text, width) {
    const lines = [];
    let line = [];
    for (const word of String(text).split(" ").filter(w => w)) {
      if (line.length && ctx.measureText([...line, word].join("   ")).width > width) {
        lines.push(line.join(" "));
        line = [];
      }
      line.push(word);
    }
    lines.push(line.join(" "));
    return lines;
  }

  // The badge: a pill in the entity's colour on the top border of its box (inside the box's
  // top padding, so it never changes the box's size and never covers the label).
  function drawBadges(p, ctx) {
    const ids = p.panel.nodes.filter(n => n.badges.length).map(n => n.id);
    if (!ids.length) return;
    ctx.save();
    ctx.font = "bold " + O.badgeFont + "px " + O.fontFace;
    ctx.textAlign = "center";
    ctx.textBaseline = "middle";
    for (const id of ids) {
      const n = p.byId[id];
      const b = p.network.getBoundingBox(id);
      const w = pillWidth(n);
      const h = O.badgeFont + 3;
      const x = b.left + 4, y = b.top - pillAbove();
      ctx.beginPath();
      const r = h / 2;
      ctx.moveTo(x + r, y); ctx.lineTo(x + w - r, y); ctx.arc(x + w - r, y + r, r, -Math.PI / 2, Math.PI / 2);
      ctx.lineTo(x + r, y + h); ctx.arc(x + r, y + r, r, Math.PI / 2, -Math.PI / 2);
      ctx.closePath();
      const dim = p.state && p.state[id] === "dim";
      ctx.globalAlpha = dim ? 0.35 : 1;
      ctx.fillStyle = n.colour;
      ctx.fill();
      ctx.lineWidth = 1.5;
      ctx.strokeStyle = "#ffffff";
      ctx.stroke();
      ctx.fillStyle = n.badgeInk;
      ctx.fillText(n.badgeText, x + w / 2, y + h / 2 + 0.5);
      ctx.globalAlpha = 1;
    }
    ctx.restore();
  }

  // -- placing: fill the frame, then push overlapping labels apart inside it -----------------

  // The first draw, before vis-network has measured a label: the skeletons packed for the frame
  // with the label boxes Python estimated (bw, bh: half width and height). arrange() places
  // them again with the measured boxes.
  function firstPlace(panel, container) {
    const m = O.margin / 2;
    const comps = [];
    for (const n of panel.nodes) {
      (comps[n.comp] = comps[n.comp] || []).push({
        id: n.id, rx: n.rx, ry: n.ry, l: n.bw + m, r: n.bw + m, t: n.bh + m, b: n.bh + m,
      });
    }
    const W = Math.max(container.clientWidth - 2 * O.pad, 50);
    const H = Math.max(container.clientHeight - 2 * O.pad, 50);
    const at = {};
    for (const n of fill(comps, W, H, H > W * 1.15)) at[n.id] = n;
    return at;
  }

  // Python gives every node a place relative to its component's centre (a Kamada-Kawai
  // skeleton, longest axis horizontal); the components are packed here, and only here, as
  // only here are the frame's size and the label boxes known. With the boxes vis-network
  // measured and the frame's real size: for each scale from the largest down to minScale, the frame holds
  // W / scale x H / scale canvas pixels; the components' skeletons are packed in shelves and
  // stretched to fill that area, then every pair of overlapping boxes is pushed apart (each box
  // kept inside the frame, the relation labels' boxes taking part: relax) until none overlaps.
  // Of the tries without overlapping boxes, the largest scale wins, and at that scale the
  // arrangement with clearly fewer relation labels on boxes and labels; if none is free of
  // overlaps, minScale with the fewest. Same data, same frame: same picture.

  function arrange(p) {
    const net = p.network;
    loopOffsets(p);
    const positions = net.getPositions();
    const comps = [];
    for (const n of p.panel.nodes) {
      const pos = positions[n.id];
      const b = net.getBoundingBox(n.id);
      const m = O.margin / 2;
      (comps[n.comp] = comps[n.comp] || []).push({
        id: n.id, rx: n.rx, ry: n.ry,
        l: pos.x - b.left + m, r: b.right - pos.x + m, t: pos.y - b.top + m, b: b.bottom - pos.y + m,
      });
    }
    p.placedFor = [p.container.clientWidth, p.container.clientHeight];
    const W = Math.max(p.container.clientWidth - 2 * O.pad, 50);
    const H = Math.max(p.container.clientHeight - 2 * O.pad, 50);
    const upright = H > W * 1.15;
    const labels = edgeLabels(p);
    // Layouts with room between the boxes (for the relation labels) at every scale first, then
    // tightly packed rows; the first without overlaps wins.
    const tries = [];
    for (const scale of O.scales) tries.push([scale, "fill", 0], [scale, "rows", 0.72]);
    for (const scale of O.scales) tries.push([scale, "rows", 0.86]);
    for (const scale of O.scales) tries.push([scale, "rows", 1]);
    tries.push([O.lastScale, "rows", 1]);
    if (p.panel.nodes.length > O.maxNodes) for (const scale of O.bigScales) tries.push([scale, "rows", 1]);
    // A try whose boxes do not overlap beats one whose boxes do; of two such (at one scale: see
    // below), the one with clearly fewer relation labels on boxes and labels (the first on a
    // near tie).
    const better = (t, b) => {
      if (!b) return true;
      if (t.overlap === 0 && b.overlap === 0) return t.labels < b.labels * 0.7;
      if (t.overlap === 0 || b.overlap === 0) return t.overlap === 0;
      return (t.scale >= O.lastScale && t.overlap < b.overlap) || t.overlap < b.overlap * 0.5;
    };
    // The boxes alone are placed in every try; the relation labels join in (the costly part) in
    // the first LABEL_TRIES tries whose boxes come out free, then the choice is made. Once a try
    // is free, only the other arrangements at its scale are tried: the relation labels never
    // make the text smaller (the placing of issue 43 let a smaller scale win where its labels
    // clashed less: the node labels lost 4 % of their size and OCR read fewer of them, issue 58;
    // a label that has no room at the largest scale is bent, lifted or hidden by thin). A
    // picture of more than maxNodes nodes (a whole KG) places its boxes only.
    const withLabels = labels.length > 0 && p.panel.nodes.length <= O.maxNodes;
    let best = null;
    let labelled = 0;
    for (const [scale, how, share] of tries) {
      if (best && best.overlap === 0 && scale < best.scale) continue;
      const Wc = W / scale, Hc = H / scale;
      const nodes = how === "fill" ? fill(comps, Wc, Hc, upright) : rows(comps, Wc, Hc, upright, share);
      let [overlap, clashes] = relax(nodes, Wc, Hc, null);
      if (overlap === 0 && withLabels) {
        labelled += 1;
        [overlap, clashes] = relax(nodes, Wc, Hc, labels);
      } else if (withLabels) {
        clashes = Infinity;
      }
      const tried = { scale: scale, nodes: nodes, overlap: overlap, labels: clashes, Wc: Wc, Hc: Hc, how: how };
      if (better(tried, best)) best = tried;
      if (overlap === 0 && (clashes === 0 || labelled >= LABEL_TRIES)) break;
    }
    p.nodes.update(best.nodes.map(n => ({ id: n.id, x: n.x, y: n.y })));
    bend(p, best.nodes);
    const e = O.pad / best.scale;  // the frame shows the pad around Wc x Hc
    thin(p, best.nodes, { l: -e, t: -e, r: best.Wc + e, b: best.Hc + e });
    p.scale = best.scale;
    p.overlap = best.overlap;
    p.how = best.how;
    net.moveTo({ position: { x: best.Wc / 2, y: best.Hc / 2 }, scale: best.scale, animation: false });
  }

  // The relation labels relax() keeps clear: a straight edge's label sits halfway between its
  // nodes' centres, in the box vis-network draws it in (half width hw and half height hh,
  // canvas pixels). A curved edge (one of two between the same nodes) and a loop draw theirs
  // off the line, and are left out.
  function edgeLabels(p) {
    const out = [];
    for (const e of labelledEdges(p)) {
      if (e.smooth || e.from === e.to) continue;
      const [w, h] = labelSize(p, e);
      out.push({ from: e.from, to: e.to, hw: w / 2 + 2, hh: h / 2 + 1 });
    }
    return out;
  }

  // The edges that draw a label (a loop draws its own beside its node).
  function labelledEdges(p) {
    return p.panel.edges.filter(e => e.label);
  }

  // Where a loop's label stands from its node's centre: vis-network draws it beside the node,
  // at an offset that depends only on the node's box and the loop's size, so the offset it
  // was first drawn at holds wherever the node is placed (kept from that draw).
  function loopOffsets(p) {
    p.loops = p.loops || {};
    for (const e of p.panel.edges) {
      if (!e.label || e.from !== e.to || p.loops[e.id]) continue;
      const body = p.network.body.edges[e.id];
      const s = body && body.labelModule && body.labelModule.size;
      const node = p.network.body.nodes[e.from];
      if (s && s.width > 0 && node && !e.hidden && !e.lifted) {
        p.loops[e.id] = { dx: s.left + s.width / 2 - node.x, dy: s.top + s.height / 2 - node.y };
      }
    }
  }

  // The centre of an edge's label as drawn now: the middle of its line or curve, or beside
  // its node for a loop (null where that is not known yet).
  function labelPoint(p, e) {
    const body = p.network.body.edges[e.id];
    if (!body) return null;
    if (e.from === e.to) {
      const node = p.network.body.nodes[e.from], off = p.loops && p.loops[e.id];
      return node && off ? { x: node.x + off.dx, y: node.y + off.dy } : null;
    }
    return body.edgeType && body.edgeType.getPoint ? body.edgeType.getPoint(0.5) : null;
  }

  // The size of an edge's label as vis-network draws it: the widest of its lines (words in
  // lines of at most edgeWrap px) by a line of edgeFont px each. Measured here with the same
  // font, so it is known before the first draw and whether or not vis-network draws it (a
  // hidden or lifted label).
  const labelMeasure = document.createElement("canvas").getContext("2d");
  function labelSize(p, e) {
    if (!e.size) {
      labelMeasure.font = O.edgeFont + "px " + O.fontFace;
      const lines = wrapped(labelMeasure, e.label, O.edgeWrap);
      e.size = [Math.max(...lines.map(l => labelMeasure.measureText(l).width)), lines.length * O.edgeFont];
    }
    return e.size;
  }


  // Where the edge's label is drawn now (the middle of its line or curve), as a box in canvas
  // pixels with a little room around it (room 0: the text's own box).
  function labelBox(p, e, room = 1) {
    const pt = labelPoint(p, e);
    if (!pt) return null;
    const [w, h] = labelSize(p, e);
    return { x: pt.x, y: pt.y, l: w / 2 + 2 * room, r: w / 2 + 2 * room, t: h / 2 + room, b: h / 2 + room };
  }

  // Whether two boxes share more than a sliver (half a pixel each way).
  function boxesTouch(a, c) {
    const ox = Math.min(a.x + a.r, c.x + c.r) - Math.max(a.x - a.l, c.x - c.l);
    const oy = Math.min(a.y + a.b, c.y + c.b) - Math.max(a.y - a.t, c.y - c.t);
    return ox > 0.5 && oy > 0.5;
  }

  // Whether a label's box (a) covers enough of another box (c) to hide text: a share of the
  // smaller of the two (a fifth: a label grazing a text is still read; thin() hides a label from
  // half of that on, as where vis-network draws a curve's label differs by a pixel or two).
  function boxesMeet(a, c, share = LABEL_COVER) {
    const ox = Math.min(a.x + a.r, c.x + c.r) - Math.max(a.x - a.l, c.x - c.l);
    const oy = Math.min(a.y + a.b, c.y + c.b) - Math.max(a.y - a.t, c.y - c.t);
    if (ox <= 0 || oy <= 0) return false;
    const smaller = Math.min((a.l + a.r) * (a.t + a.b), (c.l + c.r) * (c.t + c.b));
    return ox * oy >= share * smaller;
  }

  // vis-network draws the nodes over the edges' labels: a label on any part of a node's box is
  // cut by it ("sed rabies" for "used rabies", issue 58), and two labels on each other cut each
  // other. So every label shown keeps its text off the nodes' texts and badges and off the
  // labels placed before it, and one on a box's padding or border is lifted (drawLifted: drawn
  // over the nodes). A label the layout left on a text, a badge or a label is moved first: its
  // edge is bent, either way and by one to five bulges, and the first bend that frees it (its
  // curve crossing no other box) is kept, one clear of every box before one that must be
  // lifted. Only a label no bend frees is hidden (shown while its node or triple is in focus,
  // and on hover; the picture's header says how many). The highlighted (marked) edges' labels
  // are placed first, then the others in the KG's order.
  function thin(p, nodes, frame) {
    const m = O.margin / 2;
    const boxes = [];
    const texts = [];  // what a label must leave readable: a node's text, and its badge's pill
    for (const n of nodes) {
      const B = marginOf();
      const box = { id: n.id, x: n.x, y: n.y, l: n.l - m, r: n.r - m, t: n.t - m, b: n.b - m };
      boxes.push(box);
      texts.push({ x: n.x, y: n.y, l: box.l - B.left, r: box.r - B.right, t: box.t - B.top, b: box.b - B.bottom });
      const pill = pillBox(p.byId[n.id], box.x - box.l, box.y - box.t);
      if (pill) texts.push(Object.assign(pill, { l: pill.l + 1, r: pill.r + 1, t: pill.t + 1, b: pill.b + 1 }));
    }
    const kept = [];
    // inside the frame: a bend could carry a label past the picture's edge ("came from" cut
    // at the top of demo-27's gold KG at 1280x720)
    const inside = box => box.x - box.l >= frame.l && box.x + box.r <= frame.r
      && box.y - box.t >= frame.t && box.y + box.b <= frame.b;
    const clear = box => inside(box) && !texts.some(o => boxesTouch(box, o)) && !kept.some(o => boxesTouch(box, o));
    const onBox = box => boxes.some(o => boxesTouch(box, o));
    const order = labelledEdges(p);
    order.sort((a, b) => (b.marked ? 1 : 0) - (a.marked ? 1 : 0));
    let hidden = 0;
    for (const e of order) {
      e.hidden = false;
      e.lifted = false;
      let box = labelBox(p, e, THIN_ROOM);
      if (!box) continue;
      if (!clear(box) || onBox(box)) {
        const away = rebend(p, e, b => clear(b) && !onBox(b), boxes, frame);
        if (away) box = away;
        else if (clear(box)) e.lifted = true;
        else {
          const over = rebend(p, e, clear, boxes, frame);
          if (over) { box = over; e.lifted = onBox(over); } else e.hidden = true;
        }
      }
      if (e.hidden) hidden += 1; else kept.push(box);
    }
    p.edges.update(p.panel.edges.map(e => ({ id: e.id, label: e.hidden || e.lifted ? HIDDEN : e.label })));
    if (p.hid) {
      p.hid.textContent = hidden ? "\u00b7 " + hidden + (hidden === 1 ? " label" : " labels") + " on hover" : "";
      p.hid.title = hidden ? "Relation labels with no room of their own: hover the edge, or a node or triple row to show them" : "";
    }
  }

  // How far a badge's pill stands above its box's top border: half a pixel more than half its
  // height, so that it ends 4 px above the text (BOX_MARGIN.top) and no higher than the room
  // the layout keeps between boxes.
  function pillAbove() {
    return (O.badgeFont + 3) / 2 + 0.5;
  }

  // The box of a node's badge (as drawBadges draws it) for a box whose top left corner is at
  // (left, top), as {x, y, l, r, t, b}; null for a node without a badge.
  function pillBox(n, left, top) {
    if (!n || !n.badgeText) return null;
    const w = pillWidth(n), h = O.badgeFont + 3;
    return { x: left + 4 + w / 2, y: top - pillAbove() + h / 2, l: w / 2, r: w / 2, t: h / 2, b: h / 2 };
  }

  // Bend an edge whose label is not free (the shapes of bends(), in order). Returns the label's
  // box on the first shape that frees it (free(box)) with its curve crossing no other box (the
  // shape kept), or null (the edge as it was). A loop, and the second of two edges between the
  // same nodes (already curved away from the first), keep their shape.
  function rebend(p, e, free, boxes, frame) {
    if (e.selfReference || e.smooth) return null;
    const a = p.network.body.nodes[e.from], b = p.network.body.nodes[e.to];
    if (!a || !b) return null;
    const was = p.network.body.edges[e.id].options.smooth;  // vis-network updates it in place
    const before = was && was.enabled ? { enabled: true, type: was.type, roundness: was.roundness } : false;
    const length = Math.hypot(b.x - a.x, b.y - a.y) || 1;
    const others = boxes.filter(o => o.id !== e.from && o.id !== e.to);
    for (const smooth of bends(length)) {
      p.edges.update({ id: e.id, smooth: smooth });
      const box = labelBox(p, e, THIN_ROOM);
      if (box && free(box) && !curveCrosses(p, e, others, frame)) {
        if (!p.bent.includes(e.id)) p.bent.push(e.id);
        return box;
      }
    }
    p.edges.update({ id: e.id, smooth: before });
    return null;
  }

  // The shapes rebend() tries, in order: an arc either way, bulging about 25, 50, 80, 120 and
  // 170 px (whatever the edge's length), then vis-network's bends that put the label elsewhere
  // (an elbow, horizontal or vertical first; a diagonal cross; a step), each at four roundnesses.
  function bends(length) {
    const out = [];
    for (const bulge of [25, 50, 80, 120, 170]) {
      for (const type of ["curvedCW", "curvedCCW"]) {
        out.push({ enabled: true, type: type, roundness: Math.min(bulge / length, 1) });
      }
    }
    for (const type of ["horizontal", "vertical", "diagonalCross", "discrete"]) {
      for (const roundness of [0.3, 0.5, 0.7, 0.9]) out.push({ enabled: true, type: type, roundness: roundness });
    }
    return out;
  }

  // Whether the edge's drawn curve leaves the frame or passes through one of the boxes (sampled along the curve,
  // its ends left out: they sit on its own nodes' borders).
  function curveCrosses(p, e, boxes, frame) {
    const type = p.network.body.edges[e.id].edgeType;
    for (let i = 2; i <= 18; i++) {
      const pt = type.getPoint(i / 20);
      if (pt.x < frame.l || pt.x > frame.r || pt.y < frame.t || pt.y > frame.b) return true;
      if (boxes.some(o => pt.x > o.x - o.l && pt.x < o.x + o.r && pt.y > o.y - o.t && pt.y < o.y + o.b)) return true;
    }
    return false;
  }

  // The skeletons packed in shelves, then stretched so that the boxes fill Wc x Hc.
  function fill(comps, Wc, Hc, upright) {
    const placed = comps.map(comp => {
      const nodes = comp.map(n => ({
        id: n.id, l: n.l, r: n.r, t: n.t, b: n.b,
        x: upright ? -n.ry : n.rx, y: upright ? n.rx : n.ry,
      }));
      let L = Infinity, R = -Infinity, T = Infinity, B = -Infinity;
      for (const n of nodes) {
        L = Math.min(L, n.x - n.l); R = Math.max(R, n.x + n.r);
        T = Math.min(T, n.y - n.t); B = Math.max(B, n.y + n.b);
      }
      return { nodes: nodes, L: L, T: T, w: R - L, h: B - T };
    });
    const packed = pack(placed, Wc, Hc);
    const all = [];
    placed.forEach((c, i) => {
      const [ox, oy] = packed.spots[i];
      for (const n of c.nodes) { n.x += ox - c.L; n.y += oy - c.T; all.push(n); }
    });
    // stretch the centres so that the outermost boxes touch the frame's sides
    let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
    let l = 0, r = 0, t = 0, b = 0;
    for (const n of all) {
      if (n.x < x0) { x0 = n.x; } if (n.x > x1) { x1 = n.x; }
      if (n.y < y0) { y0 = n.y; } if (n.y > y1) { y1 = n.y; }
      l = Math.max(l, n.l); r = Math.max(r, n.r); t = Math.max(t, n.t); b = Math.max(b, n.b);
    }
    // ... but a small picture is not blown up: no edge grows past twice its skeleton length
    const fx = x1 > x0 ? Math.min(Math.max(Wc - l - r, 0) / (x1 - x0), O.maxStretch) : 0;
    const fy = y1 > y0 ? Math.min(Math.max(Hc - t - b, 0) / (y1 - y0), O.maxStretch) : 0;
    const cx = (Wc - (x1 - x0) * fx) / 2, cy = (Hc - (y1 - y0) * fy) / 2;
    for (const n of all) {
      n.x = cx + (n.x - x0) * fx;
      n.y = cy + (n.y - y0) * fy;
    }
    return all;
  }

  // An edge whose straight line would cross another node's box is drawn as a curve, so that it
  // never runs through a label. Of the curves tried (either side, two bulges), the one whose
  // label lands on the fewest node boxes and other relation labels wins (the first on a tie).
  function bend(p, nodes) {
    const at = {};
    for (const n of nodes) at[n.id] = n;
    const crosses = (a, b) => nodes.some(n => n !== a && n !== b && segmentHitsBox(a, b, n));
    const labelled = labelledEdges(p);
    const clashes = (e, box) => {
      let k = 0;
      for (const n of nodes) if (boxesMeet(box, n)) k += 1;
      for (const o of labelled) {
        if (o === e) continue;
        const ob = labelBox(p, o);
        if (ob && boxesMeet(box, ob)) k += 1;
      }
      return k;
    };
    // a new arrangement (the frame resized) starts from straight lines
    if (p.bent && p.bent.length) p.edges.update(p.bent.map(id => ({ id: id, smooth: false })));
    p.bent = [];
    let side = 0;
    for (const e of p.panel.edges) {
      if (e.smooth || e.selfReference) continue;
      const a = at[e.from], b = at[e.to];
      if (!a || !b || !crosses(a, b)) continue;
      p.bent.push(e.id);
      side += 1;
      // a bulge of about 45 px, whatever the edge's length, so that a curve stays near its ends
      const round = Math.min(0.35, Math.max(0.08, 45 / Math.hypot(b.x - a.x, b.y - a.y)));
      const first = side % 2 ? "curvedCW" : "curvedCCW";
      const other = side % 2 ? "curvedCCW" : "curvedCW";
      let best = null;
      for (const [type, roundness] of [[first, round], [other, round], [first, round * 2], [other, round * 2]]) {
        const smooth = { enabled: true, type: type, roundness: Math.min(roundness, 0.6) };
        p.edges.update({ id: e.id, smooth: smooth });
        const box = e.label ? labelBox(p, e) : null;
        const k = box ? clashes(e, box) : 0;
        if (!best || k < best.k) best = { k: k, smooth: smooth };
        if (k === 0) break;
      }
      p.edges.update({ id: e.id, smooth: best.smooth });
    }
  }

  function segmentHitsBox(a, b, n) {
    // Liang-Barsky clipping of a -> b against n's box (a little smaller than the margin box)
    const l = n.x - n.l + O.margin / 2, r = n.x + n.r - O.margin / 2;
    const t = n.y - n.t + O.margin / 2, bt = n.y + n.b - O.margin / 2;
    const dx = b.x - a.x, dy = b.y - a.y;
    let u0 = 0, u1 = 1;
    for (const [pp, q] of [[-dx, a.x - l], [dx, r - a.x], [-dy, a.y - t], [dy, bt - a.y]]) {
      if (pp === 0) { if (q < 0) return false; continue; }
      const u = q / pp;
      if (pp < 0) { if (u > u1) return false; if (u > u0) u0 = u; }
      else { if (u < u0) return false; if (u < u1) u1 = u; }
    }
    return u0 < u1;
  }

  // Dense pictures: the nodes in rows, read off the skeleton top to bottom and left to right
  // (each component of more than three nodes on rows of its own), a row filled up to share of
  // the frame's width, the rows and the boxes in each spread over the frame.
  function rows(comps, Wc, Hc, upright, share) {
    const limit = Wc * share;
    const lines = [];
    let line = null;
    for (const comp of comps) {
      const nodes = comp.map(n => ({
        id: n.id, l: n.l, r: n.r, t: n.t, b: n.b,
        sx: upright ? -n.ry : n.rx, sy: upright ? n.rx : n.ry, x: 0, y: 0,
      }));
      // rows of the skeleton: sort by y, then cut into bands as tall as a box
      nodes.sort((a, b) => a.sy - b.sy || a.sx - b.sx);
      const bands = [];
      for (const n of nodes) {
        const band = bands[bands.length - 1];
        if (band && n.sy - band[0].sy < (band[0].t + band[0].b)) band.push(n); else bands.push([n]);
      }
      if (!line || (comp.length > 3 && line.nodes.length)) { line = { nodes: [], w: 0, h: 0 }; lines.push(line); }
      for (const band of bands) {
        band.sort((a, b) => a.sx - b.sx);
        for (const n of band) {
          const w = n.l + n.r;
          if (line.nodes.length && line.w + w > limit) { line = { nodes: [], w: 0, h: 0 }; lines.push(line); }
          line.nodes.push(n);
          line.w += w;
          line.h = Math.max(line.h, n.t + n.b);
        }
      }
    }
    const used = lines.filter(l => l.nodes.length);
    const total = used.reduce((a, l) => a + l.h, 0);
    const gapY = used.length > 1 ? Math.max(0, (Hc - total) / (used.length - 1)) : 0;
    let y = used.length > 1 ? 0 : Math.max(0, (Hc - total) / 2);
    const out = [];
    for (const l of used) {
      const gapX = l.nodes.length > 1 ? Math.max(0, (Wc - l.w) / (l.nodes.length - 1)) : 0;
      let x = l.nodes.length > 1 ? 0 : Math.max(0, (Wc - l.w) / 2);
      for (const n of l.nodes) {
        n.x = x + n.l;
        n.y = y + l.h / 2 - (n.t + n.b) / 2 + n.t;
        x += n.l + n.r + gapX;
        out.push(n);
      }
      y += l.h + gapY;
    }
    return out;
  }

  // Push overlapping boxes apart, each along the axis where the pair overlaps least for its
  // size (the other axis if the frame's side blocks it), every box kept inside Wc x Hc. First
  // with the relation labels (edgeLabels) taking part: a label is moved by moving both ends of its
  // edge, and a label on one of its own nodes lengthens its edge; then the boxes alone, so that
  // no label's push leaves two boxes on each other. Returns the area of boxes still overlapping
  // (0: none) and the area of relation labels still on a box or another label.
  function relax(nodes, Wc, Hc, labels) {
    const clamp = n => {
      n.x = Math.min(Math.max(n.x, n.l), Math.max(Wc - n.r, n.l));
      n.y = Math.min(Math.max(n.y, n.t), Math.max(Hc - n.b, n.t));
    };
    nodes.forEach(clamp);
    const byId = {};
    for (const n of nodes) byId[n.id] = n;
    const labs = (labels || []).filter(e => byId[e.from] && byId[e.to]).map(e => ({
      a: byId[e.from], b: byId[e.to], l: e.hw, r: e.hw, t: e.hh, b2: e.hh, x: 0, y: 0,
    }));
    const place = L => { L.x = (L.a.x + L.b.x) / 2; L.y = (L.a.y + L.b.y) / 2; };
    // overlap of a label (half sizes l, t) with a box n
    const over = (L, n) => [
      Math.min(L.x + L.r, n.x + n.r) - Math.max(L.x - L.l, n.x - n.l),
      Math.min(L.y + L.b2, n.y + n.b) - Math.max(L.y - L.t, n.y - n.t),
    ];
    const moveLabel = (L, dx, dy) => { L.a.x += dx; L.b.x += dx; L.a.y += dy; L.b.y += dy; };
    const sameEdge = (L, M) => (M.a === L.a && M.b === L.b) || (M.a === L.b && M.b === L.a);

    function boxRound() {
      let area = 0;
      for (let i = 0; i < nodes.length; i++) {
        const a = nodes[i];
        for (let j = i + 1; j < nodes.length; j++) {
          const c = nodes[j];
          const ox = Math.min(a.x + a.r, c.x + c.r) - Math.max(a.x - a.l, c.x - c.l);
          const oy = Math.min(a.y + a.b, c.y + c.b) - Math.max(a.y - a.t, c.y - c.t);
          if (ox <= 0.01 || oy <= 0.01) continue;
          area += ox * oy;
          let sideways = ox / (a.l + a.r + c.l + c.r) <= oy / (a.t + a.b + c.t + c.b);
          const dirX = c.x > a.x || (c.x === a.x && j % 2 === 0) ? 1 : -1;
          const dirY = c.y > a.y || (c.y === a.y && j % 2 === 0) ? 1 : -1;
          const roomX = dirX > 0 ? (a.x - a.l) + (Wc - c.x - c.r) : (Wc - a.x - a.r) + (c.x - c.l);
          const roomY = dirY > 0 ? (a.y - a.t) + (Hc - c.y - c.b) : (Hc - a.y - a.b) + (c.y - c.t);
          if (sideways && roomX < ox) sideways = false;
          else if (!sideways && roomY < oy) sideways = true;
          if (sideways) { const d = dirX * (ox / 2 + 0.05); a.x -= d; c.x += d; }
          else { const d = dirY * (oy / 2 + 0.05); a.y -= d; c.y += d; }
          clamp(a); clamp(c);
        }
      }
      return area;
    }

    // one round over the labels; with move false, only the area is measured
    function labelRound(move) {
      let area = 0;
      for (let i = 0; i < labs.length; i++) {
        const L = labs[i];
        place(L);
        for (const n of nodes) {
          const [ox, oy] = over(L, n);
          if (ox <= 0.01 || oy <= 0.01) continue;
          area += ox * oy;
          if (!move) continue;
          const sideways = ox / (L.l + L.r + n.l + n.r) <= oy / (L.t + L.b2 + n.t + n.b);
          if (n === L.a || n === L.b) {  // on its own node: its edge is too short, lengthen it
            const far = n === L.a ? L.b : L.a;
            if (sideways) { const d = (far.x >= n.x ? 1 : -1) * (ox / 2 + 0.05); far.x += d; n.x -= d; }
            else { const d = (far.y >= n.y ? 1 : -1) * (oy / 2 + 0.05); far.y += d; n.y -= d; }
          } else if (sideways) {
            const d = (n.x >= L.x ? 1 : -1) * (ox / 2 + 0.05); n.x += d; moveLabel(L, -d, 0);
          } else {
            const d = (n.y >= L.y ? 1 : -1) * (oy / 2 + 0.05); n.y += d; moveLabel(L, 0, -d);
          }
          clamp(n); clamp(L.a); clamp(L.b); place(L);
        }
        for (let j = i + 1; j < labs.length; j++) {
          const M = labs[j];
          if (sameEdge(L, M)) continue;
          place(M);
          const [ox, oy] = over(L, { x: M.x, y: M.y, l: M.l, r: M.r, t: M.t, b: M.b2 });
          if (ox <= 0.01 || oy <= 0.01) continue;
          area += ox * oy;
          if (!move) continue;
          if (ox / (L.l + L.r + M.l + M.r) <= oy / (L.t + L.b2 + M.t + M.b2)) {
            const d = (M.x >= L.x ? 1 : -1) * (ox / 2 + 0.05); moveLabel(M, d, 0); moveLabel(L, -d, 0);
          } else {
            const d = (M.y >= L.y ? 1 : -1) * (oy / 2 + 0.05); moveLabel(M, 0, d); moveLabel(L, 0, -d);
          }
          clamp(L.a); clamp(L.b); clamp(M.a); clamp(M.b); place(L);
        }
      }
      return area;
    }

    if (labs.length) {
      for (let round = 0; round < 150; round++) {
        const boxes = boxRound();
        if (labelRound(true) === 0 && boxes === 0) break;
      }
    }
    let area = 0;
    for (let round = 0; round < 400; round++) {
      area = boxRound();
      if (area === 0) break;
    }
    return [Math.round(area), Math.round(labelRound(false))];
  }

  function shelves(placed, limit) {
    const gap = O.gap;
    const spots = [];
    let x = 0, y = 0, shelfH = 0, width = 0;
    for (const e of placed) {
      if (x > 0 && x + e.w > limit + 1e-9) { y += shelfH + gap; x = 0; shelfH = 0; }
      spots.push([x, y]);
      x += e.w + gap;
      shelfH = Math.max(shelfH, e.h);
      width = Math.max(width, x - gap);
    }
    return { spots: spots, w: width, h: y + shelfH };
  }

  // Shelves of components for a W x H frame: every shelf width from the widest component to all
  // of them in a row is tried; the one the frame shows largest wins.
  function pack(placed, W, H) {
    const widths = placed.map(e => e.w);
    const widest = Math.max(...widths);
    const limits = new Set([widest, widest * 1.5, widest * 2, widest * 3]);
    let run = 0;
    widths.forEach((w, i) => { run += w + (i ? O.gap : 0); limits.add(run); });
    let best = null;
    for (const limit of [...limits].sort((a, b) => a - b)) {
      const s = shelves(placed, limit);
      const scale = Math.min(W / Math.max(s.w, 1e-9), H / Math.max(s.h, 1e-9));
      if (!best || scale > best.scale + 1e-12) best = Object.assign(s, { scale: scale, placed: placed });
    }
    return best;
  }

  // -- linking: a focus is a set of nodes (and edges) per picture -------------------------------

  function emptySets() {
    const s = {};
    for (const key of D.panelKeys) s[key] = new Set();
    return s;
  }

  function nodeFocus(key, id) {
    const nodes = emptySets(), edges = emptySets();
    const n = panels[key] && panels[key].byId[id];
    nodes[key].add(id);
    if (n) for (const b of n.badges) for (const [k2, id2] of badgeIndex[b] || []) nodes[k2].add(id2);
    return { id: "node:" + key + ":" + id, nodes: nodes, edges: edges, row: null };
  }

  function rowFocus(i) {
    const row = D.rows[i];
    const nodes = emptySets(), edges = emptySets();
    for (const key of D.panelKeys) {
      const t = row.links[key];
      const p = panels[key];
      if (t === null || t === undefined || !p) continue;
      for (const e of p.panel.edges) if (e.triple === t) {
        edges[key].add(e.id); nodes[key].add(e.from); nodes[key].add(e.to);
      }
    }
    return { id: "row:" + i, nodes: nodes, edges: edges, row: i };
  }

  function rowsOfTriple(key, triple) {
    const out = [];
    D.rows.forEach((row, i) => { if (row.links[key] === triple) out.push(i); });
    return out;
  }

  // A clicked node or row survives a new document of the same case (tau moved): it is kept in
  // the tab's sessionStorage under the case's key.
  function remember() {
    if (!D.stateKey) return;
    try {
      const key = "s3kg.focus." + D.stateKey;
      if (!sticky) sessionStorage.removeItem(key);
      else sessionStorage.setItem(key, JSON.stringify(sticky.row !== null ? { row: sticky.row } : { node: sticky.id }));
    } catch (e) { /* storage may be unavailable: nothing to keep */ }
  }

  function restore() {
    if (!D.stateKey) return;
    try {
      const saved = JSON.parse(sessionStorage.getItem("s3kg.focus." + D.stateKey) || "null");
      if (saved && typeof saved.row === "number" && saved.row < D.rows.length) sticky = rowFocus(saved.row);
      if (saved && typeof saved.node === "string") {
        const [, key, ...rest] = saved.node.split(":");
        const id = rest.join(":");
        if (panels[key] && panels[key].byId[id]) sticky = nodeFocus(key, id);
      }
      if (sticky) apply();
    } catch (e) { /* nothing to restore */ }
  }

  function apply() {
    remember();
    const f = transient || sticky;
    for (const key of Object.keys(panels)) {
      const p = panels[key];
      const hotN = f ? f.nodes[key] : null;
      const hotE = f ? f.edges[key] : null;
      const near = new Set();
      if (f && f.row === null) {
        for (const e of p.panel.edges) if (hotN.has(e.from) || hotN.has(e.to)) { near.add(e.from); near.add(e.to); }
      }
      p.state = {};
      for (const n of p.panel.nodes) {
        p.state[n.id] = !f ? "normal" : hotN.has(n.id) ? "hot" : near.has(n.id) ? "normal" : "dim";
      }
      p.nodes.update(p.panel.nodes.map(n => nodeStyle(n, p.state[n.id])));
      p.edges.update(p.panel.edges.map(e => {
        let state = "normal";
        let reveal = false;
        if (f) {
          if (f.row !== null) state = hotE.has(e.id) ? "hot" : "dim";
          else state = hotN.has(e.from) || hotN.has(e.to) ? "normal" : "dim";
          reveal = state !== "dim";
        }
        return edgeStyle(e, state, reveal);
      }));
    }
    document.querySelectorAll("#s3kg-table tbody tr").forEach(tr => {
      const i = +tr.dataset.row;
      tr.classList.toggle("hot", !!f && rowHot(i, f));
      tr.classList.toggle("picked", !!sticky && sticky.row === i);
    });
  }

  function rowHot(i, f) {
    if (f.row !== null) return f.row === i;
    const row = D.rows[i];
    for (const key of D.panelKeys) {
      const t = row.links[key];
      const p = panels[key];
      if (t === null || t === undefined || !p) continue;
      const [h, , tl] = p.panel.triples[t];
      if (f.nodes[key].has(h) || f.nodes[key].has(tl)) return true;
    }
    return false;
  }

  // -- the table --------------------------------------------------------------------------------

  function chip(key, nodeId, label) {
    const p = D.panelByKey[key];
    const n = p && p.nodeIndex[nodeId] !== undefined ? p.nodes[p.nodeIndex[nodeId]] : null;
    const c = el("span", "s3kg-chip");
    if (n && n.badges.length) {
      c.style.borderColor = n.colour;
      c.style.background = fade(n.colour, 0.85);
      c.appendChild(el("b", null, n.badgeText));  // the node's badge, written as drawn
      c.appendChild(document.createTextNode(" "));
    }
    c.appendChild(document.createTextNode(label));
    return c;
  }

  function tripleCell(key, t) {
    const td = el("td", "s3kg-triple");
    const p = D.panelByKey[key];
    if (t === null || t === undefined || !p) { td.appendChild(el("span", "s3kg-none", D.noMatch || "no triple to match")); return td; }
    const [h, rel, tl, hl, tll] = p.triples[t];
    td.appendChild(chip(key, h, hl));
    td.appendChild(el("span", "s3kg-rel", " " + rel + " "));
    td.appendChild(chip(key, tl, tll));
    return td;
  }

  // Per part, what the scorer's label alignment did: the part's best cosine to a label of the
  // picked triples and the label it was aligned to at tau (if any).
  function alignedCell(m) {
    const td = el("td", "s3kg-at");
    if (!m || m.other === null) { td.textContent = "\u2013"; return td; }
    const names = ["head", "relation", "tail"];
    const short = ["h", "r", "t"];
    const tips = [];
    m.aligned.forEach((ok, j) => {
      const s = el("span", ok ? "s3kg-ok" : "s3kg-no", short[j] + (ok ? "\u2713" : "\u2717"));
      td.appendChild(s);
      const cos = m.parts && m.parts[j] !== null ? "best cosine " + m.parts[j].toFixed(2) : "no cosine";
      const partner = m.partners ? m.partners[j] : null;
      const how = ok ? "aligned" : partner !== null ? "aligned to \u201c" + partner + "\u201d instead" : "not aligned";
      tips.push(names[j] + ": " + cos + ", " + how);
    });
    if (m.reading) tips.unshift("read turned round, as \u201c" + m.reading + "\u201d:");
    td.title = tips.join("\n") + "\n(aligned at tau " + D.tau + ")";
    td.classList.add(m.aligned.every(x => x) ? "s3kg-pass" : "s3kg-fail");
    return td;
  }

  function buildTable() {
    const table = document.getElementById("s3kg-table");
    if (!table) return;
    const head = el("thead");
    const hr = el("tr");
    for (const h of D.columns) { const th = el("th", null, h[0]); th.title = h[1]; hr.appendChild(th); }
    head.appendChild(hr);
    table.appendChild(head);
    const body = el("tbody");
    D.rows.forEach((row, i) => {
      const tr = el("tr");
      tr.dataset.row = String(i);
      tr.appendChild(el("td", "s3kg-num", String(row.number)));
      tr.appendChild(tripleCell("answer", row.links.answer));
      for (const key of ["gold", "context"]) {
        const m = row.matches[key];
        tr.appendChild(tripleCell(key, m ? m.other : null));
        const cos = el("td", "s3kg-cos", m && m.cosine !== null ? m.cosine.toFixed(2) : "\u2013");
        if (m && m.exact) cos.title = "the same sentence: picked before any cosine";
        tr.appendChild(cos);
        tr.appendChild(alignedCell(m));
      }
      tr.addEventListener("mouseenter", () => { transient = rowFocus(i); apply(); });
      tr.addEventListener("mouseleave", () => { transient = null; apply(); });
      tr.addEventListener("click", () => { sticky = sticky && sticky.row === i ? null : rowFocus(i); transient = null; apply(); });
      body.appendChild(tr);
    });
    table.appendChild(body);
  }

  // -- measuring (tests, benchmarks) ----------------------------------------------------------

  // A canvas box {x, y, l, r, t, b} on screen: {left, top, right, bottom}.
  function domBox(net, c) {
    const tl = net.canvasToDOM({ x: c.x - c.l, y: c.y - c.t });
    const br = net.canvasToDOM({ x: c.x + c.r, y: c.y + c.b });
    return { left: tl.x, top: tl.y, right: br.x, bottom: br.y };
  }

  function metrics() {
    const out = {};
    for (const key of Object.keys(panels)) {
      const p = panels[key];
      const net = p.network;
      const scale = net.getScale();
      const canvas = p.container.querySelector("canvas");
      const W = canvas ? canvas.clientWidth : p.container.clientWidth;
      const H = canvas ? canvas.clientHeight : p.container.clientHeight;
      const nodes = p.panel.nodes.map(n => {
        const b = net.getBoundingBox(n.id);
        const tl = net.canvasToDOM({ x: b.left, y: b.top });
        const br = net.canvasToDOM({ x: b.right, y: b.bottom });
        const font = net.body.nodes[n.id].options.font.size;
        const M = marginOf();
        const pill = pillBox(n, b.left, b.top);
        return { id: n.id, label: n.label, font: font, px: font * scale,
                 left: tl.x, top: tl.y, right: br.x, bottom: br.y,
                 // what a relation label must not cover: the text, and the badge's pill if any
                 text: { left: tl.x + M.left * scale, top: tl.y + M.top * scale,
                         right: br.x - M.right * scale, bottom: br.y - M.bottom * scale },
                 badge: pill ? domBox(net, pill) : null };
      });
      const edges = p.panel.edges.map(e => {
        const body = net.body.edges[e.id];
        const font = body.options.font.size;
        const out = { id: e.id, label: e.label, font: font, px: font * scale, hidden: !!e.hidden,
                      lifted: !!e.lifted };
        const s = body.labelModule && body.labelModule.size;
        let box = null;  // the box it is drawn in: vis-network's, or the page's for a lifted one
        if (e.label && e.lifted && !e.hidden) {
          const b = labelBox(p, e, 0);
          if (b) box = { left: b.x - b.l, top: b.y - b.t, right: b.x + b.r, bottom: b.y + b.b };
        } else if (e.label && !e.hidden && s && s.width > 0) {
          box = { left: s.left, top: s.top, right: s.left + s.width, bottom: s.top + s.height };
        }
        if (box) {  // on screen
          const tl = net.canvasToDOM({ x: box.left, y: box.top });
          const br = net.canvasToDOM({ x: box.right, y: box.bottom });
          Object.assign(out, { left: tl.x, top: tl.y, right: br.x, bottom: br.y });
        }
        return out;
      });
      out[key] = { scale: scale, overlap: p.overlap, layout: p.how, width: W, height: H, nodes: nodes, edges: edges };
    }
    return out;
  }

  function markReady() {
    if (readyCount < D.panels.length || window.s3kg.ready) return;
    restore();
    window.s3kg.ready = true;
    window.s3kg.readyAt = performance.now();
  }

  // -- the page ---------------------------------------------------------------------------------

  D.panelByKey = {};
  for (const panel of D.panels) {
    panel.nodeIndex = {};
    panel.nodes.forEach((n, i) => { panel.nodeIndex[n.id] = i; });
    D.panelByKey[panel.key] = panel;
  }
  const row = document.getElementById("s3kg-panels");
  const heads = [];
  // A header too wide for its picture says less ("12 triples" for "12 triples · 14 nodes"),
  // then takes two lines: never cut (issue 43: "Answer KG 0 tripl..." at 1280 px). Any part one
  // pixel too wide is cut (an ellipsis), so no slack, and the hidden labels' count counts too.
  function fitHeads() {
    for (const [head, sub, full] of heads) {
      head.classList.remove("s3kg-head-wrap");
      sub.textContent = full;
      const parts = [...head.querySelectorAll(".s3kg-sub")];
      const cut = () => head.scrollWidth > head.clientWidth || parts.some(s => s.scrollWidth > s.clientWidth);
      if (cut()) sub.textContent = full.split(" \u00b7 ")[0];
      if (cut()) head.classList.add("s3kg-head-wrap");
    }
  }
  // How many rows of the triple table show: all, or which ones of how many (the box scrolls).
  function countRows() {
    const line = document.getElementById("s3kg-table-count");
    const box = document.getElementById("s3kg-table-box");
    if (!line || !box) return;
    const all = [...box.querySelectorAll("tbody tr")];
    const top = box.getBoundingClientRect().top + (box.querySelector("thead") || box).offsetHeight;
    const bottom = box.getBoundingClientRect().bottom;
    const seen = all.map((r, i) => [i, r.getBoundingClientRect()])
      .filter(([, b]) => b.top >= top - 1 && b.bottom <= bottom + 1).map(([i]) => i);
    const n = all.length;
    const what = n === 1 ? "answer triple" : "answer triples";
    if (seen.length >= n) {
      line.textContent = n === 1 ? "The answer triple:" : "All " + n + " " + what + ":";
    } else {
      const first = seen.length ? seen[0] + 1 : 0, last = seen.length ? seen[seen.length - 1] + 1 : 0;
      line.textContent = "Showing " + first + "\u2013" + last + " of " + n + " " + what +
        ": scroll the table for the rest";
    }
    line.dataset.shown = String(seen.length);
    line.dataset.total = String(n);
  }
  for (const panel of D.panels) {
    const box = el("div", "s3kg-panel");
    box.style.flex = "1 1 " + (100 * panel.share).toFixed(2) + "%";
    const head = el("div", "s3kg-head");
    head.appendChild(el("span", "s3kg-title", panel.title));
    const sub = head.appendChild(el("span", "s3kg-sub", panel.subtitle));
    sub.title = panel.subtitle;  // the full text where a narrow picture shortens it
    heads.push([head, sub, panel.subtitle]);
    const hid = head.appendChild(el("span", "s3kg-sub s3kg-hid", ""));
    box.appendChild(head);
    if (panel.note) box.appendChild(el("div", "s3kg-note", panel.note));
    row.appendChild(box);
    build(panel, box);
    if (panels[panel.key]) panels[panel.key].hid = hid;
  }
  buildTable();
  fitHeads();
  countRows();
  const tableBox = document.getElementById("s3kg-table-box");
  if (tableBox) tableBox.addEventListener("scroll", countRows, { passive: true });
  markReady();
  let resizeTimer = null;
  window.addEventListener("resize", () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => {
      // a picture is placed again only when its frame changed (the page's height alone, as
      // when the frame grows to its content, leaves every picture as it is)
      for (const key of Object.keys(panels)) {
        const p = panels[key];
        if (p.container.clientWidth !== p.placedFor[0] || p.container.clientHeight !== p.placedFor[1]) arrange(p);
      }
      fitHeads();
      countRows();
    }, 150);
  });
})();
