// conceptcomb's item explorer: the items of every run beside compare's statistics.
// Reads the JSON block #explorer-data (written by conceptcomb.leaderboard.explore) and shows
// every text with textContent: nothing in the data is ever parsed as HTML or run.
(function () {
  "use strict";

  const ROW_HEIGHT = 46; // px: one item's row in the matrix (the list renders only these)
  const OVERSCAN = 8; // rows rendered above and below the visible ones

  const data = JSON.parse(document.getElementById("explorer-data").textContent);
  const strings = data.strings;
  const app = document.getElementById("app");

  const state = {
    view: 0,
    a: 0,
    b: 1,
    metric: "",
    differ: "",
    sort: "id",
    search: "",
    filters: {},
    open: -1,
    shown: []
  };

  function text(index) {
    return index >= 0 ? strings[index] : "";
  }

  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key === "text") {
        node.textContent = value;
      } else if (key === "className") {
        node.className = value;
      } else {
        node.setAttribute(key, value);
      }
    }
    for (const child of children || []) {
      node.appendChild(child);
    }
    return node;
  }

  function option(value, label, selected) {
    const node = el("option", { value: String(value), text: label });
    node.selected = selected;
    return node;
  }

  function fixed(value, digits, sign) {
    if (value === null || value === undefined || !Number.isFinite(value)) {
      return "–";
    }
    const body = Math.abs(value) < 0.5 * Math.pow(10, -digits) && value !== 0
      ? value.toExponential(1)
      : value.toFixed(digits);
    return sign && value >= 0 ? "+" + body : body;
  }

  function pText(value) {
    if (value === null || value === undefined) {
      return "–";
    }
    return value < 0.001 ? "<0.001" : value.toFixed(3);
  }

  // The prompt as sent: its messages, each "[role]" and its text.
  function promptText(item) {
    return item.prompt.map((part) => (part[0] ? "[" + part[0] + "]\n" : "") + text(part[1]))
      .join("\n\n");
  }

  function view() {
    return data.views[state.view];
  }

  // --- pairing rules (compare's) --------------------------------------------------------
  function pairable(v, metric) {
    if (!v.judged.includes(metric)) {
      return true;
    }
    return v.judge_groups[state.a] === v.judge_groups[state.b];
  }

  function comparisonOf(v) {
    for (const entry of v.comparisons) {
      if (entry.row.metric !== state.metric) {
        continue;
      }
      if (entry.a === state.a && entry.b === state.b) {
        return { entry: entry, flipped: false };
      }
      if (entry.a === state.b && entry.b === state.a) {
        return { entry: entry, flipped: true };
      }
    }
    return null;
  }

  function valueOf(v, column, item) {
    const values = v.columns[column].values[state.metric];
    return values ? values[item] : null;
  }

  function differenceOf(v, item) {
    if (state.a === state.b || !pairable(v, state.metric)) {
      return null;
    }
    const x = valueOf(v, state.a, item);
    const y = valueOf(v, state.b, item);
    return x === null || y === null || x === undefined || y === undefined ? null : x - y;
  }

  // --- clusters: A - B per unit (CCPT's noun phrase, CGGC's concept set) --------------------
  // compare's method resamples whole units where the items share them; so the page shows
  // each unit's mean A - B over its items where both runs have a value (all the view's
  // items, whatever is filtered), and sorts by it. Computed once per view, A, B and metric.
  let clusterCache = { key: "", means: new Map() };

  function clusterMeans(v) {
    const key = [state.view, state.a, state.b, state.metric].join(":");
    if (clusterCache.key !== key) {
      const sums = new Map();
      for (const item of v.items) {
        const d = item.unit === null ? null : differenceOf(v, item.n);
        if (d === null) {
          continue;
        }
        const found = sums.get(item.unit) || { sum: 0, n: 0 };
        found.sum += d;
        found.n += 1;
        sums.set(item.unit, found);
      }
      const means = new Map();
      for (const [unit, found] of sums) {
        means.set(unit, { mean: found.sum / found.n, n: found.n });
      }
      clusterCache = { key: key, means: means };
    }
    return clusterCache.means;
  }

  function clustered(v) {
    return Boolean(v.unit) && v.items.some((item) => item.unit !== null);
  }

  // "mean +0.50 (3)": the item's unit's mean A - B and its number of items.
  function clusterLabel(v, item) {
    if (state.sort === "id" || item.unit === null) {
      return "";
    }
    const found = clusterMeans(v).get(item.unit);
    return found ? "mean " + fixed(found.mean, 2, true) + " (" + found.n + ")" : "";
  }

  // --- which items, in which order --------------------------------------------------------
  function matches(v, item, needle) {
    if (!needle) {
      return true;
    }
    const parts = [item.id, item.unit || "", promptText(item)];
    for (const f of item.fields) {
      parts.push(text(f));
    }
    for (const r of item.refs) {
      parts.push(text(r));
    }
    for (const column of v.columns) {
      parts.push(text(column.replies[item.n]));
    }
    return parts.some((part) => part.toLowerCase().includes(needle));
  }

  function shownItems() {
    const v = view();
    const needle = state.search.trim().toLowerCase();
    const filters = Object.entries(state.filters).filter((entry) => entry[1] !== "");
    const found = v.items.filter((item) => {
      for (const [field, wanted] of filters) {
        if (text(item.fields[Number(field)]) !== wanted) {
          return false;
        }
      }
      if (state.differ === "metric") {
        const d = differenceOf(v, item.n);
        if (d === null || d === 0) {
          return false;
        }
      } else if (state.differ === "reply") {
        const ra = v.columns[state.a].replies[item.n];
        const rb = v.columns[state.b].replies[item.n];
        if (ra < 0 || rb < 0 || ra === rb) {
          return false;
        }
      }
      return matches(v, item, needle);
    });
    if (state.sort === "unit") {
      return byUnit(v, found);
    }
    if (state.sort !== "id") {
      const key = (item) => {
        const d = differenceOf(v, item.n);
        if (d === null) {
          return null;
        }
        return state.sort === "desc" ? -d : state.sort === "asc" ? d : -Math.abs(d);
      };
      const keyed = found.map((item) => [key(item), item]);
      keyed.sort((x, y) => {
        if (x[0] === null || y[0] === null) {
          return (x[0] === null) - (y[0] === null) || x[1].n - y[1].n;
        }
        return x[0] - y[0] || x[1].n - y[1].n;
      });
      return keyed.map((pair) => pair[1]);
    }
    return found;
  }

  // Units by their mean A - B, largest first (units without one last, by name); within a
  // unit its items by A - B, largest first (none last); then in the view's order.
  function byUnit(v, found) {
    const means = clusterMeans(v);
    const keyed = found.map((item) => {
      const unit = item.unit === null ? null : means.get(item.unit);
      return [unit ? -unit.mean : null, item.unit === null ? "" : item.unit,
        differenceOf(v, item.n), item];
    });
    const nullsLast = (x, y) => (x === null) - (y === null);
    keyed.sort((x, y) => {
      const byMean = nullsLast(x[0], y[0]) || (x[0] === null ? 0 : x[0] - y[0]);
      if (byMean) {
        return byMean;
      }
      if (x[1] !== y[1]) {
        return x[1] < y[1] ? -1 : 1;
      }
      return nullsLast(x[2], y[2]) || (x[2] === null ? 0 : y[2] - x[2]) || x[3].n - y[3].n;
    });
    return keyed.map((entry) => entry[3]);
  }

  // --- the controls ---------------------------------------------------------------------
  function select(id, label, options, onChange) {
    const node = el("select", { id: id });
    for (const o of options) {
      node.appendChild(option(o[0], o[1], o[2]));
    }
    node.addEventListener("change", () => onChange(node.value));
    return el("label", {}, [document.createTextNode(label + " "), node]);
  }

  function controls() {
    const v = view();
    const bar = el("div", { className: "controls" });
    bar.appendChild(select("view", "task", data.views.map((w, n) => [n, w.name, n === state.view]),
      (value) => {
        state.view = Number(value);
        resetView();
        render();
      }));
    const runs = (chosen) => v.columns.map((c, n) => [n, c.letter + ": " + c.label, n === chosen]);
    bar.appendChild(select("run-a", "A", runs(state.a), (value) => {
      state.a = Number(value);
      render();
    }));
    bar.appendChild(select("run-b", "B", runs(state.b), (value) => {
      state.b = Number(value);
      render();
    }));
    bar.appendChild(select("metric", "metric", v.metrics.map((m) => [m, m, m === state.metric]),
      (value) => {
        state.metric = value;
        render();
      }));
    bar.appendChild(select("differ", "show", [
      ["", "all items", state.differ === ""],
      ["metric", "only where A and B differ (metric)", state.differ === "metric"],
      ["reply", "only where A and B differ (reply)", state.differ === "reply"]
    ], (value) => {
      state.differ = value;
      render();
    }));
    bar.appendChild(select("sort", "sort", [
      ["id", "by item", state.sort === "id"],
      ["desc", "A - B, largest first", state.sort === "desc"],
      ["asc", "A - B, smallest first", state.sort === "asc"],
      ["abs", "|A - B|, largest first", state.sort === "abs"],
      ...(clustered(v) ? [["unit", "by " + v.unit + ": mean A - B", state.sort === "unit"]] : [])
    ], (value) => {
      state.sort = value;
      render();
    }));
    const search = el("input", { id: "search", type: "search", placeholder: "search text" });
    search.value = state.search;
    search.addEventListener("input", () => {
      state.search = search.value;
      renderList();
    });
    bar.appendChild(el("label", {}, [document.createTextNode("search "), search]));
    v.fields.forEach((name, index) => {
      const values = fieldValues(v, index);
      if (values.size > 200) {
        return; // a field of (nearly) one value per item: searched, not listed
      }
      const chosen = state.filters[index] || "";
      const options = [["", "any " + name, chosen === ""]];
      for (const value of Array.from(values).sort()) {
        options.push([value, value, value === chosen]);
      }
      const label = select("field-" + index, name, options, (value) => {
        state.filters[index] = value;
        renderList();
      });
      label.querySelector("select").className = "field-filter";
      label.querySelector("select").setAttribute("data-field", name);
      bar.appendChild(label);
    });
    return bar;
  }

  // A field's values in a view, collected once (every render of the controls lists them).
  const fieldCache = new Map();

  function fieldValues(v, index) {
    const key = state.view + ":" + index;
    if (!fieldCache.has(key)) {
      const values = new Set();
      for (const item of v.items) {
        values.add(text(item.fields[index]));
      }
      fieldCache.set(key, values);
    }
    return fieldCache.get(key);
  }

  function resetView() {
    const v = view();
    state.a = 0;
    state.b = v.columns.length > 1 ? 1 : 0;
    // The task's first metric that compare compared (its headline: CCPT's E), else its first.
    const compared = new Set(v.comparisons.map((entry) => entry.row.metric));
    state.metric = v.metrics.find((m) => compared.has(m)) || v.metrics[0] || "";
    state.filters = {};
    state.open = -1;
    if (state.sort === "unit" && !clustered(v)) {
      state.sort = "id";
    }
  }

  // explore.html#task=NAME&a=LETTER&b=LETTER&metric=NAME (the report's links) opens there:
  // a ranking row's link names its run as A alone (B: another run of A's judge, else the
  // first other run), a comparison's both. False where the link names no view of the page.
  function fromLink() {
    const wanted = new URLSearchParams(window.location.hash.slice(1));
    const found = data.views.findIndex((v) => v.name === wanted.get("task"));
    if (found < 0) {
      return false;
    }
    state.view = found;
    resetView();
    const v = view();
    const letter = (name) => wanted.has(name)
      ? v.columns.findIndex((c) => c.letter === wanted.get(name))
      : -1;
    const a = letter("a");
    const b = letter("b");
    if (a >= 0) {
      state.a = a;
      state.b = b >= 0 ? b : otherRun(v, a);
    }
    if (v.metrics.includes(wanted.get("metric"))) {
      state.metric = wanted.get("metric");
    }
    return true;
  }

  // A B for run A alone: the first other run of A's judge (so that a judged metric pairs),
  // else the first other run, else A itself (a view of one run).
  function otherRun(v, a) {
    const others = v.columns.map((c, n) => n).filter((n) => n !== a);
    const same = others.find((n) => v.judge_groups[n] === v.judge_groups[a]);
    if (same !== undefined) {
      return same;
    }
    return others.length ? others[0] : a;
  }

  // --- the header: compare's row for A and B ----------------------------------------------
  function header() {
    const v = view();
    const box = el("div", { id: "comparison", className: "comparison" });
    const a = v.columns[state.a];
    const b = v.columns[state.b];
    box.appendChild(el("div", { className: "runs" }, [
      el("span", { className: "run-a", text: "A = " + a.letter + ": " + a.label }),
      el("span", { className: "run-b", text: "B = " + b.letter + ": " + b.label })
    ]));
    if (state.a === state.b) {
      box.appendChild(el("p", { id: "cmp-none", text: "A and B are one run: choose two." }));
      return box;
    }
    if (!pairable(v, state.metric)) {
      box.appendChild(el("p", {
        id: "cmp-none",
        text: state.metric + " is decided by a judge, and A and B were scored by different " +
          "judges (A: " + a.judge + "; B: " + b.judge + "): not paired, as in compare. " +
          "Re-score one run with the other's judge (the notes say how)."
      }));
      return box;
    }
    const found = comparisonOf(v);
    if (!found) {
      box.appendChild(el("p", {
        id: "cmp-none",
        text: "compare has no row for " + state.metric + " of these two runs (the notes say why)."
      }));
      return box;
    }
    const row = found.entry.row;
    const sign = found.flipped ? -1 : 1;
    const d = row.difference === null ? null : sign * row.difference;
    const lo = found.flipped ? (row.upper === null ? null : -row.upper) : row.lower;
    const hi = found.flipped ? (row.lower === null ? null : -row.lower) : row.upper;
    const line = el("p", { id: "cmp-row" });
    line.setAttribute("data-index", String(found.entry.index));
    line.setAttribute("data-flipped", String(found.flipped));
    const parts = [
      [v.name + " " + state.metric + ": ", "cmp-what"],
      ["A " + fixed(found.flipped ? row.b : row.a, 2, false), "cmp-a"],
      [", B " + fixed(found.flipped ? row.a : row.b, 2, false), "cmp-b"],
      [", A - B " + fixed(d, 2, true) + " [" + fixed(lo, 2, true) + ", " + fixed(hi, 2, true) +
        "]", "cmp-diff"],
      [", p " + pText(row.p) + ", p Holm " + pText(row.p_holm), "cmp-p"],
      [", n " + row.n + ", MDD " + fixed(row.mdd, 2, false), "cmp-n"],
      [", " + row.method + (row.clusters ? " by " + (row.unit || "unit") + " (" + row.clusters +
        ")" : "") + (row.label ? " (" + row.label + ")" : ""), "cmp-method"]
    ];
    for (const [value, id] of parts) {
      line.appendChild(el("span", { id: id, text: value }));
    }
    box.appendChild(line);
    if (found.flipped) {
      box.appendChild(el("p", {
        className: "hint",
        text: "compare's row is B - A (run " + row.run_a + " - " + row.run_b + "): shown negated."
      }));
    }
    if (row.differs) {
      box.appendChild(el("p", { className: "hint", text: "what differs: " + row.differs.join("; ") }));
    }
    return box;
  }

  function agreement() {
    const v = view();
    const box = el("div", { id: "agree" });
    for (const entry of v.agree) {
      box.appendChild(el("pre", {
        className: "agree",
        text: "judge agree " + entry.a + " " + entry.b + ":\n" + entry.lines.join("\n")
      }));
    }
    return box;
  }

  function notes() {
    const box = el("details", { id: "notes" }, [
      el("summary", { text: "notes (" + data.notes.length + ")" })
    ]);
    for (const note of data.notes) {
      box.appendChild(el("p", { text: note }));
    }
    return box;
  }

  // --- the matrix, windowed -------------------------------------------------------------
  function cell(v, column, item) {
    const c = v.columns[column];
    const value = c.values[state.metric] ? c.values[state.metric][item.n] : null;
    const classes = "cell" + (column === state.a ? " is-a" : column === state.b ? " is-b" : "");
    return el("div", { className: classes }, [
      el("span", { className: "value", text: fixed(value, 2, false) }),
      el("span", { className: "reply", text: text(c.replies[item.n]) })
    ]);
  }

  function rowNode(v, item, top) {
    const d = differenceOf(v, item.n);
    const node = el("div", { className: "row" + (state.open === item.n ? " open" : "") });
    node.style.top = top + "px";
    node.setAttribute("data-id", item.id);
    node.appendChild(el("div", { className: "id" }, [
      el("span", { className: "item-id", text: item.id }),
      // The unit's mean first: a long noun phrase is cut at the cell's end, not the mean.
      el("span", { className: "unit" }, [
        el("span", { className: "cluster", text: clusterLabel(v, item) }),
        document.createTextNode(item.unit || "")
      ])
    ]));
    node.appendChild(el("div", { className: "diff", text: fixed(d, 2, true) }));
    v.columns.forEach((c, column) => node.appendChild(cell(v, column, item)));
    node.addEventListener("click", () => {
      state.open = item.n;
      renderDetails();
    });
    return node;
  }

  function columnHeads(v) {
    const head = el("div", { className: "row head" });
    head.appendChild(el("div", { className: "id", text: "item (" + (v.unit || "no unit") + ")" }));
    head.appendChild(el("div", { className: "diff", text: "A - B" }));
    v.columns.forEach((c, column) => {
      const classes = "cell" + (column === state.a ? " is-a" : column === state.b ? " is-b" : "");
      head.appendChild(el("div", { className: classes, text: c.letter + ": " + c.label }));
    });
    return head;
  }

  let scroller = null;

  // Draws the rows on screen. The scroll position and height are read before anything is
  // written: a read after a write would lay the whole page out again.
  function paintRows() {
    paintAt(scroller.scrollTop, scroller.clientHeight);
  }

  function paintAt(scrollTop, height) {
    const v = view();
    const body = scroller.querySelector(".body");
    const first = Math.max(0, Math.floor(scrollTop / ROW_HEIGHT) - OVERSCAN);
    const count = Math.ceil(height / ROW_HEIGHT) + 2 * OVERSCAN;
    const nodes = [];
    for (let k = first; k < Math.min(state.shown.length, first + count); k += 1) {
      nodes.push(rowNode(v, state.shown[k], k * ROW_HEIGHT));
    }
    body.replaceChildren(...nodes);
  }

  function renderList() {
    const v = view();
    const started = performance.now();
    const scrollTop = scroller.scrollTop;
    const height = scroller.clientHeight || 600;
    state.shown = shownItems();
    const count = document.getElementById("count");
    count.textContent = state.shown.length + " of " + v.items.length + " items";
    count.setAttribute("data-shown", String(state.shown.length));
    const body = scroller.querySelector(".body");
    body.style.height = state.shown.length * ROW_HEIGHT + "px";
    paintAt(Math.min(scrollTop, state.shown.length * ROW_HEIGHT), height);
    document.body.setAttribute("data-render-ms", String(performance.now() - started));
  }

  // One run's judge questions of an item: each question, its rating and the judge's answer
  // as the judge wrote it (text, never HTML); null where the run has none.
  function questionsTable(c, n) {
    const rows = c.questions ? c.questions[n] : null;
    if (!rows) {
      return null;
    }
    const table = el("table", { className: "questions" }, [
      el("tr", {}, [
        el("th", { text: "question" }),
        el("th", { text: "rating" }),
        el("th", { text: "the judge's answer" })
      ])
    ]);
    for (const [question, rating, answer] of rows) {
      table.appendChild(el("tr", {}, [
        el("td", { text: text(question) }),
        el("td", { className: "rating", text: text(rating) }),
        el("td", {}, [answerNode(answer)])
      ]));
    }
    return table;
  }

  function answerNode(answer) {
    return el("pre", {
      className: "answer",
      text: answer >= 0 ? text(answer) : "(not in the bundle)"
    });
  }

  // A and B scored by different judges with the same reply (a submission and its re-score):
  // each question with both judges' ratings and answers side by side; null otherwise.
  function sideBySide(v, item) {
    const a = v.columns[state.a];
    const b = v.columns[state.b];
    if (!a || !b || state.a === state.b || v.judge_groups[state.a] === v.judge_groups[state.b]) {
      return null;
    }
    const ours = a.questions ? a.questions[item.n] : null;
    const theirs = b.questions ? b.questions[item.n] : null;
    if (!ours || !theirs || a.replies[item.n] !== b.replies[item.n]) {
      return null;
    }
    const other = new Map(theirs.map((row) => [row[0], row]));
    const table = el("table", { className: "questions", id: "side-by-side" }, [
      el("tr", {}, [
        el("th", { text: "question" }),
        el("th", { text: "A: rating" }),
        el("th", { text: "A's judge's answer" }),
        el("th", { text: "B: rating" }),
        el("th", { text: "B's judge's answer" })
      ])
    ]);
    for (const [question, rating, answer] of ours) {
      const found = other.get(question) || [question, -1, -1];
      table.appendChild(el("tr", {}, [
        el("td", { text: text(question) }),
        el("td", { className: "rating", text: text(rating) }),
        el("td", {}, [answerNode(answer)]),
        el("td", { className: "rating", text: found[1] >= 0 ? text(found[1]) : "–" }),
        el("td", {}, [answerNode(found[2])])
      ]));
    }
    return el("div", { className: "judges" }, [
      el("h3", { text: "the same reply, two judges: A (" + a.judge + ") and B (" + b.judge + ")" }),
      table
    ]);
  }

  function renderDetails() {
    const v = view();
    const box = document.getElementById("details");
    const item = v.items[state.open];
    if (!item) {
      box.replaceChildren();
      return;
    }
    const parts = [el("h2", { text: item.id })];
    const fields = v.fields.map((name, k) => name + ": " + text(item.fields[k]));
    if (fields.length) {
      parts.push(el("p", { className: "fields", text: fields.join(" · ") }));
    }
    parts.push(el("details", { className: "prompt" }, [
      el("summary", { text: "the prompt as sent" }),
      el("pre", { text: promptText(item) || "(not recorded)" })
    ]));
    parts.push(el("h3", { text: "references" }));
    const refs = el("ul", { className: "refs" });
    for (const r of item.refs) {
      refs.appendChild(el("li", { text: text(r) }));
    }
    parts.push(refs);
    const judges = sideBySide(v, item);
    if (judges) {
      parts.push(judges);
    }
    v.columns.forEach((c) => {
      const values = v.metrics.map((m) => m + "=" + fixed(c.values[m] ? c.values[m][item.n] : null, 2,
        false)).join(", ");
      parts.push(el("div", { className: "run" }, [
        el("h3", { text: c.letter + ": " + c.label + (c.judge ? " · judge: " + c.judge : "") }),
        el("p", { className: "values", text: values }),
        el("pre", { className: "reply-full", text: text(c.replies[item.n]) || "(no reply)" }),
        ...[questionsTable(c, item.n)].filter((node) => node),
        el("pre", { className: "judged", text: text(c.judged[item.n]) })
      ]));
    });
    box.replaceChildren(...parts);
  }

  function render() {
    const v = view();
    const started = performance.now();
    const summary = el("p", { id: "count" });
    scroller = el("div", { className: "matrix" }, [el("div", { className: "body" })]);
    scroller.addEventListener("scroll", paintRows);
    app.replaceChildren(
      el("h1", { text: "conceptcomb explorer" }),
      controls(),
      header(),
      agreement(),
      notes(),
      summary,
      el("div", { className: "table" }, [columnHeads(v), scroller]),
      el("div", { id: "details", className: "details" })
    );
    renderList();
    renderDetails();
    document.body.setAttribute("data-first-render-ms", String(performance.now() - started));
  }

  if (!data.views.length) {
    app.replaceChildren(el("p", { text: "No run holds per-item scores of any task." }));
    return;
  }
  resetView();
  fromLink();
  render();
  // A link followed within the page (or the address edited) opens its view and runs.
  window.addEventListener("hashchange", () => {
    if (fromLink()) {
      render();
    }
  });
  document.body.setAttribute("data-ready-ms", String(performance.now()));
  document.body.setAttribute("data-ready", "true");
}());
