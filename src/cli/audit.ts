// `tollgate audit [--key ID] [--json]`: checks the billing invariants over the database; exit 1 on any violation.
import type { Command } from 'commander';
import { auditLedger, violationJson } from '../operations/audit.js';
import { withStore } from './context.js';
import { printJson } from './format.js';

export function registerAuditCommand(program: Command): void {
  program
    .command('audit')
    .description('check every billing invariant over the database; exits 1 if one is broken')
    .option('--key <id>', 'only this key')
    .option('--json', 'print {ok, violations: [...]}')
    .action(async (opts: { key?: string; json?: boolean }, command: Command) => {
      const report = await withStore(command, (store, config) => auditLedger(store, config, opts.key ? { keyId: opts.key } : {}));
      if (opts.json) printJson({ ok: report.ok, violations: report.violations.map(violationJson) });
      else if (report.ok) process.stdout.write('audit: no violations\n');
      else {
        for (const v of report.violations) process.stdout.write(`VIOLATION ${v.check} ${v.keyId === null ? `account=${v.accountId}` : `key=${v.keyId}`}${v.requestId ? ` request=${v.requestId}` : ''}: ${v.detail}\n`);
        process.stdout.write(`audit: ${report.violations.length} violation(s)\n`);
      }
      if (!report.ok) process.exitCode = 1;
    });
}
