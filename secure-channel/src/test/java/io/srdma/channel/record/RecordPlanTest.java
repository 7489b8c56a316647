package io.srdma.channel.record;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A record layer on a split {@link AeadPlan} seals and opens each record with the provider of its
 * size — a defective provider on one side of the bulk size shows which one ran — and its records
 * are the same AES-256-GCM records any single provider opens, tampered ones refused on both sides
 * of the bulk size.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RecordPlanTest {
  private static final int MAX = 64 * 1024;
  private static final int BULK_FROM = 4096;
  private static final RecordBinding KV = RecordBinding.of(7, "acme", "kvcache");
  private static final int[] SIZES = {0, 1, 64, BULK_FROM - 1, BULK_FROM, 20_000, MAX};

  @Test
  void shouldSealEachRecordWithTheProviderOfItsSize() throws Exception {
    // a bulk provider that flips a bit of everything it seals: records from the bulk size up, and
    // only those, fail to open with the JDK alone
    AeadPlan plan = AeadPlan.split(AeadProvider.jdk(), FakeGcmProvider.aead("corrupt"), BULK_FROM);
    try (SessionPair session = new SessionPair()) {
      RecordSealer sealer =
          new RecordSealer(new SealingKeys(session.initiator.sendKeys()), MAX, plan);
      RecordOpener jdk =
          new RecordOpener(e -> session.responder.receiveKeys(e), MAX, true, AeadProvider.jdk());
      for (int size : SIZES) {
        ByteBuffer slot = ByteBuffer.allocateDirect(size + RecordSealer.OVERHEAD);
        int n = sealer.seal(ByteBuffer.allocate(size), 0, size, KV, 0, slot, 0);
        OpenResult r = jdk.open(slot, 0, n, KV, 0, ByteBuffer.allocate(size));
        assertEquals(size < BULK_FROM ? OpenResult.OK : OpenResult.AUTH_FAILED, r, size + " B");
      }
    }
  }

  @Test
  void shouldOpenEachRecordWithTheProviderOfItsSize() throws Exception {
    // an opener whose bulk provider does not check tags opens tampered bulk records; its small
    // provider, the JDK, refuses tampered small ones
    AeadPlan plan =
        AeadPlan.split(AeadProvider.jdk(), FakeGcmProvider.aead("unchecked"), BULK_FROM);
    try (SessionPair session = new SessionPair()) {
      RecordSealer sealer =
          new RecordSealer(new SealingKeys(session.initiator.sendKeys()), MAX, AeadProvider.jdk());
      RecordOpener opener =
          new RecordOpener(e -> session.responder.receiveKeys(e), MAX, true, plan);
      for (int size : SIZES) {
        if (size == 0) {
          continue; // nothing to flip but the tag, which the defective one ignores too
        }
        ByteBuffer slot = ByteBuffer.allocateDirect(size + RecordSealer.OVERHEAD);
        int n = sealer.seal(ByteBuffer.allocate(size), 0, size, KV, 0, slot, 0);
        slot.put(
            RecordFlyweight.HEADER_LENGTH, (byte) (slot.get(RecordFlyweight.HEADER_LENGTH) ^ 1));
        OpenResult r = opener.open(slot, 0, n, KV, 0, ByteBuffer.allocate(size));
        assertEquals(size < BULK_FROM ? OpenResult.AUTH_FAILED : OpenResult.OK, r, size + " B");
      }
    }
  }

  @Test
  void shouldInteroperateWithEverySingleProviderOnBothSidesOfTheBulkSize() throws Exception {
    List<AeadProvider> providers = providers();
    Random random = new Random(17);
    for (AeadProvider small : providers) {
      for (AeadProvider bulk : providers) {
        if (small.name().equals(bulk.name())) {
          continue;
        }
        AeadPlan plan = AeadPlan.split(small, bulk, BULK_FROM);
        for (int size : SIZES) {
          byte[] plain = new byte[size];
          random.nextBytes(plain);
          for (boolean direct : new boolean[] {true, false}) {
            String what = plan + ", " + size + " B, direct " + direct;
            try (SessionPair session = new SessionPair()) {
              RecordSealer sealer =
                  new RecordSealer(new SealingKeys(session.initiator.sendKeys()), MAX, plan);
              ByteBuffer slot = buffer(direct, 100 + size + RecordSealer.OVERHEAD);
              int n = sealer.seal(buffer(!direct, size).put(0, plain), 0, size, KV, 8, slot, 100);
              assertEquals(size + RecordSealer.OVERHEAD, n, what);
              List<RecordOpener> openers =
                  List.of(
                      new RecordOpener(e -> session.responder.receiveKeys(e), MAX, true, plan),
                      new RecordOpener(e -> session.responder.receiveKeys(e), MAX, true, small),
                      new RecordOpener(e -> session.responder.receiveKeys(e), MAX, true, bulk));
              for (RecordOpener opener : openers) {
                ByteBuffer tampered = ByteBuffer.allocateDirect(100 + n).put(0, slot, 0, 100 + n);
                tampered.put(100 + n - 1, (byte) (tampered.get(100 + n - 1) ^ 1));
                ByteBuffer to = buffer(direct, size);
                assertEquals(
                    OpenResult.AUTH_FAILED, opener.open(tampered, 100, n, KV, 8, to), what);
                assertEquals(OpenResult.OK, opener.open(slot, 100, n, KV, 8, to), what);
                byte[] got = new byte[size];
                to.flip().get(got);
                assertArrayEquals(plain, got, what);
                assertEquals(
                    OpenResult.REPLAYED, opener.open(slot, 100, n, KV, 8, to.clear()), what);
              }
            }
          }
        }
      }
    }
  }

  @Test
  void shouldSealAndOpenOnlyTheSmallSizesWhenNoRecordReachesTheBulkSize() throws Exception {
    AeadPlan plan = AeadPlan.split(AeadProvider.jdk(), FakeGcmProvider.aead("corrupt"), BULK_FROM);
    assertTrue(plan.upTo(BULK_FROM - 1).isSingle());
    assertSame(plan, plan.upTo(BULK_FROM));
    try (SessionPair session = new SessionPair()) {
      RecordSealer sealer =
          new RecordSealer(new SealingKeys(session.initiator.sendKeys()), BULK_FROM - 1, plan);
      ByteBuffer slot = ByteBuffer.allocateDirect(BULK_FROM + RecordSealer.OVERHEAD);
      assertEquals(
          RecordSealer.TOO_LARGE,
          sealer.seal(ByteBuffer.allocate(BULK_FROM), 0, BULK_FROM, KV, 0, slot, 0));
      int n = sealer.seal(ByteBuffer.allocate(100), 0, 100, KV, 0, slot, 0);
      RecordOpener jdk =
          new RecordOpener(e -> session.responder.receiveKeys(e), MAX, true, AeadProvider.jdk());
      assertEquals(OpenResult.OK, jdk.open(slot, 0, n, KV, 0, ByteBuffer.allocate(100)));
    }
  }

  @Test
  void shouldNameAPlanAndRefuseABadBulkSize() {
    AeadProvider jdk = AeadProvider.jdk();
    AeadProvider twin = new AeadProvider("twin", jdk.newCipher().getProvider(), "the JDK again");
    assertTrue(AeadPlan.split(jdk, AeadProvider.jdk(), 4096).isSingle(), "one name: one provider");
    assertEquals("jdk", AeadPlan.single(jdk).label());
    AeadPlan p = AeadPlan.split(jdk, twin, 16 * 1024);
    assertEquals("jdk under 16 KiB, twin from 16 KiB", p.label());
    assertTrue(p.description().contains("twin (the JDK again) from 16 KiB"), p.description());
    assertSame(jdk, p.forPayload(16 * 1024 - 1));
    assertSame(twin, p.forPayload(16 * 1024));
    assertEquals(Integer.MAX_VALUE, AeadPlan.single(jdk).bulkFrom());
    assertThrows(IllegalArgumentException.class, () -> AeadPlan.split(jdk, twin, 0));
  }

  /** The JDK, a second JCE provider (the JDK's under another name), and each native one here. */
  private static List<AeadProvider> providers() {
    AeadProvider jdk = AeadProvider.jdk();
    List<AeadProvider> all =
        new ArrayList<>(
            List.of(jdk, new AeadProvider("twin", jdk.newCipher().getProvider(), "JDK again")));
    for (Supplier<AeadProvider> s :
        List.<Supplier<AeadProvider>>of(
            AeadProvider::accp, AeadProvider::openssl, AeadProvider::gcrypt)) {
      try {
        all.add(s.get());
      } catch (AeadException absent) {
        // the plans are made of the providers this machine has
      }
    }
    return all;
  }

  private static ByteBuffer buffer(boolean direct, int n) {
    return direct ? ByteBuffer.allocateDirect(n) : ByteBuffer.allocate(n);
  }
}
