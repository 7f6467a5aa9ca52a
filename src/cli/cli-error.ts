// A command that cannot run, said in one line (no stack): the user's mistake or the environment's.

export class CliError extends Error {}
