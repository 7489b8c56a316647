package io.srdma.verbs.ibv;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.srdma.verbs.ConnectionInfo;
import io.srdma.verbs.DeviceAttributes;
import io.srdma.verbs.DeviceContext;
import io.srdma.verbs.DeviceOptions;
import io.srdma.verbs.RdmaProvider;
import io.srdma.verbs.RdmaProviders;
import io.srdma.verbs.VerbsException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The ibv provider on this machine: with a device it opens; without one it says what to do. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class IbvProviderTest {

  @Test
  void shouldBeInstalledUnderItsName() {
    assertTrue(
        RdmaProviders.installed().stream().anyMatch(p -> p.name().equals(IbvProvider.NAME)),
        "ibv is registered in META-INF/services");
  }

  @Test
  void shouldExplainWhatIsMissingWhenItCannotRun() {
    RdmaProvider ibv = new IbvProvider();
    String why = ibv.unavailableReason();
    assumeTrue(why != null, "this machine has an RDMA device; nothing is missing");
    assertTrue(
        why.contains("libibverbs") && (why.contains("install") || why.contains("rdma link add")),
        why);
    VerbsException e = assertThrows(VerbsException.class, () -> RdmaProviders.select("ibv"));
    assertEquals(VerbsException.Reason.PROVIDER_UNAVAILABLE, e.reason());
    assertEquals("soft", RdmaProviders.select("auto").name(), "auto falls back to soft here");
  }

  @Test
  void shouldOpenTheFirstDeviceAndReportItsAttributes() {
    String why = new IbvProvider().unavailableReason();
    assumeTrue(why == null, () -> "no RDMA device here (" + why + "); the qemu guest runs this");
    try (DeviceContext ctx = RdmaProviders.firstDevice("ibv").open(new DeviceOptions())) {
      DeviceAttributes attributes = ctx.queryDevice();
      assertTrue(attributes.maxQp() > 0 && attributes.maxMr() > 0, attributes::toString);
      assertNotNull(ctx.device().name());
      System.out.println("ibv " + ctx.device().name() + ": " + attributes);
    }
  }

  /**
   * With a real device (the Soft-RoCE guest runs the suite on JDK 17 and on Java 25): once a device
   * is opened its per-message calls (that device's {@link OpsTable}) are the FFM downcalls where
   * the JVM offers them (Java 22+, Java 17 with the incubator's options), jffi saying why elsewhere
   * or with {@code -Dsrdma.ibv.calls=jnr}. The guest's Java 25 step requires this case to pass, so
   * a silent fallback to jffi on rxe's real ops fails it (docs/softroce.md).
   */
  @Test
  void theDevicesPerMessageCallsTakeThePathThisJavaAllows() {
    String why = new IbvProvider().unavailableReason();
    assumeTrue(why == null, () -> "no RDMA device here (" + why + "); the qemu guest runs this");
    String expected = OpsTableTest.expectedBinding();
    try (DeviceContext ctx = RdmaProviders.firstDevice("ibv").open(new DeviceOptions())) {
      assertEquals(expected, OpsTable.binding(), "the calls of " + ctx.device().name());
      OpsTable ops = assertInstanceOf(IbvDeviceContext.class, ctx).ops();
      assertEquals(
          expected.startsWith("FFM downcalls"), ops.downcalls(), "this device's four calls");
    }
  }

  @Test
  void shouldRoundTripTheAddress() {
    byte[] gid = new byte[16];
    gid[10] = (byte) 0xFF;
    gid[11] = (byte) 0xFF;
    gid[12] = 127;
    gid[15] = 1;
    IbvAddress a = new IbvAddress(gid, 0x1234, 1);
    byte[] bytes = a.encode();
    assertEquals(19, bytes.length);
    IbvAddress b = IbvAddress.decode(bytes);
    assertEquals(0x1234, b.lid());
    assertEquals(1, b.port());
    assertEquals(
        java.util.HexFormat.of().formatHex(gid), java.util.HexFormat.of().formatHex(b.gid()));
    ConnectionInfo soft = new ConnectionInfo(1, 2, new byte[] {127, 0, 0, 1, 0, 80});
    VerbsException e = assertThrows(VerbsException.class, () -> IbvAddress.decode(soft.address()));
    assertTrue(e.getMessage().contains("another provider"), e.getMessage());
  }

  @Test
  void shouldEncodeTimeoutsIntoTheIbFields() {
    // 4.096 µs × 2^16 ≈ 268 ms per try, 7 tries ≈ 1.9 s
    assertEquals(16, Timers.ackTimeoutExponent(Duration.ofSeconds(2)));
    int code = Timers.rnrTimerCode(Duration.ofMillis(200));
    assertEquals(23, code, "30.72 ms × 7 tries ≈ 215 ms");
    assertFalse(Timers.rnrTimerCode(Duration.ofSeconds(2)) == 0, "code 0 is the longest, 655 ms");
    assertEquals(1, Timers.ackTimeoutExponent(Duration.ofNanos(1)));
  }
}
