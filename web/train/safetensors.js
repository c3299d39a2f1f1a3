// Writing (and reading back the layout of) a safetensors file in plain JS, for the trained model's
// export (engine.js exportSafetensors): 8-byte little-endian header length, a JSON header
// {name: {dtype, shape, data_offsets: [begin, end]}, __metadata__?: {string: string}} padded with
// spaces to a multiple of 8 (so every F32 tensor is 4-byte aligned), then the data, little-endian.
// The core's loader (core/safetensors.cpp) and Python's safetensors / torch read it.

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

// tensors: [{name, shape, data: Float32Array}] in the order to store; metadata: strings only.
export function encodeSafetensors(tensors, metadata) {
  const header = metadata ? { __metadata__: metadata } : {};
  let offset = 0;
  for (const t of tensors) {
    const n = t.shape.reduce((a, b) => a * b, 1);
    if (n !== t.data.length) throw new Error(`tensor ${t.name}: shape [${t.shape}] holds ${n} values, data has ${t.data.length}`);
    header[t.name] = { dtype: 'F32', shape: t.shape, data_offsets: [offset, offset + 4 * n] };
    offset += 4 * n;
  }
  const json = new TextEncoder().encode(JSON.stringify(header));
  const headerLength = Math.ceil(json.length / 8) * 8;
  const out = new Uint8Array(8 + headerLength + offset);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(headerLength), true);
  out.set(json, 8);
  out.fill(0x20, 8 + json.length, 8 + headerLength);
  for (const t of tensors) {
    const begin = 8 + headerLength + header[t.name].data_offsets[0];
    if (LITTLE_ENDIAN) new Float32Array(out.buffer, begin, t.data.length).set(t.data);
    else t.data.forEach((v, i) => view.setFloat32(begin + 4 * i, v, true));
  }
  return out;
}

// {header, dataStart}: the parsed header of a safetensors file and where its data begins; throws
// on a file whose header length or offsets do not fit it.
export function readSafetensorsHeader(bytes) {
  if (bytes.length < 8) throw new Error(`safetensors: ${bytes.length} bytes, shorter than the 8-byte header length`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = Number(view.getBigUint64(0, true));
  if (8 + n > bytes.length) throw new Error(`safetensors: header of ${n} bytes runs past the end (${bytes.length} bytes)`);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  const dataLength = bytes.length - 8 - n;
  for (const [name, e] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const [begin, end] = e.data_offsets;
    if (!(begin <= end && end <= dataLength)) throw new Error(`safetensors: ${name} offsets [${begin}, ${end}] outside the ${dataLength} data bytes`);
  }
  return { header, dataStart: 8 + n };
}

// The F32 tensor `name` of a safetensors file, copied out.
export function readSafetensorsTensor(bytes, name) {
  const { header, dataStart } = readSafetensorsHeader(bytes);
  const e = header[name];
  if (!e || e.dtype !== 'F32') throw new Error(`safetensors: no F32 tensor ${name}`);
  const [begin, end] = e.data_offsets;
  const copy = bytes.slice(dataStart + begin, dataStart + end);
  return { shape: e.shape, data: new Float32Array(copy.buffer, 0, (end - begin) / 4) };
}
