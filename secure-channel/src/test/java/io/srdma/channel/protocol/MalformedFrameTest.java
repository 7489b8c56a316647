package io.srdma.channel.protocol;

import static io.srdma.channel.protocol.Frames.raw;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.protocol.ProtocolException.Reason;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;

/** Every way a frame can be malformed is refused with the right {@link Reason}. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MalformedFrameTest {
  private static final byte[] PING_BODY = new byte[8];

  private static ProtocolException refused(Reason reason, byte[] bytes, Side from) {
    FrameReader r = Frames.reader(bytes, from);
    ProtocolException e = assertThrows(ProtocolException.class, r::read);
    assertEquals(reason, e.reason(), e.getMessage());
    return e;
  }

  private static void refusedFromClient(Reason reason, byte[] bytes) {
    refused(reason, bytes, Side.CLIENT);
  }

  private static void refusedFromServer(Reason reason, byte[] bytes) {
    refused(reason, bytes, Side.SERVER);
  }

  /** A GRANT_REQUEST body with any field values. */
  private static byte[] grantRequest(long offset, long length, long ttl, int ops, byte[] name) {
    return ByteBuffer.allocate(26 + name.length)
        .putLong(offset)
        .putLong(length)
        .putLong(ttl)
        .put((byte) ops)
        .put((byte) name.length)
        .put(name)
        .array();
  }

  private static byte[] ascii(String s) {
    return s.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
  }

  /** A valid GRANT body's bytes, to mutate. */
  private static byte[] grantBody(int ops, byte[] key) {
    byte[] frame =
        Frames.written(
            p ->
                p.grant(
                    1,
                    9,
                    "kv",
                    ops,
                    0,
                    16,
                    1,
                    0,
                    0,
                    Operations.includesRead(ops) ? Frames.filled(32, 1) : new byte[0]));
    byte[] body = Arrays.copyOfRange(frame, 16, frame.length);
    byte[] out = Arrays.copyOf(body, 47 + 2 + key.length);
    out[GrantFlyweight.KEY_LENGTH_OFFSET] = (byte) key.length;
    System.arraycopy(key, 0, out, 49, key.length);
    return out;
  }

  private static byte[] textBody(int code, int declared, byte[] text) {
    return ByteBuffer.allocate(4 + text.length)
        .putShort((short) code)
        .putShort((short) declared)
        .put(text)
        .array();
  }

  @Test
  void shouldRefuseABadMagic() {
    refusedFromClient(Reason.BAD_MAGIC, raw(0x5353, 1, 0x30, 0, 0, 1, 8, PING_BODY));
    refusedFromClient(Reason.BAD_MAGIC, ascii("GET / HTTP/1.1\r\n\r\n"));
  }

  @Test
  void shouldRefuseAnotherVersion() {
    refusedFromClient(Reason.UNSUPPORTED_VERSION, raw(0x5352, 2, 0x30, 0, 0, 1, 8, PING_BODY));
    refusedFromClient(Reason.UNSUPPORTED_VERSION, raw(0x5352, 0, 0x30, 0, 0, 1, 8, PING_BODY));
  }

  @Test
  void shouldRefuseAnUnknownType() {
    for (int type : new int[] {0x00, 0x05, 0x15, 0x32, 0x7f, 0xff}) {
      refusedFromClient(Reason.UNKNOWN_TYPE, raw(0x5352, 1, type, 0, 0, 1, 8, PING_BODY));
    }
  }

  @Test
  void shouldRefuseFlagsAndReservedFields() {
    refusedFromClient(Reason.RESERVED_NOT_ZERO, raw(0x5352, 1, 0x30, 1, 0, 1, 8, PING_BODY));
    refusedFromClient(Reason.RESERVED_NOT_ZERO, raw(0x5352, 1, 0x30, 0, 0x8000, 1, 8, PING_BODY));
    byte[] hello = Frames.written(p -> p.hello(1, 1, 0, Frames.CLIENT_KEY, Frames.CLIENT_QP));
    hello[16 + HelloFlyweight.RESERVED_OFFSET + 2] = 1;
    refusedFromClient(Reason.RESERVED_NOT_ZERO, hello);
  }

  @Test
  void shouldRefuseOversizedFramesBeforeReadingTheirBody() {
    // only the header is present: the length alone must be refused
    refusedFromClient(
        Reason.FRAME_TOO_LARGE, raw(0x5352, 1, 0x30, 0, 0, 1, Integer.MAX_VALUE, new byte[0]));
    refusedFromClient(Reason.FRAME_TOO_LARGE, raw(0x5352, 1, 0x30, 0, 0, 1, -1, new byte[0]));
    refusedFromClient(
        Reason.FRAME_TOO_LARGE, raw(0x5352, 1, 0x30, 0, 0, 1, 64 * 1024 + 1, new byte[0]));
    // under the reader's limit but more than the type can hold
    refusedFromClient(Reason.FRAME_TOO_LARGE, raw(0x5352, 1, 0x30, 0, 0, 1, 9, new byte[0]));
    refusedFromClient(Reason.FRAME_TOO_LARGE, raw(0x5352, 1, 0x3f, 0, 0, 0, 1, new byte[0]));
    refusedFromClient(Reason.FRAME_TOO_LARGE, raw(0x5352, 1, 0x3e, 0, 0, 0, 1029, new byte[0]));
  }

  @Test
  void shouldRefuseATruncatedFrame() {
    byte[] ping = Frames.written(p -> p.ping(1, 5));
    for (int cut = 1; cut < ping.length; cut++) {
      refusedFromClient(Reason.TRUNCATED, Arrays.copyOf(ping, cut));
    }
  }

  @Test
  void shouldRefuseABodyShorterThanItsLayout() {
    refusedFromClient(Reason.BODY_TOO_SHORT, raw(0x5352, 1, 0x30, 0, 0, 1, 7, new byte[7]));
    refusedFromClient(Reason.BODY_TOO_SHORT, raw(MessageType.HELLO, 1, new byte[51]));
    // a name length pointing past the body
    byte[] body = grantRequest(0, 1, 1, Operations.READ, ascii("kv"));
    body[GrantRequestFlyweight.NAME_LENGTH_OFFSET] = 5;
    refusedFromClient(Reason.BODY_TOO_SHORT, raw(MessageType.GRANT_REQUEST, 1, body));
  }

  @Test
  void shouldRefuseTrailingBytes() {
    byte[] body = grantRequest(0, 1, 1, Operations.READ, ascii("kvcache"));
    body[GrantRequestFlyweight.NAME_LENGTH_OFFSET] = 2;
    refusedFromClient(Reason.TRAILING_BYTES, raw(MessageType.GRANT_REQUEST, 1, body));
    refusedFromServer(
        Reason.TRAILING_BYTES, raw(MessageType.GRANT_DENIED, 1, textBody(6, 1, ascii("ab"))));
    byte[] hello = Frames.written(p -> p.hello(1, 1, 0, Frames.CLIENT_KEY, Frames.CLIENT_QP));
    byte[] longer = Arrays.copyOf(hello, hello.length + 1);
    longer[15]++; // body length + 1, one stray byte at the end
    refusedFromClient(Reason.TRAILING_BYTES, longer);
  }

  @Test
  void shouldRefuseRequestsAndAnswersWithoutARequestId() {
    refusedFromClient(Reason.BAD_REQUEST_ID, raw(MessageType.PING, 0, PING_BODY));
    refusedFromClient(
        Reason.BAD_REQUEST_ID,
        raw(MessageType.GRANT_REQUEST, 0, grantRequest(0, 1, 1, 1, ascii("kv"))));
    refusedFromServer(Reason.BAD_REQUEST_ID, raw(MessageType.PONG, 0, PING_BODY));
  }

  @Test
  void shouldRefuseOutOfRangeNumbers() {
    byte[] kv = ascii("kv");
    for (byte[] body :
        new byte[][] {
          grantRequest(-1, 1, 1, 1, kv),
          grantRequest(0, 0, 1, 1, kv),
          grantRequest(0, -5, 1, 1, kv),
          grantRequest(Long.MAX_VALUE - 3, 4, 1, 1, kv),
          grantRequest(0, 1, 0, 1, kv),
          grantRequest(0, 1, -1, 1, kv)
        }) {
      refusedFromClient(Reason.BAD_VALUE, raw(MessageType.GRANT_REQUEST, 1, body));
    }
    refusedFromClient(Reason.BAD_VALUE, raw(MessageType.RELEASE, 1, new byte[8]));
    refusedFromClient(Reason.BAD_VALUE, raw(MessageType.REKEY, 0, new byte[4]));
    refusedFromClient(Reason.BAD_VALUE, raw(MessageType.KEY_CONFIRM, 0, Frames.filled(36, 0xff)));
    refusedFromServer(
        Reason.BAD_VALUE, raw(MessageType.REVOKE, 0, new byte[] {0, 0, 0, 0, 0, 0, 0, 0, 0, 1}));
  }

  @Test
  void shouldRefuseBadConnectionInfo() {
    byte[] hello = Frames.written(p -> p.hello(1, 1, 0, Frames.CLIENT_KEY, Frames.CLIENT_QP));
    byte[] bigQpn = hello.clone();
    bigQpn[16 + HelloFlyweight.CONNECTION_INFO_OFFSET] = 1; // qpn over 24 bits
    refusedFromClient(Reason.BAD_VALUE, bigQpn);
    byte[] innerLength = hello.clone();
    innerLength[16 + HelloFlyweight.CONNECTION_INFO_OFFSET + 9] = 5; // address says 5, 6 follow
    refusedFromClient(Reason.BAD_VALUE, innerLength);
    byte[] noVersion = hello.clone();
    noVersion[16 + HelloFlyweight.MAX_VERSION_OFFSET] = 0;
    refusedFromClient(Reason.BAD_VALUE, noVersion);
  }

  @Test
  void shouldRefuseRegionKeysThatDoNotMatchTheOperations() {
    refusedFromServer(
        Reason.BAD_VALUE, raw(MessageType.GRANT, 1, grantBody(Operations.READ, new byte[0])));
    refusedFromServer(
        Reason.BAD_VALUE, raw(MessageType.GRANT, 1, grantBody(Operations.WRITE, new byte[32])));
    refusedFromServer(
        Reason.BAD_VALUE, raw(MessageType.GRANT, 1, grantBody(Operations.ALL, new byte[129])));
  }

  /** A REGION_KEY body with any field values; {@code declared} is the key length field. */
  private static byte[] regionKeyBody(long grantId, int generation, int declared, int actual) {
    return ByteBuffer.allocate(13 + actual)
        .putLong(grantId)
        .putInt(generation)
        .put((byte) declared)
        .put(new byte[actual])
        .array();
  }

  @Test
  void shouldRefuseMalformedRegionKeys() throws IOException {
    byte[] good = regionKeyBody(7, 2, 72, 72);
    assertEquals(
        MessageType.REGION_KEY,
        Frames.reader(raw(MessageType.REGION_KEY, 0, good), Side.SERVER).read().type(),
        "the well-formed body reads");
    refusedFromServer(
        Reason.BAD_VALUE, raw(MessageType.REGION_KEY, 0, regionKeyBody(0, 2, 72, 72)));
    refusedFromServer(
        Reason.BAD_VALUE, raw(MessageType.REGION_KEY, 0, regionKeyBody(-1, 2, 72, 72)));
    refusedFromServer(
        Reason.BAD_VALUE, raw(MessageType.REGION_KEY, 0, regionKeyBody(7, 0, 72, 72)));
    refusedFromServer(
        Reason.BAD_VALUE, raw(MessageType.REGION_KEY, 0, regionKeyBody(7, -3, 72, 72)));
    refusedFromServer(Reason.BAD_VALUE, raw(MessageType.REGION_KEY, 0, regionKeyBody(7, 2, 0, 1)));
    refusedFromServer(
        Reason.BODY_TOO_SHORT, raw(MessageType.REGION_KEY, 0, regionKeyBody(7, 2, 72, 71)));
    refusedFromServer(
        Reason.TRAILING_BYTES, raw(MessageType.REGION_KEY, 0, regionKeyBody(7, 2, 72, 73)));
    refusedFromServer(
        Reason.BODY_TOO_SHORT, raw(MessageType.REGION_KEY, 0, regionKeyBody(7, 2, 0, 0)));
    refusedFromServer(
        Reason.FRAME_TOO_LARGE, raw(MessageType.REGION_KEY, 0, regionKeyBody(7, 2, 129, 129)));
    refusedFromClient(Reason.UNEXPECTED_TYPE, raw(MessageType.REGION_KEY, 0, good));
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ControlProxy p = new ControlProxy(new FrameWriter(out));
    assertReason(Reason.BAD_VALUE, () -> p.regionKey(0, 1, new byte[72]));
    assertReason(Reason.BAD_VALUE, () -> p.regionKey(1, 0, new byte[72]));
    assertReason(Reason.BAD_VALUE, () -> p.regionKey(1, 1, new byte[0]));
    assertReason(Reason.BAD_VALUE, () -> p.regionKey(1, 1, new byte[129]));
    assertEquals(0, out.size());
  }

  @Test
  void shouldRefuseUnknownEnumValues() {
    for (int ops : new int[] {0, 4, 0x83}) {
      refusedFromClient(
          Reason.BAD_ENUM,
          raw(MessageType.GRANT_REQUEST, 1, grantRequest(0, 1, 1, ops, ascii("kv"))));
    }
    refusedFromServer(
        Reason.BAD_ENUM, raw(MessageType.GRANT_DENIED, 1, textBody(999, 0, new byte[0])));
    refusedFromServer(Reason.BAD_ENUM, raw(MessageType.ERROR, 0, textBody(0, 0, new byte[0])));
    refusedFromServer(
        Reason.BAD_ENUM, raw(MessageType.REVOKE, 0, new byte[] {0, 0, 0, 0, 0, 0, 0, 1, 0, 0}));
  }

  @Test
  void shouldRefuseOverLongStrings() {
    byte[] body = grantRequest(0, 1, 1, 1, ascii("k".repeat(63)));
    body[GrantRequestFlyweight.NAME_LENGTH_OFFSET] = 64;
    refusedFromClient(Reason.STRING_TOO_LONG, raw(MessageType.GRANT_REQUEST, 1, body));
    byte[] empty = grantRequest(0, 1, 1, 1, ascii("k"));
    empty[GrantRequestFlyweight.NAME_LENGTH_OFFSET] = 0; // an empty name, one stray byte
    refusedFromClient(Reason.STRING_TOO_LONG, raw(MessageType.GRANT_REQUEST, 1, empty));
    byte[] text = Frames.filled(1024, 'a');
    refusedFromServer(Reason.STRING_TOO_LONG, raw(MessageType.ERROR, 0, textBody(1, 1025, text)));
  }

  @Test
  void shouldRefuseBadStrings() {
    for (String name : new String[] {"KV", "-kv", "_kv", "kv cache", "kv/..", "kv\u00e9"}) {
      byte[] body =
          grantRequest(0, 1, 1, 1, name.getBytes(java.nio.charset.StandardCharsets.UTF_8));
      refusedFromClient(Reason.BAD_STRING, raw(MessageType.GRANT_REQUEST, 1, body));
    }
    for (byte[] text :
        new byte[][] {
          {(byte) 0xc3, 0x28}, // invalid continuation
          {(byte) 0xed, (byte) 0xa0, (byte) 0x80}, // a UTF-16 surrogate in UTF-8
          {(byte) 0xc0, (byte) 0xaf}, // overlong '/'
          ascii("two\nlines"),
          ascii("esc\u001b[31m")
        }) {
      refusedFromServer(
          Reason.BAD_STRING, raw(MessageType.ERROR, 0, textBody(1, text.length, text)));
    }
  }

  /**
   * A peer's ERROR or GRANT_DENIED text reaches the other side's exception messages and logs as
   * "one log line": Unicode line and paragraph separators (U+2028, U+2029) and invisible format
   * characters such as bidi overrides (U+202E, U+2066) forge or disguise log lines as well as CR,
   * LF and ESC do, and are refused like them.
   */
  @Test
  void shouldRefuseUnicodeLineBreaksAndBidiControlsInPeerText() {
    for (String t :
        new String[] {
          "host refused\u2028INFO forged line",
          "para\u2029graph",
          "evil\u202etxt.exe",
          "isolate\u2066x\u2069",
          "zero\u200bwidth"
        }) {
      byte[] text = t.getBytes(java.nio.charset.StandardCharsets.UTF_8);
      refusedFromServer(
          Reason.BAD_STRING, raw(MessageType.ERROR, 0, textBody(1, text.length, text)));
      refusedFromServer(
          Reason.BAD_STRING, raw(MessageType.GRANT_DENIED, 1, textBody(1, text.length, text)));
    }
  }

  @Test
  void shouldSendUnicodeLineBreaksAndBidiControlsAsSpaces() throws Exception {
    byte[] frame =
        Frames.written(p -> p.error(0, ErrorCode.INTERNAL_ERROR, "a\u2028b\u202ec\u2066d\u200be"));
    Frame f = Frames.reader(frame, Side.CLIENT).read();
    assertEquals("a b c d e", f.error().text());
  }

  @Test
  void shouldRefuseAHelloAckWhoseReceiveDepthDisagreesWithItsCapabilities() {
    byte[] frames = Frames.serverFrames(); // starts with a HELLO_ACK saying 256 receives
    int body = FrameHeaderFlyweight.HEADER_LENGTH;
    byte[] noCapability = frames.clone();
    noCapability[body + HelloAckFlyweight.CAPABILITIES_OFFSET + 3] = 0; // the bit cleared
    refusedFromServer(Reason.BAD_VALUE, noCapability);
    byte[] zero = frames.clone();
    zero[body + HelloAckFlyweight.RECEIVE_DEPTH_OFFSET] = 0;
    zero[body + HelloAckFlyweight.RECEIVE_DEPTH_OFFSET + 1] = 0;
    refusedFromServer(Reason.BAD_VALUE, zero);
    byte[] reserved = frames.clone();
    reserved[body + HelloAckFlyweight.RESERVED_OFFSET] = 1;
    refusedFromServer(Reason.RESERVED_NOT_ZERO, reserved);
  }

  /** A CREDIT_WORD body with any address and rkey. */
  private static byte[] creditWordBody(long address, int rkey) {
    return ByteBuffer.allocate(12).putLong(address).putInt(rkey).array();
  }

  @Test
  void shouldRefuseMalformedCreditWords() throws IOException {
    byte[] good = creditWordBody(0x7f00_1000L, 9);
    assertEquals(
        0x7f00_1000L,
        Frames.reader(raw(MessageType.CREDIT_WORD, 0, good), Side.CLIENT)
            .read()
            .creditWord()
            .address(),
        "the well-formed body reads");
    refusedFromClient(
        Reason.BODY_TOO_SHORT, raw(MessageType.CREDIT_WORD, 0, Arrays.copyOf(good, 11)));
    refusedFromClient(
        Reason.FRAME_TOO_LARGE, raw(MessageType.CREDIT_WORD, 0, Arrays.copyOf(good, 13)));
    refusedFromClient(Reason.BODY_TOO_SHORT, raw(MessageType.CREDIT_WORD, 0, new byte[0]));
    for (long address : new long[] {1, 2, 3, 0x7f00_1006L, 0x8000_0000_0000_0001L, -1L}) {
      ProtocolException e =
          refused(
              Reason.BAD_VALUE,
              raw(MessageType.CREDIT_WORD, 0, creditWordBody(address, 9)),
              Side.CLIENT);
      assertTrue(e.getMessage().contains("not 4-byte aligned"), e.getMessage());
    }
    // the host never sends it, like every other client-only frame
    refusedFromServer(Reason.UNEXPECTED_TYPE, raw(MessageType.CREDIT_WORD, 0, good));
    refusedFromServer(Reason.UNEXPECTED_TYPE, Frames.written(p -> p.creditWord(0x1000, 1)));
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ControlProxy p = new ControlProxy(new FrameWriter(out));
    for (long address : new long[] {1, 2, 3, 0x7f00_1006L, -1L}) {
      assertReason(Reason.BAD_VALUE, () -> p.creditWord(address, 9));
    }
    assertEquals(0, out.size());
    byte[] small = new byte[CreditWordFlyweight.LENGTH - 1];
    assertReason(
        Reason.FRAME_TOO_LARGE,
        () -> new CreditWordFlyweight().wrap(small, 0, small.length).encode(0, 0));
  }

  @Test
  void shouldRefuseMessagesFromTheWrongSide() {
    byte[] grant = Frames.serverFrames();
    ProtocolException e = refused(Reason.UNEXPECTED_TYPE, grant, Side.CLIENT);
    assertTrue(e.getMessage().contains("HELLO_ACK"), e.getMessage());
    refusedFromServer(
        Reason.UNEXPECTED_TYPE, Frames.written(p -> p.grantRequest(1, "kv", 1, 0, 1, 1)));
  }

  @Test
  void shouldRefuseAnUnexpectedTypeAtTheStateMachinesRequest() throws IOException {
    Frame f = Frames.reader(Frames.written(p -> p.ping(1, 5)), Side.CLIENT).read();
    assertEquals(
        Reason.UNEXPECTED_TYPE,
        assertThrows(ProtocolException.class, () -> f.expect(MessageType.HELLO)).reason());
    assertEquals(Reason.UNEXPECTED_TYPE, assertThrows(ProtocolException.class, f::grant).reason());
    assertEquals(
        Reason.UNEXPECTED_TYPE, assertThrows(ProtocolException.class, f::creditWord).reason());
  }

  @Test
  void shouldStayFailedAfterABadFrame() throws IOException {
    byte[] bad = raw(0x5352, 1, 0x30, 1, 0, 1, 8, PING_BODY);
    byte[] good = Frames.written(p -> p.ping(1, 5));
    byte[] both = Arrays.copyOf(bad, bad.length + good.length);
    System.arraycopy(good, 0, both, bad.length, good.length);
    FrameReader r = Frames.reader(both, Side.CLIENT);
    assertThrows(ProtocolException.class, r::read);
    assertEquals(Reason.READER_FAILED, assertThrows(ProtocolException.class, r::read).reason());
  }

  @Test
  void shouldNeverWriteAnInvalidFrame() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ControlProxy p = new ControlProxy(new FrameWriter(out));
    assertReason(Reason.BAD_ENUM, () -> p.grantRequest(1, "kv", 0, 0, 1, 1));
    assertReason(Reason.BAD_VALUE, () -> p.grantRequest(1, "kv", 1, Long.MAX_VALUE, 1, 1));
    assertReason(Reason.BAD_STRING, () -> p.grantRequest(1, "Kv", 1, 0, 1, 1));
    assertReason(Reason.STRING_TOO_LONG, () -> p.grantRequest(1, "k".repeat(64), 1, 0, 1, 1));
    assertReason(Reason.BAD_REQUEST_ID, () -> p.grantRequest(0, "kv", 1, 0, 1, 1));
    assertReason(Reason.BAD_VALUE, () -> p.hello(1, 1, 0, new byte[31], Frames.CLIENT_QP));
    assertReason(
        Reason.BAD_VALUE,
        () -> p.helloAck(1, 1, 0, 0, Frames.SERVER_KEY, new byte[8], Frames.SERVER_QP));
    // a receive depth exactly when the capability is shared, and then at least one
    assertReason(
        Reason.BAD_VALUE,
        () ->
            p.helloAck(
                1,
                1,
                Capabilities.RECEIVE_DEPTH,
                0,
                Frames.SERVER_KEY,
                Frames.SESSION_ID,
                Frames.SERVER_QP));
    assertReason(
        Reason.BAD_VALUE,
        () -> p.helloAck(1, 1, 0, 8, Frames.SERVER_KEY, Frames.SESSION_ID, Frames.SERVER_QP));
    assertReason(
        Reason.BAD_VALUE, () -> p.grant(1, 1, "kv", Operations.READ, 0, 1, 1, 0, 0, new byte[0]));
    assertReason(Reason.BAD_VALUE, () -> p.rekey(0, 0));
    assertReason(Reason.BAD_VALUE, () -> p.revoke(0, 0, RevokeReason.REVOKED));
    assertEquals(0, out.size());
  }

  private static void assertReason(Reason reason, Executable call) {
    assertEquals(reason, assertThrows(ProtocolException.class, call).reason());
  }

  @Test
  void shouldKeepBodyBytesOutOfErrorMessages() {
    byte[] body = grantBody(Operations.READ, Frames.filled(32, 0x5a));
    body[GrantFlyweight.NAME_OFFSET] = 'K'; // bad name, key bytes present
    ProtocolException e = refused(Reason.BAD_STRING, raw(MessageType.GRANT, 1, body), Side.SERVER);
    assertFalse(e.getMessage().contains("5a") || e.getMessage().contains("ZZZZ"), e.getMessage());
  }

  @Test
  void shouldRefuseALimitBelowTheLargestMessage() {
    assertThrows(
        IllegalArgumentException.class,
        () ->
            new FrameReader(
                java.io.InputStream.nullInputStream(),
                Side.CLIENT,
                MessageType.largestBodyLength() - 1));
  }
}
