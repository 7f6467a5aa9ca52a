// Builds a function call's arguments from streamed `partialArgs` ({jsonPath, stringValue | numberValue |
// boolValue | nullValue, willContinue}), the form Vertex AI uses when it streams function-call arguments.
import { isJsonObject, type JsonObject } from '../../json-object.js';

type Key = string | number;

/** '$.a.b[0]["c d"]' → ['a', 'b', 0, 'c d']; undefined for anything that is not a plain member path. */
export function parseJsonPath(path: string): Key[] | undefined {
  if (!path.startsWith('$')) return undefined;
  const keys: Key[] = [];
  const token = /\.([^.[\]]+)|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]|\["((?:[^"\\]|\\.)*)"\]/y;
  token.lastIndex = 1;
  while (token.lastIndex < path.length) {
    const match = token.exec(path);
    if (!match) return undefined;
    if (match[2] !== undefined) keys.push(Number(match[2]));
    else keys.push((match[1] ?? match[3] ?? match[4] ?? '').replace(/\\(.)/g, '$1'));
  }
  return keys.length > 0 ? keys : undefined;
}

/** An own property even for '__proto__', so a hostile path cannot reach a prototype. */
function put(container: JsonObject | unknown[], key: Key, value: unknown): void {
  Object.defineProperty(container, key, { value, writable: true, enumerable: true, configurable: true });
}

export class PartialArgs {
  readonly value: JsonObject = {};
  /** Paths whose last string fragment said willContinue: the next fragment is appended. */
  private readonly continuing = new Set<string>();

  apply(partials: readonly unknown[]): void {
    for (const partial of partials) if (isJsonObject(partial)) this.applyOne(partial);
  }

  private applyOne(partial: JsonObject): void {
    const path = typeof partial.jsonPath === 'string' ? partial.jsonPath : '';
    const keys = parseJsonPath(path);
    if (!keys) return;
    let value: unknown;
    if (typeof partial.stringValue === 'string') {
      const previous = this.continuing.has(path) ? this.read(keys) : undefined;
      value = typeof previous === 'string' ? previous + partial.stringValue : partial.stringValue;
    } else if (typeof partial.numberValue === 'number') value = partial.numberValue;
    else if (typeof partial.boolValue === 'boolean') value = partial.boolValue;
    else if (partial.nullValue !== undefined) value = null;
    else return;
    this.write(keys, value);
    if (partial.willContinue === true) this.continuing.add(path);
    else this.continuing.delete(path);
  }

  private read(keys: readonly Key[]): unknown {
    let node: unknown = this.value;
    for (const key of keys) {
      if (!(isJsonObject(node) || Array.isArray(node)) || !Object.hasOwn(node, key)) return undefined;
      node = (node as Record<Key, unknown>)[key];
    }
    return node;
  }

  private write(keys: readonly Key[], value: unknown): void {
    let node: JsonObject | unknown[] = this.value;
    for (let i = 0; i < keys.length - 1; i++) {
      const key = keys[i]!;
      const existing: unknown = Object.hasOwn(node, key) ? (node as Record<Key, unknown>)[key] : undefined;
      if (isJsonObject(existing) || Array.isArray(existing)) {
        node = existing;
      } else {
        const child: JsonObject | unknown[] = typeof keys[i + 1] === 'number' ? [] : {};
        put(node, key, child);
        node = child;
      }
    }
    put(node, keys[keys.length - 1]!, value);
  }
}
