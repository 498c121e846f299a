/**
 * A memo for a function of a small vocabulary (words, ids, statement shapes): a plain Map that is
 * emptied when it reaches its limit. No eviction order to keep, so a hit is one lookup; the
 * vocabulary comes back quickly after a clear.
 */

/** `compute(key)`, remembered in `memo`; `memo` is emptied first when it holds `limit` entries. */
export function remembered<K, V>(memo: Map<K, V>, key: K, limit: number, compute: (key: K) => V): V {
  let value = memo.get(key);
  if (value === undefined) {
    value = compute(key);
    if (memo.size >= limit) memo.clear();
    memo.set(key, value);
  }
  return value;
}
