#!/usr/bin/env node
// The ONNX Runtime side of bench/compare: same protocol as bench/compare/onyx_worker.cc.
//   node ort_worker.js ORT_DIR MODEL THREADS OPT_LEVEL NAME=FILE.npy...
'use strict';
const fs = require('fs');
const path = require('path');
const readline = require('readline');
const { readNpy, writeNpy } = require('./npy');

async function main() {
  const [ortDir, model, threads, optLevel, ...inputSpecs] = process.argv.slice(2);
  const ort = require(path.resolve(ortDir, 'node_modules', 'onnxruntime-node'));
  const t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(model, {
    graphOptimizationLevel: optLevel,
    intraOpNumThreads: Number(threads),
    interOpNumThreads: 1,
    executionMode: 'sequential',
  });
  const createMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const feeds = {};
  for (const spec of inputSpecs) {
    const eq = spec.lastIndexOf('=');
    const { type, dims, data } = readNpy(spec.slice(eq + 1));
    feeds[spec.slice(0, eq)] = new ort.Tensor(type, data, dims);
  }
  console.log(`ready ${createMs.toFixed(3)}`);
  const rl = readline.createInterface({ input: process.stdin });
  for await (const line of rl) {
    if (line === 'run') {
      const r0 = process.hrtime.bigint();
      await session.run(feeds);
      console.log(`ms ${(Number(process.hrtime.bigint() - r0) / 1e6).toFixed(4)}`);
    } else if (line.startsWith('save ')) {
      const dir = line.slice(5);
      fs.mkdirSync(dir, { recursive: true });
      const results = await session.run(feeds);
      session.outputNames.forEach((name, i) => {
        const t = results[name];
        writeNpy(path.join(dir, `${i}_${name.replace(/[/:]/g, '_')}.npy`), t.type, t.dims, t.data);
      });
      console.log('saved');
    } else if (line === 'stats') {
      // VmHWM, not resourceUsage().maxRSS: a forked child starts with its parent's maximum.
      const hwm = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'));
      console.log(`rss_mb ${(Number(hwm[1]) / 1024).toFixed(1)}`);
    } else if (line === 'quit') {
      break;
    }
  }
  process.exit(0);
}

main().catch((e) => {
  console.log(`error ${e.message.split('\n')[0]}`);
  process.exit(1);
});
