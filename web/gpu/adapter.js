// The browser's WebGPU adapter, asked for without the GPU path itself (attention-gpu.js, its
// shaders and pipelines, loaded only when WebGPU is wanted): whether there is one, and its name.
import { t } from '../i18n.js';

// The adapter (cheap: no device, no shaders), or an Error saying why WebGPU is not there (no
// navigator.gpu, no adapter); its `key` names the message, so the page can show it again in
// another language.
export async function gpuAdapter() {
  const absent = (key) => Object.assign(new Error(t(key)), { key });
  if (typeof navigator === 'undefined' || !navigator.gpu) throw absent('gpu.noNavigator');
  const adapter = await navigator.gpu.requestAdapter();
  if (!adapter) throw absent('gpu.noAdapter');
  return adapter;
}

// What the page calls an adapter: vendor, architecture, device, description as the browser gives them.
export function adapterName(adapter) {
  const info = adapter.info ?? {};
  return [info.vendor, info.architecture, info.device, info.description].filter(Boolean).join(' ') || 'WebGPU adapter';
}
