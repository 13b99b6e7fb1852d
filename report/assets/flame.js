// memdoctor HTML report: the flame graphs, drawn as icicles (root on top) on a canvas.
(function () {
  "use strict";

  var md = window.memdoctor;
  var theme = md.theme, mix = md.mix, patternTile = md.patternTile, fmt = md.fmt;

  // ---- flame graphs (icicles) ------------------------------------------------------------
  function flameTree(f) {
    var i = 0;
    function node(depth) {
      var n = f.nodes[i++];
      var out = { name: f.names[n[0]], value: n[1], flags: n[3], depth: depth, children: [] };
      for (var k = 0; k < n[2]; k++) out.children.push(node(depth + 1));
      return out;
    }
    return node(0);
  }

  // isStd reports whether a function belongs to the runtime or the standard library: the first
  // element of its package path has no dot (and it is not package main).
  function isStd(name) {
    var s = name.split(/[\[(]/)[0], slash = s.lastIndexOf("/");
    var dot = s.indexOf(".", slash + 1);
    if (dot < 0) return false;
    var pkg = s.slice(0, dot);
    return pkg !== "main" && pkg.split("/")[0].indexOf(".") < 0;
  }

  function hashHue(s) {
    var h = 0;
    for (var i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) | 0;
    return Math.abs(h);
  }

  function setupFlame(el, f) {
    var root = flameTree(f), canvas = el.querySelector("canvas"), tip = el.querySelector(".flame-tip");
    var focus = root, rows = [], ROW = 18, maxDepth = 0;
    (function walk(n) { maxDepth = Math.max(maxDepth, n.depth); n.children.forEach(walk); })(root);
    var unit = f.unit === "bytes" ? "bytes" : "count";

    function layout() {
      // x in [0,1] relative to the focused node; its ancestors span the whole width.
      rows = [];
      var path = [], n = focus;
      (function findPath(cur, trail) {
        if (cur === focus) { path = trail.concat([cur]); return true; }
        for (var k = 0; k < cur.children.length; k++) if (findPath(cur.children[k], trail.concat([cur]))) return true;
        return false;
      })(root, []);
      path.forEach(function (p) { rows.push({ n: p, x: 0, w: 1 }); });
      (function place(node, x, w) {
        var cx = x;
        node.children.forEach(function (c) {
          var cw = w * c.value / node.value;
          rows.push({ n: c, x: cx, w: cw });
          place(c, cx, cw);
          cx += cw;
        });
      })(n, 0, 1);
    }

    function draw() {
      var th = theme(), dpr = devicePixelRatio || 1, W = Math.max(el.clientWidth, 300);
      var H = (maxDepth + 1) * ROW;
      canvas.style.height = H + "px";
      canvas.width = Math.round(W * dpr);
      canvas.height = Math.round(H * dpr);
      var g = canvas.getContext("2d");
      g.scale(dpr, dpr);
      g.clearRect(0, 0, W, H);
      g.font = "11px ui-monospace, monospace";
      g.textBaseline = "middle";
      var hatch = g.createPattern(patternTile("diag", th.palette[4], th.bg), "repeat");
      rows.forEach(function (r) {
        var px = r.x * W, pw = r.w * W, y = r.n.depth * ROW;
        if (pw < 0.5) return;
        var own = r.n.flags & 2, culprit = r.n.flags & 1;
        var base = r.n.depth === 0 ? th.muted : own ? th.palette[0] : (isStd(r.n.name) ? th.palette[8] : th.palette[2]);
        var tint = 0.25 + (hashHue(r.n.name) % 30) / 100;
        g.fillStyle = culprit ? hatch : mix(base, th.bg, tint);
        g.fillRect(px, y, Math.max(pw - 1, 0.5), ROW - 1);
        if (culprit) {
          g.strokeStyle = th.fg;
          g.lineWidth = 2;
          g.strokeRect(px + 1, y + 1, Math.max(pw - 3, 0.5), ROW - 3);
        }
        if (pw > 40) {
          var text = (culprit ? "▶ " : "") + r.n.name;
          var room = Math.floor((pw - 8) / g.measureText("m").width);
          if (text.length > room) text = text.slice(0, Math.max(room - 1, 1)) + "…";
          g.fillStyle = th.fg;
          g.fillText(text, px + 4, y + ROW / 2);
        }
      });
    }

    function hit(ev) {
      var rect = canvas.getBoundingClientRect(), x = (ev.clientX - rect.left) / rect.width, depth = Math.floor((ev.clientY - rect.top) / ROW);
      for (var k = 0; k < rows.length; k++) {
        var r = rows[k];
        if (r.n.depth === depth && x >= r.x && x < r.x + r.w) return r.n;
      }
      return null;
    }

    canvas.addEventListener("mousemove", function (ev) {
      var n = hit(ev);
      if (!n) return;
      var share = f.total > 0 ? (100 * n.value / f.total).toFixed(1) + "%" : "";
      tip.textContent = n.name + " — " + fmt(unit, n.value) + " (" + share + " of " + fmt(unit, f.total) + ")" + (n.flags & 1 ? " — culprit" : "");
    });
    canvas.addEventListener("click", function (ev) {
      var n = hit(ev);
      if (!n) return;
      focus = n === focus ? root : n;
      if (n.depth === 0) focus = root;
      layout();
      draw();
    });
    layout();
    draw();
    return { el: el, draw: draw };
  }

  md.setupFlame = setupFlame;
})();
