/** JSON pointers into paged-out lines resolve own properties and array indexes only. */
import { describe, expect, it } from 'vitest';
import { resolvePointer } from './stub.js';

const line = JSON.parse('{"message":{"content":[{"type":"tool_result","content":"x"}]},"a/b":{"~":1}}') as unknown;

describe('resolvePointer', () => {
  it('follows members, indexes and escaped keys', () => {
    expect(resolvePointer(line, '/message/content/0/content')).toBe('x');
    expect(resolvePointer(line, '/a~1b/~0')).toBe(1);
    expect(resolvePointer(line, '')).toBe(line);
  });

  it('finds nothing on the prototype chain or off an array', () => {
    for (const pointer of ['/__proto__', '/__proto__/constructor', '/constructor', '/toString', '/message/hasOwnProperty', '/message/content/length', '/message/content/01', '/message/content/1', '/message/content/0/content/length']) {
      expect(resolvePointer(line, pointer), pointer).toBeUndefined();
    }
  });
});
