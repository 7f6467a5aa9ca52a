// CPU, memory and event-loop figures of the benchmark's processes, read from /proc: a snapshot at each
// end of the measured window, and what happened in between.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { round } from './numbers.mjs';

// utime/stime in /proc are in clock ticks; ask the system rather than assume 100.
const CLK_TCK = clockTicks();

function clockTicks() {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
}

/** [utime, stime] (all threads) of a process, in clock ticks: fields 14 and 15 of /proc/<pid>/stat. */
function cpuTicks(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may contain spaces, so count fields from after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return [Number(fields[11]), Number(fields[12])];
}

/**
 * Busy ticks of the whole machine, so we can tell how much CPU other people's jobs took during a window,
 * and its context switches since boot (the `ctxt` line): more processes sharing the same cores switch more.
 */
function machineCounters() {
  const stat = readFileSync('/proc/stat', 'utf8');
  const [, user, nice, system, , , irq, softirq, steal] = stat.split('\n')[0].trim().split(/\s+/).map(Number);
  return { busy: user + nice + system + irq + softirq + steal, contextSwitches: Number(/^ctxt (\d+)$/m.exec(stat)?.[1] ?? NaN) };
}

/**
 * utime + stime of every process named postgres (the server's backends and helpers), in clock ticks: the
 * database's own CPU in the --postgres scenarios, which the machine's figure would otherwise hide among
 * everything else. A process that starts or ends inside the window would be miscounted (only what it shows
 * at both ends is compared); the benchmark's connections, and so their backends, live through the window.
 */
function postgresTicks() {
  let total = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (!stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).startsWith('postgres')) continue;
      const [utime, stime] = cpuTicks(pid);
      total += utime + stime;
    } catch {
      // the process ended meanwhile
    }
  }
  return total;
}

/** postgresTicks in ms. */
export function postgresCpuMs() {
  return (postgresTicks() * 1000) / CLK_TCK;
}

export function memoryMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMb: Math.round(kb('VmRSS') / 1024), peakRssMb: Math.round(kb('VmHWM') / 1024) };
}

/** [ns on a CPU, ns runnable but waiting for a CPU] of a process's main thread (its event loop), from /proc/<pid>/schedstat. */
function mainThreadSchedule(pid) {
  const [onCpu, waiting] = readFileSync(`/proc/${pid}/schedstat`, 'utf8').trim().split(' ').map(Number);
  return [onCpu, waiting];
}

/** `withPostgres`: also the postgres processes' CPU (a scan of /proc, so only when the scenario uses it). */
export function snapshot(pids, { withPostgres = false } = {}) {
  const cpu = {};
  const sched = {};
  for (const [name, pid] of Object.entries(pids)) {
    cpu[name] = cpuTicks(pid);
    sched[name] = mainThreadSchedule(pid);
  }
  cpu.bench = cpuTicks(process.pid);
  const machine = machineCounters();
  return { at: performance.now(), cpu, sched, machine: machine.busy, contextSwitches: machine.contextSwitches, postgres: withPostgres ? postgresTicks() : null };
}

/**
 * CPU over the window: ms per completed request for each process (and the kernel's share of it, which is
 * socket and file syscalls), cores used, and other people's load.
 */
export function cpuOverWindow(start, end, completed) {
  const seconds = (end.at - start.at) / 1000;
  const perRequest = {};
  const systemShare = {};
  const cores = {};
  let ours = 0;
  for (const name of Object.keys(start.cpu)) {
    const user = end.cpu[name][0] - start.cpu[name][0];
    const sys = end.cpu[name][1] - start.cpu[name][1];
    ours += user + sys;
    perRequest[name] = completed > 0 ? round(((user + sys) * 1000) / CLK_TCK / completed, 4) : null;
    systemShare[name] = user + sys > 0 ? round(sys / (user + sys), 2) : null;
    cores[name] = round((user + sys) / CLK_TCK / seconds, 2);
  }
  const otherCores = round(Math.max(0, end.machine - start.machine - ours) / CLK_TCK / seconds, 2);
  const perCompleted = (x) => (completed > 0 ? x / completed : null);
  return {
    perRequest,
    systemShare,
    cores,
    otherCores,
    mainThread: mainThreadShares(start, end, seconds),
    contextSwitchesPerRequest: round(perCompleted(end.contextSwitches - start.contextSwitches), 2),
    postgresMsPerRequest: start.postgres === null ? null : round(perCompleted(((end.postgres - start.postgres) * 1000) / CLK_TCK), 4),
  };
}

/**
 * Where each process's event-loop thread spent the window: running, runnable but waiting for a CPU (the
 * machine is oversubscribed), or neither (blocked in a syscall such as an fsync, or idle for lack of work).
 */
function mainThreadShares(start, end, seconds) {
  const shares = {};
  for (const name of Object.keys(start.sched)) {
    const run = (end.sched[name][0] - start.sched[name][0]) / 1e9 / seconds;
    const wait = (end.sched[name][1] - start.sched[name][1]) / 1e9 / seconds;
    shares[name] = { run: round(run, 2), wait: round(wait, 2), blocked: round(Math.max(0, 1 - run - wait), 2) };
  }
  return shares;
}
