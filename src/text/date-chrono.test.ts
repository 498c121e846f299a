import { Chrono, createCasualConfiguration } from 'chrono-node/zh/hans';
import { describe, expect, it } from 'vitest';
import { CONSTANT_PATTERN_PARSERS, keepConstantPatterns } from './date-chrono.js';

describe('chrono zh.hans patterns built once', () => {
  it('finds both parsers it patches in the installed chrono, and they then hand back one pattern', () => {
    // A chrono upgrade that renames or reshapes them fails here instead of silently losing the speedup.
    const zh = new Chrono(createCasualConfiguration());
    const parsers = zh.parsers as unknown as Array<{ innerPattern(context?: unknown): RegExp; constructor: { name: string } }>;
    const named = parsers.filter((p) => CONSTANT_PATTERN_PARSERS.includes(p.constructor.name));
    // unpatched, each builds its pattern anew (the waste the patch removes)
    for (const p of named) expect(p.innerPattern()).not.toBe(p.innerPattern());
    expect(keepConstantPatterns(zh).sort()).toEqual([...CONSTANT_PATTERN_PARSERS].sort());
    expect(named).toHaveLength(2);
    for (const p of named) expect(p.innerPattern()).toBe(p.innerPattern());
  });
});
