// The settings panel of narrow screens (issue 23; style.css "Phones and narrow containers"): a
// disclosure button in the sentence bar opens backend, presets, module and sharing (index.html
// #settings-panel); its open state is the link's `settings` field (state.js), set by events.js.
// On wide screens the panel is always shown and the button hidden: nothing here changes them.

// els: {toggle (the button), panel (#settings-panel), aside (#config), share (the header's buttons),
// header}; onToggle(): the reader pressed the button (or Escape in the open panel's column).
export function createSettingsPanel(els, onToggle) {
  const { toggle, panel, aside, share, header } = els;
  // Narrow layout = the toggle is rendered (one breakpoint, in style.css's container query).
  const narrow = () => toggle.getClientRects().length > 0;
  // Sharing joins the panel on narrow screens and goes back to the header on wide ones.
  const placeShare = () => {
    const home = narrow() ? panel : header;
    if (share.parentElement !== home) (narrow() ? panel.querySelector('.settings-heading').after(share) : header.append(share));
  };
  new ResizeObserver(placeShare).observe(document.body);
  placeShare();
  toggle.addEventListener('click', () => onToggle());
  aside.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && narrow() && aside.classList.contains('settings-open')) {
      e.preventDefault();
      onToggle();
    }
  });
  return {
    // open: the state's `settings`. A panel closing with the focus inside (a preset picked, Escape)
    // hands the focus to its button.
    show(open) {
      aside.classList.toggle('settings-open', open);
      toggle.setAttribute('aria-expanded', open ? 'true' : 'false');
      const active = document.activeElement;
      if (!open && narrow() && active && active !== document.body && (panel.contains(active) || aside.contains(active)) && active.getClientRects().length === 0) toggle.focus();
    },
  };
}
