package io.srdma.channel.protocol;

import static io.srdma.channel.ByteSearch.contains;
import static io.srdma.channel.protocol.Frames.CLIENT_KEY;
import static io.srdma.channel.protocol.Frames.CLIENT_QP;
import static io.srdma.channel.protocol.Frames.CONFIRM;
import static io.srdma.channel.protocol.Frames.CREDIT_ADDRESS;
import static io.srdma.channel.protocol.Frames.CREDIT_RKEY;
import static io.srdma.channel.protocol.Frames.REGION_KEY;
import static io.srdma.channel.protocol.Frames.SERVER_KEY;
import static io.srdma.channel.protocol.Frames.SERVER_QP;
import static io.srdma.channel.protocol.Frames.SESSION_ID;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Every message written by {@link ControlProxy} reads back through {@link FrameReader} intact. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ProtocolRoundTripTest {

  @Test
  void shouldRoundTripEveryClientMessage() throws IOException {
    FrameReader r = Frames.reader(Frames.clientFrames(), Side.CLIENT);

    Frame f = r.read().expect(MessageType.HELLO);
    assertEquals(1, f.requestId());
    assertEquals(1, f.hello().maxVersion());
    assertEquals(0, f.hello().capabilities());
    assertArrayEquals(CLIENT_KEY, f.hello().publicKey());
    assertEquals(CLIENT_QP, f.hello().connectionInfo());

    f = r.read().expect(MessageType.CREDIT_WORD);
    assertEquals(0, f.requestId());
    assertEquals(CreditWordFlyweight.LENGTH, f.bodyLength());
    assertEquals(CREDIT_ADDRESS, f.creditWord().address());
    assertEquals(CREDIT_RKEY, f.creditWord().rkey());

    f = r.read().expect(MessageType.KEY_CONFIRM);
    assertEquals(0, f.keyConfirm().epoch());
    assertArrayEquals(CONFIRM, f.keyConfirm().confirmation());

    f = r.read().expect(MessageType.GRANT_REQUEST);
    assertEquals(2, f.requestId());
    GrantRequestFlyweight q = f.grantRequest();
    assertEquals("kvcache", q.region());
    assertEquals(Operations.READ | Operations.WRITE, q.operations());
    assertEquals(4096, q.offset());
    assertEquals(65536, q.length());
    assertEquals(30_000, q.ttlMillis());

    f = r.read().expect(MessageType.RELEASE);
    assertEquals(3, f.requestId());
    assertEquals(42, f.release().grantId());

    assertEquals(1, r.read().expect(MessageType.REKEY).rekey().epoch());

    f = r.read().expect(MessageType.PING);
    assertEquals(4, f.requestId());
    assertEquals(0x0123_4567_89ab_cdefL, f.ping().payload());

    f = r.read().expect(MessageType.PONG);
    assertEquals(9, f.requestId());
    assertEquals(7, f.ping().payload());

    f = r.read().expect(MessageType.ERROR);
    assertEquals(ErrorCode.TIMEOUT, f.error().code());
    assertEquals("no answer within 5 s", f.error().text());

    f = r.read().expect(MessageType.CLOSE);
    assertEquals(0, f.bodyLength());

    assertNull(r.read());
    assertEquals(10, r.framesRead());
  }

  @Test
  void shouldRoundTripEveryServerMessage() throws IOException {
    FrameReader r = Frames.reader(Frames.serverFrames(), Side.SERVER);

    Frame f = r.read().expect(MessageType.HELLO_ACK);
    HelloAckFlyweight a = f.helloAck();
    assertEquals(1, a.version());
    assertEquals(Capabilities.RECEIVE_DEPTH, a.capabilities());
    assertEquals(256, a.receiveDepth());
    assertArrayEquals(SERVER_KEY, a.publicKey());
    assertArrayEquals(SESSION_ID, a.sessionId());
    assertEquals(SERVER_QP, a.connectionInfo());

    assertArrayEquals(
        CONFIRM, r.read().expect(MessageType.KEY_CONFIRM).keyConfirm().confirmation());

    f = r.read().expect(MessageType.GRANT);
    assertEquals(2, f.requestId());
    GrantFlyweight g = f.grant();
    assertEquals(42, g.grantId());
    assertEquals("kvcache", g.region());
    assertEquals(Operations.READ, g.operations());
    assertEquals(4096, g.offset());
    assertEquals(65536, g.length());
    assertEquals(1_800_000_000_000L, g.expiryEpochMillis());
    assertEquals(0x7f00_1000L, g.remoteAddress());
    assertEquals(0xdeadbeef, g.rkey());
    assertArrayEquals(REGION_KEY, g.regionKey());

    g = r.read().expect(MessageType.GRANT).grant();
    assertEquals("kv_cache-2", g.region());
    assertEquals(Operations.WRITE, g.operations());
    assertEquals(-1L, g.remoteAddress());
    assertEquals(0, g.regionKeyLength());
    assertEquals(0, g.regionKey().length);

    f = r.read().expect(MessageType.GRANT_DENIED);
    assertEquals(5, f.requestId());
    assertEquals(DenyReason.OUT_OF_BOUNDS, f.grantDenied().reason());
    assertEquals("range ends past the region (64 MiB)", f.grantDenied().text());

    f = r.read().expect(MessageType.REVOKE);
    assertEquals(0, f.requestId());
    assertEquals(42, f.revoke().grantId());
    assertEquals(RevokeReason.EXPIRED, f.revoke().reason());

    assertEquals(2, r.read().expect(MessageType.REKEY).rekey().epoch());
    f = r.read().expect(MessageType.REGION_KEY);
    assertEquals(0, f.requestId());
    assertEquals(42, f.regionKey().grantId());
    assertEquals(3, f.regionKey().generation());
    assertEquals(REGION_KEY.length, f.regionKey().regionKeyLength());
    assertArrayEquals(REGION_KEY, f.regionKey().regionKey());
    assertEquals(1, r.read().expect(MessageType.PING).ping().payload());
    assertEquals(0x0123_4567_89ab_cdefL, r.read().expect(MessageType.PONG).ping().payload());
    assertEquals(ErrorCode.SHUTTING_DOWN, r.read().expect(MessageType.ERROR).error().code());
    r.read().expect(MessageType.CLOSE);
    assertNull(r.read());
  }

  @Test
  void shouldLayTheHeaderOutAsDocumented() {
    byte[] b = Frames.written(p -> p.ping(0x01020304, 0x1122334455667788L));
    assertArrayEquals(
        new byte[] {
          0x53,
          0x52,
          1,
          0x30,
          0,
          0,
          0,
          0,
          1,
          2,
          3,
          4,
          0,
          0,
          0,
          8, //
          0x11,
          0x22,
          0x33,
          0x44,
          0x55,
          0x66,
          0x77,
          (byte) 0x88
        },
        b);
  }

  @Test
  void shouldLayTheCreditWordOutAsDocumented() {
    byte[] b = Frames.written(p -> p.creditWord(0x0102_0304_0506_0708L, 0x1122_3344));
    assertEquals(16 + 12, b.length);
    assertEquals(MessageType.CREDIT_WORD.code(), b[3]);
    assertArrayEquals(
        new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 0x11, 0x22, 0x33, 0x44},
        Arrays.copyOfRange(b, 16, b.length));
  }

  @Test
  void shouldRoundTripAHelloAckThatChoosesReceiveCredits() throws IOException {
    int chosen = Capabilities.RECEIVE_DEPTH | Capabilities.RECEIVE_CREDITS;
    FrameReader r =
        Frames.reader(
            Frames.written(p -> p.helloAck(1, 1, chosen, 64, SERVER_KEY, SESSION_ID, SERVER_QP)),
            Side.SERVER);
    HelloAckFlyweight a = r.read().expect(MessageType.HELLO_ACK).helloAck();
    assertEquals(chosen, Capabilities.checkAnswer(Capabilities.local(), a.capabilities()));
    assertEquals(64, a.receiveDepth());
  }

  @Test
  void shouldRoundTripTheLongestMessages() throws IOException {
    String longName = "a".repeat(63);
    byte[] key = Frames.filled(128, 9);
    String text = "é".repeat(512); // 1024 bytes of UTF-8
    byte[] bytes =
        Frames.written(
            p -> {
              p.grant(1, 1, longName, Operations.ALL, 0, Long.MAX_VALUE, 1, 0, 0, key);
              p.error(0, ErrorCode.INTERNAL_ERROR, text);
              p.regionKey(Long.MAX_VALUE, Integer.MAX_VALUE, key);
            });
    FrameReader r = Frames.reader(bytes, Side.SERVER);
    Frame f = r.read();
    assertEquals(MessageType.GRANT.maxBodyLength(), f.bodyLength());
    assertEquals(longName, f.grant().region());
    assertArrayEquals(key, f.grant().regionKey());
    f = r.read();
    assertEquals(MessageType.ERROR.maxBodyLength(), f.bodyLength());
    assertEquals(text, f.error().text());
    f = r.read();
    assertEquals(MessageType.REGION_KEY.maxBodyLength(), f.bodyLength());
    assertEquals(Long.MAX_VALUE, f.regionKey().grantId());
    assertEquals(Integer.MAX_VALUE, f.regionKey().generation());
    assertArrayEquals(key, f.regionKey().regionKey());
    assertEquals(MessageType.ERROR.maxBodyLength(), MessageType.largestBodyLength());
  }

  @Test
  void shouldSanitizeAndCutTextOnTheWayOut() throws IOException {
    String tooLong = "line one\nline two\u0000" + "€".repeat(400); // € is 3 bytes
    FrameReader r =
        Frames.reader(
            Frames.written(p -> p.grantDenied(1, DenyReason.INTERNAL_ERROR, tooLong)), Side.SERVER);
    String text = r.read().grantDenied().text();
    assertTrue(text.startsWith("line one line two "), text);
    int bytes = text.getBytes(StandardCharsets.UTF_8).length;
    assertTrue(bytes <= 1024 && bytes > 1020, "cut at a character boundary: " + bytes);
  }

  @Test
  void shouldMapEveryPolicyDenialByName() {
    String[] policyReasons = {
      "INVALID_REQUEST", "UNKNOWN_TENANT", "TENANT_MISMATCH", "UNKNOWN_PEER", "UNKNOWN_REGION",
      "OUT_OF_BOUNDS", "NOT_PERMITTED", "OPERATION_NOT_ALLOWED", "TOO_LARGE", "QUOTA_EXCEEDED"
    };
    for (String name : policyReasons) {
      DenyReason r = DenyReason.valueOf(name);
      assertEquals(r, DenyReason.fromCode(r.code()));
    }
    for (RevokeReason r : RevokeReason.values()) {
      assertEquals(r, RevokeReason.fromCode(r.code()));
    }
    for (ErrorCode c : ErrorCode.values()) {
      assertEquals(c, ErrorCode.fromCode(c.code()));
    }
    for (MessageType t : MessageType.values()) {
      assertEquals(t, MessageType.fromCode(t.code()));
    }
  }

  @Test
  void shouldWipeRegionKeyMaterialBeforeTheNextFrame() throws IOException {
    byte[] key = Frames.filled(32, 0x5a);
    byte[] bytes =
        Frames.written(
            p -> {
              p.grant(1, 1, "kv", Operations.READ, 0, 16, 1, 0, 0, key);
              p.ping(2, 0);
            });
    FrameReader r = Frames.reader(bytes, Side.SERVER);
    r.read().grant();
    assertTrue(contains(r.buffer(), key));
    r.read().expect(MessageType.PING);
    assertFalse(contains(r.buffer(), key), "key material left in the reader's buffer");
    byte[] rotated = Frames.filled(72, 0x6b);
    r =
        Frames.reader(
            Frames.written(
                p -> {
                  p.regionKey(1, 1, rotated);
                  p.ping(2, 0);
                }),
            Side.SERVER);
    r.read().regionKey();
    assertTrue(contains(r.buffer(), rotated));
    r.read().expect(MessageType.PING);
    assertFalse(contains(r.buffer(), rotated), "REGION_KEY material left in the reader's buffer");
  }

  @Test
  void shouldReturnNullAtACleanEndOfStream() throws IOException {
    FrameReader r = Frames.reader(new byte[0], Side.CLIENT);
    assertNull(r.read());
    assertNull(r.read());
  }

  @Test
  void shouldStayUsableAfterATimeoutBetweenFrames() throws IOException {
    byte[] ping = Frames.written(p -> p.ping(1, 5));
    InputStream timesOutOnce =
        new SequenceInputStream(
            new InputStream() {
              private boolean thrown;

              @Override
              public int read() throws IOException {
                if (!thrown) {
                  thrown = true;
                  throw new SocketTimeoutException("idle");
                }
                return -1;
              }

              @Override
              public int read(byte[] b, int off, int len) throws IOException {
                int c = read();
                if (c < 0) {
                  return -1;
                }
                b[off] = (byte) c;
                return 1;
              }
            },
            new ByteArrayInputStream(ping));
    FrameReader r = new FrameReader(timesOutOnce, Side.CLIENT);
    assertThrows(SocketTimeoutException.class, r::read);
    assertEquals(5, r.read().expect(MessageType.PING).ping().payload());
  }

  @Test
  void shouldAcceptAnyOfTheExpectedTypes() throws IOException {
    Frame f = Frames.reader(Frames.written(p -> p.ping(1, 5)), Side.SERVER).read();
    f.expect(EnumSet.of(MessageType.PING, MessageType.GRANT));
    assertEquals("PING#1 (8 bytes)", f.toString());
  }

  @Test
  void shouldWriteWholeFramesFromManyThreads() throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ControlProxy proxy = new ControlProxy(new FrameWriter(out));
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      Future<?>[] done = new Future<?>[4];
      for (int t = 0; t < done.length; t++) {
        int thread = t;
        done[t] =
            pool.submit(
                () -> {
                  for (int i = 1; i <= 250; i++) {
                    proxy.revoke(0, thread * 1000L + i, RevokeReason.REVOKED);
                  }
                  return null;
                });
      }
      for (Future<?> d : done) {
        d.get(30, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    FrameReader r = Frames.reader(out.toByteArray(), Side.SERVER);
    long sum = 0;
    Frame f;
    while ((f = r.read()) != null) {
      sum += f.revoke().grantId();
    }
    assertEquals(1000, r.framesRead());
    assertEquals(4 * (250 * 251 / 2) + 250L * 1000 * (0 + 1 + 2 + 3), sum);
  }
}
