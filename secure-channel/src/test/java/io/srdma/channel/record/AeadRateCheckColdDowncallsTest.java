package io.srdma.channel.record;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The rate check does not settle on downcalls the compiler has not reached yet: a candidate whose
 * per-record calls run slower than the same library through jnr-ffi is warmed and measured
 * (bounded) until it catches up, and the check says so when it never does. The stand-in is
 * libcrypto through jnr-ffi made four times slower (each record sealed or opened four times over,
 * to the same bytes) for a while, with libcrypto through jnr-ffi as its reference — as Java 22+'s
 * downcalls behave while only C1 has compiled their callers.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AeadRateCheckColdDowncallsTest {
  /** libcrypto through jnr-ffi, each call made four times until {@code slowUntil}. */
  private static final class SlowDowncalls extends ForwardingGcmLibrary {
    private final long slowUntil;

    SlowDowncalls(GcmLibrary jnr, long slowForNanos) {
      super(jnr);
      this.slowUntil =
          slowForNanos == Long.MAX_VALUE ? Long.MAX_VALUE : System.nanoTime() + slowForNanos;
    }

    private int times() {
      return System.nanoTime() - slowUntil < 0 ? 4 : 1;
    }

    @Override
    public String name() {
      return "slow-downcalls";
    }

    @Override
    public String version() {
      return "libcrypto, made slow (test)";
    }

    @Override
    public GcmLibrary jnr() {
      return real;
    }

    @Override
    public boolean seal(
        long ctx,
        long nonce,
        long aad,
        int aadLength,
        long in,
        ByteBuffer pinnedIn,
        long out,
        int length,
        long word) {
      boolean ok = true;
      for (int i = times(); i > 0; i--) {
        ok &= real.seal(ctx, nonce, aad, aadLength, in, pinnedIn, out, length, word);
      }
      return ok;
    }

    @Override
    public int open(
        long ctx,
        long nonce,
        long aad,
        int aadLength,
        long in,
        long out,
        ByteBuffer pinnedOut,
        int length,
        long word) {
      int r = 1;
      for (int i = times(); i > 0 && r == 1; i--) {
        r = real.open(ctx, nonce, aad, aadLength, in, out, pinnedOut, length, word);
      }
      return r;
    }
  }

  private static GcmLibrary libcrypto() {
    try {
      GcmLibrary jnr = LibCrypto.jnrForTest();
      new AeadProvider(jnr).newNativeGcm(64).close();
      return jnr;
    } catch (RuntimeException | LinkageError e) {
      Assumptions.abort("libcrypto (OpenSSL 3 or 1.1) is not loadable here: " + e.getMessage());
      return null;
    }
  }

  @Test
  void shouldKeepMeasuringDowncallsThatLookUncompiledUntilTheyCatchUp() {
    GcmLibrary jnr = libcrypto();
    long slowFor = TimeUnit.MILLISECONDS.toNanos(AeadRateCheck.BUDGET_MILLIS + 300);
    AeadRateCheck.Result r =
        AeadRateCheck.measure(List.of(new AeadProvider(new SlowDowncalls(jnr, slowFor))));
    assertNull(r.coldDowncalls(), r.describe() + " " + r.rates());
    // it waited for them (the slow stretch began just before the check did)
    assertTrue(r.millis() >= TimeUnit.NANOSECONDS.toMillis(slowFor) - 100, r.describe());
  }

  @Test
  void shouldSayWhenDowncallsNeverCaughtUp() {
    GcmLibrary jnr = libcrypto();
    AeadRateCheck.Result r =
        AeadRateCheck.measure(List.of(new AeadProvider(new SlowDowncalls(jnr, Long.MAX_VALUE))));
    assertEquals("slow-downcalls", r.coldDowncalls(), r.describe());
    assertTrue(r.describe().contains("lower bounds"), r.describe());
    long bound = AeadRateCheck.BUDGET_MILLIS + AeadRateCheck.COLD_EXTRA_MILLIS;
    assertTrue(r.millis() >= bound, r.describe());
    assertTrue(r.millis() < bound + 3000, "the extra warming is bounded: " + r.describe());
  }

  @Test
  void shouldNotWaitForALibraryWithoutDowncalls() {
    AeadRateCheck.Result r = AeadRateCheck.measure(List.of(new AeadProvider(libcrypto())));
    assertNull(r.coldDowncalls(), r.describe());
    assertTrue(r.millis() < AeadRateCheck.BUDGET_MILLIS + 1000, r.describe());
  }
}
