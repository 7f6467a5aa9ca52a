// Loading data for a page: the value, the error (as a message), and a way to load it again.
import { useCallback, useEffect, useState } from 'preact/hooks';

export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  reload: () => void;
}

export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [data, setData] = useState<T | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    let current = true;
    setError(undefined);
    load().then(
      (value) => current && setData(value),
      (e: unknown) => current && setError((e as Error).message),
    );
    // A page that changes its filters before the previous answer arrives ignores that answer.
    return () => {
      current = false;
    };
  }, [...deps, generation]);
  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  return { data, error, reload };
}
