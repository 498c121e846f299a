/**
 * The sections of `ctxvm demo`, in order (see section.ts). A section is appended here: it has a
 * name (its key in `--json`), a title, `run` returning a result object, and `render`.
 */
import type { DemoSection } from './section.js';
import { sessionsSection } from './sessions-section.js';
import { textSection } from './text-demo.js';
import { memorySection } from './memory-section.js';

/** Every section, in the order they run and print. */
export const DEMO_SECTIONS: readonly DemoSection[] = [textSection, sessionsSection, memorySection];
