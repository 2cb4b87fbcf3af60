const kept = [];
function leaf(n) { const a = []; for (let i = 0; i < n; i++) a.push({ i, s: 'x'.repeat(64) + i }); return a; }
function middle(n) { return leaf(n).concat(leaf(n >> 1)); }
function recurse(d) { return d === 0 ? new Array(10000).fill(0).map((_, i) => String(i).repeat(8)) : recurse(d - 1); }
for (let r = 0; r < 30; r++) { kept.push(middle(2000)); kept.push(recurse(4)); kept.push(Buffer.alloc(1 << 16)); }
console.log(kept.length);
