// Accessibility audit for the browser suites: axe-core 4 with the WCAG 2.1 A/AA rule set, run in
// a page and every frame in it (the lesson page's <attention-playground> iframes sit in shadow
// roots; axe follows shadow DOM by itself and iframes once it is present in each frame).
// Used by a11y.test.mjs (every view state) and course.test.mjs (the built site under its CSP).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
export const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

// axe goes in through frame.evaluate (the DevTools protocol's Runtime.evaluate), not
// page.addScriptTag: an inline <script> would be blocked by the strict CSP of the lesson page and
// the built site (script-src 'self'), while evaluation from the debugger is not subject to it.
async function inject(page) {
  for (const frame of page.frames()) {
    if (frame.isDetached()) continue;
    // A frame that navigates away meanwhile is not audited; one that stays fails the run below.
    if (!(await frame.evaluate(() => Boolean(window.axe)).catch(() => true))) await frame.evaluate(AXE_SOURCE).catch(() => {});
  }
}

// One line per node: rule id, impact, where (axe's selector path through frames and shadow
// roots), and axe's summary of what fails.
export function formatViolations(violations) {
  return violations.flatMap((v) => v.nodes.map((n) => `${v.id} (${v.impact}) at ${JSON.stringify(n.target)}: ${(n.failureSummary ?? v.help).replace(/\s+/g, ' ')}`));
}

// The WCAG 2.1 A/AA violations of the page as it is now (every frame included).
export async function violations(page) {
  await inject(page);
  return page.evaluate(async (tags) => {
    const result = await window.axe.run(document, { runOnly: { type: 'tag', values: tags }, iframes: true, resultTypes: ['violations'] });
    return result.violations.map(({ id, impact, help, nodes }) => ({ id, impact, help, nodes: nodes.map(({ target, failureSummary }) => ({ target, failureSummary })) }));
  }, WCAG_TAGS);
}

// Throws, naming every violating rule and node, unless the page has none. label: the view state.
export async function audit(page, label) {
  const found = await violations(page);
  if (found.length) throw new Error(`axe (WCAG 2.1 AA) in ${label}: ${found.reduce((n, v) => n + v.nodes.length, 0)} violation(s)\n  ${formatViolations(found).join('\n  ')}`);
}
