// A new key's secret, shown once: the API never returns it again. A copy button puts it on the
// clipboard; where the clipboard is refused, the text is selected for the user to copy.
import { useRef, useState } from 'preact/hooks';

export function SecretBox({ secret, what = 'key' }: { secret: string; what?: 'key' | 'token' }) {
  const text = useRef<HTMLElement>(null);
  const [copied, setCopied] = useState<'yes' | 'select' | undefined>();
  async function copy() {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied('yes');
    } catch {
      const node = text.current;
      if (node) getSelection()?.selectAllChildren(node);
      setCopied('select');
    }
  }
  return (
    <div class="secret-box">
      <p>
        <strong>Copy this {what} now.</strong> It is shown only once; Tollgate keeps only its hash.
      </p>
      <code ref={text} class="secret" data-secret>
        {secret}
      </code>
      <div class="toolbar">
        <button type="button" onClick={copy} data-copy>
          Copy
        </button>
        {copied === 'yes' && <span class="hint">Copied.</span>}
        {copied === 'select' && <span class="hint">Selected: press Ctrl+C (⌘C).</span>}
      </div>
    </div>
  );
}
