package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.srdma.channel.Access;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.verbs.ConnectionInfo;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Red team: a tenant on the host's own machine reaching it over IPv6 loopback ({@code ::1}) while
 * its soft responder listens on {@code 127.0.0.1} (the default) was refused as request forgery,
 * although both name the same machine and a loopback peer can reach every loopback port itself.
 * 127.0.0.1 and ::1 count as one address; anything else (127.0.0.2 too) still does not.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HostIpv6LoopbackTest {
  @TempDir Path dir;

  private static ConnectionInfo soft(String ip, int port) throws Exception {
    byte[] a = InetAddress.getByName(ip).getAddress();
    ByteBuffer b = ByteBuffer.allocate(a.length + 2).put(a).putShort((short) port);
    return new ConnectionInfo(7, 0, b.array());
  }

  @Test
  void loopbackIsTheSameMachineWhateverTheFamilyButNothingElseIs() throws Exception {
    ResponderAddresses r = new ResponderAddresses("soft", false, Set.of());
    InetAddress v6 = InetAddress.getByName("::1");
    InetAddress v4 = InetAddress.getByName("127.0.0.1");
    assertNull(r.refusal(soft("127.0.0.1", 4000), v6));
    assertNull(r.refusal(soft("::1", 4000), v4));
    assertNull(r.refusal(soft("127.0.0.1", 4000), v4));
    assertNotNull(r.refusal(soft("10.0.0.7", 4000), v6), "not loopback: still refused");
    assertNotNull(r.refusal(soft("127.0.0.2", 4000), v4), "another loopback address is another");
    assertNotNull(r.refusal(soft("127.0.0.2", 4000), v6));
    assertNotNull(r.refusal(soft("127.0.0.1", 4000), InetAddress.getByName("10.0.0.7")));
    assertNotNull(r.refusal(soft("::1", 4000), InetAddress.getByName("fd00::7")));
  }

  @Test
  void aTenantReachingTheHostOverIpv6LoopbackGetsASession() throws Exception {
    InetAddress v6 = InetAddress.getByName("::1");
    try (ChannelRig rig = new ChannelRig(dir, o -> o.bind(new InetSocketAddress(v6, 0)))) {
      SecureRdmaClient c = rig.client("acme", "trainer-1");
      RemoteGrant g = c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofMinutes(1));
      long before = rig.host.stats().recordsOpened();
      g.writeBlocking(0, ChannelRig.bytes(100, 1));
      ChannelRig.await(() -> rig.host.stats().recordsOpened() == before + 1, "record opened");
      assertEquals(0, rig.host.stats().responderRefusals());
    }
  }
}
