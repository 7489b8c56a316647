package io.srdma.channel.record;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.keys.Direction;
import io.srdma.keys.DirectionKeys;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Owner records (signed, versioned, generation-bound) and the reader's region keyring. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class OwnerRecordTest {
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final int MAX = 4096;
  private final KeyPair owner = OwnerSigning.generate(RANDOM);

  private static DirectionKeys key(int generation) {
    byte[] k = new byte[32];
    byte[] p = new byte[4];
    RANDOM.nextBytes(k);
    RANDOM.nextBytes(p);
    return DirectionKeys.fromMaterial(Direction.RESPONDER_TO_INITIATOR, generation, k, p);
  }

  private OwnerOpener opener(DirectionKeys keys, boolean track) {
    return new OwnerOpener(
        g -> g == keys.epoch() ? keys : null, owner.getPublic(), "acme", "kv", MAX, track);
  }

  private byte[] seal(DirectionKeys keys, String text, long version, long offset) {
    return seal(keys, text, version, false, offset);
  }

  private byte[] seal(
      DirectionKeys keys, String text, long version, boolean followed, long offset) {
    OwnerSealer s = new OwnerSealer(keys, owner.getPrivate(), "acme", "kv", MAX);
    byte[] plain = text.getBytes(StandardCharsets.UTF_8);
    ByteBuffer out = ByteBuffer.allocate(plain.length + OwnerSealer.OVERHEAD);
    assertEquals(out.capacity(), s.seal(ByteBuffer.wrap(plain), version, followed, offset, out, 0));
    return out.array();
  }

  private static OpenResult open(OwnerOpener o, byte[] record, long offset) {
    return o.open(ByteBuffer.wrap(record), 0, record.length, offset, ByteBuffer.allocate(MAX));
  }

  @Test
  void opensWhatTheOwnerSealedAndNothingElse() {
    DirectionKeys keys = key(3);
    byte[] r = seal(keys, "model weights", 7, 4096);
    OwnerOpener o = opener(keys, true);
    ByteBuffer plain = ByteBuffer.allocate(MAX);
    assertEquals(OpenResult.OK, o.open(ByteBuffer.wrap(r), 0, r.length, 4096, plain));
    assertEquals(
        "model weights", new String(plain.array(), 0, plain.position(), StandardCharsets.UTF_8));
    assertEquals(7, o.lastVersion());
    assertEquals(3, o.lastGeneration());
    assertEquals(r.length, o.lastRecordLength());

    assertEquals(OpenResult.BAD_SIGNATURE, open(o, r, 8192), "relocated");
    for (int at : new int[] {0, 8, 20, r.length - 72, r.length - 65, r.length - 1}) {
      byte[] t = r.clone();
      t[at] ^= 1;
      OpenResult got = open(opener(keys, false), t, 4096);
      assertTrue(
          got == OpenResult.BAD_SIGNATURE || got == OpenResult.MALFORMED,
          "flipped byte " + at + ": " + got);
    }
    assertEquals(OpenResult.TRUNCATED, o.open(ByteBuffer.wrap(r), 0, r.length - 1, 4096, plain));
    assertEquals(
        OpenResult.UNKNOWN_EPOCH, open(opener(key(4), false), r, 4096), "other generation");
  }

  @Test
  void aHolderOfTheRegionKeyCannotForgeAnOwnerRecord() {
    DirectionKeys keys = key(1);
    KeyPair attacker = OwnerSigning.generate(RANDOM);
    // Sealed with the real region key and a valid signature, but by a key that is not the owner's.
    OwnerSealer forger = new OwnerSealer(keys, attacker.getPrivate(), "acme", "kv", MAX);
    ByteBuffer forged = ByteBuffer.allocate(5 + OwnerSealer.OVERHEAD);
    forger.seal(ByteBuffer.wrap("evil!".getBytes(StandardCharsets.UTF_8)), 99, false, 0, forged, 0);
    assertEquals(OpenResult.BAD_SIGNATURE, open(opener(keys, true), forged.array(), 0));
    // A plain record under the region key with the owner binding and no real signature.
    RecordSealer plain = new RecordSealer(keys, MAX);
    ByteBuffer bare = ByteBuffer.allocate(5 + OwnerSealer.OVERHEAD);
    plain.seal(
        ByteBuffer.wrap("evil!".getBytes(StandardCharsets.UTF_8)),
        RecordBinding.owner("acme", "kv", 1, 99),
        0,
        bare,
        0);
    bare.putLong(5 + RecordSealer.OVERHEAD, 99);
    assertEquals(OpenResult.BAD_SIGNATURE, open(opener(keys, true), bare.array(), 0));
  }

  @Test
  void theFollowedBitIsSignedAndDoesNotCountAsVersion() {
    DirectionKeys keys = key(2);
    byte[] last = seal(keys, "head", 5, false, 0);
    byte[] followed = seal(keys, "head", 6, true, 0);
    OwnerOpener o = opener(keys, true);
    assertEquals(OpenResult.OK, open(o, last, 0));
    assertFalse(o.lastFollowed());
    assertEquals(OpenResult.OK, open(o, followed, 0));
    assertTrue(o.lastFollowed());
    assertEquals(6, o.lastVersion(), "bit 63 is not part of the version");
    // cleared by whoever may write the region: the signature (and the AEAD binding) cover it
    byte[] cleared = followed.clone();
    cleared[followed.length - OwnerSealer.TRAILER_LENGTH] &= 0x7f;
    assertEquals(OpenResult.BAD_SIGNATURE, open(opener(keys, false), cleared, 0));
    // and the older record that says nothing follows is a rollback once the newer one was seen
    assertEquals(OpenResult.ROLLED_BACK, open(o, last, 0));
    assertThrows(
        IllegalArgumentException.class,
        () -> seal(keys, "x", OwnerSealer.FOLLOWED | 1, false, 0),
        "a version of 2^63 or more would collide with the bit");
  }

  @Test
  void anOlderVersionPutBackIsRefusedOnceANewerOneWasSeen() {
    DirectionKeys keys = key(0);
    byte[] v1 = seal(keys, "balance=100", 1, 0);
    byte[] v2 = seal(keys, "balance=000", 2, 0);
    OwnerOpener o = opener(keys, true);
    assertEquals(OpenResult.OK, open(o, v1, 0));
    assertEquals(OpenResult.OK, open(o, v2, 0));
    assertEquals(OpenResult.OK, open(o, v2, 0), "the same version again is fine");
    assertEquals(OpenResult.ROLLED_BACK, open(o, v1, 0));
    assertEquals(OpenResult.OK, open(o, seal(keys, "other place", 1, 512), 512), "per offset");
    assertEquals(OpenResult.OK, open(opener(keys, false), v1, 0), "without tracking");
  }

  @Test
  void keyringMovesForwardOnlyAndWipesThePreviousKeyAfterItsGrace() throws Exception {
    byte[] pub = OwnerSigning.raw(owner.getPublic());
    RegionKeyring ring = new RegionKeyring(material(1, pub), Duration.ofMillis(200));
    assertEquals(1, ring.generation());
    DirectionKeys first = ring.keys(1);
    assertNotNull(first);
    assertTrue(ring.install(material(2, pub)));
    assertSame(first, ring.keys(1), "previous generation within its grace");
    assertNotNull(ring.keys(2));
    assertFalse(ring.install(material(2, pub)), "same generation ignored");
    assertFalse(ring.install(material(1, pub)), "older generation ignored");
    assertEquals(2, ring.generation());
    // the grace is 200 ms: wait for its end, bounded, rather than sleeping past it
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (ring.keys(1) != null && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertNull(ring.keys(1), "previous generation after its grace");
    assertTrue(first.isClosed(), "previous key wiped");
    byte[] otherOwner = OwnerSigning.raw(OwnerSigning.generate(RANDOM).getPublic());
    byte[] m = material(3, otherOwner);
    assertThrows(RecordException.class, () -> ring.install(m));
    assertTrue(Arrays.equals(m, new byte[m.length]), "refused material wiped too");
    assertThrows(RecordException.class, () -> ring.install(new byte[40]));
    DirectionKeys second = ring.keys(2);
    ring.close();
    assertTrue(ring.isClosed());
    assertTrue(second.isClosed());
    assertNull(ring.keys(2));
  }

  @Test
  void noisyAndMutatedBytesNeverOpenAndNeverThrow() {
    DirectionKeys keys = key(2);
    byte[] genuine = seal(keys, "a genuine owner record", 5, 64);
    OwnerOpener o = opener(keys, true);
    java.util.Random r = new java.util.Random(14);
    for (int i = 0; i < 3000; i++) {
      byte[] b;
      if (i % 2 == 0) {
        b = new byte[r.nextInt(genuine.length + 40)];
        r.nextBytes(b);
        if (b.length >= 24 && r.nextBoolean()) {
          System.arraycopy(genuine, 0, b, 0, 24); // a plausible header over noise
        }
      } else {
        b = genuine.clone();
        int flips = 1 + r.nextInt(3);
        for (int k = 0; k < flips; k++) {
          b[r.nextInt(b.length)] ^= (byte) (1 + r.nextInt(255));
        }
      }
      ByteBuffer out = ByteBuffer.allocate(MAX);
      OpenResult got = o.open(ByteBuffer.wrap(b), 0, b.length, 64, out);
      assertTrue(got != OpenResult.OK, "input " + i + " opened");
      assertEquals(0, out.position(), "nothing written for a refused record");
    }
    assertEquals(OpenResult.OK, open(o, genuine, 64), "the genuine record still opens");
  }

  @Test
  void keyringWipesTheMaterialItWasGiven() {
    byte[] m = material(5, OwnerSigning.raw(owner.getPublic()));
    RegionKeyring ring = new RegionKeyring(m);
    assertArrayEquals(new byte[m.length], m);
    assertEquals(5, ring.generation());
    ring.close();
  }

  private static byte[] material(int generation, byte[] ownerPublic) {
    byte[] k = new byte[32];
    byte[] p = new byte[4];
    RANDOM.nextBytes(k);
    RANDOM.nextBytes(p);
    return RegionKeyMaterial.encode(generation, k, p, ownerPublic);
  }
}
