package io.srdma.channel.record;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The rate check does not settle on a JDK whose GCM the compiler has not reached yet: it keeps
 * warming and measuring it (bounded), and says so when it never catches up. The JDK is weighed
 * against libcrypto (no JIT: its rate is its rate from the first record), as on the machines where
 * the defect showed.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AeadRateCheckColdJdkTest {
  private static AeadProvider openssl() {
    try {
      AeadProvider p = AeadProvider.openssl();
      p.newNativeGcm(64).close();
      return p;
    } catch (RuntimeException | LinkageError e) {
      Assumptions.abort("libcrypto (OpenSSL 3 or 1.1) is not loadable here: " + e.getMessage());
      return null;
    }
  }

  @AfterEach
  void reset() {
    FakeGcmProvider.slowUntilNanos = Long.MAX_VALUE;
  }

  @Test
  void shouldKeepMeasuringAJdkThatLooksUncompiledUntilItCatchesUp() {
    AeadProvider native_ = openssl();
    long slowFor = TimeUnit.MILLISECONDS.toNanos(AeadRateCheck.BUDGET_MILLIS + 300);
    AeadRateCheck.Result r =
        AeadRateCheck.measure(List.of(FakeGcmProvider.slowJdk(slowFor), native_));
    double jdk = r.rates().get(0).bulkScore();
    double other = r.rates().get(1).bulkScore();
    assertFalse(r.jdkCold(), r.describe() + " " + r.rates());
    assertTrue(
        jdk >= AeadRateCheck.COLD_SHARE * other,
        "the JDK's rate was taken while it was slow: " + r.rates());
    // it waited for the JDK (the slow stretch began just before the check did)
    assertTrue(r.millis() >= TimeUnit.NANOSECONDS.toMillis(slowFor) - 100, r.describe());
  }

  @Test
  void shouldSayWhenTheJdkNeverCaughtUp() {
    AeadProvider native_ = openssl();
    AeadRateCheck.Result r =
        AeadRateCheck.measure(List.of(FakeGcmProvider.slowJdk(Long.MAX_VALUE), native_));
    assertTrue(r.jdkCold(), r.describe() + " " + r.rates());
    assertTrue(r.describe().contains("lower bounds"), r.describe());
    long bound = AeadRateCheck.BUDGET_MILLIS + AeadRateCheck.COLD_EXTRA_MILLIS;
    assertTrue(r.millis() >= bound, r.describe());
    assertTrue(r.millis() < bound + 3000, "the extra warming is bounded: " + r.describe());
  }

  @Test
  void shouldNotFlagAJdkWithoutANativeCandidate() {
    AeadRateCheck.Result r =
        AeadRateCheck.measure(List.of(FakeGcmProvider.slowJdk(Long.MAX_VALUE)));
    assertFalse(r.jdkCold(), "nothing to weigh it against: " + r.describe());
    assertTrue(r.millis() < AeadRateCheck.BUDGET_MILLIS + 1000, r.describe());
  }
}
