/**
 * Finds the stubs in one line of a trimmed session (either agent) and the reference each pages
 * in by: a tool result's by the id of its call, a tool input field's by `<id>/<field>`, anything
 * else by the `ctxvm:` reference it prints. For listing what a trimmed file paged out.
 */
import { isStub, STUB_REF } from './stub.js';

/** A stub found in a line. */
export interface FoundStub {
  /** What `pageIn` takes to bring the payload back. */
  ref: string;
  /** The stub's text. */
  text: string;
  /** Where in the line it is, as a JSON pointer. */
  pointer: string;
}

const ORPHAN_ID = /tool_use_id (\S+?)\]?$/m;

function packRefs(text: string, pointer: string, out: FoundStub[]): boolean {
  const m = STUB_REF.exec(text);
  if (!m) return false;
  out.push({ ref: m[1]!, text, pointer });
  return true;
}

/** The stubs of a parsed line, with their page-in references. */
export function findStubs(line: unknown): FoundStub[] {
  const out: FoundStub[] = [];
  if (!line || typeof line !== 'object') return out;
  const v = line as Record<string, unknown>;
  const message = v.message as { content?: unknown } | undefined;
  if (message && Array.isArray(message.content)) {
    (message.content as Record<string, unknown>[]).forEach((b, i) => {
      if (!b || typeof b !== 'object') return;
      const at = `/message/content/${i}`;
      if (b.type === 'tool_result') {
        const c = b.content;
        if (isStub(c)) out.push({ ref: String(b.tool_use_id), text: c as string, pointer: `${at}/content` });
        else if (Array.isArray(c)) {
          (c as Record<string, unknown>[]).forEach((inner, j) => {
            const t = inner?.text;
            if (!isStub(t)) return;
            if (!packRefs(t as string, `${at}/content/${j}`, out) && c.length === 1) out.push({ ref: String(b.tool_use_id), text: t as string, pointer: `${at}/content/${j}` });
          });
        }
      } else if (b.type === 'tool_use' && b.input && typeof b.input === 'object') {
        for (const [k, val] of Object.entries(b.input)) if (isStub(val)) out.push({ ref: `${String(b.id)}/${k}`, text: val as string, pointer: `${at}/input/${k}` });
      } else if (b.type === 'text' && isStub(b.text)) {
        const t = b.text as string;
        if (!packRefs(t, `${at}/text`, out)) {
          const orphan = ORPHAN_ID.exec(t);
          if (orphan) out.push({ ref: orphan[1]!, text: t, pointer: `${at}/text` });
        }
      }
    });
  }
  const payload = v.payload as Record<string, unknown> | undefined;
  if (payload && typeof payload === 'object') {
    const id = typeof payload.call_id === 'string' ? payload.call_id : undefined;
    const output = payload.output;
    if (id && isStub(output)) out.push({ ref: id, text: output as string, pointer: '/payload/output' });
    if (Array.isArray(payload.content)) {
      (payload.content as Record<string, unknown>[]).forEach((b, i) => {
        if (isStub(b?.text)) packRefs(b.text as string, `/payload/content/${i}`, out);
      });
    }
    if (Array.isArray(output)) {
      (output as Record<string, unknown>[]).forEach((b, i) => {
        if (isStub(b?.text)) packRefs(b.text as string, `/payload/output/${i}`, out);
      });
    }
    if (id && payload.type === 'custom_tool_call' && isStub(payload.input)) out.push({ ref: `${id}/input`, text: payload.input as string, pointer: '/payload/input' });
    if (typeof payload.arguments === 'string' && payload.arguments.includes('[ctxvm paged out')) {
      try {
        const args = JSON.parse(payload.arguments) as Record<string, unknown>;
        for (const [k, val] of Object.entries(args)) {
          if (isStub(val) && id) out.push({ ref: `${id}/${k}`, text: val as string, pointer: `/payload/arguments:${k}` });
          else if (typeof val === 'string' && val.includes('[ctxvm paged out')) packRefs(val, `/payload/arguments:${k}`, out);
          else if (Array.isArray(val)) for (const s of val) if (typeof s === 'string' && s.includes('[ctxvm paged out')) packRefs(s, `/payload/arguments:${k}`, out);
        }
      } catch {
        // not JSON arguments
      }
    }
    const action = payload.action as { command?: unknown } | undefined;
    if (action && typeof action === 'object') {
      const cmd = action.command;
      for (const s of Array.isArray(cmd) ? cmd : [cmd]) if (typeof s === 'string' && s.includes('[ctxvm paged out')) packRefs(s, '/payload/action/command', out);
    }
  }
  return out;
}
