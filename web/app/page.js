// The page: its one live state, and the modes that draw it. setState() is the only writer of the
// state; after each change every open mode hears of it (sync), modes open and close as the state
// says (app/modes.js), and the link follows. One direction: state -> each mode's plan -> core ->
// typed steps -> views. main.js makes the page; app/hooks.js exposes it to tests.
import { createLinkWriter } from './link.js';
import { MODES } from './modes.js';
import { createScheduler } from './scheduler.js';

// page: {core, state, set (setState on this page), modes (id -> the running mode), weights / weightsError (app/weights.js),
// scheduler, link, language (main.js's switch)}.
export function createPage(core, state) {
  const page = { core, state, modes: new Map(), opening: new Map(), weights: null, weightsError: null, scheduler: createScheduler() };
  page.link = createLinkWriter(() => page.state);
  page.set = (patch, opts) => setState(page, patch, opts);   // the modes write through it (they do not import this file)
  return page;
}

// The only writer of the state: a patch of schema fields (app/state.js). Every open mode but the
// one that made the change (`from`, which acts on it itself) is told; modes the state opens or
// closes start or stop; the link follows once typing pauses.
export function setState(page, patch, { from = null } = {}) {
  const prev = page.state;
  page.state = { ...prev, ...patch };
  for (const [id, mode] of page.modes) if (id !== from) mode.sync(page.state, prev);
  openModes(page);
  page.link.soon();
}

// Starts the modes the state opens (loading their code the first time) and stops the ones it closes.
export function openModes(page) {
  const started = [];
  for (const m of MODES) {
    const open = m.open(page.state);
    if (open && !page.modes.has(m.id) && !page.opening.has(m.id)) {
      const p = m.load().then((module) => {
        page.opening.delete(m.id);
        if (!m.open(page.state) || page.modes.has(m.id)) return;
        page.modes.set(m.id, module.start(page));
      });
      page.opening.set(m.id, p);
      started.push(p);
    } else if (!open && page.modes.has(m.id)) {
      page.modes.get(m.id).stop();
      page.modes.delete(m.id);
    }
  }
  return Promise.all(started);
}

// A language switch: every open mode draws its texts again.
export function relabel(page) {
  setState(page, { lang: page.language.current() });
  for (const mode of page.modes.values()) mode.relabel();
}
