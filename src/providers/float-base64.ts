// Embedding vectors as OpenAI sends them for encoding_format "base64": float32 little-endian bytes, base64.

export function floatsToBase64(values: readonly unknown[]): string {
  const floats = new Float32Array(values.length);
  for (let i = 0; i < values.length; i++) floats[i] = Number(values[i]);
  return Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength).toString('base64');
}
