// Not Go: a pinned npm install (see its package.json). This file keeps
// node_modules out of the flameox module, so ./... never reaches it.
module flameox.invalid/mcp-inspector
