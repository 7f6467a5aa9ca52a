// The port a client API plugs into the one request flow (pipeline/run.ts): everything that depends on
// the shape a client speaks — its validation, how its input is counted and its output bounded, how a
// request becomes an upstream request for each provider kind, its answers, its stream frames and its
// error envelope. The flow itself knows none of these shapes. Implementations live in src/api/<api>/.
import type { CacheWriteHold, TokenUsage } from '../billing/pricing.js';
import type { ModelConfig } from '../config/types.js';
import type { GatewayError } from '../errors.js';
import type { JsonObject } from '../json-object.js';
import type { FramedEvent, ReportedUsage, UpstreamRequest } from '../providers/types.js';
import type { Candidate, Route } from '../routing/resolve-route.js';
import type { UsageEndpoint } from '../storage/types.js';
import type { Endpoint } from '../telemetry/request-outcome.js';
import type { Charge } from './admission/reservation.js';
import type { ClientRequest, PipelineDeps } from './deps.js';

/** A client request's headers, as Node gives them (names lower-case). */
export type ClientHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** The output a request may produce, for its hold: per choice, and how many choices. */
export interface OutputBudget {
  readonly maxOutput: number;
  readonly choices: number;
}

/** A request's counted input, when the hold needs more than its size: the part written to the prompt cache. */
export interface InputCount {
  readonly tokens: number;
  readonly cacheWrite?: CacheWriteHold;
}

/**
 * Ids an answer left stored upstream that a later request may name (Responses: the response id and its
 * output item ids); the flow records them, with the upstream that holds them, once the answer is settled.
 */
export interface StoredIds {
  readonly responseId: string;
  readonly itemIds: readonly string[];
}

/** A request bound to state an upstream keeps for it: its route narrowed to that upstream, and the context it adds. */
export interface Binding {
  readonly route: Route;
  /** Input tokens the upstream adds from its stored state (held as input, beside the counted body). */
  readonly contextTokens: number;
}

/** A whole upstream answer, in the client's shape, before its usage and cost are set. */
export interface ApiAnswer {
  readonly body: JsonObject;
  readonly usage: ReportedUsage | null;
  /** Tokenizer count of the output it carries (read only when there is no usage, or after a fault). */
  delivered(): number;
  /** What it left stored upstream; undefined: nothing a later request can name. */
  stored?(): StoredIds | undefined;
}

/** One streamed upstream attempt, turned into this API's frames and metered as they go to the client. */
export interface ClientStream {
  /** The frames for one upstream event ('' when it yields none). Throws UpstreamFailureError on an error event. */
  push(event: FramedEvent): string;
  /** The upstream's own end marker arrived. */
  readonly finished: boolean;
  /** The last usage the upstream reported (cumulative upstream: the last report wins). */
  readonly usage: ReportedUsage | null;
  /**
   * The input the upstream reported before its output (Anthropic's message_start): a stream without its
   * final usage is estimated on it rather than on the hold's input estimate. Unset: not reported.
   */
  readonly knownInput?: TokenUsage | null;
  /** Output (text, reasoning, a tool call, a refusal) reached the frames. */
  readonly sawOutput: boolean;
  /** A choice finished. */
  readonly sawFinish: boolean;
  /** Tokenizer count of the output framed so far. */
  delivered(): number;
  /**
   * A frame the relay sends after `afterMs` without a frame for the client (Anthropic's `ping`: a translated
   * stream's upstream may think in silence, and clients and proxies drop a connection that says nothing).
   * Unset: the stream says nothing of its own while the upstream is silent.
   */
  readonly keepAlive?: { readonly afterMs: number; readonly frame: string };
  /** The stream's successful end: the usage (with the cost) and the end marker. */
  final(charge: Charge): string;
  /**
   * A growing hold covered the frames returned so far: they go to the client. A later cut() follows them,
   * not the frames of the read it withholds (an API whose cut closes what the client saw opened needs it).
   */
  markDelivered?(): void;
  /** A growing hold could not grow: the end of a stream that reached its output limit, with its usage. */
  cut(charge: Charge, choices: number): string;
  /** A failure after the stream was committed, in this API's in-stream error form (with what was charged, when settled). */
  error(error: GatewayError, charge?: Charge): string;
  /** What the stream left stored upstream; undefined: nothing a later request can name. */
  stored?(): StoredIds | undefined;
}

