import { describe, expect, it } from 'vitest';
import { invalidOutputError } from './invalid-output.js';

const roleOrder = { rule: 'role-order', line: 41, message: 'two assistant messages in a row after merging', severity: 'error' as const };
const added = { rule: 'tool-use-without-result', line: 12, message: 'tool_use toolu_1 is not answered in the next message (line 13)', severity: 'error' as const };
const warning = { rule: 'open-tool-use', line: 90, message: '1 tool call(s) at the end have no result', severity: 'warning' as const };

describe('invalidOutputError', () => {
  it('an input that was already invalid: E_INVALID naming its file, lines and rules, and how to see them all', () => {
    const e = invalidOutputError({ input: '/s/a.jsonl', output: 'trimmed copy', inputFindings: [roleOrder, warning], added: [added] });
    expect(e.code).toBe('E_INVALID');
    expect(e.message).toContain('/s/a.jsonl is not a valid session, so nothing was written; it has 1 error(s):\n  /s/a.jsonl:41: role-order: two assistant messages in a row');
    expect(e.message).toContain('trimmed copy line 12: tool-use-without-result');
    expect(e.message).not.toContain('open-tool-use');
    expect(e.hint).toContain('ctxvm session validate /s/a.jsonl');
    expect(`${e.message} ${e.hint}`).not.toMatch(/report|bug/);
  });

  it('a valid input: E_INTERNAL that says it is a bug in ctxvm and names the file', () => {
    const e = invalidOutputError({ input: '/s/b.jsonl', output: 'branch', inputFindings: [warning], added: [added] });
    expect(e.code).toBe('E_INTERNAL');
    expect(e.message).toMatch(/^this is a bug in ctxvm: \/s\/b\.jsonl is a valid session, but its branch would also have:\n  branch line 12: tool-use-without-result/);
    expect(e.hint).toContain('please report it with /s/b.jsonl');
  });

  it('lists at most ten findings of each side', () => {
    const many = Array.from({ length: 14 }, (_, i) => ({ ...roleOrder, line: i + 1 }));
    const e = invalidOutputError({ input: 'x.jsonl', output: 'trimmed copy', inputFindings: many, added: many });
    expect(e.message.match(/x\.jsonl:\d+: role-order/g)).toHaveLength(10);
    expect(e.message.match(/… and 4 more/g)).toHaveLength(2);
  });
});
