// memdoctor HTML report, shared helpers: units, the session's time zone, the theme and the
// fill patterns. It reads the page's data and puts everything on window.memdoctor for
// flame.js and app.js.
(function () {
  "use strict";

  var md = (window.memdoctor = {});
  var data = (md.data = JSON.parse(document.getElementById("memdoctor-data").textContent));
  var T0 = data.t0;

  // ---- units -------------------------------------------------------------------------
  var UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

  function fmtBytes(v) {
    if (v == null || isNaN(v)) return "–";
    var a = Math.abs(v);
    if (a < 1024) return v.toFixed(0) + " B";
    var e = Math.min(Math.floor(Math.log(a) / Math.log(1024)), 5);
    return (v / Math.pow(1024, e)).toFixed(1) + " " + UNITS[e];
  }

  function trim(s) {
    return s.indexOf(".") >= 0 ? s.replace(/\.?0+$/, "") : s;
  }

  // Axis ticks: one unit for the whole axis, as few decimals as the step needs.
  function bytesTicks(splits) {
    var top = 0;
    for (var i = 0; i < splits.length; i++) top = Math.max(top, Math.abs(splits[i]));
    var e = top < 1024 ? 0 : Math.min(Math.floor(Math.log(top) / Math.log(1024)), 5);
    var div = Math.pow(1024, e);
    return splits.map(function (v) { return trim((v / div).toFixed(2)) + " " + UNITS[e]; });
  }

  function fmt(unit, v) {
    if (v == null || isNaN(v)) return "–";
    switch (unit) {
      case "bytes": return fmtBytes(v);
      case "fraction": return (v * 100).toFixed(v < 0.1 ? 2 : 1) + "%";
      case "per_second": return (v < 10 ? v.toFixed(2) : v.toFixed(0)) + "/s";
      case "count": return Math.round(v).toLocaleString("en-US");
    }
    return String(v);
  }

  // decimals is how many decimals write ticks that are step apart exactly (2.5 needs one).
  function decimals(splits, scale) {
    var step = splits.length > 1 ? Math.abs(splits[1] - splits[0]) * scale : 1;
    for (var d = 0; d < 6; d++) {
      var v = step * Math.pow(10, d);
      if (Math.abs(v - Math.round(v)) < 1e-6 * Math.max(v, 1)) return d;
    }
    return 6;
  }

  function ticks(unit) {
    return function (u, splits) {
      if (unit === "bytes") return bytesTicks(splits);
      if (unit === "fraction") {
        var d = decimals(splits, 100);
        return splits.map(function (v) { return (v * 100).toFixed(d) + "%"; });
      }
      var d2 = decimals(splits, 1);
      var suffix = unit === "per_second" ? "/s" : "";
      return splits.map(function (v) { return v.toFixed(d2) + suffix; });
    };
  }

  // Tick steps in binary multiples for bytes (1, 2, 5, 10, 20, 50, 100, 200, 500 of a unit).
  var BYTE_INCRS = (function () {
    var out = [];
    for (var e = 0; e <= 5; e++) {
      [1, 2, 5, 10, 20, 50, 100, 200, 500].forEach(function (m) { out.push(m * Math.pow(1024, e)); });
    }
    return out;
  })();

  // ---- time zone: the session's, stated on the page -----------------------------------
  function offsetAt(ts) {
    var rel = ts - T0, offs = data.zone.offsets, off = offs[0].offset;
    for (var i = 1; i < offs.length; i++) if (rel >= offs[i].from) off = offs[i].offset;
    return off;
  }

  // tzDate returns a Date whose local fields read as the wall clock of the session's zone.
  function tzDate(ts) {
    var d = new Date((ts + offsetAt(ts)) * 1000);
    return new Date(d.getTime() + d.getTimezoneOffset() * 60000);
  }

  // ---- theme and patterns ----------------------------------------------------------------
  function theme() {
    var s = getComputedStyle(document.documentElement);
    var g = function (n) { return s.getPropertyValue(n).trim(); };
    var pal = [];
    for (var i = 0; i < 12; i++) pal.push(g("--c" + i));
    return { fg: g("--fg"), muted: g("--muted"), grid: g("--grid"), bg: g("--bg"), panel: g("--panel"), band: g("--band"), palette: pal };
  }

  function rgb(hex) {
    var h = hex.replace("#", "");
    if (h.length === 3) h = h[0] + h[0] + h[1] + h[1] + h[2] + h[2];
    var n = parseInt(h, 16);
    return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
  }

  function mix(a, b, t) {
    var x = rgb(a), y = rgb(b);
    return "rgb(" + [0, 1, 2].map(function (i) { return Math.round(x[i] * (1 - t) + y[i] * t); }).join(",") + ")";
  }

  // patternTile draws one 10x10 tile: an opaque tint of the colour with the named pattern
  // over it in the full colour, so bands differ by pattern as well as by colour.
  function patternTile(name, color, bg) {
    var c = document.createElement("canvas");
    c.width = c.height = 10;
    var g = c.getContext("2d");
    g.fillStyle = mix(color, bg, 0.45);
    g.fillRect(0, 0, 10, 10);
    g.strokeStyle = color;
    g.fillStyle = color;
    g.lineWidth = 1.6;
    var line = function (x1, y1, x2, y2) { g.beginPath(); g.moveTo(x1, y1); g.lineTo(x2, y2); g.stroke(); };
    switch (name) {
      case "solid": g.fillRect(0, 0, 10, 10); break;
      case "diag": line(0, 10, 10, 0); line(-5, 5, 5, -5); line(5, 15, 15, 5); break;
      case "rdiag": line(0, 0, 10, 10); line(-5, 5, 5, 15); line(5, -5, 15, 5); break;
      case "horiz": line(0, 5, 10, 5); break;
      case "vert": line(5, 0, 5, 10); break;
      case "dots": g.beginPath(); g.arc(5, 5, 1.8, 0, 2 * Math.PI); g.fill(); break;
      case "cross": line(0, 10, 10, 0); line(0, 0, 10, 10); break;
      case "grid": line(0, 5, 10, 5); line(5, 0, 5, 10); break;
      case "checker": g.fillRect(0, 0, 5, 5); g.fillRect(5, 5, 5, 5); break;
    }
    return c;
  }

  // lineTile draws a legend swatch for a line: a stretch of it, with its dash pattern.
  function lineTile(color, dash) {
    var c = document.createElement("canvas");
    c.width = 32;
    c.height = 12;
    var g = c.getContext("2d");
    g.strokeStyle = color;
    g.lineWidth = 2.5;
    g.setLineDash(dash || []);
    g.beginPath();
    g.moveTo(0, 6);
    g.lineTo(32, 6);
    g.stroke();
    return c;
  }

  function fmtTime(ts) {
    if (data.elapsed) return fmtElapsed(ts - T0);
    var d = tzDate(ts), p = function (n) { return (n < 10 ? "0" : "") + n; };
    return p(d.getHours()) + ":" + p(d.getMinutes()) + ":" + p(d.getSeconds());
  }

  // fmtElapsed writes seconds since a session's start: "+45s", "+2:05", "+1:02:05". The
  // comparison page puts two sessions on one axis this way, each from its own start.
  function fmtElapsed(sec) {
    var s = Math.round(sec), p = function (n) { return (n < 10 ? "0" : "") + n; };
    if (s < 60) return "+" + s + "s";
    var h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
    return "+" + (h > 0 ? h + ":" + p(m) : m) + ":" + p(s % 60);
  }

  md.fmt = fmt;
  md.ticks = ticks;
  md.BYTE_INCRS = BYTE_INCRS;
  md.tzDate = tzDate;
  md.fmtTime = fmtTime;
  md.fmtElapsed = fmtElapsed;
  md.theme = theme;
  md.mix = mix;
  md.patternTile = patternTile;
  md.lineTile = lineTile;
})();
