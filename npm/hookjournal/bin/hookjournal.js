#!/usr/bin/env node
// hookjournal's npm launcher: runs the native binary that npm installed with this package, from
// the package of this platform (`optionalDependencies` with `os`/`cpu`, as esbuild does). No
// install script and no network: a platform without a package gets one line saying so.
//
// Hooks never run through this file: node's start costs tens of milliseconds on every hook
// event, so `hookjournal install` registers the native binary's own path (see docs/cookbook.md).
"use strict";

const { spawnSync } = require("child_process");

const PACKAGES = {
  "linux x64": "@hookjournal/linux-x64",
};

function nativeBinary() {
  const platform = `${process.platform} ${process.arch}`;
  const pkg = PACKAGES[platform];
  if (!pkg) {
    return {
      error: `hookjournal: no prebuilt binary for ${platform} in the npm package; install it with \`cargo install hookjournal\``,
    };
  }
  try {
    return { path: require.resolve(`${pkg}/bin/hookjournal`) };
  } catch (_) {
    return {
      error: `hookjournal: the package ${pkg} is not installed (npm skips it when installing with --no-optional or --omit=optional, or on a libc other than glibc); reinstall hookjournal with optional dependencies, or \`cargo install hookjournal\``,
    };
  }
}

const bin = nativeBinary();
if (bin.error) {
  console.error(bin.error);
  process.exit(1);
}
const run = spawnSync(bin.path, process.argv.slice(2), { stdio: "inherit" });
if (run.error) {
  console.error(`hookjournal: running ${bin.path}: ${run.error.message}`);
  process.exit(1);
}
if (run.signal) {
  process.kill(process.pid, run.signal);
}
process.exit(run.status === null ? 1 : run.status);
