// Stand-ins for the two npm packages tfjs-core's ES modules import by bare name ('long',
// 'seedrandom'; page.html's import map points both here). The bench page loads those modules for
// one file only, register_all_gradients.js (page.js, the training table), whose closure reaches
// them without calling them: hash_util.js runs Long.fromString at load time, hence that member.
// Anything else that would use them throws, so a silent wrong result is impossible.
const unavailable = (what) => () => { throw new Error(`${what} is not available in the bench page (tests/bench/tfjs-shims.mjs)`); };
export default { fromString: () => null, fromBytes: unavailable('long'), alea: unavailable('seedrandom') };
