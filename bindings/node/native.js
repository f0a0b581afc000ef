'use strict';
// The native addon (napi-rs), built by `npm run build` into toolgate.node.
const path = require('node:path');
const file = path.join(__dirname, 'toolgate.node');
let native;
try {
  native = require(file);
} catch (e) {
  throw new Error(`toolgate: the native addon ${file} could not be loaded (build it with \`npm run build\`): ${e.message}`, { cause: e });
}
module.exports = native;
