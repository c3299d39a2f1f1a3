// Reading a model folder into the core (model/worker.js runs it): from an https URL of the folder
// (a Hub model's resolve/main/ address), from files the student picked or dropped, or from bytes
// (Node tests). Every source is checked before it is read: config.json and the shard index first
// (the core lists the weight files, refusing a shard name outside the folder or a total_size
// beyond the page's memory), then each weight file's first bytes, its safetensors header, checked
// by the core against the file's size and the memory (dtypes, shapes, offsets, the float32 total);
// then the module is built from config.json and the headers (its parameters' names and shapes
// checked against the tensors') before one byte of the weights is read. The weights then stream
// straight into the module's parameters, a chunk at a time (no copy of a whole file anywhere):
// progress reports bytes, speed and time left, and an AbortSignal cancels at any point.
//
//   const source = urlSource(text, base) | fileSource([{file, path}]) | bytesSource(label, {name: bytes})
//   await openFolder(source, {plan, build, onProgress, signal, maxBytes}) -> {label, small, plan, sink}
// plan(args) is bindings/pretrained.mjs pretrainedPlan; build({label, files, sizes, plan}) (plan: the checked
// one) resolves to the sink the weights go
// into: {tensors: [{file, begin, end, dtype, count}], write(i, first, bytes), finish()}.
// onProgress({phase: 'header' | 'weights', file, loaded, total, bytesPerSecond, secondsLeft}).

// The small files of a folder: config.json and the index (the core's), the tokenizer's.
export const FOLDER_FILES = ['config.json', 'model.safetensors.index.json', 'tokenizer.json', 'tokenizer_config.json', 'vocab.json', 'merges.txt'];
const MAX_SMALL = 64 << 20;   // a tokenizer.json is a few MB; anything past this is not one
const MAX_HEADER = (16 << 20) + 8;   // the core's limit on a safetensors header (base/limits.hpp), with its length

const fault = (message) => Object.assign(new Error(message), { field: 'pretrained' });
const cancelled = () => Object.assign(new Error('cancelled'), { name: 'AbortError' });
const le64 = (b) => Number(new DataView(b.buffer, b.byteOffset, 8).getBigUint64(0, true));

// --- sources: {label, small(name) -> bytes | null, open(name) -> {size | null, read() -> chunk | null, cancel()}} ---

// The folder's address as given (a Hub page's /tree/main/ or /blob/main/ becomes its files' /resolve/main/,
// a model's page its /resolve/main/, a link to one of its files the folder).
export function folderUrl(text, base) {
  let url;
  try {
    url = new URL(text.trim(), base);
  } catch {
    throw fault(`"${text}" is not a URL: give the address of a model folder, as https://huggingface.co/<owner>/<model>/resolve/main/`);
  }
  if (!/^https?:$/.test(url.protocol)) throw fault(`${url.protocol} URLs are not read: give an https:// address of a model folder`);
  // a file of the folder (its config.json's link): the folder
  url.pathname = url.pathname.replace(/\/(tree|blob)\/([^/]+)/, '/resolve/$2').replace(/\/[^/]+\.(json|safetensors|txt)$/, '').replace(/\/?$/, '/');
  // a Hub model's page (https://huggingface.co/<owner>/<model>, or a legacy <model>), as a student
  // copies it from the address bar: its files are at resolve/main/
  const parts = url.pathname.split('/').filter(Boolean);
  if (/^(www\.)?(huggingface|hf)\.co$/.test(url.hostname) && !parts.includes('resolve') && parts.length >= 1 && parts.length <= 2) {
    url.pathname = `/${parts.join('/')}/resolve/main/`;
  }
  url.search = url.hash = '';
  return url;
}

export function urlSource(text, base, signal) {
  const url = folderUrl(text, base);
  const get = async (name, optional) => {
    const at = new URL(name, url);
    let r;
    try {
      r = await fetch(at, { signal, mode: 'cors', credentials: 'omit' });
    } catch (e) {
      if (signal?.aborted) throw cancelled();
      throw fault(`could not fetch ${at.href}: ${e.message} (offline, or the server does not let this page read it)`);
    }
    if (r.status === 404 && optional) return null;
    if (!r.ok) throw fault(`could not fetch ${at.href}: HTTP ${r.status}`);
    return r;
  };
  return {
    label: url.pathname.split('/').filter((p) => p && p !== 'resolve' && p !== 'main').slice(-2).join('/') || url.host,
    async small(name) {
      const r = await get(name, name !== 'config.json');
      if (!r) return null;
      if (Number(r.headers.get('content-length') ?? 0) > MAX_SMALL) throw fault(`${name} has ${r.headers.get('content-length')} bytes: too big for a ${name}`);
      return smallBody(r.body.getReader(), name);
    },
    async open(name) {
      const r = await get(name, false);
      const length = r.headers.get('content-length');
      const reader = r.body.getReader();
      return { size: length === null ? null : Number(length), read: async () => (await reader.read()).value ?? null, cancel: () => reader.cancel().catch(() => {}) };
    },
  };
}

