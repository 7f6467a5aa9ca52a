// The JSON body parser: Fastify's own (secure-json-parse, so __proto__ and constructor keys stay
// errors) plus a nesting limit. V8 parses any depth, but the gateway later serializes the body for the
// upstream and JSON.stringify recurses: 10,000 levels under a pass-through field overflowed the stack
// (a 500). Refused here, such a body is a 400 before any hold or upstream call.
import type { FastifyRequest } from 'fastify';
import { GatewayError } from '../errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The JSON body's text as received: a native cell forwards it (only `model` replaced), never re-serialised. */
    rawBody: string | undefined;
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

/** Wraps Fastify's default JSON parser (its errors stay its own: empty body, invalid JSON) with the depth limit. */
export function depthLimitedJsonParser(parse: JsonBodyParser, maxDepth = MAX_JSON_DEPTH): JsonBodyParser {
  return function parseJsonBody(request, body, done) {
    request.rawBody = body;
    parse(request, body, (error, value) => {
      if (!error && typeof value === 'object' && value !== null && nestsDeeperThan(value, maxDepth)) {
        done(new GatewayError('invalid_request', { message: `The request body nests JSON deeper than ${maxDepth} levels.` }), undefined);
      } else {
        done(error, value);
      }
    });
  };
}
