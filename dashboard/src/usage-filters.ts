// The usage page's filters (key, model, provider, client API, agent session, status, time) and how they
// become API query parameters (GET /admin/v1/usage, its CSV and
// its summary take the same ones). They are remembered for the tab's life, so going from the table to a
// request's page and back finds the same filtered page.
export interface Filters {
  key_id: string;
  model: string;
  provider: string;
  /** '' (all) or one client API: chat, embeddings, messages, responses. */
  endpoint: string;
  /** An agent session's id (Claude Code's, Codex's); '' for all. */
  session_id: string;
  /** '' (all), a class the API understands ('2xx', '4xx', '5xx', 'error': 400 and up), or 'code'. */
  status: string;
  /** The status code when `status` is 'code'. */
  code: string;
  since: string;
  until: string;
}

export const EMPTY_FILTERS: Filters = { key_id: '', model: '', provider: '', endpoint: '', session_id: '', status: '', code: '', since: '', until: '' };

/** The client APIs a row may name, as the usage page offers them. */
export const ENDPOINT_CHOICES: ReadonlyArray<{ value: string; label: string }> = [
  { value: '', label: 'All' },
  { value: 'chat', label: 'Chat completions' },
  { value: 'messages', label: 'Messages (Anthropic)' },
  { value: 'responses', label: 'Responses (OpenAI)' },
  { value: 'embeddings', label: 'Embeddings' },
];

export const STATUS_CHOICES: ReadonlyArray<{ value: string; label: string }> = [
  { value: '', label: 'All' },
  { value: '2xx', label: 'Successful (2xx)' },
  { value: 'error', label: 'Errors (400 and up)' },
  { value: '4xx', label: 'Refused (4xx)' },
  { value: '5xx', label: 'Failed (5xx)' },
  { value: 'code', label: 'One status code…' },
];

/** The filters as API query parameters (times from the viewer's zone to ISO; empty ones left out by withQuery). */
export function queryOf(f: Filters): Record<string, string> {
  const iso = (v: string) => (v ? new Date(v).toISOString() : '');
  return {
    key_id: f.key_id,
    model: f.model.trim(),
    provider: f.provider.trim(),
    endpoint: f.endpoint,
    session_id: f.session_id.trim(),
    status: f.status === 'code' ? f.code.trim() : f.status,
    since: iso(f.since),
    until: iso(f.until),
  };
}

export interface UsageView {
  filters: Filters;
  /** cursors[i] is the `after` of page i (undefined for the first). */
  cursors: (string | undefined)[];
}

let remembered: UsageView = { filters: EMPTY_FILTERS, cursors: [undefined] };

export const rememberedView = (): UsageView => remembered;

export function rememberView(view: UsageView): void {
  remembered = view;
}
