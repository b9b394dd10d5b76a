// flowrun dashboard: times in the browser's zone, and pages kept live.
// Every value is put on the page as text (textContent), never as markup;
// the only markup inserted is rows the server rendered and escaped.
"use strict";

function localTimes(root) {
  for (const t of root.querySelectorAll("time[datetime]")) {
    const d = new Date(t.getAttribute("datetime"));
    if (!isNaN(d)) {
      t.textContent = d.toLocaleString();
      t.title = t.getAttribute("datetime").replace("T", " ").replace("Z", " UTC");
    }
  }
}

async function wait(url) {
  const res = await fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } });
  if (res.status === 401) { location.href = "/login?next=" + encodeURIComponent(location.pathname + location.search); return null; }
  if (!res.ok) { throw new Error("HTTP " + res.status); }
  return res.json();
}

function pause(ms) { return new Promise((r) => setTimeout(r, ms)); }

// The runs list: when a run changes, its rows are read again.
async function liveRuns(table) {
  let cursor = table.dataset.cursor;
  for (;;) {
    try {
      const ans = await wait(table.dataset.live + "?after=" + encodeURIComponent(cursor));
      if (!ans) return;
      cursor = ans.cursor;
      if (ans.changed) {
        const url = new URL(location.href);
        url.searchParams.set("rows", "1");
        const res = await fetch(url, { credentials: "same-origin" });
        if (res.ok) {
          const body = table.querySelector("tbody");
          body.innerHTML = await res.text(); // rows the server rendered, escaped
          localTimes(body);
        }
      }
    } catch (e) { await pause(2000); }
  }
}

function setStatus(el, status) {
  for (const c of Array.from(el.classList)) { if (c.startsWith("st-")) el.classList.remove(c); }
  el.classList.add("st-" + status);
}

// A run's page: the graph's steps and the table follow the run.
async function liveRun(section) {
  let cursor = section.dataset.cursor;
  const was = section.dataset.status; // an ended run's page is read again
  for (;;) {
    try {
      const ans = await wait(section.dataset.live + "?after=" + encodeURIComponent(cursor));
      if (!ans) return;
      cursor = ans.cursor;
      if (!ans.changed) continue;
      if (ans.ended && ans.status !== was) { location.reload(); return; } // its actions, values and history change too
      const rs = document.querySelector("#run-status .status");
      if (rs) { setStatus(rs, ans.status); rs.textContent = ans.status; }
      for (const [name, st] of Object.entries(ans.steps || {})) {
        const node = document.querySelector('[data-step="' + CSS.escape(name) + '"]');
        if (node) { setStatus(node, st.status); const w = node.querySelector(".word"); if (w) w.textContent = st.status; }
        const row = document.querySelector('[data-step-row="' + CSS.escape(name) + '"]');
        if (row) {
          const s = row.querySelector(".cell-status .status");
          if (s) { setStatus(s, st.status); s.textContent = st.status; }
          row.querySelector(".cell-attempts").textContent = st.attempts;
          row.querySelector(".cell-detail").textContent = st.detail || "";
        }
      }
    } catch (e) { await pause(2000); }
  }
}

// A step's page: its live output, line by line, as text. The server
// answers when there are lines, when the step has ended ("ended": the
// lines are the last) or after 20 seconds; it is then not asked again.
async function liveOutput(pre) {
  let seq = 0;
  for (;;) {
    try {
      const ans = await wait(pre.dataset.output + "&after=" + seq);
      if (!ans) return;
      seq = ans.seq;
      const lines = ans.lines || [];
      for (const l of lines) {
        const span = document.createElement("span");
        if (l.stream === "stderr") span.className = "stderr";
        span.textContent = l.text;
        pre.appendChild(span);
      }
      if (ans.ended) return;
      if (!lines.length) await pause(1000); // never ask again at once for nothing
    } catch (e) { await pause(2000); }
  }
}

document.addEventListener("DOMContentLoaded", () => {
  localTimes(document);
  const runs = document.getElementById("runs");
  if (runs && runs.dataset.live) liveRuns(runs);
  const run = document.getElementById("run");
  if (run && run.dataset.live) liveRun(run);
  const out = document.getElementById("output");
  if (out && out.dataset.output) liveOutput(out);
});
