// The DOM builders every page uses: text goes in as a text node, never as HTML.

export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

/** A table with a header row; ``cells(item, tr)`` gives an item's cells (nodes, or text: "—" for none). */
export function table(headers, items, cells, testid) {
  const node = el("table", "dash-table");
  if (testid) node.dataset.testid = testid;
  const head = node.createTHead().insertRow();
  for (const h of headers) head.append(el("th", null, h));
  const body = node.createTBody();
  for (const item of items) {
    const tr = body.insertRow();
    for (const cell of cells(item, tr)) {
      const td = tr.insertCell();
      td.append(cell instanceof Node ? cell : document.createTextNode(cell ?? "—"));
    }
  }
  return node;
}
