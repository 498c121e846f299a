/** processMessage's result as JSON for the CLI (`chat --json`) and the HTTP API: the rendered context text is left out. */
import type { ProcessResult } from './manager.js';

export function processResultJson(r: ProcessResult) {
  return {
    response: r.response,
    intent: r.extraction.intent,
    confidence: r.extraction.confidence,
    clarification: r.clarification,
    applied: r.applied,
    turnIds: r.turnIds,
    resumed: r.resumed,
    context: {
      tokens: r.context.tokens,
      budgetTokens: r.context.budgetTokens,
      memoryVersion: r.context.memoryVersion,
      cached: r.context.cached,
      layers: r.context.layers.map((l) => ({ name: l.name, tokens: l.tokens, items: l.items.length })),
      dropped: r.context.dropped.length,
    },
    metrics: { latencyMs: r.metrics.latencyMs, contextTokens: r.metrics.contextTokens, fullHistoryTokens: r.metrics.fullHistoryTokens, rebuildCacheHit: r.metrics.rebuildCacheHit },
  };
}
