package io.srdma.channel.protocol;

import io.srdma.verbs.ConnectionInfo;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Objects;

/**
 * Test helpers: valid frames of every type, raw frames, and reading them back. Public for the fuzz
 * harness in {@code io.srdma.channel.protocol.fuzz}.
 */
public final class Frames {
  static final ConnectionInfo CLIENT_QP =
      new ConnectionInfo(0x12_3456, 0x00_0abc, new byte[] {127, 0, 0, 1, 0x1f, (byte) 0x90});
  static final ConnectionInfo SERVER_QP =
      new ConnectionInfo(0xfe_dcba, 0x77_7777, new byte[] {10, 1, 2, 3, 0x30, 0x39});
  static final byte[] CLIENT_KEY = filled(32, 0x11);
  static final byte[] SERVER_KEY = filled(32, 0x22);
  static final byte[] SESSION_ID = filled(16, 0x33);
  static final byte[] CONFIRM = filled(32, 0x44);
  static final byte[] REGION_KEY = filled(40, 0x55);
  static final long CREDIT_ADDRESS = 0xffff_8000_0012_3450L; // high bit set: a u64, not an i64
  static final int CREDIT_RKEY = 0xcafe_f00d;

  private Frames() {}

  static byte[] filled(int n, int v) {
    byte[] b = new byte[n];
    Arrays.fill(b, (byte) v);
    return b;
  }

  /** Writes frames through a proxy and returns the bytes. */
  static byte[] written(ProxyAction action) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try {
      action.run(new ControlProxy(new FrameWriter(out)));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }

  /** One valid frame of each type a client sends. */
  static byte[] clientFrames() {
    return written(
        p -> {
          p.hello(1, 1, 0, CLIENT_KEY, CLIENT_QP);
          p.creditWord(CREDIT_ADDRESS, CREDIT_RKEY);
          p.keyConfirm(0, 0, CONFIRM);
          p.grantRequest(2, "kvcache", Operations.ALL, 4096, 65536, 30_000);
          p.release(3, 42);
          p.rekey(0, 1);
          p.ping(4, 0x0123_4567_89ab_cdefL);
          p.pong(9, 7);
          p.error(0, ErrorCode.TIMEOUT, "no answer within 5 s");
          p.close(0);
        });
  }

  /** One valid frame of each type a server sends. */
  static byte[] serverFrames() {
    return written(
        p -> {
          p.helloAck(1, 1, Capabilities.RECEIVE_DEPTH, 256, SERVER_KEY, SESSION_ID, SERVER_QP);
          p.keyConfirm(0, 0, CONFIRM);
          p.grant(
              2,
              42,
              "kvcache",
              Operations.READ,
              4096,
              65536,
              1_800_000_000_000L,
              0x7f00_1000L,
              0xdeadbeef,
              REGION_KEY);
          p.grant(3, 43, "kv_cache-2", Operations.WRITE, 0, 1, 1L, -1L, 7, new byte[0]);
          p.grantDenied(5, DenyReason.OUT_OF_BOUNDS, "range ends past the region (64 MiB)");
          p.revoke(0, 42, RevokeReason.EXPIRED);
          p.rekey(0, 2);
          p.regionKey(42, 3, REGION_KEY);
          p.ping(6, 1);
          p.pong(4, 0x0123_4567_89ab_cdefL);
          p.error(0, ErrorCode.SHUTTING_DOWN, "bye");
          p.close(0);
        });
  }

  /** A raw frame: any header values, any body. */
  static byte[] raw(
      int magic,
      int version,
      int type,
      int flags,
      int reserved,
      int requestId,
      int length,
      byte[] body) {
    return ByteBuffer.allocate(16 + body.length)
        .putShort((short) magic)
        .put((byte) version)
        .put((byte) type)
        .putShort((short) flags)
        .putShort((short) reserved)
        .putInt(requestId)
        .putInt(length)
        .put(body)
        .array();
  }

  /** A raw version-1 frame with a correct length. */
  static byte[] raw(MessageType type, int requestId, byte[] body) {
    return raw(0x5352, 1, type.code(), 0, 0, requestId, body.length, body);
  }

  static FrameReader reader(byte[] bytes, Side from) {
    return new FrameReader(new ByteArrayInputStream(bytes), from);
  }

  /** Reads the request id, the description and every accessor of the body, as a consumer would. */
  public static void touch(Frame f) {
    f.requestId();
    Objects.requireNonNull(f.toString());
    switch (f.type()) {
      case HELLO -> {
        HelloFlyweight h = f.hello();
        h.maxVersion();
        h.capabilities();
        h.publicKey();
        h.connectionInfo();
      }
      case HELLO_ACK -> {
        HelloAckFlyweight h = f.helloAck();
        h.version();
        h.capabilities();
        h.receiveDepth();
        h.publicKey();
        h.sessionId();
        h.connectionInfo();
      }
      case KEY_CONFIRM -> {
        f.keyConfirm().epoch();
        f.keyConfirm().confirmation();
      }
      case CREDIT_WORD -> {
        f.creditWord().address();
        f.creditWord().rkey();
      }
      case GRANT_REQUEST -> {
        GrantRequestFlyweight r = f.grantRequest();
        r.region();
        r.operations();
        r.offset();
        r.length();
        r.ttlMillis();
      }
      case GRANT -> {
        GrantFlyweight g = f.grant();
        g.grantId();
        g.region();
        g.operations();
        g.offset();
        g.length();
        g.expiryEpochMillis();
        g.remoteAddress();
        g.rkey();
        g.regionKey();
      }
      case GRANT_DENIED -> {
        f.grantDenied().reason();
        f.grantDenied().text();
      }
      case REVOKE -> {
        f.revoke().grantId();
        f.revoke().reason();
      }
      case RELEASE -> f.release().grantId();
      case REKEY -> f.rekey().epoch();
      case REGION_KEY -> {
        f.regionKey().grantId();
        f.regionKey().generation();
        f.regionKey().regionKey();
      }
      case PING, PONG -> f.ping().payload();
      case ERROR -> {
        f.error().code();
        f.error().text();
      }
      case CLOSE -> {}
    }
  }

  @FunctionalInterface
  interface ProxyAction {
    void run(ControlProxy proxy) throws IOException;
  }
}
