package io.srdma.keys;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.stream.Stream;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class KeyScheduleTest {
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final byte[] ALICE =
      Hex.of("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a");
  private static final byte[] BOB =
      Hex.of("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb");

  /** What one party believes the session's inputs are. */
  static final class View {
    byte[] initiatorPrivate = ALICE;
    byte[] responderPrivate = BOB;
    byte[] binding = Hex.range(0, 32);
    TlsBinding.Kind kind = TlsBinding.Kind.CERTIFICATE_TRANSCRIPT;
    byte[] sessionId = "session-0001".getBytes(StandardCharsets.US_ASCII);
    int initiatorQpn = 0x11;
    int responderQpn = 0x22;

    /** Replaces the public key this party receives from its peer (a man in the middle). */
    byte[] substitutedPeerPublic;
  }

  private final AtomicLong clock = new AtomicLong();

  private KeySchedule establish(Role role, View v) {
    try (X25519KeyPair initiator = X25519KeyPair.fromPrivateKey(v.initiatorPrivate);
        X25519KeyPair responder = X25519KeyPair.fromPrivateKey(v.responderPrivate)) {
      X25519KeyPair local = role == Role.INITIATOR ? initiator : responder;
      byte[] peerPublic =
          v.substitutedPeerPublic != null
              ? v.substitutedPeerPublic
              : (role == Role.INITIATOR ? responder : initiator).publicKey();
      return KeySchedule.builder()
          .role(role)
          .localKey(local)
          .peerPublicKey(peerPublic)
          .binding(TlsBinding.of(v.kind, v.binding))
          .sessionId(v.sessionId)
          .initiatorQpn(v.initiatorQpn)
          .responderQpn(v.responderQpn)
          .graceWindow(Duration.ofSeconds(2))
          .nanoClock(clock::get)
          .establish();
    }
  }

  private static byte[] key(DirectionKeys k) {
    return k.aesKey().getEncoded();
  }

  @Test
  void shouldMatchTheDocumentedScheduleByteForByte() {
    // expected values computed independently from docs/keys.md with Python's hmac/hashlib
    try (KeySchedule i = establish(Role.INITIATOR, new View())) {
      SessionKeys e0 = i.current();
      assertEquals(
          "4a563beed403796aaadbca5fbf22d92b24b93fc9ec309efe1c08b8664cd56a5b",
          Hex.of(key(e0.send())));
      assertEquals(0x67719142, e0.send().noncePrefix());
      assertEquals(
          "259c5973e98faa3a824faed2a77b6965b225bc4e42f1b55b6614ce3c638dc7a1",
          Hex.of(key(e0.receive())));
      assertEquals(0x9aeae03f, e0.receive().noncePrefix());
      assertEquals(
          "62f0e3c1eb23f36498b97b09d46da7f89702e29f89ef06db7c37b50ad66943d9",
          Hex.of(e0.confirmation()));
      SessionKeys e1 = i.rekey();
      assertEquals(1, e1.epoch());
      assertEquals(
          "a6577e52790e41f8ab867f1224c147b93a6ef645571da117bfd56629cdfb0a11",
          Hex.of(key(e1.send())));
      assertEquals(0x4bc73792, e1.send().noncePrefix());
      assertEquals(
          "17a3ff2964b9168a50f9a8073f0aaccbffc9f1969f88b167e5824fa42771da89",
          Hex.of(key(e1.receive())));
      assertEquals(
          "f042645bd94c050b2684298a0f22bf2e6a453a28a10c8937644195b64a4fafd9",
          Hex.of(e1.confirmation()));
    }
  }

  @Test
  void shouldDeriveEqualKeysAtBothEnds() throws Exception {
    try (KeySchedule i = establish(Role.INITIATOR, new View());
        KeySchedule r = establish(Role.RESPONDER, new View())) {
      assertArrayEquals(key(i.sendKeys()), key(r.receiveKeys(0)));
      assertArrayEquals(key(r.sendKeys()), key(i.receiveKeys(0)));
      assertEquals(i.sendKeys().noncePrefix(), r.receiveKeys(0).noncePrefix());
      i.current().verifyPeerConfirmation(r.current().confirmation());
      r.current().verifyPeerConfirmation(i.current().confirmation());

      // the keys work with the JDK's AES-GCM end to end
      byte[] nonce = new byte[DirectionKeys.NONCE_LENGTH];
      i.sendKeys().writeNonce(7, nonce, 0);
      Cipher seal = Cipher.getInstance("AES/GCM/NoPadding");
      seal.init(Cipher.ENCRYPT_MODE, i.sendKeys().aesKey(), new GCMParameterSpec(128, nonce));
      byte[] sealed = seal.doFinal("hello".getBytes(StandardCharsets.US_ASCII));
      Cipher open = Cipher.getInstance("AES/GCM/NoPadding");
      open.init(Cipher.DECRYPT_MODE, r.receiveKeys(0).aesKey(), new GCMParameterSpec(128, nonce));
      assertEquals("hello", new String(open.doFinal(sealed), StandardCharsets.US_ASCII));
    }
  }

  @Test
  void shouldDeriveEqualKeysFromFreshEphemeralKeys() {
    try (X25519KeyPair a = X25519KeyPair.generate(RANDOM);
        X25519KeyPair b = X25519KeyPair.generate(RANDOM)) {
      byte[] aPub = a.publicKey();
      byte[] bPub = b.publicKey();
      byte[] binding = new byte[32];
      RANDOM.nextBytes(binding);
      try (KeySchedule i = fresh(Role.INITIATOR, a, bPub, binding);
          KeySchedule r = fresh(Role.RESPONDER, b, aPub, binding)) {
        assertArrayEquals(key(i.sendKeys()), key(r.receiveKeys(0)));
        r.current().verifyPeerConfirmation(i.current().confirmation());
        assertTrue(a.isClosed(), "establish() closes the ephemeral key");
      }
    }
  }

  private static KeySchedule fresh(Role role, X25519KeyPair local, byte[] peer, byte[] binding) {
    return KeySchedule.builder()
        .role(role)
        .localKey(local)
        .peerPublicKey(peer)
        .binding(TlsBinding.of(TlsBinding.Kind.CERTIFICATE_TRANSCRIPT, binding))
        .sessionId(new byte[] {1, 2, 3})
        .initiatorQpn(1)
        .responderQpn(2)
        .establish();
  }

  @Test
  void shouldGiveDifferentKeysPerDirectionSessionAndEpoch() {
    View other = new View();
    other.sessionId = "session-0002".getBytes(StandardCharsets.US_ASCII);
    try (KeySchedule a = establish(Role.INITIATOR, new View());
        KeySchedule b = establish(Role.INITIATOR, other)) {
      byte[] a0send = key(a.sendKeys());
      byte[] a0recv = key(a.receiveKeys(0));
      assertFalse(Arrays.equals(a0send, a0recv), "directions");
      assertNotEquals(a.sendKeys().noncePrefix(), a.receiveKeys(0).noncePrefix());
      assertFalse(Arrays.equals(a0send, key(b.sendKeys())), "sessions");
      a.rekey();
      byte[] a1send = key(a.sendKeys());
      assertFalse(Arrays.equals(a0send, a1send), "epochs");
      a.rekey();
      assertFalse(Arrays.equals(a1send, key(a.sendKeys())), "epochs");
      assertFalse(Arrays.equals(a0send, key(a.sendKeys())), "epochs");
    }
  }

  static Stream<Arguments> boundInputs() {
    Consumer<View> binding = v -> v.binding = Hex.range(1, 33);
    Consumer<View> kind = v -> v.kind = TlsBinding.Kind.EXPORTER;
    Consumer<View> session = v -> v.sessionId = "session-0003".getBytes(StandardCharsets.US_ASCII);
    Consumer<View> initiatorQpn = v -> v.initiatorQpn = 0x12;
    Consumer<View> responderQpn = v -> v.responderQpn = 0x23;
    Consumer<View> swappedQpns =
        v -> {
          v.initiatorQpn = 0x22;
          v.responderQpn = 0x11;
        };
    Consumer<View> ephemeral =
        v -> {
          try (X25519KeyPair mallory = X25519KeyPair.generate(RANDOM)) {
            v.substitutedPeerPublic = mallory.publicKey();
          }
        };
    return Stream.of(
        Arguments.of("TLS binding", binding),
        Arguments.of("binding kind", kind),
        Arguments.of("session id", session),
        Arguments.of("initiator QPN", initiatorQpn),
        Arguments.of("responder QPN", responderQpn),
        Arguments.of("QPN order", swappedQpns),
        Arguments.of("peer ephemeral key", ephemeral));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("boundInputs")
  void shouldBreakConfirmationWhenABoundInputDiffers(String name, Consumer<View> change) {
    View changed = new View();
    change.accept(changed);
    try (KeySchedule i = establish(Role.INITIATOR, new View());
        KeySchedule r = establish(Role.RESPONDER, changed)) {
      SessionKeys keys = r.current();
      byte[] sendKey = keys.send().keyArrayForTest();
      KeyExchangeException e =
          assertThrows(
              KeyExchangeException.class,
              () -> keys.verifyPeerConfirmation(i.current().confirmation()));
      assertEquals(KeyExchangeException.Reason.KEY_CONFIRMATION_FAILED, e.reason());
      assertTrue(keys.isClosed(), "a mismatch closes the keys");
      assertTrue(Bytes.isZero(sendKey), "and wipes them");
    }
  }

  @Test
  void shouldRefuseAReflectedConfirmation() {
    try (KeySchedule i = establish(Role.INITIATOR, new View())) {
      SessionKeys keys = i.current();
      byte[] own = keys.confirmation();
      String sendKey = Hex.of(key(keys.send()));
      KeyExchangeException e =
          assertThrows(KeyExchangeException.class, () -> keys.verifyPeerConfirmation(own));
      assertEquals(KeyExchangeException.Reason.KEY_CONFIRMATION_FAILED, e.reason());
      String message = e.getMessage();
      assertFalse(message.contains(Hex.of(own).substring(0, 8)), message);
      assertFalse(message.contains(sendKey.substring(0, 8)), message);
    }
  }

  @Test
  void shouldRefuseATruncatedConfirmation() {
    try (KeySchedule i = establish(Role.INITIATOR, new View());
        KeySchedule r = establish(Role.RESPONDER, new View())) {
      byte[] good = r.current().confirmation();
      assertThrows(
          KeyExchangeException.class,
          () -> i.current().verifyPeerConfirmation(Arrays.copyOf(good, 16)));
    }
  }

  @Test
  void shouldZeroEveryKeyOnClose() {
    KeySchedule i = establish(Role.INITIATOR, new View());
    SessionKeys e0 = i.current();
    DirectionKeys send0 = e0.send();
    DirectionKeys recv0 = e0.receive();
    byte[][] arrays = {
      send0.keyArrayForTest(),
      send0.noncePrefixArrayForTest(),
      recv0.keyArrayForTest(),
      recv0.noncePrefixArrayForTest(),
      e0.localConfirmationArrayForTest(),
      i.secretArrayForTest()
    };
    DirectionKeys lookahead = i.receiveKeys(1);
    byte[] lookaheadKey = lookahead.keyArrayForTest();
    for (byte[] a : arrays) {
      assertFalse(Bytes.isZero(a));
    }
    i.close();
    for (byte[] a : arrays) {
      assertTrue(Bytes.isZero(a));
    }
    assertTrue(Bytes.isZero(lookaheadKey));
    assertTrue(send0.isClosed() && recv0.isClosed() && e0.isClosed() && i.isClosed());
    assertEquals(
        KeyExchangeException.Reason.CLOSED,
        assertThrows(KeyExchangeException.class, send0::noncePrefix).reason());
    assertEquals(
        KeyExchangeException.Reason.CLOSED,
        assertThrows(KeyExchangeException.class, i::sendKeys).reason());
  }

  @Test
  void shouldStopHandingOutAKeyThroughItsJcaViewOnceClosed() {
    KeySchedule i = establish(Role.INITIATOR, new View());
    javax.crypto.SecretKey view = i.sendKeys().aesKey();
    i.close();
    assertTrue(view.isDestroyed());
    assertThrows(KeyExchangeException.class, view::getEncoded);
  }

  @Test
  void shouldKeepPreviousEpochForTheGraceWindowOnlyThenWipeIt() {
    try (KeySchedule i = establish(Role.INITIATOR, new View());
        KeySchedule r = establish(Role.RESPONDER, new View())) {
      DirectionKeys old = r.receiveKeys(0);
      byte[] oldKey = old.keyArrayForTest();
      i.rekey();
      r.rekey();
      assertEquals(1, r.epoch());
      assertSame(old, r.receiveKeys(0), "in-flight records of epoch 0 still open");
      clock.addAndGet(Duration.ofMillis(1999).toNanos());
      assertFalse(r.retireExpired());
      clock.addAndGet(Duration.ofMillis(1).toNanos());
      assertEquals(
          KeyExchangeException.Reason.EPOCH_REJECTED,
          assertThrows(KeyExchangeException.class, () -> r.receiveKeys(0)).reason());
      assertTrue(old.isClosed());
      assertTrue(Bytes.isZero(oldKey));
      assertNull(r.previousForTest());
      assertArrayEquals(key(i.sendKeys()), key(r.receiveKeys(1)));
    }
  }

  @Test
  void shouldWipeAnOlderEpochAtOnceOnASecondRekey() {
    try (KeySchedule r = establish(Role.RESPONDER, new View())) {
      DirectionKeys e0 = r.receiveKeys(0);
      r.rekey();
      r.rekey();
      assertTrue(e0.isClosed());
      assertEquals(
          KeyExchangeException.Reason.EPOCH_REJECTED,
          assertThrows(KeyExchangeException.class, () -> r.receiveKeys(0)).reason());
    }
  }

  @Test
  void shouldDeriveTheNextEpochAheadWithoutCommitting() {
    try (KeySchedule i = establish(Role.INITIATOR, new View());
        KeySchedule r = establish(Role.RESPONDER, new View())) {
      i.rekey();
      DirectionKeys ahead = r.receiveKeys(1);
      assertEquals(0, r.epoch(), "looking ahead does not rekey");
      assertArrayEquals(key(i.sendKeys()), key(ahead));
      assertEquals(
          KeyExchangeException.Reason.EPOCH_REJECTED,
          assertThrows(KeyExchangeException.class, () -> r.receiveKeys(2)).reason());
      r.rekey();
      assertSame(ahead, r.receiveKeys(1));
      r.current().verifyPeerConfirmation(i.current().confirmation());
    }
  }

  @Test
  void shouldRejectEpochsOutsideTheWindow() {
    try (KeySchedule r = establish(Role.RESPONDER, new View())) {
      for (int epoch : new int[] {-1, 2, Integer.MAX_VALUE, Integer.MIN_VALUE}) {
        assertEquals(
            KeyExchangeException.Reason.EPOCH_REJECTED,
            assertThrows(KeyExchangeException.class, () -> r.receiveKeys(epoch)).reason());
      }
    }
  }

  @Test
  void shouldNeverPrintKeyMaterial() {
    try (KeySchedule i = establish(Role.INITIATOR, new View())) {
      String hexKey = Hex.of(key(i.sendKeys()));
      String decimalPrefix = Integer.toString(i.sendKeys().noncePrefix());
      for (Object o :
          new Object[] {i, i.current(), i.sendKeys(), i.sendKeys().aesKey(), i.receiveKeys(0)}) {
        String s = o.toString();
        assertFalse(s.contains(hexKey) || s.contains(hexKey.substring(0, 8)), s);
        assertFalse(s.contains(decimalPrefix), s);
      }
    }
  }

  @Test
  void shouldRefuseMissingOrMalformedInputs() {
    View v = new View();
    v.sessionId = new byte[0];
    assertEquals(
        KeyExchangeException.Reason.BAD_ARGUMENT,
        assertThrows(KeyExchangeException.class, () -> establish(Role.INITIATOR, v)).reason());
    assertEquals(
        KeyExchangeException.Reason.BAD_ARGUMENT,
        assertThrows(KeyExchangeException.class, () -> KeySchedule.builder().establish()).reason());
    View low = new View();
    low.substitutedPeerPublic = new byte[32];
    assertEquals(
        KeyExchangeException.Reason.BAD_PUBLIC_KEY,
        assertThrows(KeyExchangeException.class, () -> establish(Role.INITIATOR, low)).reason());
  }

  @Test
  void shouldWriteNonceAsPrefixThenBigEndianSequence() {
    try (KeySchedule i = establish(Role.INITIATOR, new View())) {
      byte[] nonce = new byte[14];
      i.sendKeys().writeNonce(0x0102030405060708L, nonce, 1);
      assertEquals("0067719142010203040506070800", Hex.of(nonce));
    }
  }
}
