/**
 * A real DNS server on 127.0.0.1 (dns2, UDP) serving fixture zones for the lookup tests. Unknown names
 * answer NXDOMAIN, known names without the asked type answer NOERROR with no records, `slow.example.net`
 * never answers (timeouts) and `broken.example.net` answers SERVFAIL.
 */
import dns2 from "dns2";

const { Packet } = dns2;
type Rec = Record<string, unknown>;

export const ZONE: Record<
  string,
  Partial<Record<"A" | "AAAA" | "CNAME" | "MX" | "NS" | "TXT" | "SOA", Rec[]>>
> = {
  "example.com": {
    A: [{ address: "93.184.215.14" }],
    AAAA: [{ address: "2606:2800:21f:cb07:6820:80da:af6b:8b2c" }],
    MX: [
      { exchange: "mx2.example.com", priority: 20 },
      { exchange: "mx1.example.com", priority: 10 },
    ],
    NS: [{ ns: "b.ns.example.com" }, { ns: "a.ns.example.com" }],
    TXT: [{ data: "v=spf1 include:_spf.example.com ~all" }, { data: "google-site-verification=abc" }],
    SOA: [
      {
        primary: "a.ns.example.com",
        admin: "hostmaster.example.com",
        serial: 2026112101,
        refresh: 7200,
        retry: 3600,
        expiration: 1209600,
        minimum: 300,
      },
    ],
  },
  "mx1.example.com": { A: [{ address: "93.184.215.25" }] },
  "mx2.example.com": { A: [{ address: "93.184.215.26" }] },
  "_dmarc.example.com": {
    TXT: [{ data: "v=DMARC1; p=quarantine; sp=reject; pct=50; rua=mailto:d@example.com" }],
  },
  "google._domainkey.example.com": { TXT: [{ data: "v=DKIM1; k=rsa; p=MIIBIjANBgkq" }] },
  "selector1._domainkey.example.com": { TXT: [{ data: "v=DKIM1; k=rsa; p=MIGfMA0GCSq" }] },
  "www.example.com": { CNAME: [{ domain: "example.com" }] },
  "sub.example.com": { A: [{ address: "93.184.215.30" }] },
  "nullmx.example.org": { MX: [{ exchange: "", priority: 0 }], A: [{ address: "93.184.216.1" }] },
  "implicit.example.org": { A: [{ address: "93.184.216.2" }] },
  "nomail.example.org": { TXT: [{ data: "hello" }] },
  "deadmx.example.org": { MX: [{ exchange: "gone.example.org", priority: 10 }] },
  "gmail.com": { MX: [{ exchange: "gmail-smtp-in.l.google.com", priority: 5 }] },
  "gmail-smtp-in.l.google.com": { A: [{ address: "142.250.1.27" }] },
  "mailinator.com": { MX: [{ exchange: "mail.mailinator.com", priority: 1 }] },
  "mail.mailinator.com": { A: [{ address: "3.1.1.1" }] },
};

const TYPE_NAMES: Record<number, string> = Object.fromEntries(
  Object.entries(Packet.TYPE).map(([k, v]) => [v, k]),
);

export interface DnsFixture {
  server: string;
  close: () => Promise<void>;
}

export async function startDnsFixture(): Promise<DnsFixture> {
  const server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const [question] = request.questions;
      if (!question) return void send(response);
      const name = question.name.toLowerCase();
      if (name === "slow.example.net") return;
      if (name === "broken.example.net") {
        response.header.rcode = 2;
        return void send(response);
      }
      const zone = ZONE[name];
      if (!zone) {
        response.header.rcode = 3;
        return void send(response);
      }
      const type = TYPE_NAMES[question.type] as keyof typeof zone;
      for (const rec of zone[type] ?? []) {
        response.answers.push({
          name,
          type: question.type,
          class: Packet.CLASS.IN,
          ttl: 60,
          ...rec,
        } as never);
      }
      void send(response);
    },
  });
  const addresses = await server.listen({ udp: { port: 0, address: "127.0.0.1" } });
  return { server: `127.0.0.1:${addresses.udp?.port}`, close: () => server.close() };
}
