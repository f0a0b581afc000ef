// The resolve hook node20.mjs registers: the conformance suite's "fs" is
// fs-glob.mjs; every other import resolves as it would.
const shim = new URL("./fs-glob.mjs", import.meta.url).href;

export async function resolve(specifier, context, next) {
  if (
    (specifier === "fs" || specifier === "node:fs") &&
    context.parentURL?.includes("/node_modules/@modelcontextprotocol/conformance/")
  ) {
    return { url: shim, shortCircuit: true };
  }
  return next(specifier, context);
}