export interface ClientApi<Body extends JsonObject = JsonObject> {
  /** The usage row's `endpoint`. */
  readonly endpoint: UsageEndpoint;
  /** Its route under /v1. */
  readonly path: string;
  /** Its `endpoint` label in the metrics. */
  readonly metricsLabel: Endpoint;
  /** The model type it calls (a model of another type answers as unknown). */
  readonly modelType: ModelConfig['type'];
  /**
   * Its native cells forward the client's body as received, `model` replaced (api/raw-body.ts keeps the
   * text with the body); APIs that always re-serialise leave it unset.
   */
  readonly forwardsRawBody?: boolean;
  /**
   * How this API reaches one candidate upstream: `native` when the upstream speaks it (its provider's
   * `serves`), `translated` when a translator for the pair exists, undefined when neither (the candidate is
   * not tried). Unset: every candidate, translated by its adapter (chat completions, embeddings).
   */
  cellFor?(candidate: Candidate): 'native' | 'translated' | undefined;
  /**
   * The cell a request's history binds it to (Messages: thinking an Anthropic upstream signed can only go
   * back to a native cell): when some candidate reaches the API in that cell, only those are tried —
   * fallback never crosses to another cell. Unset, or undefined: any cell will do.
   */
  historyCell?(body: Body): 'native' | 'translated' | undefined;
  /** Checks what the flow relies on; throws a 400 in this API's terms. */
  validate(raw: unknown): Body;
  /**
   * Binds the request to state an upstream keeps (Responses: a stored response or item it names), before
   * anything is counted or held: the route narrowed to the upstream account that holds it, and the context
   * it adds to the input. Throws (a 404) for state this key does not have. Unset: the API keeps no state.
   */
  bind?(body: Body, route: Route, client: ClientRequest, deps: PipelineDeps): Promise<Binding>;
  /** An error as this API answers it (its status, type, code and headers), before its envelope; unset: as is. */
  errorFor?(error: GatewayError): GatewayError;
  modelOf(body: Body): string;
  streams(body: Body): boolean;
  /**
   * The input estimate the hold is sized on (`model`: for model settings such as tool overhead; `route`: the
   * candidates that may serve it, whose cells say whether a cache write can happen); may throw a 400.
   */
  countInput(body: Body, model: ModelConfig, route: Route): Promise<number | InputCount>;
  /** The output the hold covers; undefined for an API without output (embeddings). */
  outputBudget(body: Body, modelMaxOutput: number | undefined): OutputBudget | undefined;
  /** The request with its output limit lowered to `maxOutput` (a clamp), and the field it set. */
  withMaxOutput(body: Body, maxOutput: number): Body;
  /**
   * The upstream request for one candidate; may throw a 400 (it is built for the first before the hold).
   * `headers`: the client's, for an API whose native cells forward some of them (anthropic-beta, ...) —
   * never its credentials.
   */
  buildRequest(body: Body, candidate: Candidate, headers: ClientHeaders): UpstreamRequest;
  /**
   * A whole upstream answer (JSON) in this API's shape. `requestId`: the gateway's, for an answer whose id
   * the gateway makes (a translated Response is `resp_` + it, as its stream's is).
   */
  parseAnswer(json: JsonObject, body: Body, candidate: Candidate, requestId: string): ApiAnswer;
  /** The answer the client gets: the body with its usage and cost. */
  answerWith(answer: ApiAnswer, charge: Charge): JsonObject;
  /**
   * One streamed attempt of this API on that candidate. `inputTokens`: the hold's input estimate (what a
   * translated stream announces before the upstream reports its exact count).
   */
  openStream(body: Body, candidate: Candidate, requestId: string, inputTokens: number): ClientStream;
  /**
   * An error answer's body in this API's envelope — or, for an API that answers some errors with another
   * status or headers of its own, an http/render-error.ts ErrorAnswer.
   */
  envelope(error: GatewayError, requestId: string): unknown;
}
