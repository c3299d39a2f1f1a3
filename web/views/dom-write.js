// DOM writes that do nothing when the value is already there. A keystroke redraws every view, and
// a write of the same text, attribute or `hidden` still costs: Chromium replaces the text node,
// restyles the element (aria-pressed and hidden are in selectors / presentational) and relays it out.
// Views use these for what a keystroke rarely changes; syncRows keeps a table's cells across redraws.

export function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

export function setAttr(el, name, value) {
  if (el.getAttribute(name) !== value) el.setAttribute(name, value);
}

export function setHidden(el, hidden) {
  if (el.hidden !== hidden) el.hidden = hidden;
}

// A <select>'s options: [{value, text}] (made again only when they changed).
export function fillOptions(select, options) {
  const same = select.options.length === options.length && options.every((o, i) => select.options[i].value === o.value && select.options[i].text === o.text);
  if (same) return;
  select.replaceChildren(...options.map(({ value, text }) => Object.assign(document.createElement('option'), { value, textContent: text })));
}

// <label class="inline"><input type="checkbox" value=...> text</label>
export function checkboxLabel(value, text, checked) {
  const label = document.createElement('label');
  label.className = 'inline';
  const input = Object.assign(document.createElement('input'), { type: 'checkbox', value, checked });
  label.append(input, ` ${text}`);
  return label;
}

// parent's element children made or trimmed to n (made ones by make()), in order.
export function fitChildren(parent, n, make) {
  while (parent.children.length > n) parent.lastElementChild.remove();
  while (parent.children.length < n) parent.append(make());
  return [...parent.children];
}

// parent (a <thead> or <tbody>) gets one <tr> per entry of rows, each a list of cells
// [tag ('th' | 'td'), text, scope?]: rows and cells already there are reused and only changed
// texts written (a table rebuilt per keystroke was restyled and laid out from scratch).
// newRow(tr): called once for each <tr> made (e.g. its data-testid).
export function syncRows(parent, rows, newRow = null) {
  const made = () => {
    const tr = document.createElement('tr');
    newRow?.(tr);
    return tr;
  };
  fitChildren(parent, rows.length, made).forEach((tr, r) => {
    const cells = rows[r];
    while (tr.cells.length > cells.length) tr.lastElementChild.remove();
    cells.forEach(([tag, text, scope = ''], c) => {
      let cell = tr.cells[c];
      if (!cell || cell.localName !== tag) {
        const fresh = document.createElement(tag);
        if (cell) cell.replaceWith(fresh);
        else tr.append(fresh);
        cell = fresh;
      }
      if (cell.scope !== scope) cell.scope = scope;
      setText(cell, text);
    });
  });
}
