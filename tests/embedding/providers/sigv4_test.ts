// Checks the SigV4 signer against AWS's published examples (the sigv4 test suite's
// "get-vanilla"/"post-vanilla" and the signing-key example of the SigV4 documentation).
import {
  canonicalPath,
  signAwsRequest,
  signingKeyHex,
  uriEncode,
} from "../../../src/embedding/providers/_sigv4.ts";
import { assertEquals } from "../../_assert.ts";

const CREDENTIALS = {
  accessKeyId: "AKIDEXAMPLE",
  secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
};
const DATE = new Date(Date.UTC(2015, 7, 30, 12, 36, 0));

Deno.test("signingKeyHex() matches AWS's documented signing key example", async () => {
  assertEquals(
    await signingKeyHex(CREDENTIALS.secretAccessKey, "20150830", "us-east-1", "iam"),
    "c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9",
  );
});

Deno.test("signAwsRequest() matches the get-vanilla and post-vanilla vectors of the SigV4 test suite", async () => {
  const base = {
    url: "https://example.amazonaws.com/",
    headers: {},
    body: "",
    region: "us-east-1",
    service: "service",
    credentials: CREDENTIALS,
    date: DATE,
  };
  const get = await signAwsRequest({ ...base, method: "GET" });
  assertEquals(
    get.authorization,
    "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, " +
      "SignedHeaders=host;x-amz-date, " +
      "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
  );
  assertEquals(get["x-amz-date"], "20150830T123600Z");
  const post = await signAwsRequest({ ...base, method: "POST" });
  assertEquals(
    post.authorization.split("Signature=")[1],
    "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b",
  );
});

Deno.test("signAwsRequest() adds x-amz-security-token and signs it when a session token is given", async () => {
  const headers = await signAwsRequest({
    method: "POST",
    url: "https://example.amazonaws.com/",
    headers: { "Content-Type": "application/json" },
    body: "{}",
    region: "us-east-1",
    service: "bedrock",
    credentials: { ...CREDENTIALS, sessionToken: "token-1" },
    date: DATE,
  });
  assertEquals(headers["x-amz-security-token"], "token-1");
  assertEquals(headers["content-type"], "application/json");
  assertEquals(
    headers.authorization.includes(
      "SignedHeaders=content-type;host;x-amz-date;x-amz-security-token",
    ),
    true,
  );
});

Deno.test("canonicalPath() encodes each path segment a second time (model ids with ':')", () => {
  assertEquals(uriEncode("amazon.titan-embed-text-v2:0"), "amazon.titan-embed-text-v2%3A0");
  assertEquals(
    canonicalPath("/model/amazon.titan-embed-text-v2%3A0/invoke"),
    "/model/amazon.titan-embed-text-v2%253A0/invoke",
  );
  assertEquals(canonicalPath(""), "/");
  assertEquals(uriEncode("a b~é"), "a%20b~%C3%A9");
});
