// Finds where JSON text stops being valid. V8's JSON.parse messages do not always carry a position
// ("Unexpected token 'o', "..." is not valid JSON"), and fromJson promises one.

/** Index of the first character that makes `text` invalid JSON, or -1 when it is valid. */
export function findJsonErrorPosition(text: string): number {
  let i = 0;
  const stop = (): never => {
    throw new JsonStop(i);
  };
  const space = (): void => {
    while (
      i < text.length &&
      (text[i] === " " || text[i] === "\t" || text[i] === "\n" || text[i] === "\r")
    ) i++;
  };
  const string = (): void => {
    i++; // opening quote
    while (true) {
      if (i >= text.length || text.charCodeAt(i) < 0x20) stop();
      const ch = text[i];
      if (ch === '"') {
        i++;
        return;
      }
      if (ch !== "\\") {
        i++;
        continue;
      }
      const next = text[i + 1];
      if (next !== undefined && '"\\/bfnrt'.includes(next)) i += 2;
      else if (next === "u" && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) i += 6;
      else {
        i++;
        stop();
      }
    }
  };
  const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
  const value = (): void => {
    space();
    const ch = text[i];
    if (ch === "{" || ch === "[") {
      const close = ch === "{" ? "}" : "]";
      i++;
      space();
      if (text[i] === close) {
        i++;
        return;
      }
      while (true) {
        if (ch === "{") {
          space();
          if (text[i] !== '"') stop();
          string();
          space();
          if (text[i] !== ":") stop();
          i++;
        }
        value();
        space();
        if (text[i] === ",") i++;
        else if (text[i] === close) {
          i++;
          return;
        } else stop();
      }
    }
    if (ch === '"') return string();
    for (const literal of ["true", "false", "null"]) {
      if (text.startsWith(literal, i)) {
        i += literal.length;
        return;
      }
    }
    NUMBER.lastIndex = i;
    const match = NUMBER.exec(text);
    if (match === null || match[0] === "" || match[0] === "-") stop();
    i = NUMBER.lastIndex;
  };
  try {
    value();
    space();
    if (i < text.length) stop();
    return -1;
  } catch (err) {
    if (err instanceof JsonStop) return err.at;
    if (err instanceof RangeError) return -1; // nested too deep to scan here
    throw err;
  }
}

class JsonStop {
  constructor(readonly at: number) {}
}
