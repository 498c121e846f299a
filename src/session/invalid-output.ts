/**
 * The refusal of a trim or branch whose output would have errors its input did not. When the
 * input was already invalid, its own errors are the likely cause: the message names them with
 * file and line and says how to see them all; only when the input was valid is it a bug in ctxvm.
 */
import { CtxvmError } from '../errors.js';
import type { ValidationFinding } from './driver.js';

const MAX_LISTED = 10;

const listed = (prefix: string, findings: readonly ValidationFinding[]) =>
  findings.slice(0, MAX_LISTED).map((f) => `${prefix}${f.line}: ${f.rule}: ${f.message}`).join('\n  ') + (findings.length > MAX_LISTED ? `\n  … and ${findings.length - MAX_LISTED} more` : '');

/** Options of `invalidOutputError`. */
export interface InvalidOutputOptions {
  /** The input file (named in the message). */
  input: string;
  /** What the output is, for the message: "trimmed copy", "branch". */
  output: string;
  /** The input's findings. */
  inputFindings: readonly ValidationFinding[];
  /** Errors of the output the input did not have (their lines are the output's). */
  added: readonly ValidationFinding[];
  /** Extra advice for an invalid input (e.g. "try another --at point"). */
  hint?: string;
}

/** E_INVALID naming the input's own errors when it had any, else E_INTERNAL (a bug in ctxvm). */
export function invalidOutputError(options: InvalidOutputOptions): CtxvmError {
  const { input, output, added } = options;
  const inputErrors = options.inputFindings.filter((f) => f.severity === 'error');
  const wouldHave = `its ${output} would also have:\n  ${listed(`${output} line `, added)}`;
  if (inputErrors.length > 0) {
    return new CtxvmError('E_INVALID', `${input} is not a valid session, so nothing was written; it has ${inputErrors.length} error(s):\n  ${listed(`${input}:`, inputErrors)}\n${wouldHave}`, {
      hint: `run \`ctxvm session validate ${input}\` to see every problem, and fix those lines (or use the agent's own copy of the session)${options.hint ? `; ${options.hint}` : ''}; the original is untouched`,
      details: { input, inputErrors: inputErrors.length, addedErrors: added.length },
    });
  }
  return new CtxvmError('E_INTERNAL', `this is a bug in ctxvm: ${input} is a valid session, but ${wouldHave}\nso nothing was written`, {
    hint: `the original is untouched; please report it with ${input} (or the lines named above)`,
    details: { input, inputErrors: 0, addedErrors: added.length },
  });
}
