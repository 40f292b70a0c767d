import { useEffect, useState } from 'react';

/** Becomes true once the element comes near the viewport, and stays true (for lazy loading). */
export function useInView<T extends Element>(element: T | null, rootMargin = '200px'): boolean {
  // Without IntersectionObserver (old engines, test DOMs) everything counts as visible.
  const [seen, setSeen] = useState(() => typeof IntersectionObserver === 'undefined');
  useEffect(() => {
    if (seen || !element) return;
    const observer = new IntersectionObserver(
      (entries) => {
        if (entries.some((entry) => entry.isIntersecting)) setSeen(true);
      },
      { rootMargin },
    );
    observer.observe(element);
    return () => observer.disconnect();
  }, [element, rootMargin, seen]);
  return seen;
}
