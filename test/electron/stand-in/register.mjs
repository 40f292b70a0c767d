// `node --import ./register.mjs out/main/index.js`: the built main process imports `electron` as
// an ES module, which only a resolve hook can redirect (Module._resolveFilename and require.cache
// serve CommonJS `require` alone). The hook sends exactly the bare specifier `electron` to the
// stand-in next to this file; everything else resolves as usual.
import { register } from 'node:module';

register('./hooks.mjs', import.meta.url);
