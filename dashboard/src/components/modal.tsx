// A modal dialog (the browser's own <dialog>): Escape or Cancel closes it; focus stays inside.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

export function Modal({ title, onClose, children, id }: { title: string; onClose: () => void; children: ComponentChildren; id: string }) {
  const ref = useRef<HTMLDialogElement>(null);
  const latestOnClose = useRef(onClose);
  latestOnClose.current = onClose;
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    // Only a close by the user (Escape) is reported; the page replacing this dialog by another (the
    // secret after "Create") must not read as the user closing it.
    const onUserClose = () => latestOnClose.current();
    dialog.addEventListener('close', onUserClose);
    if (!dialog.open) dialog.showModal();
    return () => {
      dialog.removeEventListener('close', onUserClose);
      dialog.close();
    };
  }, []);
  return (
    <dialog ref={ref} data-dialog={id} aria-label={title}>
      <h3>{title}</h3>
      {children}
    </dialog>
  );
}