// A small file's bytes, counted as they come: a chunked response has no Content-Length and a
// compressed one gives the compressed size, so a server could otherwise send without end.
async function smallBody(reader, name) {
  const chunks = [];
  let n = 0;
  for (let c = await reader.read(); !c.done; c = await reader.read()) {
    n += c.value.length;
    if (n > MAX_SMALL) {
      reader.cancel().catch(() => {});
      throw fault(`${name} goes on past ${MAX_SMALL} bytes (its length was not sent, or only compressed): too big for a ${name}`);
    }
    chunks.push(c.value);
  }
  const bytes = new Uint8Array(n);
  chunks.reduce((at, c) => (bytes.set(c, at), at + c.length), 0);
  return bytes;
}

// Files of a picker or a drop: [{file, path}] (path: the file's place in the dropped or picked
// folder, whose name is the label).
export function fileSource(list) {
  const byName = new Map(list.map(({ file }) => [file.name, file]));
  const withFolder = list.find(({ path }) => path?.includes('/'));
  return {
    label: withFolder ? withFolder.path.split('/').at(-2) : 'files',
    async small(name) {
      const f = byName.get(name);
      if (!f) return null;
      if (f.size > MAX_SMALL) throw fault(`${name} has ${f.size} bytes: too big for a ${name}`);
      return new Uint8Array(await f.arrayBuffer());
    },
    async open(name) {
      const f = byName.get(name);
      if (!f) throw fault(`the files picked have no ${name}: the folder's ${name === 'model.safetensors' ? 'weights' : 'shard index names it'}`);
      const reader = f.stream().getReader();
      return { size: f.size, read: async () => (await reader.read()).value ?? null, cancel: () => reader.cancel().catch(() => {}) };
    },
  };
}

// A folder held in memory (Node, tests), read in chunks of `chunk` bytes as a download comes.
export function bytesSource(label, files, chunk = 1 << 16) {
  return {
    label,
    small: async (name) => files[name] ?? null,
    async open(name) {
      const b = files[name];
      if (!b) throw fault(`model folder '${label}' has no ${name}`);
      let at = 0;
      return { size: b.length, read: async () => (at < b.length ? b.subarray(at, (at += chunk)) : null), cancel() {} };
    },
  };
}

// --- reading ---

// A weight file's bytes as they come, with the first ones kept until its header is in.
function bodyOf(stream, signal) {
  const chunks = [];
  let have = 0, done = false;
  return {
    stream,
    chunks,
    get have() { return have; },
    // reads until n bytes are in (or the file ended)
    async fill(n) {
      while (have < n && !done) {
        const c = await stream.read();
        if (signal?.aborted) throw cancelled();
        if (!c) { done = true; break; }
        chunks.push(c);
        have += c.length;
      }
    },
    // the first n bytes read
    prefix(n) {
      const out = new Uint8Array(Math.min(n, have));
      let at = 0;
      for (const c of chunks) {
        if (at >= out.length) break;
        const part = c.subarray(0, out.length - at);
        out.set(part, at);
        at += part.length;
      }
      return out;
    },
  };
}

// The data bytes a header claims (its largest end offset), for a server that sends no length.
function claimedSize(head) {
  try {
    const n = le64(head);
    const h = JSON.parse(new TextDecoder().decode(head.subarray(8, 8 + n)));
    return 8 + n + Math.max(0, ...Object.values(h).map((e) => (Array.isArray(e?.data_offsets) ? Number(e.data_offsets[1]) || 0 : 0)));
  } catch {
    return head.length;   // the core says what is wrong with the header
  }
}

