package io.srdma.keys;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class RekeyPolicyTest {

  @Test
  void shouldDefaultFarBelowTheAesGcmLimits() {
    RekeyPolicy p = RekeyPolicy.fromSystemProperties();
    assertEquals(1L << 24, p.maxRecords());
    assertEquals(1L << 36, p.maxBytes());
    assertEquals(Duration.ofHours(1), p.maxAge());
  }

  @Test
  void shouldBeDueWhenAnyLimitIsReached() {
    RekeyPolicy p =
        RekeyPolicy.fromSystemProperties()
            .withMaxRecords(10)
            .withMaxBytes(1000)
            .withMaxAge(Duration.ofSeconds(5));
    assertFalse(p.isDue(9, 999, Duration.ofSeconds(4)));
    assertTrue(p.isDue(10, 0, Duration.ZERO));
    assertTrue(p.isDue(0, 1000, Duration.ZERO));
    assertTrue(p.isDue(0, 0, Duration.ofSeconds(5)));
  }

  @Test
  void shouldRefuseLimitsBeyondWhatGcmAllows() {
    RekeyPolicy p = RekeyPolicy.fromSystemProperties();
    assertEquals(
        KeyExchangeException.Reason.BAD_ARGUMENT,
        assertThrows(KeyExchangeException.class, () -> p.withMaxRecords((1L << 32) + 1)).reason());
    assertThrows(KeyExchangeException.class, () -> p.withMaxRecords(0));
    assertThrows(KeyExchangeException.class, () -> p.withMaxBytes(-1));
    assertThrows(KeyExchangeException.class, () -> p.withMaxAge(Duration.ZERO));
  }
}
