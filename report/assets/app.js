// memdoctor HTML report: draws the charts (uPlot) from the JSON data the page embeds, and
// starts the flame graphs (flame.js) and the served page's snapshot picker. No network
// access: everything is in the page.
(function () {
  "use strict";

  var md = window.memdoctor, data = md.data, T0 = data.t0;
  var fmt = md.fmt, ticks = md.ticks, BYTE_INCRS = md.BYTE_INCRS, tzDate = md.tzDate, fmtTime = md.fmtTime;
  var theme = md.theme, patternTile = md.patternTile, lineTile = md.lineTile;
  var charts = []; // {el, u, spec, height}
  // ?series-only draws the series without the overlays, so a test can tell that the series
  // themselves were drawn.
  // The snapshots marked on the timeline: those the findings compare (and, below, any
  // captured around an event); the served page lists every snapshot, but marks only these.
  var markedSnapshots = {};
  data.findings.forEach(function (f) { (f.pair || []).forEach(function (id) { markedSnapshots[id] = true; }); });
  var seriesOnly = /[?&]series-only\b/.test(location.search);
  var flames = []; // {el, flame, draw}

  // ---- charts ----------------------------------------------------------------------------
  function stackedData(spec) {
    // Areas are drawn top layer first, each filled down to zero, the lower ones over it.
    var areas = [], lines = [];
    spec.series.forEach(function (s) { (s.area ? areas : lines).push(s); });
    var n = spec.x.length, acc = new Array(n).fill(0), cum = [];
    areas.forEach(function (s) {
      cum.push(s.values.map(function (v, i) {
        if (v == null || acc[i] == null) { acc[i] = null; return null; }
        acc[i] += v;
        return acc[i];
      }));
    });
    return { areas: areas, lines: lines, cum: cum };
  }

  function buildChart(spec, el, th) {
    // Every chart spans the whole window, so their times line up and the findings fit.
    var xs = spec.x.map(function (x) { return T0 + x; }), padStart = 0, padEnd = 0;
    if (!xs.length || xs[0] > T0) { xs.unshift(T0); padStart = 1; }
    if (xs[xs.length - 1] < T0 + data.end) { xs.push(T0 + data.end); padEnd = 1; }
    var pad = function (vals) {
      var out = vals.slice();
      if (padStart) out.unshift(null);
      if (padEnd) out.push(null);
      return out;
    };
    var data2 = [xs], series = [{ value: function (u, v) { return v == null ? "–" : fmtTime(v); } }], order = [];
    var seriesSpecs = [];
    if (spec.stacked) {
      var st = stackedData(spec);
      for (var k = st.areas.length - 1; k >= 0; k--) {
        order.push({ s: st.areas[k], values: st.cum[k], raw: st.areas[k].values });
      }
      st.lines.forEach(function (s) { order.push({ s: s, values: s.values, raw: s.values }); });
    } else {
      spec.series.forEach(function (s) { order.push({ s: s, values: s.values, raw: s.values }); });
    }
    order.forEach(function (o) {
      var s = o.s, color = th.palette[s.color % th.palette.length];
      var raw = pad(o.raw);
      data2.push(pad(o.values));
      seriesSpecs.push(s);
      var cfg = {
        label: s.name,
        scale: s.axis ? "y2" : "y",
        stroke: color,
        width: s.area ? 0.5 : (s.name === "RSS" ? 1.25 : 1.75),
        // The bands are known where a Go and a /proc reading were taken together; between
        // such instants they are drawn straight across the RSS-only readings.
        spanGaps: true,
        points: { show: false },
        value: (function (raw, unit) {
          return function (u, v, si, di) { return di == null ? "–" : fmt(unit, raw[di]); };
        })(raw, s.unit),
      };
      if (s.dash) cfg.dash = s.dash;
      if (s.area) {
        var tile = patternTile(s.pattern || "solid", color, th.bg);
        cfg.fill = function (u) { return u.ctx.createPattern(tile, "repeat"); };
        cfg._marker = "url(" + tile.toDataURL() + ")";
      } else {
        cfg._marker = "url(" + lineTile(color, s.dash).toDataURL() + ") center / contain no-repeat";
      }
      series.push(cfg);
    });

    var yMax = dataMax(data2, series, "y");
    var off = [], limits = (spec.lines || []).filter(function (l) {
      if (l.value <= yMax * 2.5 || yMax === 0) { return true; }
      off.push(l.label + " is above the chart");
      return false;
    });
    var note = el.closest("figure").querySelector(".offchart");
    if (off.length) { note.hidden = false; note.textContent = off.join("; ") + "."; } else { note.hidden = true; }
    limits.forEach(function (l) { yMax = Math.max(yMax, l.value); });

    var axisBase = { stroke: th.fg, grid: { stroke: th.grid, width: 1 }, ticks: { stroke: th.grid } };
    var axes = [
      Object.assign({}, axisBase, { space: 80, values: timeTicks }),
      Object.assign({}, axisBase, { scale: "y", size: 78, values: ticks(spec.unit), incrs: spec.unit === "bytes" ? BYTE_INCRS : undefined }),
    ];
    // Headroom above the data for the findings' lanes along the top.
    var head = data.findings.some(function (f) { return f.start != null; }) ? 1.3 : 1.08;
    var scales = { x: { time: true }, y: { range: [0, yMax > 0 ? yMax * head : 1] } };
    if (spec.unit2) {
      var y2 = dataMax(data2, series, "y2");
      scales.y2 = { range: [0, y2 > 0 ? y2 * head : 0.01] };
      axes.push(Object.assign({}, axisBase, { scale: "y2", side: 1, size: 64, grid: { show: false }, values: ticks(spec.unit2) }));
    }
    var height = spec.id === "memory" ? 340 : 240;
    var opts = {
      width: Math.max(el.clientWidth, 300),
      height: height,
      tzDate: tzDate,
      scales: scales,
      axes: axes,
      series: series,
      cursor: { sync: { key: "memdoctor" }, drag: { x: true, y: false } },
      legend: {
        markers: {
          // Legend swatches show each series' pattern or dash, not just its colour.
          fill: function (u, i) { return u.series[i]._marker || "transparent"; },
          width: 0,
        },
      },
      hooks: {
        draw: [function (u) {
          if (!seriesOnly) drawOverlays(u, spec, th, limits, seriesSpecs);
          el.dataset.plotBox = JSON.stringify(u.bbox); // where the series are, for tests
        }],
      },
    };
    return new uPlot(opts, data2, el);
  }

  function dataMax(d, series, scale) {
    var m = 0;
    for (var i = 1; i < d.length; i++) {
      if (series[i].scale !== scale) continue;
      var col = d[i];
      for (var j = 0; j < col.length; j++) if (col[j] != null && col[j] > m) m = col[j];
    }
    return m;
  }

  // timeTicks labels the time axis on a 24-hour clock, with the date under the first tick
  // and wherever the day changes; on the comparison page, as time since each start.
  function timeTicks(u, splits, ai, space, incr) {
    if (data.elapsed) return splits.map(function (ts) { return md.fmtElapsed(ts - T0); });
    var lastDay = null, p = function (n) { return (n < 10 ? "0" : "") + n; };
    return splits.map(function (ts) {
      var d = tzDate(ts), day = d.getFullYear() + "-" + p(d.getMonth() + 1) + "-" + p(d.getDate());
      var t = p(d.getHours()) + ":" + p(d.getMinutes());
      if (incr < 60) t += ":" + p(d.getSeconds());
      if (day !== lastDay) { t += "\n" + day; lastDay = day; }
      return t;
    });
  }


  // drawOverlays draws, over the series: the findings' spans (hatched, numbered), the limit
  // lines (dashed, labelled), the GC ticks and the snapshot markers, and labels the bands of
  // a stacked chart at its right edge, so the chart reads without colour.
  function drawOverlays(u, spec, th, limits, seriesSpecs) {
    var ctx = u.ctx, bb = u.bbox, dpr = devicePixelRatio || 1;
    ctx.save();
    ctx.beginPath();
    ctx.rect(bb.left, bb.top, bb.width, bb.height);
    ctx.clip();
    ctx.font = Math.round(11 * dpr) + "px system-ui, sans-serif";
    ctx.textBaseline = "top";
    ctx.textAlign = "left";

    drawFindings(u, ctx, bb, dpr, th);

    limits.forEach(function (l) {
      var y = u.valToPos(l.value, "y", true);
      ctx.strokeStyle = th.fg;
      ctx.lineWidth = 1.5 * dpr;
      ctx.setLineDash(l.dash.map(function (d) { return d * dpr; }));
      ctx.beginPath(); ctx.moveTo(bb.left, y); ctx.lineTo(bb.left + bb.width, y); ctx.stroke();
      ctx.setLineDash([]);
      ctx.textAlign = "right";
      label(ctx, l.label, bb.left + bb.width - 4 * dpr, y + 3 * dpr, th);
      ctx.textAlign = "left";
    });

    if (spec.marks) {
      // Dense cycles make a rug: its darkness is the GC rate.
      ctx.strokeStyle = th.muted;
      ctx.globalAlpha = 0.6;
      ctx.lineWidth = dpr;
      ctx.beginPath();
      spec.marks.forEach(function (m) {
        var x = u.valToPos(T0 + m, "x", true);
        ctx.moveTo(x, bb.top + bb.height);
        ctx.lineTo(x, bb.top + bb.height - 6 * dpr);
      });
      ctx.stroke();
      ctx.globalAlpha = 1;
    }

    if (spec.id === "memory" || spec.id === "heap") {
      ctx.fillStyle = th.fg;
      data.snapshots.forEach(function (s) {
        if (!s.label && !markedSnapshots[s.id]) return;
        var x = u.valToPos(T0 + s.t, "x", true), y = bb.top;
        ctx.beginPath(); ctx.moveTo(x - 5 * dpr, y); ctx.lineTo(x + 5 * dpr, y); ctx.lineTo(x, y + 8 * dpr); ctx.closePath(); ctx.fill();
      });
    }

    if (spec.stacked) labelBands(u, ctx, bb, dpr, th, seriesSpecs);
    ctx.restore();
  }

  // drawFindings marks each finding with a time span: a hatched bar with its number and kind
  // in a lane along the top (lanes keep overlapping findings apart), dashed edges down the
  // whole plot, and a light shade over the plot when the span is short enough to point at
  // something (a finding about the whole window would only grey the chart out).
  function drawFindings(u, ctx, bb, dpr, th) {
    var hatch = ctx.createPattern(patternTile("rdiag", th.muted, th.panel), "repeat");
    var lanes = [], LANE = 15 * dpr, top0 = bb.top + 10 * dpr;
    var span = u.scales.x.max - u.scales.x.min;
    data.findings.forEach(function (f) {
      if (f.start == null) return;
      var x0 = u.valToPos(T0 + f.start, "x", true), x1 = u.valToPos(T0 + f.end, "x", true);
      if (x1 - x0 < 4 * dpr) { var c = (x0 + x1) / 2; x0 = c - 2 * dpr; x1 = c + 2 * dpr; }
      var text = "#" + f.n + " " + f.kind, right = Math.max(x1, x0 + ctx.measureText(text).width + 20 * dpr);
      var lane = 0;
      while (lanes[lane] != null && lanes[lane] > x0) lane++;
      lanes[lane] = right;
      var y = top0 + lane * LANE;
      if ((f.end - f.start) < span * 0.25) {
        ctx.fillStyle = th.band;
        ctx.fillRect(x0, bb.top, x1 - x0, bb.height);
      }
      ctx.strokeStyle = th.fg;
      ctx.lineWidth = dpr;
      ctx.setLineDash([3 * dpr, 3 * dpr]);
      ctx.beginPath();
      ctx.moveTo(x0, y); ctx.lineTo(x0, bb.top + bb.height);
      ctx.moveTo(x1, y); ctx.lineTo(x1, bb.top + bb.height);
      ctx.stroke();
      ctx.setLineDash([]);
      ctx.fillStyle = hatch;
      ctx.fillRect(x0, y, x1 - x0, 4 * dpr);
      ctx.strokeStyle = th.muted;
      ctx.strokeRect(x0, y, x1 - x0, 4 * dpr);
      label(ctx, text, x0 + 3 * dpr, y + 6 * dpr, th);
    });
  }

  // label writes text with a halo of the background colour, readable over any fill.
  function label(ctx, text, x, y, th) {
    ctx.lineWidth = 3 * (devicePixelRatio || 1);
    ctx.strokeStyle = th.panel;
    ctx.strokeText(text, x, y);
    ctx.fillStyle = th.fg;
    ctx.fillText(text, x, y);
  }

  function labelBands(u, ctx, bb, dpr, th, seriesSpecs) {
    var d = u.data, n = d[0].length;
    if (n === 0) return;
    var i = n - 1;
    while (i > 0 && d[1][i] == null) i--;
    ctx.textAlign = "right";
    ctx.textBaseline = "middle";
    var prevTop = 0;
    // Areas are drawn top first: walk them bottom up.
    var areas = [];
    for (var k = 1; k < d.length; k++) if (seriesSpecs[k - 1].area) areas.push(k);
    for (var a = areas.length - 1; a >= 0; a--) {
      var k2 = areas[a], top = d[k2][i];
      if (top == null) continue;
      var y0 = u.valToPos(prevTop, "y", true), y1 = u.valToPos(top, "y", true);
      if (y0 - y1 >= 14 * dpr) label(ctx, seriesSpecs[k2 - 1].name, bb.left + bb.width - 6 * dpr, (y0 + y1) / 2, th);
      prevTop = top;
    }
    ctx.textAlign = "left";
    ctx.textBaseline = "top";
  }

  // ---- serve mode: the snapshot picker ----------------------------------------------------
  function setupPicker() {
    var form = document.getElementById("picker");
    if (!form || !data.serve) return;
    var kind = form.elements.kind, si = form.elements.si, a = form.elements.a, b = form.elements.b;
    function fill() {
      [a, b].forEach(function (sel) { sel.textContent = ""; });
      var of = data.snapshots.filter(function (s) { return s.kind === kind.value; });
      of.forEach(function (s, i) {
        [a, b].forEach(function (sel) {
          var o = document.createElement("option");
          o.value = s.id;
          o.textContent = fmtTime(T0 + s.t) + (s.label ? " " + s.label : "") + " (" + s.name + ")";
          sel.appendChild(o);
        });
      });
      if (of.length > 1) b.selectedIndex = of.length - 1;
      si.disabled = kind.value !== "heap";
      links();
    }
    function q() { return kind.value === "heap" ? "?si=" + si.value : ""; }
    function links() {
      document.getElementById("open-a").href = "pprof/snap/" + a.value + "/" + q();
      document.getElementById("open-b").href = "pprof/snap/" + b.value + "/" + q();
      document.getElementById("open-diff").href = "pprof/diff/" + a.value + "/" + b.value + "/" + q();
    }
    kind.addEventListener("change", fill);
    [si, a, b].forEach(function (el) { el.addEventListener("change", links); });
    fill();
  }

  // ---- start -------------------------------------------------------------------------------
  function drawAll() {
    var th = theme();
    charts.forEach(function (c) { c.u.destroy(); });
    charts = [];
    data.charts.forEach(function (spec) {
      if (spec.empty) return;
      var el = document.querySelector('#chart-' + spec.id + ' .plot');
      try {
        charts.push({ el: el, u: buildChart(spec, el, th) });
      } catch (e) {
        console.error("memdoctor: chart " + spec.id + ": " + (e && e.stack || e));
      }
    });
    flames.forEach(function (f) { f.draw(); });
  }

  function start() {
    drawAll();
    data.findings.forEach(function (f) {
      if (!f.flame) return;
      var el = document.querySelector('.flame[data-finding="' + f.n + '"]');
      if (!el) return;
      try {
        flames.push(md.setupFlame(el, f.flame));
      } catch (e) {
        console.error("memdoctor: flame graph #" + f.n + ": " + (e && e.stack || e));
      }
    });
    setupPicker();
    var timer = null;
    window.addEventListener("resize", function () {
      clearTimeout(timer);
      timer = setTimeout(function () {
        charts.forEach(function (c) { c.u.setSize({ width: Math.max(c.el.clientWidth, 300), height: c.u.height }); });
        flames.forEach(function (f) { f.draw(); });
      }, 150);
    });
    if (window.matchMedia) {
      window.matchMedia("(prefers-color-scheme: dark)").addEventListener("change", drawAll);
    }
    window.memdoctorReady = { ms: performance.now(), charts: charts.length, flames: flames.length };
    document.documentElement.setAttribute("data-ready", "true");
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
