package io.srdma.channel;

import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WrOpcode;

/**
 * Red-team access for testing one's own deployment ({@code srdma demo}, {@code srdma
 * attack-suite}): posts raw RDMA operations on a client's own queue pair, skipping the writer's
 * checks, so that what the <em>target</em> enforces can be shown. It gives nothing a holder of the
 * client's key and queue pair could not do anyway; every outcome is the RNIC's or the host's.
 */
public final class AttackProbe {
  private AttackProbe() {}

  /**
   * Writes raw bytes with RDMA WRITE_WITH_IMM and returns the completion status ({@code SUCCESS},
   * {@code REM_ACCESS_ERR}, …, or {@code TIMEOUT}).
   */
  public static String write(
      SecureRdmaClient client, long remoteAddress, int rkey, byte[] bytes, int length, int imm) {
    WcStatus s =
        client.rawPost(WrOpcode.RDMA_WRITE_WITH_IMM, remoteAddress, rkey, bytes, length, imm, 0);
    return s == null ? "TIMEOUT" : s.name();
  }

  /** Reads raw bytes with RDMA READ and returns the completion status. */
  public static String read(SecureRdmaClient client, long remoteAddress, int rkey, int length) {
    WcStatus s = client.rawPost(WrOpcode.RDMA_READ, remoteAddress, rkey, null, length, 0, 0);
    return s == null ? "TIMEOUT" : s.name();
  }

  /** The remote address of the first byte of a grant. */
  public static long remoteAddress(RemoteGrant g) {
    return g.remoteAddress;
  }

  /** The rkey of a grant. */
  public static int rkey(RemoteGrant g) {
    return g.rkey;
  }

  /** The immediate that tells the host of a record at {@code relativeOffset} of a grant. */
  public static int immediate(RemoteGrant g, long relativeOffset) {
    return (g.slot() << 24) | (int) (relativeOffset / g.unit);
  }

  /** A record sealed for {@code relativeOffset} of a grant, not sent (to relocate or tamper). */
  public static byte[] sealRecord(
      SecureRdmaClient c, RemoteGrant g, long relativeOffset, byte[] payload) {
    return c.sealRecord(g, relativeOffset, payload);
  }
}
