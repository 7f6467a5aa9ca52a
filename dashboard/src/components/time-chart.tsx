// A time series chart (uPlot): one or more series over time buckets, as wide as its container (never
// wider: on a phone the newest bucket stays on screen) and redrawn when the data change. The legend is a
// sentence of our own (chart-text.ts) — the range's total, or the bucket pointed at — not uPlot's table of
// series names with "--" until something is hovered.
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot, { type AlignedData, type Options } from 'uplot';
import type { ChartText } from '../chart-text.js';

export interface Series {
  readonly label: string;
  readonly values: readonly (number | null)[];
  readonly color: string;
}

export interface TimeChartProps {
  readonly title: string;
  /** Bucket start times, epoch seconds. */
  readonly times: readonly number[];
  readonly series: readonly Series[];
  readonly format?: (value: number) => string;
  /** The legend's sentences. */
  readonly legend: ChartText;
  /** Day buckets are UTC days: their axis reads in UTC too, so a date names the day the bucket is. */
  readonly utc?: boolean;
  /** Identifies the chart to tests and screen readers. */
  readonly id: string;
}

const HEIGHT = 220;
/** Below this the axis labels collide; a container narrower still is not a layout the page makes. */
const MIN_WIDTH = 160;

/** Pixels for the value axis: the longest label at ~7.5 px a character, plus the ticks and a gap. */
const axisWidth = (labels: readonly string[] | undefined) => Math.max(40, Math.ceil(Math.max(0, ...(labels ?? []).map((l) => l.length)) * 7.5) + 20);

const utcDate = (ts: number) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC');

export function TimeChart({ title, times, series, format = String, legend, utc = false, id }: TimeChartProps) {
  const box = useRef<HTMLDivElement>(null);
  const [pointed, setPointed] = useState<number | null>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    setPointed(null);
    const width = () => Math.max(MIN_WIDTH, element.clientWidth);
    const options: Options = {
      width: width(),
      height: HEIGHT,
      legend: { show: false },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true } },
      ...(utc ? { tzDate: utcDate } : {}),
      // The value axis as wide as its longest label ("$0.00008" would be cut at a fixed width).
      axes: [{}, { values: (_u, ticks) => ticks.map((t) => format(t)), size: (_u, values) => axisWidth(values) }],
      series: [{}, ...series.map((s) => ({ label: s.label, stroke: s.color, width: 2, fill: `${s.color}22` }))],
      hooks: { setCursor: [(u: uPlot) => setPointed(u.cursor.idx ?? null)] },
    };
    const data = [times, ...series.map((s) => s.values)] as unknown as AlignedData;
    const chart = new uPlot(options, data, element);
    const resize = new ResizeObserver(() => chart.setSize({ width: width(), height: HEIGHT }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      chart.destroy();
    };
  }, [times, series, format, utc]);
  return (
    <figure class="chart" data-chart={id} data-times={JSON.stringify(times)} data-values={JSON.stringify(series.map((s) => s.values))} aria-label={title}>
      <h3>{title}</h3>
      <div ref={box} class="plot" />
      <figcaption class="legend" data-legend>
        {pointed === null || pointed >= times.length ? legend.idle : legend.at(pointed)}
      </figcaption>
    </figure>
  );
}
