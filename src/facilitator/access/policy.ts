/**
 * Whether a facilitator starting now is open (a request without a key is served for any payee), and when
 * it must not start at all. Decided once, at start, from where it listens and what the operator set up:
 *
 * | listens on | allow-list or keys | in-process merchants | `--open` | access |
 * |---|---|---|---|---|
 * | any | any | any | yes | open |
 * | loopback | none | any | no | open (the devnet, the demo, tests: nothing changes) |
 * | loopback | some | any | no | closed: allow-list + keys |
 * | beyond loopback | some | any | no | closed |
 * | beyond loopback | none | some | no | closed: its own merchants only |
 * | beyond loopback | none | none | no | refused: exit 2 |
 *
 * Loopback behind a reverse proxy (X402M_TRUSTED_PROXIES set) counts as beyond loopback.
 *
 * Keys added while it runs are honoured at once for the payees they allow; a loopback facilitator that
 * started open stays open until it restarts.
 */
import { isLoopback } from "../../common/listen.ts";

export interface StartAccess {
  /** The host it listens on (`--host`, X402M_HOST). */
  host: string;
  /** X402M_FACILITATOR_PAYEES. */
  configuredPayees: readonly string[];
  /** The payTo of the merchants served in this process. */
  inProcessPayees: readonly string[];
  /** Keys not revoked, in its database. */
  liveKeys: number;
  /** `--open`. */
  open: boolean;
  /**
   * A reverse proxy fronts it (X402M_TRUSTED_PROXIES is set): a loopback address then says nothing of who
   * calls, since every request arrives from the proxy, so it is decided as if it listened beyond loopback.
   */
  behindProxy?: boolean;
}

// Where any listener is, not the facilitator's alone (the metrics listener asks too): in common.
export { isLoopback };

/**
 * Open or not, or why it must not start (the caller refuses with exit 2): an open facilitator beyond
 * loopback that nobody asked for.
 */
export function decideOpen(start: StartAccess): { open: boolean } | { refused: string } {
  if (start.open) return { open: true };
  const configured = start.configuredPayees.length > 0 || start.liveKeys > 0;
  if (isLoopback(start.host) && !start.behindProxy) return { open: !configured };
  if (configured || start.inProcessPayees.length > 0) return { open: false };
  const where = start.behindProxy ? `behind a proxy (X402M_TRUSTED_PROXIES)` : `on ${start.host}`;
  return {
    refused: `refusing to run an open facilitator ${where}: anyone reaching it could make it pay gas for any payee; set X402M_FACILITATOR_PAYEES, add a key (x402-merchants facilitator keys add), or pass --open on purpose (docs/facilitator.md)`,
  };
}
