// The URL side of the state (app/state.js declares the schema): the state a link opens, presets laid
// under a link's own fields or under what a click keeps, and the state written back into the
// hash, once typing pauses or at once when the link is asked for. app/page.js owns the live state.

import { presets } from '../playground/presets.js';
import { defaultState, fromHash, hashProblems, linkParams, schema, toHash } from './state.js';

// States laid over one another, later layers winning; `config` (arguments per module) merged.
export function layer(...states) {
  return states.reduce((acc, s) => ({ ...acc, ...s, config: { ...acc.config, ...(s.config ?? {}) } }), {});
}

// The state a preset gives: over `under` (what a click keeps: texts, language, arguments typed
// for other modules) and under `over` (a link's own fields).
export function presetState(preset, { under = {}, over = {} } = {}) {
  return layer(defaultState(), under, structuredClone(preset.state), over);
}

// A link's state: its preset (course pages: preset=journey) with the link's own fields on top;
// an unknown module falls back to the default. problems(): what the link had that was ignored,
// in the current language.
export function readLink(hash, moduleIds) {
  const params = linkParams(hash);
  const fromLink = fromHash(hash);
  const preset = presets.find((p) => p.id === params.get('preset'));
  const own = Object.fromEntries(Object.keys(schema).filter((key) => params.has(key)).map((key) => [key, fromLink[key]]));
  const state = preset ? presetState(preset, { over: own }) : fromLink;
  if (!moduleIds.includes(state.module)) state.module = defaultState().module;
  return { state, problems: () => hashProblems(hash, { modules: moduleIds, presets: presets.map((p) => p.id) }) };
}

// The URL follows the state, but replaceState is slow (Chromium rate-limits it): soon() writes
// once typing pauses, now() at once and returns the link.
export function createLinkWriter(getState) {
  let timer = 0;
  // A notebook's page (an <iframe srcdoc>, notebook.js) has no address of its own to write into.
  const addressable = location.protocol !== 'about:';
  const now = () => {
    clearTimeout(timer);
    if (addressable) history.replaceState(null, '', `#${toHash(getState())}`);
    return location.href;
  };
  return { now, soon: () => { clearTimeout(timer); timer = setTimeout(now, 400); } };
}
