// The input estimate of a Messages request (product.md §14, "Hold, Messages"), in the order the upstream
// reads the prompt — tool definitions, system, messages — so that the part up to the last `cache_control`
// marker, which the upstream may write to its prompt cache, is known too: the hold prices it at the
// cache-write price (the 1-hour one if any marker asks for it). Counted: text, tool inputs and results,
// thinking text (never signatures), tool definitions plus the model's tool overhead, images by their
// size, PDFs by their pages.
import type { InputCount } from '../../pipeline/client-api.js';
import { isJsonObject } from '../../json-object.js';
import { countParts, type CountPart } from '../../tokens/count-text.js';
import { COUNT_BUDGET_MS, TokenTally } from '../../tokens/token-tally.js';
import { memberOf, spanText } from '../json-layout.js';
import { rawLayoutOf } from '../raw-body.js';
import { base64PdfTokens, imageSourceTokens, PDF_PAGE_TOKENS } from './media.js';

/** Role markers and turn framing per message. */
const TOKENS_PER_MESSAGE = 3;

/** A prompt as fixed counts and parts to count, in reading order, with where its last cache marker stands. */
class PromptParts {
  private fixed = 0;
  private readonly parts: CountPart[] = [];
  private marked: { readonly parts: number; readonly fixed: number } | undefined;
  private oneHour = false;

  add(tokens: number): void {
    this.fixed += tokens;
  }

  text(value: unknown): void {
    if (typeof value === 'string' && value.length > 0) this.parts.push(value);
  }

  /** A structured value the model reads as its JSON text; `raw`: that JSON as the client sent it, when known. */
  json(value: unknown, raw?: string): void {
    if (value === undefined || value === null) return;
    this.parts.push({ value, raw });
  }

  /** What was added so far is a cache breakpoint when `cacheControl` is one. */
  marker(cacheControl: unknown): void {
    if (!isJsonObject(cacheControl)) return;
    this.marked = { parts: this.parts.length, fixed: this.fixed };
    if (cacheControl.ttl === '1h') this.oneHour = true;
  }

  async count(budgetMs: number): Promise<InputCount> {
    const tally = new TokenTally(budgetMs);
    const marked = this.marked;
    if (!marked) return { tokens: this.fixed + (await countParts(tally, this.parts)) };
    const prefix = marked.fixed + (await countParts(tally, this.parts.slice(0, marked.parts)));
    const tokens = prefix + (this.fixed - marked.fixed) + (await countParts(tally, this.parts.slice(marked.parts)));
    return { tokens, cacheWrite: { tokens: prefix, oneHour: this.oneHour } };
  }
}

function addDocument(parts: PromptParts, block: Record<string, unknown>): void {
  const source = block.source;
  parts.text(block.title);
  parts.text(block.context);
  if (!isJsonObject(source)) return parts.add(PDF_PAGE_TOKENS);
  if (source.type === 'text') return parts.text(source.data);
  if (source.type === 'content') return addContent(parts, source.content);
  if (source.type === 'base64' && typeof source.data === 'string') return parts.add(base64PdfTokens(source.data));
  // A URL or a file id: its pages are unknown here; one page is held.
  parts.add(PDF_PAGE_TOKENS);
}

function addBlock(parts: PromptParts, block: unknown): void {
  if (typeof block === 'string') return parts.text(block);
  if (!isJsonObject(block)) return;
  switch (block.type) {
    case 'text':
      parts.text(block.text);
      break;
    case 'image':
      parts.add(imageSourceTokens(block.source));
      break;
    case 'document':
      addDocument(parts, block);
      break;
    case 'tool_use':
    case 'server_tool_use':
      parts.text(block.name);
      parts.json(block.input);
      break;
    case 'tool_result':
      addContent(parts, block.content);
      break;
    case 'thinking':
      // The signature is the upstream's proof of the text, not something the model reads.
      parts.text(block.thinking);
      break;
    case 'redacted_thinking':
      // Encrypted: sized, about 4 characters a token.
      if (typeof block.data === 'string') parts.add(Math.ceil(block.data.length / 4));
      break;
    default: {
      // Search results, server tool results and whatever comes next: their JSON, less any marker.
      const { cache_control: _marker, ...rest } = block;
      parts.json(rest);
    }
  }
  parts.marker(block.cache_control);
}

function addContent(parts: PromptParts, content: unknown): void {
  if (typeof content === 'string') parts.text(content);
  else if (Array.isArray(content)) for (const block of content) addBlock(parts, block);
}

function withoutMarker(block: Record<string, unknown>): Record<string, unknown> {
  const { cache_control: _marker, ...rest } = block;
  return rest;
}

export interface MessagesInput {
  readonly system?: unknown;
  readonly messages: readonly unknown[];
  readonly tools?: unknown;
  readonly cache_control?: unknown;
}

/**
 * The JSON text the client sent for each of its tool definitions (the keys their counts are remembered
 * by, so a repeated definition is never serialised again), or undefined when the body has no text kept
 * with it or it cannot be cut exactly.
 */
function rawToolTexts(body: MessagesInput, count: number): string[] | undefined {
  const layout = rawLayoutOf(body);
  const text = layout?.text;
  const elements = text === undefined ? undefined : memberOf(layout!.members, 'tools')?.elements;
  return elements?.length === count ? elements.map((span) => spanText(text!, span)) : undefined;
}

/** The request's input estimate and its cache-write prefix; `toolOverhead` is added when tools are given. */
/**
 * `budgetMs`: exact counting time before the rest is estimated (tests that compare two counts pass
 * Infinity: on a loaded machine the first, cold count may run out of time where the second does not).
 */
export function countMessagesInput(body: MessagesInput, toolOverhead: number, budgetMs = COUNT_BUDGET_MS): Promise<InputCount> {
  const parts = new PromptParts();
  if (Array.isArray(body.tools) && body.tools.length > 0) {
    // The tool-use instructions the upstream puts before the definitions.
    parts.add(toolOverhead);
    const raw = rawToolTexts(body, body.tools.length);
    body.tools.forEach((tool: unknown, i) => {
      if (!isJsonObject(tool)) return;
      const marker = tool.cache_control;
      // Counted without its marker (the model never reads it); serialised only when not remembered.
      parts.json(marker === undefined ? tool : withoutMarker(tool), raw?.[i]);
      parts.marker(marker);
    });
  }
  addContent(parts, body.system);
  for (const message of body.messages) {
    if (!isJsonObject(message)) continue;
    parts.add(TOKENS_PER_MESSAGE);
    addContent(parts, message.content);
  }
  // Automatic caching (a top-level cache_control) writes the whole prompt.
  parts.marker(body.cache_control);
  return parts.count(budgetMs);
}
