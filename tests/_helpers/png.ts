// A small PNG reader for checking screenshots: size, and how much the pixels vary (a blank or
// single-colour page has a variance near zero). 8-bit RGB/RGBA, non-interlaced (what Chromium
// writes).

/** A decoded PNG's facts. */
export interface PngFacts {
  width: number;
  height: number;
  /** Variance of the grey level (0-255) over all pixels. */
  variance: number;
  /** Distinct colours among the pixels (capped at 10000). */
  colours: number;
}

const SIGNATURE = [137, 80, 78, 71, 13, 10, 26, 10];

/** Decodes `bytes` (throws on anything that is not a PNG this reader handles). */
export async function readPng(bytes: Uint8Array<ArrayBuffer>): Promise<PngFacts> {
  if (!SIGNATURE.every((b, i) => bytes[i] === b)) throw new Error("not a PNG (bad signature)");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let width = 0, height = 0, channels = 0;
  const idat: Uint8Array<ArrayBuffer>[] = [];
  for (let at = 8; at < bytes.length;) {
    const length = view.getUint32(at);
    const type = new TextDecoder().decode(bytes.subarray(at + 4, at + 8));
    const data = bytes.subarray(at + 8, at + 8 + length);
    if (type === "IHDR") {
      width = view.getUint32(at + 8);
      height = view.getUint32(at + 12);
      const [depth, colourType, , , interlace] = data.subarray(8, 13);
      if (depth !== 8 || interlace !== 0 || (colourType !== 2 && colourType !== 6)) {
        throw new Error(`unsupported PNG: depth ${depth}, colour type ${colourType}`);
      }
      channels = colourType === 6 ? 4 : 3;
    } else if (type === "IDAT") idat.push(data);
    else if (type === "IEND") break;
    at += 12 + length;
  }
  if (width === 0 || idat.length === 0) throw new Error("PNG without IHDR or IDAT");
  const inflated = new Uint8Array(
    await new Response(new Blob(idat).stream().pipeThrough(new DecompressionStream("deflate")))
      .arrayBuffer(),
  );
  const stride = width * channels;
  if (inflated.length !== height * (stride + 1)) throw new Error("PNG data has the wrong length");
  const pixels = new Uint8Array(height * stride);
  for (let y = 0; y < height; y++) unfilter(inflated, pixels, y, stride, channels);
  let sum = 0, sumSq = 0;
  const colours = new Set<number>();
  for (let i = 0; i < pixels.length; i += channels) {
    const grey = (pixels[i] + pixels[i + 1] + pixels[i + 2]) / 3;
    sum += grey;
    sumSq += grey * grey;
    if (colours.size < 10000) colours.add((pixels[i] << 16) | (pixels[i + 1] << 8) | pixels[i + 2]);
  }
  const n = width * height;
  return { width, height, variance: sumSq / n - (sum / n) ** 2, colours: colours.size };
}

function unfilter(src: Uint8Array, out: Uint8Array, y: number, stride: number, bpp: number) {
  const filter = src[y * (stride + 1)];
  const line = src.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
  const row = y * stride;
  for (let x = 0; x < stride; x++) {
    const a = x >= bpp ? out[row + x - bpp] : 0;
    const b = y > 0 ? out[row - stride + x] : 0;
    const c = x >= bpp && y > 0 ? out[row - stride + x - bpp] : 0;
    let predicted = 0;
    if (filter === 1) predicted = a;
    else if (filter === 2) predicted = b;
    else if (filter === 3) predicted = (a + b) >> 1;
    else if (filter === 4) {
      const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
      predicted = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
    } else if (filter !== 0) throw new Error(`bad PNG filter ${filter}`);
    out[row + x] = (line[x] + predicted) & 0xff;
  }
}
