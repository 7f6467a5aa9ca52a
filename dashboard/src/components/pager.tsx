// Cursor paging (§9: ?limit&after → has_more, next_cursor): "Next" follows next_cursor, "Previous" goes
// back through the cursors already seen (the API pages forward only).
export interface PagerProps {
  page: number;
  hasMore: boolean;
  onNext: () => void;
  onPrevious: () => void;
}

export function Pager({ page, hasMore, onNext, onPrevious }: PagerProps) {
  return (
    <div class="pager">
      <button class="secondary" disabled={page === 0} onClick={onPrevious}>
        ← Previous
      </button>
      <span class="hint">Page {page + 1}</span>
      <button class="secondary" disabled={!hasMore} onClick={onNext}>
        Next →
      </button>
    </div>
  );
}

/** The cursor stack behind a Pager: cursors[i] is the `after` of page i (undefined for the first). */
export function nextCursors(cursors: readonly (string | undefined)[], next: string | null): (string | undefined)[] {
  return next ? [...cursors, next] : [...cursors];
}
