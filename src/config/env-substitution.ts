// `${VAR}` and `${VAR:-default}` substitution inside every string of the parsed YAML tree.

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

export class MissingVariableError extends Error {
  constructor(
    readonly variable: string,
    readonly path: readonly (string | number)[],
  ) {
    super(`environment variable ${variable} is not set`);
  }
}

function substituteString(text: string, env: NodeJS.ProcessEnv, path: readonly (string | number)[]): string {
  return text.replace(REFERENCE, (_match, name: string, fallback: string | undefined) => {
    const value = env[name];
    // Shell semantics: the default applies when the variable is unset or empty.
    if (fallback !== undefined) return value === undefined || value === '' ? fallback : value;
    if (value === undefined) throw new MissingVariableError(name, path);
    return value;
  });
}

/** The first variable a string refers to (`${OPENAI_API_KEY:-}` → OPENAI_API_KEY), for telling a user what to set. */
export function firstVariable(text: string): string | undefined {
  return new RegExp(REFERENCE.source).exec(text)?.[1];
}

/** Returns a copy of `node` with every string substituted; throws MissingVariableError naming the path. */
export function substituteEnv(node: unknown, env: NodeJS.ProcessEnv, path: (string | number)[] = []): unknown {
  if (typeof node === 'string') return node.includes('${') ? substituteString(node, env, path) : node;
  if (Array.isArray(node)) return node.map((item, index) => substituteEnv(item, env, [...path, index]));
  if (node !== null && typeof node === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) out[key] = substituteEnv(value, env, [...path, key]);
    return out;
  }
  return node;
}
