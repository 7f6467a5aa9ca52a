// Rounding and medians for the benchmark's figures (null where there is nothing to show).

export function round(x, digits = 3) {
  if (x === null || x === undefined || Number.isNaN(x)) return null;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

export function median(values) {
  const xs = values.filter((x) => x !== null && x !== undefined).sort((a, b) => a - b);
  if (xs.length === 0) return null;
  const mid = Math.floor(xs.length / 2);
  return xs.length % 2 ? xs[mid] : (xs[mid - 1] + xs[mid]) / 2;
}
