// The built site's WGSL without its comments and indentation (vite build only: `npm start` serves
// the shaders as written, so a WebGPU error's line numbers match the files). The page fetches the
// shaders at start-up when WebGPU is in use; their comments were 40 % of those bytes.
// WGSL has no string literals: every `//` starts a comment, and block comments nest.
export function minifyWgsl(code) {
  let out = '', depth = 0;
  for (let i = 0; i < code.length; i++) {
    if (code.startsWith('/*', i)) { depth++; i++; continue; }
    if (depth && code.startsWith('*/', i)) { depth--; i++; continue; }
    if (!depth) out += code[i];
  }
  return out.split('\n').map((line) => line.replace(/\/\/.*/, '').trim()).filter(Boolean).join('\n') + '\n';
}

export function wgslMinify() {
  return {
    name: 'wgsl-minify',
    apply: 'build',
    generateBundle(_, bundle) {
      for (const file of Object.values(bundle))
        if (file.type === 'asset' && file.fileName.endsWith('.wgsl')) file.source = minifyWgsl(String(file.source));
    },
  };
}
