// The provider kinds, as config and transport know them before any request: defaults, what each needs,
// how it authenticates and how it frames a stream. A leaf: loading a config imports this table, never the
// adapters (the translators and their dependencies load with the gateway, not with `--version`).

/** How a kind's credential goes on each upstream request (upstream/auth.ts writes it). */
export type AuthScheme = 'bearer' | 'x-api-key' | 'api-key' | 'x-goog-api-key';

/** How a kind's streamed responses are framed (providers/framing/). */
export type Framing = 'sse';

/** The client APIs an upstream may speak natively (product.md §14): chat completions, Anthropic Messages, OpenAI Responses. */
export type ServedApi = 'chat' | 'messages' | 'responses';
export const SERVED_APIS: readonly ServedApi[] = ['chat', 'messages', 'responses'];

export interface ProviderKindInfo {
  readonly kind: string;
  /** Undefined: `base_url` is required in the config. */
  readonly defaultBaseUrl: string | undefined;
  /** False for servers that may run without auth (vLLM, Ollama). */
  readonly apiKeyRequired: boolean;
  /** Defined only for kinds that take an `api_version`. */
  readonly defaultApiVersion: string | undefined;
  /** Whether the API has embeddings (config refuses embedding models routed to a kind without). */
  readonly embeddings: boolean;
  readonly auth: AuthScheme;
  readonly framing: Framing;
  /** The APIs it speaks natively unless `providers.<id>.serves` says otherwise. */
  readonly serves: readonly ServedApi[];
  /**
   * Where each coding-agent API it may serve lives, after the base URL's path (a native cell posts the
   * client's body there). One absent here cannot be in `serves` for this kind; chat completions are every
   * kind's, through its adapter.
   */
  readonly nativePaths: Readonly<Partial<Record<ServedApi, string>>>;
  /**
   * Where a coding-agent API's free token count lives (Responses `input_tokens`), after the base URL's
   * path; an API absent here is counted by the gateway's own estimate.
   */
  readonly tokenCountPaths: Readonly<Partial<Record<ServedApi, string>>>;
  /**
   * The client APIs the gateway translates to this kind's chat completions when the provider does not
   * speak them natively (product.md §14, "Translated"), and the field a translated request's output limit
   * goes in. Undefined: none (Anthropic speaks Messages itself; Gemini's cells come later).
   */
  readonly chatTranslation?: ChatTranslation;
}

/** What a translated cell needs to know of a kind that serves chat completions. */
export interface ChatTranslation {
  readonly from: readonly ServedApi[];
  /**
   * OpenAI's own API (and Azure's) takes `max_completion_tokens` on every chat model and refuses
   * `max_tokens` on reasoning ones; compatible servers (vLLM, Ollama, llama.cpp, DeepSeek) know `max_tokens`.
   */
  readonly outputLimit: 'max_tokens' | 'max_completion_tokens';
}

const KINDS: readonly ProviderKindInfo[] = [
  {
    kind: 'openai',
    defaultBaseUrl: 'https://api.openai.com/v1',
    apiKeyRequired: true,
    defaultApiVersion: undefined,
    embeddings: true,
    auth: 'bearer',
    framing: 'sse',
    serves: ['chat', 'responses'],
    nativePaths: { responses: '/responses' },
    tokenCountPaths: { responses: '/responses/input_tokens' },
    chatTranslation: { from: ['messages', 'responses'], outputLimit: 'max_completion_tokens' },
  },
  {
    kind: 'openai-compatible',
    defaultBaseUrl: undefined,
    apiKeyRequired: false,
    defaultApiVersion: undefined,
    embeddings: true,
    auth: 'bearer',
    framing: 'sse',
    serves: ['chat'],
    nativePaths: { messages: '/messages', responses: '/responses' },
    tokenCountPaths: {},
    chatTranslation: { from: ['messages', 'responses'], outputLimit: 'max_tokens' },
  },
  {
    kind: 'anthropic',
    defaultBaseUrl: 'https://api.anthropic.com',
    apiKeyRequired: true,
    defaultApiVersion: undefined,
    embeddings: false,
    auth: 'x-api-key',
    framing: 'sse',
    serves: ['messages'],
    nativePaths: { messages: '/v1/messages' },
    tokenCountPaths: {},
  },
  {
    kind: 'gemini',
    defaultBaseUrl: 'https://generativelanguage.googleapis.com',
    apiKeyRequired: true,
    defaultApiVersion: undefined,
    embeddings: true,
    auth: 'x-goog-api-key',
    framing: 'sse',
    serves: ['chat'],
    nativePaths: {},
    tokenCountPaths: {},
  },
  {
    kind: 'azure-openai',
    defaultBaseUrl: undefined,
    apiKeyRequired: true,
    defaultApiVersion: '2024-10-21',
    embeddings: true,
    auth: 'api-key',
    framing: 'sse',
    serves: ['chat', 'responses'],
    nativePaths: { responses: '/openai/v1/responses' },
    tokenCountPaths: {},
    chatTranslation: { from: ['messages', 'responses'], outputLimit: 'max_completion_tokens' },
  },
];

const BY_NAME: ReadonlyMap<string, ProviderKindInfo> = new Map(KINDS.map((info) => [info.kind, info]));

export function findProviderKind(kind: string): ProviderKindInfo | undefined {
  return BY_NAME.get(kind);
}

/** The kind of a configured provider (config validation guarantees it exists). */
export function providerKind(kind: string): ProviderKindInfo {
  const info = BY_NAME.get(kind);
  if (!info) throw new Error(`no provider kind ${kind}`);
  return info;
}

export function providerKindNames(): string[] {
  return [...BY_NAME.keys()];
}
