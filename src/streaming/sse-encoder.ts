// The client-facing SSE framing: OpenAI's `data: <json>\n\n`, ending with `data: [DONE]\n\n`.

export const SSE_DONE = 'data: [DONE]\n\n';

export function encodeSseData(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}
