// OpenAI chat-completions request → Gemini generateContent / streamGenerateContent?alt=sse request.
//
// Convention fields (CHAT_CONVENTION_FIELDS), decided one by one:
//   mapped:    messages → contents + systemInstruction; model → the URL; stream → the method;
//              temperature; top_p → topP; max_completion_tokens ?? max_tokens → maxOutputTokens;
//              stop → stopSequences; n → candidateCount; seed; presence_penalty → presencePenalty;
//              frequency_penalty → frequencyPenalty; logprobs → responseLogprobs; top_logprobs → logprobs;
//              response_format → responseMimeType (+ responseSchema); reasoning_effort → thinkingConfig;
//              tools → tools[].functionDeclarations; tool_choice → toolConfig.functionCallingConfig
//              (all under generationConfig unless said otherwise).
//   dropped (listed in UpstreamRequest.dropped): audio, function_call, functions, logit_bias, metadata,
//              modalities, moderation, parallel_tool_calls, prediction, prompt_cache_key,
//              prompt_cache_options, prompt_cache_retention, safety_identifier, service_tier, store,
//              stream_options (Gemini always reports usage), user, verbosity, web_search_options; also
//              reasoning_effort / tool_choice / response_format values that map to nothing.
// Every other field is Gemini's own and forwarded (safetySettings, cachedContent, labels, ...), except
// top_k → generationConfig.topK, and generationConfig / toolConfig, merged over the mapped ones (their keys win).
import { isJsonObject, type JsonObject } from '../../json-object.js';
import { nativeFields } from '../convention-fields.js';
import { thinkingBudget } from '../reasoning-budget.js';
import type { ChatRequestBody, TranslatedRequest, UpstreamTarget } from '../types.js';
import { toGeminiContents } from './contents.js';
import { geminiHeaders, geminiModelPath } from './endpoint.js';
import { toGeminiSchema } from './schema.js';

const DROPPED = [
  'audio', 'function_call', 'functions', 'logit_bias', 'metadata', 'modalities', 'moderation', 'parallel_tool_calls',
  'prediction', 'prompt_cache_key', 'prompt_cache_options', 'prompt_cache_retention', 'safety_identifier',
  'service_tier', 'store', 'stream_options', 'user', 'verbosity', 'web_search_options',
] as const;
const MERGED_NATIVE: ReadonlySet<string> = new Set(['top_k', 'generationConfig', 'toolConfig']);

// OpenAI name → Gemini generationConfig name, for the numbers that carry over as they are.
const NUMBERS: readonly (readonly [string, string])[] = [
  ['temperature', 'temperature'],
  ['top_p', 'topP'],
  ['top_k', 'topK'],
  ['n', 'candidateCount'],
  ['seed', 'seed'],
  ['presence_penalty', 'presencePenalty'],
  ['frequency_penalty', 'frequencyPenalty'],
  ['top_logprobs', 'logprobs'],
];

