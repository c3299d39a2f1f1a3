// Writing (and reading back the layout of) a safetensors file in plain JS, for the trained model's
// export (engine.js exportSafetensors): 8-byte little-endian header length, a JSON header
// {name: {dtype, shape, data_offsets: [begin, end]}, __metadata__?: {string: string}} padded with
// spaces to a multiple of 8 (so every F32 tensor is 4-byte aligned), then the data, little-endian.
// The core's loader (core/safetensors.cpp) and Python's safetensors / torch read it.

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

// float32 -> float16 bits, rounded to nearest even (subnormals kept, overflow to infinity).
const f32 = new Float32Array(1), u32 = new Uint32Array(f32.buffer);
export function toHalf(x) {
  f32[0] = x;
  const b = u32[0], sign = (b >>> 16) & 0x8000, e = (b >>> 23) & 0xff, m = b & 0x7fffff;
  if (e === 0xff) return sign | 0x7c00 | (m ? 0x200 : 0);
  const exp = e - 127 + 15;
  if (exp >= 0x1f) return sign | 0x7c00;
  if (exp <= 0) {
    if (exp < -10) return sign;
    const mm = m | 0x800000, shift = 14 - exp;
    let h = mm >>> shift;
    const rest = mm & ((1 << shift) - 1), half = 1 << (shift - 1);
    if (rest > half || (rest === half && (h & 1))) h++;
    return sign | h;
  }
  let h = (exp << 10) | (m >>> 13);
  const rest = m & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && (h & 1))) h++;
  return sign | h;
}

// tensors: [{name, shape, data: Float32Array}] in the order to store; metadata: strings only;
// dtype 'F32' (as computed) or 'F16' (rounded to nearest even: half the bytes, the shipped
// language model's; the core widens it on load).
export function encodeSafetensors(tensors, metadata, { dtype = 'F32' } = {}) {
  if (dtype !== 'F32' && dtype !== 'F16') throw new Error(`safetensors: dtype ${dtype} must be F32 or F16`);
  const size = dtype === 'F32' ? 4 : 2;
  const header = metadata ? { __metadata__: metadata } : {};
  let offset = 0;
  for (const t of tensors) {
    const n = t.shape.reduce((a, b) => a * b, 1);
    if (n !== t.data.length) throw new Error(`tensor ${t.name}: shape [${t.shape}] holds ${n} values, data has ${t.data.length}`);
    header[t.name] = { dtype, shape: t.shape, data_offsets: [offset, offset + size * n] };
    offset += size * n;
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
    if (dtype === 'F16') t.data.forEach((v, i) => view.setUint16(begin + 2 * i, toHalf(v), true));
    else if (LITTLE_ENDIAN) new Float32Array(out.buffer, begin, t.data.length).set(t.data);
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
