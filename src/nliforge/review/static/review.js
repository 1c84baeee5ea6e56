// The review page: load the next item, label it by button or keyboard, save, repeat.
// Keyboard scheme: outside a text box, 1-4 or e/n/c/d label the item. Inside a text box those keys
// are ordinary text, so a reviewer can revise freely; Alt+1..4 labels from inside the box, and Esc
// leaves the box (after which 1-4 / e/n/c/d work). No external resources: this file and review.css.
"use strict";
(() => {
  const LABELS = ["entailment", "neutral", "contradiction", "discard"];
  const KEYS = { "1": 0, "2": 1, "3": 2, "4": 3, e: 0, n: 1, c: 2, d: 3 };
  const STORAGE_KEY = "nliforge.review.annotator";
  const token = new URLSearchParams(location.search).get("token");
  const $ = (id) => document.getElementById(id);
  let current = null;
  let busy = false;

  async function api(path, options = {}) {
    const headers = Object.assign({ Accept: "application/json" }, options.headers || {});
    if (token) headers["X-Review-Token"] = token;
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

  function show(item) {
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
    try {
      const data = await api("/api/judgement", { method: "POST", headers: { "Content-Type": "application/json" },
                                                 body: JSON.stringify(body) });
      const how = data.saved.revised ? " (revised)" : "";
      setStatus(`Saved ${item.uid} as ${LABELS[index]}${how}.`);
      if (document.activeElement && document.activeElement.tagName === "TEXTAREA") document.activeElement.blur();
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
    const typing = target && (target.tagName === "TEXTAREA" || target.tagName === "INPUT");
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

  function start() {
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
    loadNext();
  }

  start();
})();
