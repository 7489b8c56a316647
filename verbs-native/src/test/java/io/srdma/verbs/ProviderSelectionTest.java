package io.srdma.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ProviderSelectionTest {
  @Test
  void shouldFindTheSoftProviderByName() {
    RdmaProvider soft = RdmaProviders.select("soft");
    assertEquals("soft", soft.name());
    assertEquals("soft0", soft.devices().get(0).name());
  }

  @Test
  void shouldNameTheInstalledProvidersForAnUnknownName() {
    VerbsException e = assertThrows(VerbsException.class, () -> RdmaProviders.select("rxe9"));
    assertEquals(VerbsException.Reason.INVALID_ARGUMENT, e.reason());
    assertTrue(e.getMessage().contains("soft") && e.getMessage().contains("auto"), e.getMessage());
  }

  @Test
  void shouldPickAnUsableProviderForAuto() {
    RdmaProvider p = RdmaProviders.select("auto");
    boolean ibvUsable =
        RdmaProviders.installed().stream()
            .anyMatch(
                x ->
                    x.name().equals("ibv")
                        && x.unavailableReason() == null
                        && !x.devices().isEmpty());
    assertEquals(ibvUsable ? "ibv" : "soft", p.name());
  }

  @Test
  void shouldRejectBadDeviceOptions() {
    assertThrows(VerbsException.class, () -> new DeviceOptions().bindPort(70000).conclude());
    assertThrows(
        VerbsException.class,
        () -> new DeviceOptions().transportTimeout(java.time.Duration.ZERO).conclude());
    assertThrows(
        VerbsException.class,
        () -> new DeviceOptions().bindAddress("no such host.invalid").conclude());
  }
}
