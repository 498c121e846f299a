/**
 * What rewriting a line for a branch shares between agents: dropping an earlier trim's restore
 * annotation (a branch starts its own history; the objects it named stay referenced and a
 * changed line keeps where its original is, so stubs still page in), remapping the project folder, and writing a line so that it always ends in "\n"
 * (the agent appends after it).
 */
import { ANNOTATION_KEY, ANNOTATION_VERSION, annotationObjects, pageInPart } from '../trim/annotation.js';

/** Project folder remap: `from` and anything below it moves to `to`. */
export interface CwdRemap {
  from: string;
  to: string;
}

/** `path` moved from `remap.from` to `remap.to` (unchanged when it is not at or below `from`). */
export function remapPath(path: string, remap: CwdRemap | undefined): string {
  if (!remap || remap.from === remap.to) return path;
  if (path === remap.from) return remap.to;
  for (const sep of ['/', '\\']) if (path.startsWith(remap.from + sep)) return remap.to + path.slice(remap.from.length);
  return path;
}

/**
 * Removes ctxvm's restore annotation from a parsed line and adds the object addresses it named to
 * `objects`. True when there was one. A line whose stubs an earlier trim made keeps where their
 * original line is (`{v: 3, p: part}`: page-in follows it; restore passes the line as it is).
 */
export function stripAnnotation(line: Record<string, unknown>, objects: Set<string>): boolean {
  if (!(ANNOTATION_KEY in line)) return false;
  const a = line[ANNOTATION_KEY];
  delete line[ANNOTATION_KEY];
  for (const h of annotationObjects(a)) objects.add(h);
  const pageIn = pageInPart(a);
  if (pageIn) line[ANNOTATION_KEY] = { v: ANNOTATION_VERSION, p: pageIn };
  return true;
}

/** Replaces `from` by `to` in every string below `value` (objects and arrays are rebuilt only where changed). */
export function replaceInStrings(value: unknown, from: string, to: string): unknown {
  if (typeof value === 'string') return value.includes(from) ? value.split(from).join(to) : value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    value.forEach((v, i) => {
      const r = replaceInStrings(v, from, to);
      if (r !== v) (out ??= [...value])[i] = r;
    });
    return out ?? value;
  }
  if (value && typeof value === 'object') {
    let out: Record<string, unknown> | undefined;
    for (const [k, v] of Object.entries(value)) {
      const r = replaceInStrings(v, from, to);
      if (r !== v) (out ??= { ...(value as Record<string, unknown>) })[k] = r;
    }
    return out ?? value;
  }
  return value;
}
