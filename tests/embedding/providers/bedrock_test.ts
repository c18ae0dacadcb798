import { createHash, createHmac } from "node:crypto";
import {
  AuthenticationError,
  ConfigurationError,
  ValidationError,
} from "../../../src/core/errors.ts";
import { createBedrockEmbedder } from "../../../src/embedding/providers/bedrock.ts";
import { assert, assertEquals, assertRejects, assertThrows } from "../../_assert.ts";
import { fakeVector, jsonResponse, type ReceivedRequest, startStandIn } from "../_stand_in.ts";

const SECRET = "stand-in-secret-key/1234567890";
const AUTH =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/;

/** Recomputes the SigV4 signature of a received request independently (node:crypto). */
function expectedSignature(r: ReceivedRequest, day: string, region: string, signed: string[]) {
  const sha = (s: string) => createHash("sha256").update(s, "utf8").digest("hex");
  const mac = (key: Buffer | string, s: string) =>
    createHmac("sha256", key).update(s, "utf8").digest();
  const encode = (s: string) =>
    encodeURIComponent(s).replace(
      /[!'()*]/g,
      (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
    );
  const canonical = [
    r.method,
    r.path.split("/").map(encode).join("/"),
    "",
    signed.map((h) => `${h}:${r.headers.get(h)!.trim()}\n`).join(""),
    signed.join(";"),
    sha(r.body),
  ].join("\n");
  const amzDate = r.headers.get("x-amz-date")!;
  const scope = `${day}/${region}/bedrock/aws4_request`;
  const toSign = ["AWS4-HMAC-SHA256", amzDate, scope, sha(canonical)].join("\n");
  let key = mac(`AWS4${SECRET}`, day);
  for (const part of [region, "bedrock", "aws4_request"]) key = mac(key, part);
  return createHmac("sha256", key).update(toSign, "utf8").digest("hex");
}

/** A Bedrock runtime stand-in: checks the path, the SigV4 signature and the Titan body. */
function bedrockStandIn(r: ReceivedRequest): Response {
  const match = /^\/model\/([^/]+)\/invoke$/.exec(r.path);
  if (r.method !== "POST" || !match) {
    return jsonResponse({ message: "UnknownOperationException" }, 404);
  }
  const auth = AUTH.exec(r.headers.get("authorization") ?? "");
  if (!auth) return jsonResponse({ message: "Authorization header malformed" }, 403);
  const [, keyId, day, region, service, signedText, signature] = auth;
  const signed = signedText.split(";");
  const problems = [
    keyId !== "AKIDSTANDIN" && "unknown access key",
    service !== "bedrock" && "wrong service",
    !signed.includes("host") || !signed.includes("x-amz-date") ? "host/x-amz-date unsigned" : false,
    r.headers.get("x-amz-date")?.slice(0, 8) !== day && "date mismatch",
    Math.abs(
        Date.parse(r.headers.get("x-amz-date")!.replace(
          /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/,
          "$1-$2-$3T$4:$5:$6Z",
        )) - Date.now(),
      ) > 5 * 60_000 && "request time too skewed",
    expectedSignature(r, day, region, signed) !== signature &&
    "The request signature we calculated does not match the signature you provided",
  ].filter(Boolean);
  if (problems.length > 0) return jsonResponse({ message: problems.join("; ") }, 403);
  if (typeof r.json?.inputText !== "string") {
    return jsonResponse({ message: "inputText missing" }, 400);
  }
  const modelId = decodeURIComponent(match[1]);
  const size = r.json.dimensions ?? (modelId.endsWith("v1") ? 1536 : 1024);
  return jsonResponse({ embedding: fakeVector(r.json.inputText, size), inputTextTokenCount: 3 });
}

const ENV = {
  AWS_ACCESS_KEY_ID: "AKIDSTANDIN",
  AWS_SECRET_ACCESS_KEY: SECRET,
  AWS_REGION: "eu-central-1",
};

Deno.test("createBedrockEmbedder() sends SigV4-signed InvokeModel requests the stand-in verifies", async () => {
  const server = startStandIn(bedrockStandIn);
  try {
    const embedder = createBedrockEmbedder({ baseUrl: server.url, env: ENV, dimensions: 256 });
    const texts = ["first", "second text", "third"];
    assertEquals(await embedder.embedBatch(texts), texts.map((t) => fakeVector(t, 256)));
    assertEquals(server.requests.length, 3); // Titan takes one text per request
    const req = server.requests[0];
    // The model id's ':' is percent-encoded once on the wire.
    assertEquals(req.path, "/model/amazon.titan-embed-text-v2%3A0/invoke");
    assertEquals(req.headers.get("content-type"), "application/json");
    assertEquals(JSON.parse(req.body).normalize, true);
    assert(req.headers.get("authorization")!.includes("/eu-central-1/bedrock/aws4_request"));
    assertEquals(
      server.requests.map((r) => r.json).sort((a, b) => a.inputText.localeCompare(b.inputText)),
      texts.map((inputText) => ({ inputText, dimensions: 256, normalize: true })),
    );
  } finally {
    await server.close();
  }
});

Deno.test("createBedrockEmbedder() sends only inputText to Titan v1", async () => {
  const server = startStandIn(bedrockStandIn);
  try {
    const embedder = createBedrockEmbedder({
      baseUrl: server.url,
      env: ENV,
      model: "amazon.titan-embed-text-v1",
    });
    assertEquals((await embedder.embed("hi")).length, 1536);
    assertEquals(server.requests[0].json, { inputText: "hi" });
    assertThrows(
      () =>
        createBedrockEmbedder({ env: ENV, model: "amazon.titan-embed-text-v1", dimensions: 256 }),
      ValidationError,
    );
  } finally {
    await server.close();
  }
});

Deno.test("createBedrockEmbedder() turns a signature rejection into AuthenticationError with AWS's message", async () => {
  const server = startStandIn(bedrockStandIn);
  try {
    const embedder = createBedrockEmbedder({
      baseUrl: server.url,
      env: { ...ENV, AWS_SECRET_ACCESS_KEY: "a-different-secret" },
    });
    const err = await assertRejects(
      () => embedder.embed("x"),
      AuthenticationError,
      "does not match",
    );
    assert(err.message.includes("AWS_ACCESS_KEY_ID"));
  } finally {
    await server.close();
  }
});

Deno.test("createBedrockEmbedder() without credentials or region names the variable to set", () => {
  assertThrows(() => createBedrockEmbedder({ env: {} }), ConfigurationError, "AWS_ACCESS_KEY_ID");
  assertThrows(
    () => createBedrockEmbedder({ env: { AWS_ACCESS_KEY_ID: "a" } }),
    ConfigurationError,
    "AWS_SECRET_ACCESS_KEY",
  );
  assertThrows(
    () => createBedrockEmbedder({ env: { AWS_ACCESS_KEY_ID: "a", AWS_SECRET_ACCESS_KEY: "b" } }),
    ConfigurationError,
    "AWS_REGION",
  );
});

Deno.test("createBedrockEmbedder() defaults to the regional bedrock-runtime endpoint", async () => {
  let seen = "";
  const embedder = createBedrockEmbedder({
    env: { ...ENV, AWS_REGION: undefined, AWS_DEFAULT_REGION: "us-west-2" },
    fetch: (input) => {
      seen = String(input);
      return Promise.resolve(jsonResponse({ embedding: [1, 0] }));
    },
  });
  await embedder.embed("x");
  assertEquals(
    seen,
    "https://bedrock-runtime.us-west-2.amazonaws.com/model/amazon.titan-embed-text-v2%3A0/invoke",
  );
});
