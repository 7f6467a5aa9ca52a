// A modal dialog (the browser's own <dialog>): Escape or Cancel closes it; focus stays inside.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

export function Modal({ title, onClose, children, id }: { title: string; onClose: () => void; children: ComponentChildren; id: string }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  return (
    <dialog ref={ref} data-dialog={id} aria-label={title} onClose={onClose}>
      <h3>{title}</h3>
      {children}
    </dialog>
  );
}
