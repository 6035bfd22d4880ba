/**
 * Which literal IP addresses a tenant's request may never reach: loopback, unspecified, private
 * (RFC 1918, ULA), link-local (cloud metadata lives there), CGNAT, multicast, broadcast,
 * documentation, benchmarking and reserved ranges — and the same behind IPv6 forms that embed an
 * IPv4 address (IPv4-mapped and -compatible, NAT64, 6to4) or tunnel to one (Teredo).
 */
export function parseIpv4(host: string): number[] | null {
  const parts = host.split(".");
  if (parts.length !== 4 || parts.some((p) => !/^(0|[1-9]\d{0,2})$/.test(p))) return null;
  const nums = parts.map(Number);
  return nums.every((n) => n <= 255) ? nums : null;
}

/** Eight 16-bit groups, or null when this is not an IPv6 literal. */
export function parseIpv6(host: string): number[] | null {
  let text = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (!text.includes(":") || text.includes("%")) return null;
  const dotted = text.match(/^(.*:)(\d+\.\d+\.\d+\.\d+)$/);
  if (dotted) {
    const v4 = parseIpv4(dotted[2] as string);
    if (!v4) return null;
    text = `${dotted[1]}${((v4[0] as number) * 256 + (v4[1] as number)).toString(16)}:${((v4[2] as number) * 256 + (v4[3] as number)).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const groups = (s: string) => (s === "" ? [] : s.split(":"));
  const head = groups(halves[0] as string);
  const tail = halves.length === 2 ? groups(halves[1] as string) : [];
  const fill = 8 - head.length - tail.length;
  if ((halves.length === 1 && fill !== 0) || fill < 0 || (halves.length === 2 && fill < 1)) return null;
  const all = [...head, ...Array<string>(halves.length === 2 ? fill : 0).fill("0"), ...tail];
  if (all.some((g) => !/^[0-9a-f]{1,4}$/.test(g))) return null;
  return all.map((g) => parseInt(g, 16));
}

function blockedIpv4([a, b, c]: number[]): string | null {
  const [x, y, z] = [a as number, b as number, c as number];
  if (x === 0) return "an unspecified (0.0.0.0/8) address";
  if (x === 127) return "a loopback address";
  if (x === 10 || (x === 172 && y >= 16 && y <= 31) || (x === 192 && y === 168)) return "a private address";
  if (x === 169 && y === 254) return "a link-local address";
  if (x === 100 && y >= 64 && y <= 127) return "a carrier-grade NAT address";
  if (x >= 224 && x <= 239) return "a multicast address";
  if (x >= 240) return "a reserved or broadcast address";
  if (x === 192 && y === 0 && (z === 0 || z === 2)) return "a reserved address";
  if ((x === 198 && (y === 18 || y === 19)) || (x === 198 && y === 51 && z === 100) || (x === 203 && y === 0 && z === 113)) {
    return "a reserved address";
  }
  if (x === 192 && y === 88 && z === 99) return "a reserved (6to4 relay) address";
  return null;
}

function embeddedIpv4(hi: number, lo: number): number[] {
  return [hi >> 8, hi & 255, lo >> 8, lo & 255];
}

function blockedIpv6(g: number[]): string | null {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = g as [number, number, number, number, number, number, number, number];
  const zeroPrefix = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (zeroPrefix && g5 === 0 && g6 === 0 && g7 <= 1) return g7 === 1 ? "a loopback address" : "an unspecified address";
  if (zeroPrefix && (g5 === 0xffff || g5 === 0)) return blockedIpv4(embeddedIpv4(g6, g7)) ?? (g5 === 0 ? "an IPv4-compatible address" : null);
  if (g0 === 0x64 && g1 === 0xff9b) return blockedIpv4(embeddedIpv4(g6, g7)) ?? null; // NAT64
  if (g0 === 0x2002) return blockedIpv4(embeddedIpv4(g1, g2)) ?? null; // 6to4
  if (g0 === 0x2001 && g1 === 0) return "a Teredo address";
  if (g0 === 0x2001 && g1 === 0xdb8) return "a documentation address";
  if ((g0 & 0xfe00) === 0xfc00) return "a private (unique local) address";
  if ((g0 & 0xffc0) === 0xfe80 || (g0 & 0xffc0) === 0xfec0) return "a link-local address";
  if ((g0 & 0xff00) === 0xff00) return "a multicast address";
  if (g0 === 0x100 && g1 === 0 && g2 === 0 && g3 === 0) return "a discard-only address";
  return null;
}

/** Why this literal address may not be reached, or null (also null when `host` is not an IP literal). */
export function blockedAddress(host: string): string | null {
  const v4 = parseIpv4(host);
  if (v4) return blockedIpv4(v4);
  const v6 = parseIpv6(host);
  return v6 ? blockedIpv6(v6) : null;
}

export const isIpLiteral = (host: string): boolean => parseIpv4(host) !== null || parseIpv6(host) !== null;