function numberOr(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function generationConfig(body: ChatRequestBody, target: UpstreamTarget, dropped: string[]): JsonObject {
  const config: JsonObject = {};
  for (const [from, to] of NUMBERS) if (numberOr(body[from]) !== undefined) config[to] = body[from];
  const maxOut = numberOr(body.max_completion_tokens) ?? numberOr(body.max_tokens);
  if (maxOut !== undefined) config.maxOutputTokens = maxOut;
  if (typeof body.stop === 'string') config.stopSequences = [body.stop];
  else if (Array.isArray(body.stop)) config.stopSequences = body.stop.filter((s) => typeof s === 'string');
  if (typeof body.logprobs === 'boolean') config.responseLogprobs = body.logprobs;

  const format = isJsonObject(body.response_format) ? body.response_format : undefined;
  if (format?.type === 'json_object' || format?.type === 'json_schema') {
    config.responseMimeType = 'application/json';
    const schema = isJsonObject(format.json_schema) ? format.json_schema.schema : undefined;
    if (format.type === 'json_schema' && isJsonObject(schema)) config.responseSchema = toGeminiSchema(schema);
  } else if (format !== undefined && format.type !== 'text') {
    dropped.push('response_format');
  }

  if (body.reasoning_effort !== undefined && body.reasoning_effort !== null) {
    const limit = maxOut ?? target.maxOutputTokens ?? Number.POSITIVE_INFINITY;
    const budget = thinkingBudget(body.reasoning_effort, limit);
    if (budget !== undefined) config.thinkingConfig = { thinkingBudget: budget, includeThoughts: true };
    else dropped.push('reasoning_effort');
  }
  // The client's own generationConfig is the more precise request: its keys win.
  return isJsonObject(body.generationConfig) ? { ...config, ...body.generationConfig } : config;
}

function functionDeclaration(fn: JsonObject): JsonObject {
  const declaration: JsonObject = { name: fn.name };
  if (typeof fn.description === 'string') declaration.description = fn.description;
  if (isJsonObject(fn.parameters)) {
    const parameters = toGeminiSchema(fn.parameters);
    // A function without parameters is declared without a schema: Gemini rejects an empty OBJECT.
    if (parameters.properties !== undefined || parameters.anyOf !== undefined) declaration.parameters = parameters;
  }
  return declaration;
}

/** `tools` → Gemini tools; entries without a `type` are taken as Gemini's own tools ({googleSearch: {}}). */
function geminiTools(body: ChatRequestBody, allowed: ReadonlySet<string> | undefined, dropped: string[]): JsonObject[] {
  if (!Array.isArray(body.tools)) return [];
  const declarations: JsonObject[] = [];
  const native: JsonObject[] = [];
  body.tools.forEach((tool: unknown, i) => {
    const fn = isJsonObject(tool) && tool.type === 'function' && isJsonObject(tool.function) ? tool.function : undefined;
    if (fn && typeof fn.name === 'string') {
      if (!allowed || allowed.has(fn.name)) declarations.push(functionDeclaration(fn));
    } else if (isJsonObject(tool) && tool.type === undefined) native.push(tool);
    else dropped.push(`tools[${i}]`);
  });
  return declarations.length > 0 ? [{ functionDeclarations: declarations }, ...native] : native;
}

function functionNames(tools: unknown): string[] {
  if (!Array.isArray(tools)) return [];
  return tools.flatMap((t: unknown) => (isJsonObject(t) && isJsonObject(t.function) && typeof t.function.name === 'string' ? [t.function.name] : []));
}

interface ToolChoice {
  readonly config: JsonObject | undefined;
  /** allowed_tools in auto mode: Gemini can only express it by declaring just those functions. */
  readonly declare: ReadonlySet<string> | undefined;
}

function toolChoice(choice: unknown): ToolChoice | undefined {
  if (choice === 'auto') return { config: { mode: 'AUTO' }, declare: undefined };
  if (choice === 'none') return { config: { mode: 'NONE' }, declare: undefined };
  if (choice === 'required') return { config: { mode: 'ANY' }, declare: undefined };
  if (!isJsonObject(choice)) return undefined;
  if (choice.type === 'function' && isJsonObject(choice.function) && typeof choice.function.name === 'string') {
    return { config: { mode: 'ANY', allowedFunctionNames: [choice.function.name] }, declare: undefined };
  }
  const allowed = isJsonObject(choice.allowed_tools) ? choice.allowed_tools : undefined;
  if (choice.type !== 'allowed_tools' || !allowed) return undefined;
  const names = functionNames(allowed.tools);
  if (allowed.mode === 'required') return { config: { mode: 'ANY', allowedFunctionNames: names }, declare: undefined };
  return { config: { mode: 'AUTO' }, declare: new Set(names) };
}

export function buildGeminiChatRequest(body: ChatRequestBody, target: UpstreamTarget): TranslatedRequest {
  const dropped: string[] = DROPPED.filter((field) => body[field] !== undefined);
  const { contents, systemInstruction } = toGeminiContents(body.messages, dropped);
  const out: JsonObject = { contents };
  if (systemInstruction) out.systemInstruction = systemInstruction;

  const choice = body.tool_choice === undefined ? undefined : toolChoice(body.tool_choice);
  const tools = geminiTools(body, choice?.declare, dropped);
  // A choice Gemini cannot express, or one without functions to choose from.
  if (body.tool_choice !== undefined && (!choice || tools.length === 0)) dropped.push('tool_choice');
  if (tools.length > 0) out.tools = tools;
  let toolConfig: JsonObject | undefined = choice?.config && tools.length > 0 ? { functionCallingConfig: choice.config } : undefined;
  if (isJsonObject(body.toolConfig)) toolConfig = { ...toolConfig, ...body.toolConfig };
  if (toolConfig) out.toolConfig = toolConfig;

  const config = generationConfig(body, target, dropped);
  if (Object.keys(config).length > 0) out.generationConfig = config;
  Object.assign(out, nativeFields(body, MERGED_NATIVE));

  const stream = body.stream === true;
  return {
    method: 'POST',
    path: stream ? geminiModelPath(target, 'streamGenerateContent', '?alt=sse') : geminiModelPath(target, 'generateContent'),
    headers: geminiHeaders(stream ? 'text/event-stream' : 'application/json'),
    body: JSON.stringify(out),
    dropped,
  };
}
