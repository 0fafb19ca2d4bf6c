// Times minimatch (the glob engine of GitHub's actions/labeler) on the paths and globs
// bench/guide_speed.py gives it, so both matchers are measured in the same run.
//
//   node bench/minimatch_speed.cjs MINIMATCH_DIR INPUT.json
//
// INPUT.json: {"paths": [...], "globs": [...], "rounds": N}. Prints one JSON line:
// {"version", "round_ms": [...], "counts": {glob: matches}}. Each Minimatch is compiled
// once, outside the timing, with {dot: true} as the labeler does; a round tests every
// path against every glob.
"use strict";

const fs = require("fs");
const path = require("path");

const [dir, input] = process.argv.slice(2);
const { Minimatch } = require(path.join(dir, "node_modules", "minimatch"));
const version = require(path.join(dir, "node_modules", "minimatch", "package.json")).version;
const { paths, globs, rounds } = JSON.parse(fs.readFileSync(input, "utf8"));

const matchers = globs.map((g) => new Minimatch(g, { dot: true }));
const counts = {};
const roundMs = [];
for (let r = 0; r < rounds; r++) {
  const started = process.hrtime.bigint();
  for (let i = 0; i < matchers.length; i++) {
    const mm = matchers[i];
    let n = 0;
    for (let j = 0; j < paths.length; j++) {
      if (mm.match(paths[j])) n++;
    }
    counts[globs[i]] = n;
  }
  roundMs.push(Number(process.hrtime.bigint() - started) / 1e6);
}
process.stdout.write(JSON.stringify({ version, round_ms: roundMs, counts }) + "\n");
