package io.srdma.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.keys.DeploymentCa;
import io.srdma.keys.PeerIdentity;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link ClientOptions#check()}: absurd settings are refused with INVALID_ARGUMENT naming the
 * setting, before {@code connect} opens anything.
 */
class ClientOptionsTest {
  @TempDir static Path dir;
  private static DeploymentCa ca;

  @BeforeAll
  static void ca() {
    ca = DeploymentCa.init(dir.resolve("ca"), null);
  }

  private static ClientOptions valid() {
    return new ClientOptions()
        .credential(ca.issuePeer(PeerIdentity.of("acme", "trainer-1"), Duration.ofDays(1)))
        .trust(ca.trust())
        .host(new InetSocketAddress("127.0.0.1", 1))
        .hostName("host-1");
  }

  private static void assertRefused(String setting, UnaryOperator<ClientOptions> absurd) {
    ClientOptions o = absurd.apply(valid());
    ChannelException e = assertThrows(ChannelException.class, o::check, setting);
    assertEquals(ChannelException.Reason.INVALID_ARGUMENT, e.reason(), e.getMessage());
    assertTrue(e.getMessage().contains(setting), e.getMessage());
  }

  @Test
  void shouldAcceptTheDefaultsAndTheLargestStagingThatFitsOneBuffer() {
    valid().check();
    valid().stagingSlots(127).maxRecordPayload(1 << 24).check(); // 2,130,711,004 bytes
    valid().maxReadBytes(SealedLayout.OWNER_RECORD_OVERHEAD + 1).check();
  }

  @Test
  void shouldRefuseStagingLargerThanOneBufferInsteadOfWrappingItsSize() {
    // 128 x (16 MiB + 36) is past Integer.MAX_VALUE (negative as an int); 256 x wraps to 9,216
    assertRefused("stagingSlots", o -> o.stagingSlots(128).maxRecordPayload(1 << 24));
    assertRefused("stagingSlots", o -> o.stagingSlots(256).maxRecordPayload(1 << 24));
    assertRefused("stagingSlots", o -> o.stagingSlots(4096).maxRecordPayload(1 << 20));
  }

  @Test
  void shouldRefuseAReadBufferThatCannotHoldOneOwnerRecord() {
    assertRefused("maxReadBytes", o -> o.maxReadBytes(SealedLayout.OWNER_RECORD_OVERHEAD));
    assertRefused("maxReadBytes", o -> o.maxReadBytes(37));
    assertRefused("maxReadBytes", o -> o.maxReadBytes(-1));
  }

  @Test
  void shouldRefuseMissingNegativeOrUnboundedDurations() {
    Duration forever = ChronoUnit.FOREVER.getDuration();
    assertRefused("connectTimeout", o -> o.connectTimeout(null));
    assertRefused("requestTimeout", o -> o.requestTimeout(Duration.ofMillis(-1)));
    assertRefused("requestTimeout", o -> o.requestTimeout(forever));
    assertRefused("connectTimeout", o -> o.connectTimeout(Duration.ofDays(36_501)));
    assertRefused("keepalive", o -> o.keepalive(forever));
    valid().requestTimeout(Duration.ofDays(36_500)).check();
  }
}
