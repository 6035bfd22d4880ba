/** The destination policy and provider error summaries, as pure functions. */
import { describe, expect, it } from "vitest";
import { APIError } from "openai";
import { blockedAddress } from "../../src/net/addresses";
import { destinationProblem } from "../../src/net/destination";
import { classify, describeFailure, ProviderFailure, redact } from "../../src/llm/errors";

const prod = { ENVIRONMENT: "production" };

describe("destination policy (production)", () => {
  it.each([
    "https://127.0.0.1/",
    "https://127.1/",
    "https://2130706433/",
    "https://0x7f000001/",
    "https://0177.0.0.1/",
    "https://0.0.0.0/",
    "https://[::]/",
    "https://[::1]/",
    "https://[::ffff:127.0.0.1]/",
    "https://[::ffff:7f00:1]/",
    "https://[64:ff9b::a9fe:a9fe]/",
    "https://[2002:a9fe:a9fe::1]/",
    "https://[fe80::1]/",
    "https://[fd12::1]/",
    "https://[ff02::1]/",
    "https://224.0.0.1/",
    "https://255.255.255.255/",
    "https://100.64.0.1/",
    "https://169.254.169.254/",
    "https://10.0.0.1/",
    "https://172.20.0.1/",
    "https://192.168.0.1/",
    "https://localhost/",
    "https://api.localhost/",
    "https://localhost./",
    "https://example.com./",
    "https://printer.local/",
    "https://metadata.google.internal/",
    "http://api.example.com/",
  ])("refuses %s", (url) => {
    expect(destinationProblem(prod, url)).not.toBeNull();
  });

  it.each(["https://api.openai.com/v1", "https://8.8.8.8/", "https://[2606:4700::1111]/", "https://172.32.0.1/"])("allows %s", (url) => {
    expect(destinationProblem(prod, url)).toBeNull();
  });

  it("takes an allowlist (host, host:port, *.suffix) and a development switch", () => {
    expect(destinationProblem({ ...prod, DESTINATION_ALLOWLIST: "10.0.0.5:8443" }, "https://10.0.0.5:8443/v1")).toBeNull();
    expect(destinationProblem({ ...prod, DESTINATION_ALLOWLIST: "10.0.0.5:8443" }, "https://10.0.0.5:9000/v1")).not.toBeNull();
    expect(destinationProblem({ ...prod, DESTINATION_ALLOWLIST: "*.corp.example" }, "https://llm.corp.example/v1")).toBeNull();
    expect(destinationProblem({ ENVIRONMENT: "development" }, "http://127.0.0.1:8080/v1")).toBeNull();
    expect(destinationProblem({ ENVIRONMENT: "development", ALLOW_PRIVATE_DESTINATIONS: "false" }, "http://127.0.0.1:8080/")).toMatch(/loopback/);
    expect(destinationProblem(prod, `https://example.com/${"x".repeat(2_100)}`)).toMatch(/2048/);
  });

  it("classifies embedded IPv4 addresses", () => {
    expect(blockedAddress("::ffff:8.8.8.8")).toBeNull();
    expect(blockedAddress("::ffff:10.0.0.1")).toMatch(/private/);
    expect(blockedAddress("2001:0:4136:e378::1")).toMatch(/Teredo/);
  });
});

describe("provider errors", () => {
  it("keep the status and the provider's own message, redacted and capped, never the raw body", () => {
    const body = { error: { message: "Incorrect API key provided: sk-proj-abcdefghijklmnop1234. Bearer abc.def", type: "invalid_request_error" } };
    const err = APIError.generate(401, body, undefined, new Headers());
    const text = describeFailure(err);
    expect(text).toMatch(/^provider returned 401: Incorrect API key provided/);
    expect(text).not.toMatch(/sk-proj|abc\.def/);
    const long = APIError.generate(500, { error: { message: "x ".repeat(2_000) } }, undefined, new Headers());
    expect(describeFailure(long).length).toBeLessThan(400);
    const raw = APIError.generate(502, undefined, "<html>upstream secret page sk-live-1234567890abcdef</html>", new Headers());
    expect(describeFailure(raw)).toBe("provider returned 502");
  });

  it("redacts keys, tokens and credentials in URLs", () => {
    expect(redact("key=abcdef123456 and https://user:pw@host/x and whsec_abcdefgh and 0123456789abcdef0123456789abcdef01")).not.toMatch(
      /abcdef123456|pw@|whsec_abcdefgh|0123456789abcdef0123456789/,
    );
  });

  it("a wrong-shape answer is permanent", () => {
    expect(classify(new ProviderFailure("the provider's answer is not a chat completion", "permanent"))).toBe("permanent");
    expect(classify(new TypeError("fetch failed"))).toBe("transient");
  });
});
