// What the admin API's handlers need: the store, the config and this process's upstream health table.
import type { Logger } from 'pino';
import type { Config } from '../../../config/types.js';
import type { UpstreamHealth } from '../../../routing/upstream-health.js';
import type { Store } from '../../../storage/types.js';

export interface AdminDeps {
  readonly store: Store;
  readonly config: Config;
  readonly health: UpstreamHealth;
  readonly log: Logger;
}
