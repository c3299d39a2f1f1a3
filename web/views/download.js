// A file made in the page handed to the browser as a download (a blob: URL, allowed under the
// strict CSP): exports of tensors, heatmaps, scenarios, trained weights and runs.

export function download(filename, content, type) {
  const blob = content instanceof Blob ? content : new Blob([content], { type });
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = filename;
  a.hidden = true;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}

