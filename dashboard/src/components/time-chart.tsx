// A time series chart (uPlot): one or more series over time buckets, sized to its container and
// redrawn when the data change. Values are plain numbers; `format` writes them on the axis and legend.
import { useEffect, useRef } from 'preact/hooks';
import uPlot, { type AlignedData, type Options } from 'uplot';

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
  /** Identifies the chart to tests and screen readers. */
  readonly id: string;
}

const HEIGHT = 220;

export function TimeChart({ title, times, series, format = String, id }: TimeChartProps) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const options: Options = {
      width: Math.max(320, element.clientWidth),
      height: HEIGHT,
      legend: { show: true },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true } },
      axes: [{}, { values: (_u, ticks) => ticks.map((t) => format(t)), size: 70 }],
      series: [{}, ...series.map((s) => ({ label: s.label, stroke: s.color, width: 2, fill: `${s.color}22`, value: (_u: uPlot, v: number | null) => (v === null ? '—' : format(v)) }))],
    };
    const data = [times, ...series.map((s) => s.values)] as unknown as AlignedData;
    const chart = new uPlot(options, data, element);
    const resize = new ResizeObserver(() => chart.setSize({ width: Math.max(320, element.clientWidth), height: HEIGHT }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      chart.destroy();
    };
  }, [times, series, format]);
  return (
    <figure class="chart" data-chart={id} data-values={JSON.stringify(series.map((s) => s.values))} aria-label={title}>
      <h3>{title}</h3>
      <div ref={box} />
    </figure>
  );
}
