// Mock of Google's Generative Language API for end-to-end tests, on the shared server core of
// mock-upstream.ts (recording, handle(), fault combinators): POST /v1beta/models/{model}:generateContent,
// :streamGenerateContent?alt=sse and :batchEmbedContents, authenticated by x-goog-api-key. Replies are
// derived from the request, shaped like the recordings in test/fixtures/upstream/google*/: streams are
// `data: {...}\r\n\r\n` chunks with cumulative usageMetadata on every one and no [DONE]; embeddings carry
// no usage; errors are {"error":{code, message, status, details}}.
import { defaultEmbeddingFor, JSON_MODE_TEXT, TOOL_ARGUMENTS, toolResultText } from './mock-defaults.js';
import { startMockServer, type JsonReply, type MockReply, type MockServer, type RawSseReply, type ReceivedRequest } from './mock-upstream.js';

export const GEMINI_MOCK_KEY = 'AIza-mock-gemini-secret';
export const GEMINI_TEXT = 'Hello from the mock Gemini server.';
export const GEMINI_THOUGHT = 'Thinking about a short, friendly greeting.';
const EMBEDDING_DIMS = 8;

/** The thoughtSignature the mock puts on a call of `name`, and requires back when the call is replayed. */
export const thoughtSignatureFor = (name: string): string => Buffer.from(`mock-thought-signature:${name}`).toString('base64');

