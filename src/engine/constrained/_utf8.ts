// UTF-8 byte rules shared by the grammar's byte-level terminals.

/**
 * Whether `b`, the byte after a lead byte, keeps a sequence well formed (Unicode's table of
 * well-formed byte sequences): no overlong forms, surrogates or code points above U+10FFFF.
 * `pending` is how many continuation bytes the lead asked for (2 or 3), `lead` the lead byte's
 * payload bits.
 */
export function wellFormedSecondByte(pending: number, lead: number, b: number): boolean {
  if (pending === 2) return !((lead === 0 && b < 0xa0) || (lead === 0xd && b > 0x9f));
  if (pending === 3) return !((lead === 0 && b < 0x90) || (lead === 4 && b > 0x8f));
  return true;
}
