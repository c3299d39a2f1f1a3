// Inline errors: the message goes beside the control it is about (a field with
// data-control="<control>"), as a data-testid="error" element that exists only while shown.

export function showError(root, control, message) {
  let field = root.querySelector(`[data-control="${CSS.escape(control)}"]`);
  // A hidden control (e.g. the tokens box while inputs are random) cannot show it: the module can.
  if (!field || field.closest('[hidden]')) field = root.querySelector('[data-control="module"]');
  const p = document.createElement('p');
  p.className = 'error field-error';
  p.dataset.testid = 'error';
  p.setAttribute('role', 'alert');
  p.textContent = message;   // the core's message, as text
  field.append(p);
  field.classList.add('invalid');
  field.querySelector('input, select')?.setAttribute('aria-invalid', 'true');
}

export function clearErrors(root) {
  for (const p of root.querySelectorAll('.field-error')) p.remove();
  for (const f of root.querySelectorAll('.invalid')) {
    f.classList.remove('invalid');
    f.querySelector('[aria-invalid]')?.removeAttribute('aria-invalid');
  }
}
