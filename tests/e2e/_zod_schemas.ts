// The demo schemas of _structured_stack.ts written with zod, as LangChain and AI SDK users write
// them: bounded strings and enums, so the random-weight model finishes its answers.
import { z } from "zod";

/** A structured answer with bounded fields (zod's JSON Schema matches PERSON_SCHEMA). */
export const Person = z.object({
  name: z.string().min(1).max(16),
  age: z.int().min(0).max(120),
  hobbies: z.array(z.string().max(10)).max(3),
  nickname: z.string().max(8).nullable(),
});

/** Arguments of the weather tool. */
export const Weather = z.object({
  city: z.string().min(1).max(12),
  unit: z.enum(["celsius", "fahrenheit"]),
});

/** Arguments of the time tool. */
export const Time = z.object({ zone: z.string().max(8) });

/** What zod writes as tuples, records and `multipleOf` (bounded, so the demo model finishes). */
export const Reading = z.object({
  point: z.tuple([z.number().min(-1).max(1), z.int().min(0).max(9)]),
  levels: z.record(z.enum(["low", "high"]), z.int().min(0).max(9)),
  step: z.number().multipleOf(0.5).min(0).max(10),
});
