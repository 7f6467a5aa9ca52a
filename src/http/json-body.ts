// The JSON body parser: Fastify's own (secure-json-parse, so __proto__ and constructor keys stay
// errors) plus a nesting limit. V8 parses any depth, but the gateway later serializes the body for the
// upstream and JSON.stringify recurses: 10,000 levels under a pass-through field overflowed the stack
// (a 500). Refused here, such a body is a 400 before any hold or upstream call.
//
// Fastify's parser looks for the suspect keys with two regular expressions over the whole text: 140 µs
// on a 116 KB Claude Code body, every request. The walk that checks the depth sees every key anyway, so
// it looks for them instead; only a body that has one (or that V8 cannot parse) goes to Fastify's parser,
// whose verdict and errors stay the gateway's.
import { isUtf8, type Buffer } from 'node:buffer';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GatewayError } from '../errors.js';
import { jsonBytes, type JsonBytes } from './json-bytes.js';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The JSON body's text as received (on the client APIs, with non-ASCII characters as JSON escapes:
     * json-bytes.ts): a native cell forwards it (only `model` replaced), never re-serialised.
     */
    rawBody: string | undefined;
    /** The bytes it was read from, when they are valid UTF-8: what a native cell forwards, never re-encoded. */
    rawBytes: JsonBytes | undefined;
  }
}

/** A body parser in Fastify's callback form (the form its default JSON parser has). */
export type JsonBodyParser = (request: FastifyRequest, body: string, done: (error: Error | null, value?: unknown) => void) => void;

/** The deepest JSON a client body may nest (the top-level object is level 1). */
export const MAX_JSON_DEPTH = 128;

/**
 * True when `value` nests containers deeper than `levels` (a container at the top is one level).
 * The recursion stops at the limit, so the stack never holds more than `levels` + 1 frames; it visits
 * each container once and skips primitives without a call, so a large body costs little beside its parse.
 */
export function nestsDeeperThan(value: object, levels: number): boolean {
  if (levels === 0) return true;
  const below = levels - 1;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item === 'object' && item !== null && nestsDeeperThan(item, below)) return true;
    }
    return false;
  }
  for (const key in value) {
    const item: unknown = (value as Record<string, unknown>)[key];
    if (typeof item === 'object' && item !== null && nestsDeeperThan(item, below)) return true;
  }
  return false;
}

const TOO_DEEP = 1;
const SUSPECT_KEY = 2;

/**
 * TOO_DEEP when `value` nests containers deeper than `levels`, SUSPECT_KEY when an object in it has a
 * `__proto__` or `constructor` key of its own (what secure-json-parse checks further), else 0. Like
 * nestsDeeperThan, it stops at the limit and visits each container once.
 */
function inspect(value: object, levels: number): number {
  if (levels === 0) return TOO_DEEP;
  const below = levels - 1;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item === 'object' && item !== null) {
        const found = inspect(item, below);
        if (found !== 0) return found;
      }
    }
    return 0;
  }
  for (const key in value) {
    if (key === '__proto__' || key === 'constructor') return SUSPECT_KEY;
    const item: unknown = (value as Record<string, unknown>)[key];
    if (typeof item === 'object' && item !== null) {
      const found = inspect(item, below);
      if (found !== 0) return found;
    }
  }
  return 0;
}

/** True when `value` (a JSON value met `levels` below the limit) nests no deeper than that and has no suspect key. */
export function isPlainWithin(value: unknown, levels: number): boolean {
  return typeof value !== 'object' || value === null || inspect(value, levels) === 0;
}

/** The ordinary body: V8 parses it, and it is neither too deep nor has a suspect key. Undefined otherwise. */
function parsedPlainly(body: string, maxDepth: number): { value: unknown } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return undefined;
  }
  return isPlainWithin(value, maxDepth) ? { value } : undefined;
}

/**
 * Wraps Fastify's default JSON parser (its errors stay its own: empty body, invalid JSON, poisoned keys)
 * with the depth limit; an ordinary body is parsed without it (see above), with the same result.
 */
export function depthLimitedJsonParser(parse: JsonBodyParser, maxDepth = MAX_JSON_DEPTH): JsonBodyParser {
  return function parseJsonBody(request, body, done) {
    request.rawBody = body;
    const plain = parsedPlainly(body, maxDepth);
    if (plain !== undefined) return done(null, plain.value);
    parse(request, body, (error, value) => {
      if (!error && typeof value === 'object' && value !== null && nestsDeeperThan(value, maxDepth)) {
        done(new GatewayError('invalid_request', { message: `The request body nests JSON deeper than ${maxDepth} levels.` }), undefined);
      } else {
        done(error, value);
      }
    });
  };
}

/** A body parser in Fastify's callback form, for `parseAs: 'buffer'`. */
export type JsonBytesParser = (request: FastifyRequest, body: Buffer, done: (error: Error | null, value?: unknown) => void) => void;

/**
 * Reads the body's bytes as text for `parse`, keeping them on the request when they are valid UTF-8 (a
 * native cell forwards them as they came). Invalid UTF-8 is decoded as before (replacement characters)
 * and not kept.
 */
export function keepingBytes(parse: JsonBodyParser): JsonBytesParser {
  return function parseJsonBytes(request, body, done) {
    const decoded = isUtf8(body) ? jsonBytes(body) : undefined;
    request.rawBytes = decoded?.read;
    parse(request, decoded?.text ?? body.toString('utf8'), done);
  };
}

/** The gateway's JSON body parser, for `parseAs: 'buffer'`: Fastify's own, depth-limited, keeping the bytes. */
export function gatewayJsonParser(app: FastifyInstance): JsonBytesParser {
  return keepingBytes(depthLimitedJsonParser(app.getDefaultJsonParser('error', 'error') as JsonBodyParser));
}
