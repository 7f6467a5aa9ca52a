// SSE frames to a client: `data: <json>\n\n`, and OpenAI's end marker `data: [DONE]\n\n`.

export const SSE_DONE = 'data: [DONE]\n\n';

export function encodeSseData(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}
