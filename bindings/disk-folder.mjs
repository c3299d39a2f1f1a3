// A Hugging Face model folder on disk for core.run (Node only: node:fs), as the Node CLI reads it.
//   core.run(scenario, diskFolder(dir))   scenario.pretrained names the folder (for messages)
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';

// A model folder on disk, as core/cli/disk_folder.hpp reads it for the native CLI: small files
// whole, of each weight file its size and its header, then the weights a range at a time (run's
// options.files, sizes and range): the WASM heap holds the module's weights and no copy of the file.
const MAX_HEADER = 16 << 20;
export function diskFolder(dir) {
  const path = (name) => join(dir, name);
  const isFile = (p) => existsSync(p) && statSync(p).isFile();
  const readAt = (p, offset, length) => {
    const fd = openSync(p, 'r');
    try {
      const out = new Uint8Array(length);
      let got = 0;
      for (let n; got < length && (n = readSync(fd, out, got, length - got, offset + got)) > 0;) got += n;
      return out.subarray(0, got);
    } finally {
      closeSync(fd);
    }
  };
  return {
    files(name) {
      const p = path(name);
      if (!isFile(p)) return null;
      if (!name.endsWith('.safetensors')) return readFileSync(p);
      const head = readAt(p, 0, 8);   // its header's length, then the header if the core's limit allows it
      const n = head.length === 8 ? Number(new DataView(head.buffer, head.byteOffset, 8).getBigUint64(0, true)) : 0;
      return n <= MAX_HEADER ? readAt(p, 0, 8 + n) : head;
    },
    sizes: (name) => (isFile(path(name)) ? statSync(path(name)).size : 0),
    range: (name, offset, length) => readAt(path(name), offset, length),
  };
}
