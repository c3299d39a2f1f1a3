// The one floating tooltip the heatmaps share (hover a cell to read its value). Positioned from
// JS through element.style, which the page's CSP allows (only inline style attributes are banned).

let tip = null;

function element() {
  if (!tip) {
    tip = document.createElement('div');
    tip.className = 'tooltip';
    tip.setAttribute('role', 'tooltip');
    tip.hidden = true;
    document.body.append(tip);
  }
  return tip;
}

export function showTooltip(text, clientX, clientY) {
  const el = element();
  el.textContent = text;
  el.hidden = false;
  const pad = 12;
  const w = el.offsetWidth;
  const x = Math.min(clientX + pad, window.innerWidth - w - 4);
  el.style.left = `${Math.max(4, x) + window.scrollX}px`;
  el.style.top = `${clientY + pad + window.scrollY}px`;
}

export function hideTooltip() {
  if (tip) tip.hidden = true;
}
