/**
 * Reading a `/rerank` answer on the calling side (the client and the remote embedder share it):
 * each result must name a document of the call and carry a numeric `relevance_score`.
 *
 * @module
 */

/** One scored document of a rerank answer. */
export interface RankedResult {
  /** Position of the document in the call. */
  index: number;
  /** Relevance to the query; higher is more relevant. */
  score: number;
  /** The document's text. */
  document: string;
}

/**
 * The results of a `/rerank` answer (`{results: [{index, relevance_score}]}`), best first, with the
 * texts of the call's `documents`; `null` when the answer has no results list or any result is
 * not a valid index with a numeric score.
 */
export function rankedResultsOf(
  answer: unknown,
  documents: readonly string[],
): RankedResult[] | null {
  const results = (answer as { results?: unknown } | null)?.results;
  if (!Array.isArray(results)) return null;
  const ranked: RankedResult[] = [];
  for (const r of results as { index?: unknown; relevance_score?: unknown }[]) {
    const index = r?.index;
    if (
      !Number.isInteger(index) || (index as number) < 0 || (index as number) >= documents.length ||
      typeof r.relevance_score !== "number"
    ) return null;
    ranked.push({
      index: index as number,
      score: r.relevance_score,
      document: documents[index as number],
    });
  }
  return ranked.sort((a, b) => b.score - a.score);
}
