// Minimal .npy reader/writer for the ONNX Runtime reference runner (little-endian, C order).
'use strict';
const fs = require('fs');

const DESCR_TO_TYPE = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array], '<f2': ['float16', Uint16Array],
  '|i1': ['int8', Int8Array], '<i2': ['int16', Int16Array], '<i4': ['int32', Int32Array],
  '<i8': ['int64', BigInt64Array], '|u1': ['uint8', Uint8Array], '<u2': ['uint16', Uint16Array],
  '<u4': ['uint32', Uint32Array], '<u8': ['uint64', BigUint64Array], '|b1': ['bool', Uint8Array],
};

function readNpy(path) {
  const buf = fs.readFileSync(path);
  if (buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(`${path}: not a .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)[1];
  const dims = shapeText.split(',').map((s) => s.trim()).filter((s) => s.length).map(Number);
  const dataStart = start + headerLen;
  const count = dims.reduce((a, b) => a * b, 1);
  if (descr.startsWith('<U')) {
    const width = Number(descr.slice(2));
    const strings = [];
    for (let i = 0; i < count; i++) {
      let s = '';
      for (let c = 0; c < width; c++) {
        const cp = buf.readUInt32LE(dataStart + (i * width + c) * 4);
        if (cp === 0) break;
        s += String.fromCodePoint(cp);
      }
      strings.push(s);
    }
    return { type: 'string', dims, data: strings };
  }
  const norm = { '<b1': '|b1', '<i1': '|i1', '<u1': '|u1' }[descr] || descr;
  const entry = DESCR_TO_TYPE[norm];
  if (!entry) throw new Error(`${path}: unsupported dtype ${descr}`);
  const [type, Ctor] = entry;
  const bytes = buf.subarray(dataStart, dataStart + count * Ctor.BYTES_PER_ELEMENT);
  const data = new Ctor(count);
  new Uint8Array(data.buffer).set(bytes);
  return { type, dims, data: type === 'bool' ? Uint8Array.from(data) : data };
}

const TYPE_TO_DESCR = {
  float32: '<f4', float64: '<f8', float16: '<f2', int8: '|i1', int16: '<i2', int32: '<i4', int64: '<i8',
  uint8: '|u1', uint16: '<u2', uint32: '<u4', uint64: '<u8', bool: '|b1',
};

function writeNpy(path, type, dims, data) {
  let descr;
  let body;
  if (type === 'string') {
    const width = Math.max(1, ...data.map((s) => [...s].length));
    descr = `<U${width}`;
    body = Buffer.alloc(data.length * width * 4);
    data.forEach((s, i) => [...s].forEach((ch, c) => body.writeUInt32LE(ch.codePointAt(0), (i * width + c) * 4)));
  } else {
    descr = TYPE_TO_DESCR[type];
    if (!descr) throw new Error(`cannot write type ${type}`);
    const arr = type === 'bool' ? Uint8Array.from(data, (v) => (v ? 1 : 0)) : data;
    body = Buffer.from(arr.buffer, arr.byteOffset, arr.byteLength);
  }
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  const total = 10 + header.length + 1;
  header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1;
  pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  fs.writeFileSync(path, Buffer.concat([pre, Buffer.from(header, 'latin1'), body]));
}

module.exports = { readNpy, writeNpy };