// One weight file's bytes, in order, cut at its tensors' byte ranges into whole values for the sink.
function router(sink, file) {
  const list = sink.tensors.map((t, i) => ({ ...t, i, written: 0, carry: null })).filter((t) => t.file === file).sort((a, b) => a.begin - b.begin);
  let pos = 0, k = 0;
  const size = (t) => (t.dtype === 'F32' ? 4 : 2);
  const feed = (t, bytes) => {
    let data = bytes;
    if (t.carry) { data = new Uint8Array(t.carry.length + bytes.length); data.set(t.carry); data.set(bytes, t.carry.length); }
    const whole = data.length - (data.length % size(t));
    if (whole > 0) sink.write(t.i, t.written, data.subarray(0, whole));
    t.written += whole / size(t);
    t.carry = whole < data.length ? data.slice(whole) : null;
  };
  return (chunk) => {
    let off = 0;
    while (off < chunk.length) {
      while (k < list.length && pos >= list[k].end) k++;
      const t = list[k];
      if (!t) return;   // past the last tensor (the core's plan allows nothing there)
      if (pos < t.begin) { const skip = Math.min(t.begin - pos, chunk.length - off); pos += skip; off += skip; continue; }
      const take = Math.min(t.end - pos, chunk.length - off);
      feed(t, chunk.subarray(off, off + take));
      pos += take;
      off += take;
    }
  };
}

export async function openFolder(source, { plan, build, onProgress = () => {}, signal, maxBytes }) {
  const check = () => { if (signal?.aborted) throw cancelled(); };
  const { label } = source;
  const small = {};
  const got = await Promise.all(FOLDER_FILES.map((name) => source.small(name)));
  FOLDER_FILES.forEach((name, i) => { if (got[i]) small[name] = got[i]; });
  check();
  const names = plan({ label, files: small, headers: false, maxBytes }).files.map((f) => f.name);
  // every weight file opened and read up to the end of its header
  const bodies = [], heads = {}, sizes = {};
  try {
    for (const name of names) {
      onProgress({ phase: 'header', file: name, loaded: 0, total: null });
      const stream = await source.open(name);
      const body = bodyOf(stream, signal);
      bodies.push(body);
      await body.fill(8);
      if (body.have < 8) throw fault(`${name} has ${body.have} bytes: not a safetensors file (it starts with its header's 8-byte length)`);
      const n = 8 + le64(body.prefix(8));
      // a header past the core's 16 MiB limit is refused from its length alone, unread
      if (n <= MAX_HEADER) await body.fill(n);
      heads[name] = body.prefix(n);
      sizes[name] = stream.size ?? claimedSize(heads[name]);
    }
    const files = { ...small, ...heads };
    const checked = plan({ label, files, sizes, headers: true, maxBytes });
    const sink = await build({ label, files, sizes, plan: checked });
    // the weights, chunk by chunk into the module
    const total = Object.values(sizes).reduce((a, b) => a + b, 0);
    const t0 = performance.now();
    let loaded = 0;
    const tick = (n, file) => {
      loaded += n;
      const s = (performance.now() - t0) / 1000, bytesPerSecond = s > 0.05 ? loaded / s : 0;
      onProgress({ phase: 'weights', file, loaded, total, bytesPerSecond, secondsLeft: bytesPerSecond > 0 ? (total - loaded) / bytesPerSecond : null });
    };
    for (let i = 0; i < names.length; i++) {
      const name = names[i], body = bodies[i], route = router(sink, name);
      let got = 0;
      for (const c of body.chunks.splice(0)) { route(c); got += c.length; tick(c.length, name); }
      for (;;) {
        const c = await body.stream.read();
        check();
        if (!c) break;
        got += c.length;
        if (got > sizes[name]) throw fault(`${name}: the server sent more than the ${sizes[name]} bytes it announced`);
        route(c);
        tick(c.length, name);
      }
      if (got !== sizes[name]) throw fault(`${name}: ${got} of its ${sizes[name]} bytes came: the download was cut`);
    }
    sink.finish();
    return { label, small, plan: checked, sink };
  } finally {
    for (const b of bodies) b.stream.cancel();
  }
}

// The files of a drop as [{file, path}]: plain files, or a dropped folder's (its entries, one level).
export async function droppedFiles(dataTransfer) {
  const entries = [...(dataTransfer.items ?? [])].map((i) => i.webkitGetAsEntry?.()).filter(Boolean);
  const dir = entries.find((e) => e.isDirectory);
  if (!dir) return [...dataTransfer.files].map((file) => ({ file, path: file.name }));
  const all = [];
  const reader = dir.createReader();
  for (;;) {
    const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
    if (batch.length === 0) break;
    all.push(...batch);
  }
  const files = await Promise.all(all.filter((e) => e.isFile).map((e) => new Promise((resolve, reject) => e.file(resolve, reject))));
  return files.map((file) => ({ file, path: `${dir.name}/${file.name}` }));
}
