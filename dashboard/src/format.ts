// How figures read on the page: USD exactly, to the nano-dollar (at least 2 decimals, trailing zeros
// dropped beyond), token counts with thousands separators, times in the viewer's locale; "—" for what
// is null or absent.
export function usd(value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  const [whole, fraction = ''] = Math.abs(value).toFixed(9).split('.');
  const decimals = fraction.replace(/0+$/, '').padEnd(2, '0');
  return `${value < 0 ? '−' : ''}$${Number(whole).toLocaleString('en-US')}.${decimals}`;
}

export function count(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : value.toLocaleString('en-US');
}

export function time(iso: string | number | null | undefined): string {
  if (iso === null || iso === undefined) return '—';
  return new Date(iso).toLocaleString();
}

/** A day in the viewer's locale (the full time in a title, where it matters). */
export function date(iso: string | number | null | undefined): string {
  if (iso === null || iso === undefined) return '—';
  return new Date(iso).toLocaleDateString();
}

/** A duration in milliseconds: "850 ms", "12.3 s". */
export function ms(value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  return value < 10_000 ? `${count(value)} ms` : `${Number((value / 1000).toFixed(1)).toLocaleString('en-US')} s`;
}

/** A text field, or "—" when null, absent or empty. */
export function text(value: string | null | undefined): string {
  return value === null || value === undefined || value === '' ? '—' : value;
}
