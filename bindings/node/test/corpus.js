'use strict';
const path = require('node:path');
const REPO = path.resolve(__dirname, '../../..');
module.exports = {
  REPO,
  CORPUS: process.env.TOOLGATE_CONFORMANCE ?? path.join(REPO, 'conformance'),
  POLICIES: path.join(REPO, 'policies'),
};
