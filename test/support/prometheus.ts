// Reads the gateway's /metrics through a Prometheus text-format parser (parse-prometheus-text-format,
// prom2json's shape): a scrape becomes a flat map from a sample's identity to its value, so a test can
// subtract two scrapes and assert on exact deltas.
import assert from 'node:assert/strict';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import type { GatewayProcess } from './gateway-process.js';

export interface Scrape {
  /** `name{a="x",b="y"}` (labels sorted; histograms as name_bucket{le=...}, name_count, name_sum) → value. */
  readonly samples: ReadonlyMap<string, number>;
  /** Family name → its TYPE, as parsed. */
  readonly types: ReadonlyMap<string, string>;
  readonly text: string;
}

export function sampleId(name: string, labels: Readonly<Record<string, string>> = {}): string {
  const keys = Object.keys(labels).sort();
  return keys.length === 0 ? name : `${name}{${keys.map((k) => `${k}="${labels[k]}"`).join(',')}}`;
}

/**
 * Parses an exposition (the parser throws on a malformed line). The families and their types come from
 * the text as it is; the samples from a second pass in which histograms are declared untyped, because
 * the parser folds a labelled histogram's series into one (it keeps only unlabelled histograms apart),
 * while untyped, each `_bucket`, `_sum` and `_count` line keeps its own labels.
 */
export function parseExposition(text: string): Scrape {
  const samples = new Map<string, number>();
  const types = new Map<string, string>();
  for (const family of parsePrometheusTextFormat(text)) types.set(family.name, family.type);
  for (const family of parsePrometheusTextFormat(text.replace(/^(# TYPE \S+) histogram$/gm, '$1 untyped'))) {
    for (const sample of family.metrics) {
      assert.ok(sample.value !== undefined, `${family.name}: one value per sample`);
      samples.set(sampleId(family.name, sample.labels ?? {}), Number(sample.value));
    }
  }
  return { samples, types, text };
}

/** GET /metrics (200 expected) and parse it. */
export async function scrape(gw: GatewayProcess, token?: string): Promise<Scrape> {
  const res = await fetch(`${gw.origin}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {}, signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  assert.equal(res.status, 200, text.slice(0, 300));
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return parseExposition(text);
}

/** after − before for one sample (a sample missing from a scrape counts as 0). */
export function delta(before: Scrape, after: Scrape, name: string, labels: Readonly<Record<string, string>> = {}): number {
  const id = sampleId(name, labels);
  return (after.samples.get(id) ?? 0) - (before.samples.get(id) ?? 0);
}

/** Every sample whose value changed between two scrapes, with its change (for a readable failure). */
export function changes(before: Scrape, after: Scrape, prefix = 'tollgate_'): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [id, value] of after.samples) {
    if (!id.startsWith(prefix)) continue;
    const d = value - (before.samples.get(id) ?? 0);
    if (d !== 0) out[id] = d;
  }
  return out;
}
