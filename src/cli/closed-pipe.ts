// A reader that stops early (`tollgate keys list | head -1`) closes the pipe under the CLI, and the next
// write fails with EPIPE. Node raises that as an 'error' event on process.stdout; unhandled, it is a crash
// with a stack trace and exit status 1, after the command already did its work. Nothing went wrong: the
// reader has what it wanted. So an EPIPE on stdout or stderr ends the process quietly, with the command's
// exit status so far (0 unless it had already failed). Any other write error stays a crash, as before.
export function exitQuietlyOnClosedPipe(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
      process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
    });
  }
}
