// The report's flame graphs, made interactive (the page reads without this:
// each box has its name, samples and share in its tooltip). Per graph: a
// search box that highlights the frames whose names match (a regular
// expression, else plain text) and says what share of the samples they
// cover; a line under the graph that names the frame under the pointer with
// its samples and share; a click on a frame zooms into it (its callers stay
// below it), a click on the root or "reset zoom" zooms out.
(function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg", CHAR_W = 5.5;
  var pct = function (v, of) { return (v * 100 / Math.max(of, 1)).toFixed(2) + "%"; };
  // the label that fits w pixels, as the browser draws it
  var fit = function (t, name, w) {
    var n = Math.min(name.length, Math.floor((w - 6) / CHAR_W) + 2);
    for (; n >= 3; n--) {
      t.textContent = name.length <= n ? name : name.slice(0, n - 2) + "..";
      if (t.getComputedTextLength() <= w - 6) return;
    }
    t.textContent = "";
  };
  document.querySelectorAll("svg.flame").forEach(function (svg) {
    var total = +svg.getAttribute("data-total"), pad = +svg.getAttribute("data-pad");
    var width = svg.viewBox.baseVal.width;
    var frames = [].slice.call(svg.querySelectorAll("g[data-v]")).map(function (g) {
      var r = g.querySelector("rect"), t = g.querySelector("text");
      if (!t) {
        t = document.createElementNS(NS, "text");
        t.setAttribute("y", (+r.getAttribute("y") + 11.5).toFixed(1));
        g.appendChild(t);
      }
      return { g: g, r: r, t: t, s: +g.dataset.s, v: +g.dataset.v, d: +g.dataset.d, n: g.dataset.n, fill: r.getAttribute("fill") };
    });
    var bar = document.createElement("div"), box = document.createElement("input");
    var found = document.createElement("span"), reset = document.createElement("button");
    var info = document.createElement("div");
    bar.className = "flamebar";
    info.className = "flameinfo";
    box.type = "search";
    box.placeholder = "search frames (regular expression)";
    box.setAttribute("aria-label", "search frames");
    reset.type = "button";
    reset.textContent = "reset zoom";
    reset.disabled = true;
    found.className = "found";
    bar.appendChild(box);
    bar.appendChild(reset);
    bar.appendChild(found);
    info.textContent = "hover a frame for its name and share; click to zoom";
    svg.parentNode.insertBefore(bar, svg);
    svg.parentNode.insertBefore(info, svg.nextSibling);
    var zoom = null;
    function layout() {
      var s0 = zoom ? zoom.s : 0, e0 = zoom ? zoom.s + zoom.v : total;
      var sc = (width - 2 * pad) / Math.max(e0 - s0, 1);
      frames.forEach(function (f) {
        var e = f.s + f.v;
        var inside = f.s >= s0 && e <= e0 && (!zoom || f.d >= zoom.d);
        var caller = zoom && f.s <= s0 && e >= e0 && f.d < zoom.d;
        if (!inside && !caller) {
          f.g.style.display = "none";
          return;
        }
        f.g.style.display = "";
        var x = pad + (Math.max(f.s, s0) - s0) * sc, w = (Math.min(e, e0) - Math.max(f.s, s0)) * sc;
        f.r.setAttribute("x", x.toFixed(1));
        f.r.setAttribute("width", Math.max(w, 0).toFixed(1));
        f.t.setAttribute("x", (x + 3).toFixed(1));
        fit(f.t, f.n, w);
      });
      reset.disabled = !zoom;
    }
    function search() {
      var q = box.value, re = null;
      if (q) {
        try { re = new RegExp(q, "i"); } catch (e) { re = { test: function (n) { return n.toLowerCase().indexOf(q.toLowerCase()) >= 0; } }; }
      }
      var hits = [];
      frames.forEach(function (f) {
        var hit = re && f.d > 0 && re.test(f.n);
        f.r.setAttribute("fill", hit ? "#e040fb" : f.fill);
        f.g.classList.toggle("match", !!hit);
        if (hit) hits.push(f);
      });
      // the share matched: the union of the matching frames' samples (a
      // frame under a matching one counts once)
      hits.sort(function (a, b) { return a.s - b.s || b.v - a.v; });
      var covered = 0, end = -1;
      hits.forEach(function (f) {
        var e = f.s + f.v;
        if (e <= end) return;
        covered += e - Math.max(f.s, end);
        end = e;
      });
      found.textContent = q ? hits.length + " frame(s) match: " + pct(covered, total) + " of the samples" : "";
      found.setAttribute("data-share", q ? (covered / Math.max(total, 1)).toFixed(6) : "");
    }
    frames.forEach(function (f) {
      f.g.style.cursor = "pointer";
      f.g.addEventListener("mouseenter", function () {
        info.textContent = f.n + ": " + f.v + " samples, " + pct(f.v, total) + " of all" +
          (zoom ? ", " + pct(f.v, zoom.v) + " of " + zoom.n : "");
      });
      f.g.addEventListener("click", function () {
        zoom = f.d === 0 || zoom === f ? null : f;
        layout();
      });
    });
    reset.addEventListener("click", function () { zoom = null; layout(); });
    box.addEventListener("input", search);
    svg.flame = { frames: frames, zoomTo: function (f) { zoom = f; layout(); } };
  });
})();
