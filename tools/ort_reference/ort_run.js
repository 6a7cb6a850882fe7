#!/usr/bin/env node
// Runs a model in ONNX Runtime (onnxruntime-node) on .npy inputs and writes its outputs as
// OUT_DIR/<index>_<name>.npy, the layout `onyx run --output-dir` uses, so tests can compare.
//   node ort_run.js --ort-dir DIR --model M [--input NAME=FILE.npy]... --output-dir D
//                   [--threads N] [--opt-level disabled|basic|extended|all]
'use strict';
const fs = require('fs');
const path = require('path');
const { readNpy, writeNpy } = require('./npy');

function parseArgs(argv) {
  const args = { inputs: [], threads: 1, optLevel: 'all' };
  for (let i = 2; i < argv.length; i++) {
    const a = argv[i];
    const next = () => argv[++i];
    if (a === '--ort-dir') args.ortDir = next();
    else if (a === '--model') args.model = next();
    else if (a === '--input') args.inputs.push(next());
    else if (a === '--output-dir') args.outputDir = next();
    else if (a === '--threads') args.threads = Number(next());
    else if (a === '--opt-level') args.optLevel = next();
    else throw new Error(`unknown argument ${a}`);
  }
  if (!args.ortDir || !args.model || !args.outputDir) throw new Error('--ort-dir, --model and --output-dir are required');
  return args;
}

async function main() {
  const args = parseArgs(process.argv);
  const ort = require(path.resolve(args.ortDir, 'node_modules', 'onnxruntime-node'));
  const session = await ort.InferenceSession.create(args.model, {
    graphOptimizationLevel: args.optLevel,
    intraOpNumThreads: args.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
  });
  const feeds = {};
  for (const spec of args.inputs) {
    const eq = spec.lastIndexOf('=');
    const name = spec.slice(0, eq);
    const { type, dims, data } = readNpy(spec.slice(eq + 1));
    feeds[name] = new ort.Tensor(type, type === 'bool' ? Uint8Array.from(data) : data, dims);
  }
  const results = await session.run(feeds);
  fs.mkdirSync(args.outputDir, { recursive: true });
  session.outputNames.forEach((name, i) => {
    const t = results[name];
    const file = path.join(args.outputDir, `${i}_${name.replace(/[/:]/g, '_')}.npy`);
    writeNpy(file, t.type, t.dims, t.type === 'string' ? t.data : t.data);
  });
}

main().catch((e) => {
  process.stderr.write(`ort_run: ${e.message.split('\n')[0]}\n`);
  process.exit(1);
});
