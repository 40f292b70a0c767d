/** How a length reads next to a field: "180 / 200". */
export function characterCount(length: number, limit: number): string {
  return `${length.toLocaleString('en')} / ${limit.toLocaleString('en')}`;
}

/**
 * The refusal shown next to a field holding more than its limit. The text is never cut: the
 * curator chooses what to remove, so the message says by how much.
 */
export function tooLongMessage(label: string, length: number, limit: number): string {
  const over = length - limit;
  return `${label} holds at most ${limit.toLocaleString('en')} characters; remove ${over.toLocaleString('en')} to save.`;
}
