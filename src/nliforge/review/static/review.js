// The review page: load the next item, label it by button or keyboard, save, repeat.
// Keyboard scheme: outside a text box, 1-4 or e/n/c/d label the item. Inside a text box those keys
// are ordinary text, so a reviewer can revise freely; Alt+1..4 labels from inside the box, and Esc
// leaves the box (after which 1-4 / e/n/c/d work). No external resources: this file and review.css.
// Rubric mode (the server's /api/config lists criteria): one 1-10 slider per criterion under the
// texts, reset to 5 for each item and sent with the label; a focused slider does not block 1-4/e/n/c/d.
// Every API call sends the page token the server put in this page's <meta name="nliforge-page-token">
// (X-Review-Page-Token): the server refuses API requests without it, so other sites cannot write labels.
"use strict";
(() => {
  const LABELS = ["entailment", "neutral", "contradiction", "discard"];
  const KEYS = { "1": 0, "2": 1, "3": 2, "4": 3, e: 0, n: 1, c: 2, d: 3 };
  const STORAGE_KEY = "nliforge.review.annotator";
  const token = new URLSearchParams(location.search).get("token");
  const pageToken = (document.querySelector('meta[name="nliforge-page-token"]') || {}).content || "";
  const $ = (id) => document.getElementById(id);
  const RUBRIC_DEFAULT = 5;
  let current = null;
  let busy = false;
  let criteria = null;   // [{name, title, description}] in rubric mode, else null
  let configReady = null; // the /api/config request: items are shown only once the panel is built
  let requested = 0;      // loadNext calls so far

  async function api(path, options = {}) {
    const headers = Object.assign({ Accept: "application/json" }, options.headers || {});
    if (token) headers["X-Review-Token"] = token;
    headers["X-Review-Page-Token"] = pageToken;
    const resp = await fetch(path, Object.assign({}, options, { headers }));
    let data = null;
    try { data = await resp.json(); } catch (err) { data = null; }
    if (!resp.ok) {
      const err = new Error((data && data.error) || `HTTP ${resp.status}`);
      err.status = resp.status;
      throw err;
    }
    return data;
  }

  function annotator() { return $("annotator").value.trim(); }

  function setState(state) {
    document.body.dataset.state = state;
    document.body.dataset.loads = String(Number(document.body.dataset.loads) + 1);
  }

  function setStatus(message, isError = false) {
    $("status").textContent = message;
    $("status").className = isError ? "error" : "";
  }

  function showProgress(p) {
    $("progress").textContent = `${p.done} done · ${p.fully_reviewed}/${p.total} fully reviewed`;
  }

  function edited() {
    return current !== null && ($("premise").value.trim() !== current.premise.trim() ||
                                $("hypothesis").value.trim() !== current.hypothesis.trim());
  }

  function markEdited() {
    $("revised-note").hidden = !edited();
    for (const id of ["premise", "hypothesis"]) {
      const box = $(id);
      box.classList.toggle("edited", current !== null && box.value.trim() !== current[id].trim());
    }
  }

  function buildRubric(list) {
    criteria = list && list.length ? list : null;
    $("rubric").hidden = !criteria;
    const rows = $("rubric-rows");
    rows.textContent = "";
    for (const c of criteria || []) {
      const row = document.createElement("div");
      row.className = "rubric-row";
      const label = document.createElement("label");
      label.htmlFor = `rubric-${c.name}`;
      label.textContent = c.title;
      const slider = document.createElement("input");
      Object.assign(slider, { type: "range", id: `rubric-${c.name}`, min: "1", max: "10", step: "1" });
      slider.dataset.criterion = c.name;
      const value = document.createElement("output");
      value.id = `rubric-${c.name}-value`;
      value.htmlFor = slider.id;
      slider.addEventListener("input", () => { value.textContent = slider.value; });
      const desc = document.createElement("p");
      desc.className = "desc";
      desc.textContent = c.description;
      row.append(label, slider, value, desc);
      rows.append(row);
    }
    resetRubric();
  }

  function resetRubric() {
    for (const slider of document.querySelectorAll("#rubric-rows input[type=range]")) {
      slider.value = String(RUBRIC_DEFAULT);
      $(`${slider.id}-value`).textContent = slider.value;
    }
  }

  function rubricScores() {
    const scores = {};
    for (const slider of document.querySelectorAll("#rubric-rows input[type=range]")) {
      scores[slider.dataset.criterion] = Number(slider.value);
    }
    return scores;
  }

  function show(item) {
    if (!current || !item || current.uid !== item.uid) resetRubric();
    current = item;
    $("item").hidden = !item;
    $("done").hidden = !!item;
    $("item").dataset.uid = item ? item.uid : "";
    if (item) {
      $("uid").textContent = item.uid;
      $("premise").value = item.premise;
      $("hypothesis").value = item.hypothesis;
    }
    markEdited();
    setState(item ? "ready" : "done");
  }

  async function loadNext() {
    requested += 1;
    const who = annotator();
    if (!who) {
      current = null;
      $("item").hidden = true;
      $("done").hidden = true;
      setStatus("Enter your annotator id to start.");
      setState("idle");
      return;
    }
    try {
      await configReady;
      const data = await api(`/api/next?annotator=${encodeURIComponent(who)}`);
      showProgress(data.progress);
      show(data.item);
    } catch (err) {
      setStatus(`Could not load the next item: ${err.message}`, true);
      setState("error");
    }
  }

  async function submit(index) {
    if (busy || !current) return;
    busy = true;
    const item = current;
    const body = { uid: item.uid, annotator: annotator(), label: LABELS[index],
                   premise: $("premise").value, hypothesis: $("hypothesis").value };
    if (criteria) body.rubric = rubricScores();
    try {
      const data = await api("/api/judgement", { method: "POST", headers: { "Content-Type": "application/json" },
                                                 body: JSON.stringify(body) });
      const how = data.saved.revised ? " (revised)" : "";
      setStatus(`Saved ${item.uid} as ${LABELS[index]}${how}.`);
      const focused = document.activeElement;
      if (focused && (focused.tagName === "TEXTAREA" || focused.type === "range")) focused.blur();
      await loadNext();
    } catch (err) {
      setStatus(`Not saved: ${err.message}`, true);
      // 409: the item got its reviewers while this one was open (e.g. after a long pause): move on.
      if (err.status === 409) await loadNext();
    } finally {
      busy = false;
    }
  }

  function onKey(event) {
    const target = event.target;
    // A slider takes no letters or digits, so plain keys still label while one is focused.
    const typing = target && (target.tagName === "TEXTAREA" ||
                              (target.tagName === "INPUT" && target.type !== "range"));
    if (event.key === "Escape" && typing) {
      target.blur();
      event.preventDefault();
      return;
    }
    if (target && target.id === "annotator") return;
    let index;
    if (event.altKey && !event.ctrlKey && !event.metaKey) {
      const m = /^(?:Digit|Numpad)([1-4])$/.exec(event.code);
      if (m) index = Number(m[1]) - 1;
    } else if (!typing && !event.ctrlKey && !event.metaKey && !event.altKey) {
      index = KEYS[event.key.toLowerCase()];
    }
    if (index === undefined) return;
    event.preventDefault();
    submit(index);
  }

  async function start() {
    configReady = api("/api/config").then((data) => buildRubric(data.rubric));
    const box = $("annotator");
    box.value = localStorage.getItem(STORAGE_KEY) || "";
    box.addEventListener("keydown", (e) => { if (e.key === "Enter") box.blur(); });
    box.addEventListener("change", () => {
      localStorage.setItem(STORAGE_KEY, annotator());
      setStatus("");
      loadNext();
    });
    for (const button of document.querySelectorAll("#labels button")) {
      button.addEventListener("click", () => submit(Number(button.dataset.index)));
    }
    for (const id of ["premise", "hypothesis"]) $(id).addEventListener("input", markEdited);
    $("reset").addEventListener("click", () => { if (current) show(current); });
    $("again").addEventListener("click", loadNext);
    document.addEventListener("keydown", onKey);
    try {
      await configReady;
    } catch (err) {
      setStatus(`Could not load the page settings: ${err.message}`, true);
      setState("error");
      return;
    }
    if (!requested) loadNext();   // unless the annotator box already started one
  }

  start();
})();
