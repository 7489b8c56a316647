package io.srdma.channel.record;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Records are the same whichever AES-GCM sealed them: each provider that loads here seals, from
 * heap and direct plaintext into heap and direct slots, and every provider opens the result into
 * heap and direct destinations (and refuses it tampered, leaving the replay window unmoved). A
 * provider's record layer that differs from the JDK's by one byte fails here.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RecordProviderInteropTest {
  private static final int MAX = 64 * 1024;
  private static final RecordBinding KV = RecordBinding.of(7, "acme", "kvcache");

  @Test
  void shouldOpenEveryProvidersRecordsWithEveryProvider() throws Exception {
    List<AeadProvider> providers = new java.util.ArrayList<>(List.of(AeadProvider.jdk()));
    for (java.util.function.Supplier<AeadProvider> s :
        List.<java.util.function.Supplier<AeadProvider>>of(
            AeadProvider::accp,
            AeadProvider::openssl,
            AeadProvider::gcrypt,
            AeadProvider::ipsecMb)) {
      try {
        providers.add(s.get());
      } catch (AeadException absent) {
        // measured against the JDK alone where it is missing
      }
    }
    Assumptions.assumeTrue(
        providers.size() > 1,
        "none of ACCP, libcrypto, libgcrypt and intel-ipsec-mb loads here: nothing to compare");
    Random random = new Random(16);
    for (int size : new int[] {0, 1, 64, 4096, 65_536}) {
      byte[] plain = new byte[size];
      random.nextBytes(plain);
      for (AeadProvider sealing : providers) {
        for (boolean directPlain : new boolean[] {true, false}) {
          for (boolean directSlot : new boolean[] {true, false}) {
            try (SessionPair session = new SessionPair()) {
              RecordSealer sealer =
                  new RecordSealer(new SealingKeys(session.initiator.sendKeys()), MAX, sealing);
              ByteBuffer p = buffer(directPlain, size + 3).put(3, plain);
              ByteBuffer slot = buffer(directSlot, 100 + size + RecordSealer.OVERHEAD);
              int n = sealer.seal(p, 3, size, KV, 4096, slot, 100);
              assertEquals(size + RecordSealer.OVERHEAD, n);
              for (AeadProvider opening : providers) {
                String what = sealing.name() + " -> " + opening.name() + ", " + size + " B";
                RecordOpener opener =
                    new RecordOpener(e -> session.responder.receiveKeys(e), MAX, true, opening);
                ByteBuffer tampered = ByteBuffer.allocateDirect(100 + n).put(0, slot, 0, 100 + n);
                tampered.put(100 + n - 1, (byte) (tampered.get(100 + n - 1) ^ 1));
                ByteBuffer to = buffer(!directSlot, size);
                assertEquals(
                    OpenResult.AUTH_FAILED, opener.open(tampered, 100, n, KV, 4096, to), what);
                assertEquals(OpenResult.OK, opener.open(slot, 100, n, KV, 4096, to), what);
                byte[] got = new byte[size];
                to.flip().get(got);
                assertArrayEquals(plain, got, what);
                to.clear();
                assertEquals(OpenResult.REPLAYED, opener.open(slot, 100, n, KV, 4096, to), what);
              }
            }
          }
        }
      }
    }
  }

  private static ByteBuffer buffer(boolean direct, int n) {
    return direct ? ByteBuffer.allocateDirect(n) : ByteBuffer.allocate(n);
  }
}