export interface MockGemini extends MockServer {
  /** The provider's base_url: the origin (the gateway appends /v1beta/models/...). */
  url: string;
  /** The x-goog-api-key the mock accepts; set another value to make the gateway's key wrong. */
  apiKey: string;
  /** cachedContentTokenCount reported by later replies (part of promptTokenCount); cleared by reset(). */
  cachedTokens: number;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

// ---------------------------------------------------------------- usage

export interface GeminiUsage {
  promptTokenCount: number;
  candidatesTokenCount: number;
  thoughtsTokenCount?: number;
  cachedContentTokenCount?: number;
  totalTokenCount: number;
}

const configOf = (b: Obj): Obj => (isObj(b.generationConfig) ? b.generationConfig : {});
const thinkingOf = (b: Obj): Obj | undefined => {
  const thinking = configOf(b).thinkingConfig;
  return isObj(thinking) && thinking.thinkingBudget !== 0 ? thinking : undefined;
};

/**
 * The usageMetadata the mock reports, so tests can price it: promptTokenCount = 15 + contents.length,
 * candidatesTokenCount = 8, thoughtsTokenCount = 40 when thinkingConfig is on (absent otherwise),
 * cachedContentTokenCount = `cached` when non-zero (inside promptTokenCount).
 */
export function geminiUsageFor(body: unknown, cached = 0): GeminiUsage {
  const b = isObj(body) ? body : {};
  const prompt = 15 + (Array.isArray(b.contents) ? b.contents.length : 0);
  const thoughts = thinkingOf(b) ? 40 : 0;
  return {
    promptTokenCount: prompt,
    candidatesTokenCount: 8,
    ...(thoughts ? { thoughtsTokenCount: thoughts } : {}),
    ...(cached ? { cachedContentTokenCount: cached } : {}),
    totalTokenCount: prompt + 8 + thoughts,
  };
}

// ---------------------------------------------------------------- errors

const GRPC_STATUS: Readonly<Record<number, string>> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

/** Google's error body; `status` defaults to the gRPC name of the HTTP code. */
export function googleError(code: number, message: string, opts: { status?: string; details?: unknown[]; headers?: Record<string, string> } = {}): JsonReply {
  const error: Obj = { code, message, status: opts.status ?? GRPC_STATUS[code] ?? 'UNKNOWN' };
  if (opts.details) error.details = opts.details;
  return { status: code, json: { error }, ...(opts.headers ? { headers: opts.headers } : {}) };
}

/** A 429 as in test/fixtures/upstream/google/google-429-retry-info.json: QuotaFailure + RetryInfo. */
export const googleRateLimited = (retryDelay = '34.4s'): JsonReply =>
  googleError(429, 'You exceeded your current quota, please check your plan.', {
    details: [
      { '@type': 'type.googleapis.com/google.rpc.QuotaFailure', violations: [{ quotaId: 'GenerateRequestsPerMinutePerProjectPerModel-FreeTier' }] },
      { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay },
    ],
  });

/** What Google answers for a key it does not know: HTTP 400 with reason API_KEY_INVALID. */
export const googleInvalidKey = (): JsonReply =>
  googleError(400, 'API key not valid. Please pass a valid API key.', {
    details: [
      { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com', metadata: { service: 'generativelanguage.googleapis.com' } },
    ],
  });

/** A stream chunk carrying an error, as Google ends a failing 200 stream. */
export const googleErrorChunk = (code: number, message: string): string => `data: ${JSON.stringify(googleError(code, message).json)}\r\n\r\n`;

// ---------------------------------------------------------------- what the model "says"

const partsOf = (content: unknown): Obj[] => (isObj(content) && Array.isArray(content.parts) ? content.parts.filter(isObj) : []);
const contentsOf = (b: Obj): Obj[] => (Array.isArray(b.contents) ? b.contents.filter(isObj) : []);

function declaredFunctions(b: Obj): string[] {
  const tools = Array.isArray(b.tools) ? b.tools.filter(isObj) : [];
  return tools.flatMap((t) => (Array.isArray(t.functionDeclarations) ? t.functionDeclarations.filter(isObj).map((d) => String(d.name)) : []));
}

/** The function the reply calls: per functionCallingConfig (ANY + allowedFunctionNames), else the first declared. */
function chosenFunction(b: Obj, answersFunctionResponse: boolean): string | undefined {
  const declared = declaredFunctions(b);
  const config = isObj(b.toolConfig) && isObj(b.toolConfig.functionCallingConfig) ? b.toolConfig.functionCallingConfig : {};
  const mode = typeof config.mode === 'string' ? config.mode : 'AUTO';
  if (declared.length === 0 || mode === 'NONE') return undefined;
  if (mode === 'ANY') {
    const allowed = Array.isArray(config.allowedFunctionNames) ? config.allowedFunctionNames.filter((n): n is string => typeof n === 'string') : [];
    return allowed[0] ?? declared[0];
  }
  return answersFunctionResponse ? undefined : declared[0];
}

/** The candidate's parts: a thought (with includeThoughts), then a functionCall or the text. */
function replyParts(b: Obj): Obj[] {
  const parts: Obj[] = [];
  if (thinkingOf(b)?.includeThoughts === true) parts.push({ text: GEMINI_THOUGHT, thought: true });
  const responses = partsOf(contentsOf(b).at(-1)).filter((p) => isObj(p.functionResponse));
  const fn = chosenFunction(b, responses.length > 0);
  if (fn) {
    parts.push({ functionCall: { name: fn, args: JSON.parse(TOOL_ARGUMENTS) as Obj }, thoughtSignature: thoughtSignatureFor(fn) });
  } else if (responses.length > 0) {
    parts.push({ text: toolResultText(responses.map((p) => JSON.stringify((p.functionResponse as Obj).response)).join('\n')) });
  } else {
    parts.push({ text: configOf(b).responseMimeType === 'application/json' ? JSON_MODE_TEXT : GEMINI_TEXT });
  }
  return parts;
}

// ---------------------------------------------------------------- request checks (what the real API refuses)

function invalidRequest(b: Obj): string | undefined {
  const contents = contentsOf(b);
  if (contents.length === 0) return '* GenerateContentRequest.contents: contents is not specified';
  for (const [i, content] of contents.entries()) {
    if (content.role !== 'user' && content.role !== 'model') return `Please use a valid role: user, model. (contents[${i}].role)`;
    const calls = partsOf(content).filter((p) => isObj(p.functionCall));
    for (const [j, part] of calls.entries()) {
      const name = String((part.functionCall as Obj).name);
      if (part.thoughtSignature !== thoughtSignatureFor(name)) {
        return `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${name}\` , position ${j + 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`;
      }
    }
    const responses = partsOf(content).filter((p) => isObj(p.functionResponse));
    if (responses.length === 0) continue;
    const called = partsOf(contents[i - 1]).flatMap((p) => (isObj(p.functionCall) ? [String(p.functionCall.name)] : []));
    for (const part of responses) {
      if (!called.includes(String((part.functionResponse as Obj).name))) {
        return 'Please ensure that function response turn comes immediately after a function call turn, and that each function response names a function that was called.';
      }
    }
  }
  return undefined;
}

// ---------------------------------------------------------------- replies

let sequence = 0;
const responseId = () => `mockResp${String(++sequence).padStart(6, '0')}`;

function responseBody(model: string, parts: Obj[], usage: GeminiUsage, id: string, finished = true): Obj {
  const candidate: Obj = { content: { parts, role: 'model' }, index: 0 };
  if (finished) candidate.finishReason = 'STOP';
  return { candidates: [candidate], usageMetadata: usage, modelVersion: model, responseId: id };
}

/** The chunks of a streamed reply: a thought, the text in two pieces (or the call, whole), running usage. */
export function geminiStreamChunks(model: string, b: Obj, cached = 0): Obj[] {
  const total = geminiUsageFor(b, cached);
  const pieces: Obj[][] = [];
  for (const part of replyParts(b)) {
    if (typeof part.text === 'string' && part.thought !== true) {
      const cut = Math.ceil(part.text.length / 2);
      pieces.push([{ text: part.text.slice(0, cut) }], [{ text: part.text.slice(cut) }]);
    } else {
      pieces.push([part]);
    }
  }
  const id = responseId();
  return pieces.map((parts, i) => {
    // Running totals: the prompt (and thoughts) from the first chunk, candidates growing to the final count.
    const candidates = Math.round((total.candidatesTokenCount * (i + 1)) / pieces.length);
    const usage = { ...total, candidatesTokenCount: candidates, totalTokenCount: total.totalTokenCount - total.candidatesTokenCount + candidates };
    return responseBody(model, parts, usage, id, i === pieces.length - 1);
  });
}

function generate(model: string, method: string, req: ReceivedRequest, cached: number): MockReply {
  const b = req.body as Obj;
  const problem = invalidRequest(b);
  if (problem) return googleError(400, problem);
  if (method === 'generateContent') return { json: responseBody(model, replyParts(b), geminiUsageFor(b, cached), responseId()) };
  const chunks = geminiStreamChunks(model, b, cached);
  // Without alt=sse the API streams one JSON array.
  if (new URLSearchParams(req.url.split('?')[1] ?? '').get('alt') !== 'sse') return { json: chunks };
  return { rawSse: chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\r\n\r\n`) } satisfies RawSseReply;
}

function embed(model: string, b: Obj): MockReply {
  const requests = Array.isArray(b.requests) ? b.requests.filter(isObj) : [];
  if (requests.length === 0) return googleError(400, '* BatchEmbedContentsRequest.requests: requests is not specified');
  const embeddings = [];
  for (const [i, request] of requests.entries()) {
    if (request.model !== `models/${model}`) {
      return googleError(400, `* BatchEmbedContentsRequest.requests[${i}].model: Model mismatch: models/${model} is the model of the request URL.`);
    }
    const text = partsOf(request.content).map((p) => (typeof p.text === 'string' ? p.text : '')).join('');
    const dims = typeof request.outputDimensionality === 'number' ? request.outputDimensionality : EMBEDDING_DIMS;
    embeddings.push({ values: defaultEmbeddingFor(text, dims) });
  }
  return { json: { embeddings } };
}

const PREFIX = '/v1beta/models/';

/** The mock's default answer to any request (the key checked against `apiKey`). */
export function geminiReply(req: ReceivedRequest, apiKey = GEMINI_MOCK_KEY, cached = 0): MockReply {
  const rest = req.path.startsWith(PREFIX) ? req.path.slice(PREFIX.length) : '';
  const colon = rest.lastIndexOf(':');
  const model = colon > 0 ? decodeURIComponent(rest.slice(0, colon)) : '';
  const method = colon > 0 ? rest.slice(colon + 1) : '';
  const key = req.headers['x-goog-api-key'];
  if (key === undefined) {
    return googleError(403, "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.");
  }
  if (key !== apiKey) return googleInvalidKey();
  if (req.method !== 'POST' || !['generateContent', 'streamGenerateContent', 'batchEmbedContents'].includes(method)) {
    return googleError(404, `Method not found: ${req.method} ${req.path}`);
  }
  if (!isObj(req.body)) return googleError(400, 'Invalid JSON payload received.');
  return method === 'batchEmbedContents' ? embed(model, req.body) : generate(model, method, req, cached);
}

export async function startMockGemini(opts: { port?: number; host?: string } = {}): Promise<MockGemini> {
  const settings = { apiKey: GEMINI_MOCK_KEY, cachedTokens: 0 };
  const server = await startMockServer({ ...opts, defaultReply: (req) => geminiReply(req, settings.apiKey, settings.cachedTokens) });
  return Object.assign(settings, server, {
    url: server.origin,
    reset() {
      server.reset();
      settings.apiKey = GEMINI_MOCK_KEY;
      settings.cachedTokens = 0;
    },
  });
}
