/** The message extractor of the memory engine: rules (zh, en), an optional LLM extractor, helpers. */
export { extract, createRuleExtractor, validateExtractOptions, MAX_ANALYZED_CHARS } from './extract.js';
export type { Extractor, SyncExtractor, AsyncExtractor } from './extractor.js';
export { createLlmExtractor, buildExtractionPrompt, parseLlmReply } from './llm-extractor.js';
export type { LlmExtractorOptions, LlmFallbackReason, LlmReplyResult } from './llm-extractor.js';
export { llmReplySchema } from './llm-schema.js';
export { similarity, rankMatches, type FuzzyMatch } from './fuzzy.js';
export { detectLanguage, type RuleLanguage } from './language.js';
export { CLARIFY_BELOW } from './task-fields.js';
