// Generates es6numbers.txt, the oracle for TestNumberECMAScript: lines of
// "<IEEE-754 bits in hex>,<Number.prototype.toString of that double>", as
// written by a real ECMAScript engine. Regenerate with
//
//	node es6numbers.js > es6numbers.txt
//
// The doubles are RFC 8785 Appendix B's, values around the layout thresholds
// (1e21, 1e-7, 2^53), and pseudo-random ones from a fixed seed: half with
// uniformly random bits, half with decimal exponents between -30 and 30,
// where ECMAScript's layout rules do the most work.
"use strict";

const buf = new DataView(new ArrayBuffer(8));
const bits = (f) => { buf.setFloat64(0, f); return buf.getBigUint64(0); };
const double = (u) => { buf.setBigUint64(0, u); return buf.getFloat64(0); };

const seen = new Set();
const out = [];
const emit = (u) => {
  const f = double(u);
  if (!Number.isFinite(f) || seen.has(u)) return;
  seen.add(u);
  out.push(u.toString(16) + "," + f.toString());
};

for (const u of [
  0x0000000000000000n, 0x8000000000000000n, 0x0000000000000001n, 0x8000000000000001n,
  0x7fefffffffffffffn, 0xffefffffffffffffn, 0x4340000000000000n, 0xc340000000000000n,
  0x4430000000000000n, 0x44b52d02c7e14af5n, 0x44b52d02c7e14af6n, 0x44b52d02c7e14af7n,
  0x444b1ae4d6e2ef4en, 0x444b1ae4d6e2ef4fn, 0x444b1ae4d6e2ef50n, 0x3eb0c6f7a0b5ed8cn,
  0x3eb0c6f7a0b5ed8dn, 0x41b3de4355555553n, 0x41b3de4355555554n, 0x41b3de4355555555n,
  0x41b3de4355555556n, 0x41b3de4355555557n, 0xbecbf647612f3696n, 0x43143ff3c1cb0959n,
]) emit(u);

for (const f of [1e21, 1e-7, 1e-6, 2 ** 53, 2 ** 63, 2 ** 64, 1e20, 1e22, 0.1, 0.5, 123.456]) {
  for (const g of [f, -f]) {
    const u = bits(g);
    for (let d = -3n; d <= 3n; d++) emit(BigInt.asUintN(64, u + d));
  }
}

let state = 0x9e3779b97f4a7c15n; // xorshift64
const next = () => {
  state ^= BigInt.asUintN(64, state << 13n);
  state ^= state >> 7n;
  state ^= BigInt.asUintN(64, state << 17n);
  return state;
};
for (let i = 0; i < 1000; i++) emit(next());
for (let i = 0; i < 1000; i++) {
  const mant = Number(next() >> 11n) / 2 ** 53; // [0, 1)
  const exp = Number(next() % 61n) - 30;
  emit(bits((mant + 0.1) * 10 ** exp * (i % 2 ? -1 : 1)));
}

process.stdout.write(out.join("\n") + "\n");
