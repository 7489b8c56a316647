package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.srdma.channel.Access;
import io.srdma.channel.ChannelException;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.verbs.DeviceOptions;
import java.net.InetAddress;
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
 * A host whose HELLO_ACK names a responder address other than its own on the control connection
 * (soft provider: a TCP endpoint the client's queue pair would connect to). Here a real host with
 * its responder on 127.0.0.2 and its control plane on 127.0.0.1 stands for a hostile one that names
 * any internal endpoint: the client refuses before its queue pair connects anywhere, unless {@code
 * ClientOptions.allowedResponderAddresses} lists the address.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ClientResponderAddressHandshakeTest {
  @TempDir Path dir;

  @Test
  void shouldRefuseAResponderAddressThatIsNotTheHostsOwnUnlessAllowed() throws Exception {
    assumeTrue("soft".equals(ChannelRig.PROVIDER), "soft provider addresses are TCP endpoints");
    try (ChannelRig rig =
        new ChannelRig(dir, o -> o.device(new DeviceOptions().bindAddress("127.0.0.2")))) {
      assertEquals("127.0.0.1", rig.host.address().getAddress().getHostAddress());

      ChannelException e =
          assertThrows(
              ChannelException.class,
              () -> rig.track(SecureRdmaClient.connect(rig.options("acme", "trainer-1"))));
      assertEquals(ChannelException.Reason.PROTOCOL, e.reason(), e.getMessage());
      assertEquals("BAD_VALUE", e.detail(), e.getMessage());
      assertTrue(e.getMessage().contains("127.0.0.2"), e.getMessage());
      assertTrue(e.getMessage().contains("not its own address 127.0.0.1"), e.getMessage());
      // refused at HELLO_ACK: no key confirmation, so no session and no queue pair connected
      ChannelRig.await(() -> rig.host.stats().sessions() == 0, "no session at the host");

      SecureRdmaClient allowed =
          rig.track(
              SecureRdmaClient.connect(
                  rig.options("acme", "trainer-1")
                      .allowedResponderAddresses(Set.of(InetAddress.getByName("127.0.0.2")))));
      RemoteGrant g =
          allowed.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofSeconds(20));
      g.writeBlocking(0, ByteBuffer.wrap(new byte[] {1, 2, 3}));
      assertTrue(allowed.isOpen());
    }
  }
}
