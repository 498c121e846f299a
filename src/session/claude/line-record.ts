/**
 * The one object an index keeps per line (`LineMeta`, scan.ts): every field in the object itself
 * and its ten yes/no facts in one number. An index of a large file holds one of these per line,
 * so their size is most of what a trim or a lean load holds in memory.
 */
import type { ClaudeLineKind, PreservedSpec } from './types.js';
import type { LineMeta } from './scan.js';

/** The yes/no facts of a line, one bit each. */
export const LineFlag = {
  Sidechain: 1,
  Meta: 2,
  CompactSummary: 4,
  ApiError: 8,
  EmptyContent: 16,
  DisplayOnly: 32,
  Image: 64,
  Prompt: 128,
  ToolUseResult: 256,
  Annotated: 512,
} as const;

/** What a record is made from: `LineMeta`'s fields but its yes/no facts, as `flags`. */
export interface LineFields {
  line: number;
  byteOffset: number;
  byteLength: number;
  kind: ClaudeLineKind;
  flags: number;
  payloadChars: number;
  blockTypes: readonly string[];
  toolUses: LineMeta['toolUses'];
  toolResults: LineMeta['toolResults'];
  otherType: string | undefined;
  subtype: string | undefined;
  uuid: string | undefined;
  parentUuid: string | null | undefined;
  logicalParentUuid: string | null | undefined;
  messageId: string | undefined;
  model: string | undefined;
  role: string | undefined;
  timestamp: string | undefined;
  leafUuid: string | undefined;
  preserved: PreservedSpec | undefined;
}

export class LineRecord implements LineMeta {
  readonly line: number;
  readonly byteOffset: number;
  readonly byteLength: number;
  readonly kind: ClaudeLineKind;
  readonly flags: number;
  readonly payloadChars: number;
  readonly blockTypes: readonly string[];
  readonly toolUses: LineMeta['toolUses'];
  readonly toolResults: LineMeta['toolResults'];
  readonly otherType: string | undefined;
  readonly subtype: string | undefined;
  readonly uuid: string | undefined;
  readonly parentUuid: string | null | undefined;
  readonly logicalParentUuid: string | null | undefined;
  readonly messageId: string | undefined;
  readonly model: string | undefined;
  readonly role: string | undefined;
  readonly timestamp: string | undefined;
  readonly leafUuid: string | undefined;
  readonly preserved: PreservedSpec | undefined;

  constructor(f: LineFields) {
    this.line = f.line;
    this.byteOffset = f.byteOffset;
    this.byteLength = f.byteLength;
    this.kind = f.kind;
    this.flags = f.flags;
    this.payloadChars = f.payloadChars;
    this.blockTypes = f.blockTypes;
    this.toolUses = f.toolUses;
    this.toolResults = f.toolResults;
    this.otherType = f.otherType;
    this.subtype = f.subtype;
    this.uuid = f.uuid;
    this.parentUuid = f.parentUuid;
    this.logicalParentUuid = f.logicalParentUuid;
    this.messageId = f.messageId;
    this.model = f.model;
    this.role = f.role;
    this.timestamp = f.timestamp;
    this.leafUuid = f.leafUuid;
    this.preserved = f.preserved;
  }

  get isSidechain(): boolean {
    return (this.flags & LineFlag.Sidechain) !== 0;
  }
  get isMeta(): boolean {
    return (this.flags & LineFlag.Meta) !== 0;
  }
  get isCompactSummary(): boolean {
    return (this.flags & LineFlag.CompactSummary) !== 0;
  }
  get isApiError(): boolean {
    return (this.flags & LineFlag.ApiError) !== 0;
  }
  get emptyContent(): boolean {
    return (this.flags & LineFlag.EmptyContent) !== 0;
  }
  get isDisplayOnly(): boolean {
    return (this.flags & LineFlag.DisplayOnly) !== 0;
  }
  get hasImage(): boolean {
    return (this.flags & LineFlag.Image) !== 0;
  }
  get isPrompt(): boolean {
    return (this.flags & LineFlag.Prompt) !== 0;
  }
  get hasToolUseResult(): boolean {
    return (this.flags & LineFlag.ToolUseResult) !== 0;
  }
  get annotated(): boolean {
    return (this.flags & LineFlag.Annotated) !== 0;
  }
}
