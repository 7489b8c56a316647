package io.srdma.channel;

import io.srdma.channel.protocol.ControlProxy;
import io.srdma.channel.protocol.Frame;
import io.srdma.channel.protocol.FrameReader;
import io.srdma.channel.protocol.FrameWriter;
import io.srdma.channel.protocol.MessageType;
import io.srdma.channel.protocol.Side;
import io.srdma.channel.record.OpenResult;
import io.srdma.channel.record.OwnerOpener;
import io.srdma.channel.record.OwnerSealer;
import io.srdma.channel.record.OwnerSigning;
import io.srdma.channel.record.RegionKeyring;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentTrust;
import io.srdma.keys.DirectionKeys;
import io.srdma.keys.MutualTls;
import io.srdma.keys.TlsBinding;
import io.srdma.verbs.ConnectionInfo;
import io.srdma.verbs.DeviceOptions;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WrOpcode;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Arrays;

/**
 * Red-team access for testing one's own deployment ({@code srdma demo}, {@code srdma
 * attack-suite}): posts raw RDMA operations on a client's own queue pair, skipping the writer's
 * checks, so that what the <em>target</em> enforces can be shown. It gives nothing a holder of the
 * client's key and queue pair could not do anyway; every outcome is the RNIC's or the host's.
 *
 * <p>Thread safety: stateless static methods, each as thread-safe as the client it is given; a
 * probe waits for its own completion. Buffers: {@code write} copies the bytes it is given into the
 * client's staging memory before posting; the caller keeps its array. {@link KeptRegionKey} is not
 * thread-safe.
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

  /**
   * Writes raw bytes with a plain RDMA WRITE (no immediate: the host is not told) and returns the
   * completion status.
   */
  public static String writeSilently(
      SecureRdmaClient client, long remoteAddress, int rkey, byte[] bytes, int length) {
    WcStatus s = client.rawPost(WrOpcode.RDMA_WRITE, remoteAddress, rkey, bytes, length, 0, 0);
    return s == null ? "TIMEOUT" : s.name();
  }

  // --- internal, not API: probes for the host's own tests (module secure-host), which live in
  // another package since the split of the host from the tenant SDK; they may change without notice

  /**
   * Internal, not API: posts a raw operation on the client's queue pair without the writer's checks
   * and returns its completion status, or {@code null} when none came in time.
   */
  public static WcStatus post(
      SecureRdmaClient client,
      WrOpcode op,
      long remoteAddress,
      int rkey,
      byte[] bytes,
      int length,
      int imm) {
    return client.rawPost(op, remoteAddress, rkey, bytes, length, imm, 0);
  }

  /**
   * Internal, not API: the slot the host gave a grant on its session (the immediate's top byte).
   */
  public static int slot(RemoteGrant g) {
    return g.slot();
  }

  /** Internal, not API: the newest region key generation a grant holds, or -1 without READ. */
  public static int regionKeyGeneration(RemoteGrant g) {
    return g.regionKeyGeneration();
  }

  /** Internal, not API: the region keyring a READ grant carries, or {@code null} without READ. */
  public static RegionKeyring regionKeys(RemoteGrant g) {
    return g.regionKeys;
  }

  /** Internal, not API: how the client bound its session keys to the TLS session. */
  public static TlsBinding.Kind bindingKind(SecureRdmaClient client) {
    return client.bindingKind();
  }

  /** Internal, not API: how many open clients share this client's device context. */
  public static int deviceContextUsers(SecureRdmaClient client) {
    return client.deviceContextUsers();
  }

  /** Internal, not API: whether this process holds a shared device context for these options. */
  public static boolean deviceContextOpen(String provider, DeviceOptions device) {
    return SharedDeviceContext.isOpen(provider, device);
  }

  /**
   * An owner record forged by a peer whose grant carries the region key (READ): sealed with the
   * region key of the grant's current generation and signed with a fresh Ed25519 key that is not
   * the host's. A reader must refuse it ({@code BAD_SIGNATURE}).
   *
   * @param tenant the region's tenant
   * @param relativeOffset where in the grant the record will be written
   * @throws IllegalStateException when the grant carries no region key (no READ)
   */
  public static byte[] forgeOwnerRecord(
      RemoteGrant g, String tenant, long relativeOffset, byte[] payload) {
    if (g.regionKeys == null) {
      throw new IllegalStateException("grant " + g.id() + " carries no region key (no READ)");
    }
    DirectionKeys key = g.regionKeys.keys(g.regionKeyGeneration());
    if (key == null) {
      throw new IllegalStateException("grant " + g.id() + " holds no key of its generation");
    }
    int max = SealedLayout.DEFAULT_MAX_RECORD_PAYLOAD;
    ByteBuffer out = ByteBuffer.allocate(payload.length + OwnerSealer.OVERHEAD);
    int n =
        new OwnerSealer(
                key,
                OwnerSigning.generate(new SecureRandom()).getPrivate(),
                tenant,
                g.region(),
                max)
            .seal(
                ByteBuffer.wrap(payload),
                Long.MAX_VALUE,
                false,
                g.offset() + relativeOffset,
                out,
                0);
    if (n != out.capacity()) {
      throw new IllegalStateException("could not seal the forged record: " + n);
    }
    return out.array();
  }

  /**
   * Completes mutual TLS with {@code credential}, then sends a HELLO whose connection information
   * names {@code responder} as the client's responder (the host would connect there) and returns
   * the host's answer: {@code "ERROR <code>: <text>"}, the frame type it sent instead, or {@code
   * "closed"}.
   */
  public static String helloNaming(
      Credential credential,
      DeploymentTrust trust,
      InetSocketAddress host,
      InetSocketAddress responder,
      Duration timeout)
      throws IOException {
    try (Socket s = MutualTls.client(credential, trust).connect(host, timeout).socket()) {
      byte[] ip = responder.getAddress().getAddress();
      byte[] address =
          ByteBuffer.allocate(ip.length + 2).put(ip).putShort((short) responder.getPort()).array();
      new ControlProxy(new FrameWriter(s.getOutputStream()))
          .hello(1, 1, 0, new byte[32], new ConnectionInfo(0x1234, 0x42, address));
      s.setSoTimeout((int) timeout.toMillis());
      Frame f = new FrameReader(s.getInputStream(), Side.SERVER).read();
      if (f == null) {
        return "closed";
      }
      return f.type() == MessageType.ERROR
          ? "ERROR " + f.error().code() + ": " + f.error().text()
          : f.type().name();
    }
  }

  /**
   * What a reader that copied the region key its grant carried keeps after the grant ends: the key
   * of the grant's current generation and the owner's public key. Opens owner records with that key
   * only. Not thread-safe.
   */
  public static final class KeptRegionKey implements AutoCloseable {
    private final DirectionKeys key;
    private final OwnerOpener opener;

    private KeptRegionKey(DirectionKeys key, PublicKey owner, String tenant, String region) {
      this.key = key;
      int generation = key.epoch();
      this.opener =
          new OwnerOpener(
              g -> g == generation ? key : null,
              owner,
              tenant,
              region,
              SealedLayout.DEFAULT_MAX_RECORD_PAYLOAD,
              false);
    }

    /** The generation of the kept key. */
    public int generation() {
      return key.epoch();
    }

    /**
     * Tries to open the owner record {@code raw} placed at {@code regionOffset}; returns the
     * verdict ({@code OK}, {@code UNKNOWN_EPOCH}, {@code AUTH_FAILED}, …).
     */
    public String open(byte[] raw, long regionOffset) {
      OpenResult r =
          opener.open(
              ByteBuffer.wrap(raw),
              0,
              raw.length,
              regionOffset,
              ByteBuffer.allocate(SealedLayout.DEFAULT_MAX_RECORD_PAYLOAD));
      return r.name();
    }

    /** Wipes the kept key. */
    @Override
    public void close() {
      key.close();
    }
  }

  /**
   * Copies the region key a READ grant carries now, as a reader would before its grant ends.
   *
   * @param tenant the region's tenant
   * @throws IllegalStateException when the grant carries no region key (no READ)
   */
  public static KeptRegionKey keepRegionKey(RemoteGrant g, String tenant) {
    if (g.regionKeys == null) {
      throw new IllegalStateException("grant " + g.id() + " carries no region key (no READ)");
    }
    DirectionKeys k = g.regionKeys.keys(g.regionKeyGeneration());
    if (k == null) {
      throw new IllegalStateException("grant " + g.id() + " holds no key of its generation");
    }
    byte[] aes = k.aesKey().getEncoded();
    int p = k.noncePrefix();
    byte[] prefix = {(byte) (p >>> 24), (byte) (p >>> 16), (byte) (p >>> 8), (byte) p};
    try {
      return new KeptRegionKey(
          DirectionKeys.fromMaterial(k.direction(), k.epoch(), aes, prefix),
          g.regionKeys.owner(),
          tenant,
          g.region());
    } finally {
      Arrays.fill(aes, (byte) 0);
      Arrays.fill(prefix, (byte) 0);
    }
  }
}
