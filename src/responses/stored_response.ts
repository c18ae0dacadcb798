/**
 * One stored response as the response store keeps it (as JSON: a file, a memory entry or a state
 * store row), who owns it, and how such JSON is read back.
 *
 * @module
 */
import type { WireChatMessage } from "../protocol/chat_request.ts";
import type { ResponseInputItem } from "../protocol/responses_input_items.ts";
import type { ResponseObject } from "../protocol/responses_object.ts";

/** One stored response. */
export interface StoredResponse {
  response: ResponseObject;
  /**
   * This response's own input as items with ids (not the earlier turns of a chain, as OpenAI's
   * `input_items`); absent in files stored before it was kept, which list no items.
   */
  input?: ResponseInputItem[];
  /**
   * Chat messages: this response's own turn (input and output) when `previousResponseId` is
   * present; the whole conversation up to and including its output in entries without it (stored
   * before chains were kept turn by turn).
   */
  messages: WireChatMessage[];
  /**
   * The response this one continues (null for the first of a chain); its presence marks
   * `messages` as this turn only.
   */
  previousResponseId?: string | null;
  /**
   * Who stored it, in entries kept in a folder or in memory (absent: {@link SHARED_OWNER}); the
   * state store keeps it in a column instead.
   */
  owner?: string;
}

/**
 * The owner of responses stored without a managed key: by callers of a gateway or engine that
 * needs no key, and by the gateway's static keys (SVC_CHAT_API_KEY, SVC_ADMIN_API_KEY). Entries
 * stored before owners were kept are this owner's.
 */
export const SHARED_OWNER = "";

/** The owner written in `entry` (none, or no entry: {@link SHARED_OWNER}). */
export function ownerOf(entry: StoredResponse | undefined): string {
  return typeof entry?.owner === "string" ? entry.owner : SHARED_OWNER;
}

/** The stored response `id` in `text`, or undefined when `text` is not one (corrupt, other id). */
export function parseStoredResponse(text: string, id: string): StoredResponse | undefined {
  try {
    const entry = JSON.parse(text) as StoredResponse;
    if (entry?.response?.id === id && Array.isArray(entry.messages)) return entry;
  } catch {
    // not JSON
  }
  return undefined;
}
